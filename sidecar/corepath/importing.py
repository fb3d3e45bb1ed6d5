"""The Codex importer's per-line mapping (issue 42, goal 3): the interface, what it is made with, the Python path.

A mapping takes a main rollout's bytes (a file mapped by importers/common.read_source) and gives the
entries and counts the Python importer (sidecar/importers/codex.py) would give, or None: the Python
importer maps the file itself. The Python path always says None (codex.py is the reference); the
compiled one (core/src/import_codex.rs) maps the line shapes Codex writes most and says None for a
file holding any line it cannot vouch for (tests/importers/test_import_core_differential.py holds
both to the same bytes). What it maps with, the kinds of line and the reasons counted, belongs to
the importer, which hands it over here (``CodexVocabulary``): this layer stands below it.
"""

from __future__ import annotations

import mmap
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, Protocol

import msgspec


class CodexVocabulary(msgspec.Struct, frozen=True):
    not_read: frozenset[str]  # UI events counted as skipped without being read
    ui_events: frozenset[str]  # every UI event (the rest of them need their payload read)
    response_ends: frozenset[str]  # kinds that end a model response
    output_items: frozenset[str]  # tool outputs
    assistant_items: frozenset[str]  # items that go into an assistant message
    bookkeeping: Mapping[str, str]  # line kinds skipped, with why
    context_prefixes: tuple[str, ...]  # what a user turn Codex injected starts with
    max_chars: int  # the longest payload kept as its JSON text
    blob_mark: bytes  # an entry's line holding this holds a blob reference
    no_usage: bytes  # the usage an assistant message carries, as JSON text
    api: str
    default_provider: str
    # The reasons counted, by name: origin, turn_model, ui_copy, kept, context, instructions, unknown.
    reasons: Mapping[str, str]
    entry_type: type[Any]  # format.entry.Entry
    tool_result_head: Any
    user_head: Any
    assistant_head: Callable[[str, str, str], Any]  # (api, provider, model) -> the shared head


class CodexMapped(NamedTuple):
    entries: list[Any]  # Entry objects and the dicts Builder.add makes, in file order
    counts: list[tuple[str, str, int, str | None]]  # (kind, outcome, times, reason), in the order counted
    unrecognised: list[str]
    meta: tuple[int, int] | None  # where the first session_meta payload is in the buffer


class CodexMapping(Protocol):
    def map(self, buffer: bytes | mmap.mmap) -> CodexMapped | None:
        """The main rollout in ``buffer`` mapped, or None: the Python importer maps it."""
        ...


class PythonCodexMapping:
    """The Python path: codex.py maps every line itself."""

    def __init__(self, vocabulary: CodexVocabulary) -> None:
        self.vocabulary = vocabulary

    def map(self, buffer: bytes | mmap.mmap) -> CodexMapped | None:
        return None
