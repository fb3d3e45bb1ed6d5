"""What a session learnt of another writer at one call: the entries it appended, or why it was read again."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from ..format.jsonl import Entry

__all__ = ["FileChange", "Reason"]

# rewritten: same file, other bytes; truncated: shorter than we knew it; replaced: another
# file renamed over ours; interleaved: another program's lines went out just before a batch of ours.
Reason = Literal["rewritten", "truncated", "replaced", "interleaved"]


@dataclass(slots=True)
class FileChange:
    """What a session learnt from its file at one call."""

    # Entries another program appended, in file order, now in the tree.
    appended: list[Entry] = field(default_factory=list)
    # The file was read again whole, and why; None when it only grew.
    reloaded: Reason | None = None
    # The header line was rewritten in place (same length): only the header was read again.
    header_changed: bool = False
