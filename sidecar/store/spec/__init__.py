"""The session spec's format (shared/seeds/004, section 7) as a second native store.

A spec root holds ``<root>/<ULID>/session.jsonl`` (append-only records) and
``metadata.json`` per session. In memory a spec session is the same tree of
pi-shaped entries as any other (a single chain); ``codec`` translates records
to entries and back, ``writer`` appends records and rewrites the metadata,
``layout`` is the only place that turns a session id into a path.

It stands on store's root and the file backend's writing rules (files/writer.py, files/lock.py);
``compaction`` and ``prompts`` are its compaction (seed 004's cut and summary prompt). The face
loads a name on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazyface import lazy_names

if TYPE_CHECKING:
    from .codec import EntryBuilder
    from .compaction import plan
    from .convert import pi_to_spec
    from .file import read_records
    from .layout import METADATA_FILE, SESSION_FILE, SpecLayout, check_ulid, new_ulid
    from .metadata import new_metadata, rebuild
    from .prompts import SYSTEM_PROMPT, build_prompt, file_tags, serialize, strip_file_tags
    from .records import MessageRecord, decode_metadata
    from .session import SpecSession
    from .store import SpecStore
    from .writer import SpecWriter

_WHERE = {
    "EntryBuilder": "codec",
    "plan": "compaction",
    "pi_to_spec": "convert",
    "read_records": "file",
    "METADATA_FILE": "layout",
    "SESSION_FILE": "layout",
    "SpecLayout": "layout",
    "check_ulid": "layout",
    "new_ulid": "layout",
    "new_metadata": "metadata",
    "rebuild": "metadata",
    "SYSTEM_PROMPT": "prompts",
    "build_prompt": "prompts",
    "file_tags": "prompts",
    "serialize": "prompts",
    "strip_file_tags": "prompts",
    "MessageRecord": "records",
    "decode_metadata": "records",
    "SpecSession": "session",
    "SpecStore": "store",
    "SpecWriter": "writer",
}

__all__ = [
    "EntryBuilder",
    "METADATA_FILE",
    "MessageRecord",
    "SESSION_FILE",
    "SYSTEM_PROMPT",
    "SpecLayout",
    "SpecSession",
    "SpecStore",
    "SpecWriter",
    "build_prompt",
    "check_ulid",
    "decode_metadata",
    "file_tags",
    "new_metadata",
    "new_ulid",
    "pi_to_spec",
    "plan",
    "read_records",
    "rebuild",
    "serialize",
    "strip_file_tags",
]


__getattr__ = lazy_names(__name__, _WHERE, globals())
