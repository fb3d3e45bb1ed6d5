"""Session/convert: between pi's format and the session spec's."""

from __future__ import annotations

from typing import Literal

from .base import _Params, _Result


class ConvertParams(_Params):
    """Copy a session into the other format, as a new session below ``targetRoot``.

    Name the source by ``sessionId`` (below this sidecar's root) or ``path`` (a pi
    ``.jsonl`` file, or a spec session folder). The source is not changed."""

    to: Literal["pi", "spec"]
    targetRoot: str
    sessionId: str | None = None
    path: str | None = None
    # pi -> spec: the branch to keep (the path root -> this entry); default the leaf.
    leafId: str | None = None
    # spec -> pi: the header's cwd (the spec format has none); default "".
    cwd: str | None = None


class ConvertLoss(_Result):
    """Something the target format cannot hold, left out of the copy.

    ``kind``: "entry" (whole entries left out), "part" (content blocks taken out of entries that
    were kept), "field" (message fields the target has no place for), "branch" (entries off the
    kept path), "session" (the session's own data: a cwd, a source)."""

    kind: Literal["entry", "part", "field", "branch", "session"]
    what: str
    entryIds: list[str]


class ConvertResult(_Result):
    sessionId: str
    path: str
    format: Literal["pi", "spec"]
    # Entries (pi) or records (spec) written.
    written: int
    # Empty: nothing was lost.
    leftOut: list[ConvertLoss]
