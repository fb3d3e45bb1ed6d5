"""The session file format: one Struct per line shape, tagged on ``type``.

These types are the schema of what pi-mono and oh-my-pi write. They validate
entries that clients append and they generate the JSON Schema; they are never
used to re-encode a line read from disk, because a Struct drops fields it does
not know and a newer agent's fields must survive every rewrite byte-for-byte
(see ``sidecar.format.jsonl.Line``).
"""

from __future__ import annotations

from typing import Any, Literal, Union, get_args

import msgspec

CURRENT_VERSION = 3

# Entry types whose meaning we know. Anything else is carried along untouched.
KNOWN_ENTRY_TYPES = frozenset(
    {
        "message",
        "thinking_level_change",
        "model_change",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "session_info",
        "ttsr_injection",
        "session_init",
        "mode_change",
        "context_edit",
    }
)


class SessionHeader(msgspec.Struct, tag="session", tag_field="type", omit_defaults=True):
    """First line of every session file."""

    id: str
    timestamp: str
    cwd: str = ""
    version: int | None = None
    parentSession: str | None = None
    title: str | None = None


class _EntryBase(msgspec.Struct, tag_field="type", omit_defaults=True, kw_only=True):
    id: str
    parentId: str | None
    timestamp: str


class MessageEntry(_EntryBase, tag="message"):
    """An AgentMessage (user, assistant, toolResult, bashExecution, custom, system)."""

    message: dict[str, Any]


class ThinkingLevelChangeEntry(_EntryBase, tag="thinking_level_change"):
    thinkingLevel: str


class ModelChangeEntry(_EntryBase, tag="model_change"):
    """pi writes ``provider``/``modelId``; oh-my-pi writes ``model`` ("provider/id") and ``role``."""

    provider: str | None = None
    modelId: str | None = None
    model: str | None = None
    role: str | None = None


class NativeCompactionItem(msgspec.Struct, omit_defaults=True, kw_only=True):
    """sidecar: a provider's own compaction item for the span a compaction summarized (pi ignores it).

    ``item`` is opaque: Anthropic's ``compaction`` content block, or the OpenAI
    Responses ``compaction`` item, as the provider returned it. A context built
    for that provider and model carries it instead of the text summary.
    """

    provider: str
    model: str
    item: dict[str, Any]


class CompactionEntry(_EntryBase, tag="compaction"):
    summary: str
    firstKeptEntryId: str
    tokensBefore: int
    details: Any = None
    fromHook: bool | None = None
    shortSummary: str | None = None
    preserveData: Any = None
    fromExtension: bool | None = None
    # pi 1.5: the system message current when the compaction was made; the
    # context then starts with it, before the summary.
    systemMessage: dict[str, Any] | None = None
    usage: Any = None
    native: NativeCompactionItem | None = None


class BranchSummaryEntry(_EntryBase, tag="branch_summary"):
    fromId: str
    summary: str
    details: Any = None
    fromHook: bool | None = None
    fromExtension: bool | None = None
    usage: Any = None


class CustomEntry(_EntryBase, tag="custom"):
    customType: str
    data: Any = None


class CustomMessageEntry(_EntryBase, tag="custom_message"):
    customType: str
    content: str | list[dict[str, Any]]
    display: bool = True
    details: Any = None


class LabelEntry(_EntryBase, tag="label"):
    targetId: str
    label: str | None = None


class SessionInfoEntry(_EntryBase, tag="session_info"):
    name: str | None = None


class TtsrInjectionEntry(_EntryBase, tag="ttsr_injection"):
    injectedRules: list[str]


class SessionInitEntry(_EntryBase, tag="session_init"):
    systemPrompt: str | None = None
    task: str | None = None
    tools: list[str] | None = None
    outputSchema: Any = None


class ModeChangeEntry(_EntryBase, tag="mode_change"):
    mode: str
    data: dict[str, Any] | None = None


class ContextEditReplacement(msgspec.Struct):
    content: str | list[dict[str, Any]]


class ContextEditEntry(_EntryBase, tag="context_edit"):
    """pi 1.5: on the path to a leaf, the target entry's content is replaced
    (null: its message is left out of the context). The last edit of a target wins."""

    targetId: str
    replacement: ContextEditReplacement | None


KnownEntry = Union[
    MessageEntry,
    ThinkingLevelChangeEntry,
    ModelChangeEntry,
    CompactionEntry,
    BranchSummaryEntry,
    CustomEntry,
    CustomMessageEntry,
    LabelEntry,
    SessionInfoEntry,
    TtsrInjectionEntry,
    SessionInitEntry,
    ModeChangeEntry,
    ContextEditEntry,
]

# Roles a `message` entry may carry. Summaries are entries of their own
# (compaction, branch_summary), never messages, as in pi.
MessageRole = Literal["user", "assistant", "toolResult", "bashExecution", "custom", "system"]


class MessageShape(msgspec.Struct, omit_defaults=True):
    """The part of an AgentMessage we rely on; other fields pass through."""

    role: MessageRole


def validate_entry(obj: dict[str, Any]) -> None:
    """Raise ``msgspec.ValidationError`` when a known entry type is malformed.

    Unknown types are accepted as they are: a newer agent may append kinds we
    have not met yet, and we keep them without interpreting them.
    """
    if obj.get("type") not in KNOWN_ENTRY_TYPES:
        return
    entry = msgspec.convert(obj, KnownEntry)
    if isinstance(entry, MessageEntry):
        msgspec.convert(entry.message, MessageShape)


class _CheckedMessageEntry(_EntryBase, tag="message"):
    """MessageEntry with its message checked in the same pass (validation only)."""

    message: MessageShape


# KnownEntry, with the message entry checked in the same pass.
_CheckedEntry = Union[tuple(_CheckedMessageEntry if kind is MessageEntry else kind for kind in get_args(KnownEntry))]  # type: ignore[misc]


class _Batch(msgspec.Struct):
    """A batch of entries to validate in one call (a Struct: msgspec keeps its
    type information on the class, where a bare Union is looked up again on
    every call, ~20 us)."""

    entries: list[_CheckedEntry]


def validate_entries(objs: list[dict[str, Any]]) -> None:
    """``validate_entry`` for each of ``objs``, in one msgspec pass when all are valid.

    When one is not, raises ``(index, error)`` as ``InvalidAt``: the first
    invalid entry and the very error ``validate_entry`` gives for it.
    """
    known = [obj for obj in objs if obj.get("type") in KNOWN_ENTRY_TYPES]
    if not known:
        return
    try:
        msgspec.convert({"entries": known}, _Batch)
        return
    except msgspec.ValidationError:
        pass
    for index, obj in enumerate(objs):
        try:
            validate_entry(obj)
        except msgspec.ValidationError as exc:
            raise InvalidAt(index, exc) from exc
    # Only reached if the one pass is stricter than validate_entry: accept, as it would.


class InvalidAt(Exception):
    """Entry ``index`` of a batch failed ``validate_entry`` with ``error``."""

    def __init__(self, index: int, error: msgspec.ValidationError) -> None:
        super().__init__(index, error)
        self.index, self.error = index, error


def _prime_type_info() -> None:
    """Build msgspec's type information of the types converted above, once, on the importing thread.

    msgspec builds a Struct type's information on its first conversion and
    publishes it before it is complete; threads converting the same type for
    the first time at once could read it half-built (a segfault seen with
    eight sessions appended to at once). Built here, it is complete before
    any worker thread exists.
    """
    for value, kind in (({"entries": []}, _Batch), ({}, KnownEntry), ({}, MessageShape)):
        try:
            msgspec.convert(value, kind)
        except msgspec.ValidationError:
            pass  # the information is built before the value is checked


_prime_type_info()
