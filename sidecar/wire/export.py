"""Session/export: Markdown, HTML and JSON, secrets redacted."""

from __future__ import annotations

from typing import Literal

from .base import _Params, _Result


class ExportParams(_Params):
    sessionId: str
    format: Literal["markdown", "html", "json"]
    # The path root -> leafId (default: the session's leaf). The page (html) always holds every branch.
    leafId: str | None = None
    # Every entry of the tree, every branch, instead of one path.
    all: bool = False
    # Replace secrets by typed placeholders ([REDACTED:aws-access-key:1]).
    redact: bool = True
    # Write the export to this absolute path (atomically, mode 0600) instead of returning its text.
    path: str | None = None


class RedactionKindCount(_Result):
    kind: str
    count: int


class ExportRedaction(_Result):
    applied: bool
    # Secrets replaced, all kinds together; the values are never reported.
    total: int = 0
    kinds: list[RedactionKindCount] = []


class ExportResult(_Result):
    # Entries exported.
    entries: int
    redaction: ExportRedaction
    # The export itself (absent when it was written to path).
    text: str | None = None
    path: str | None = None
    bytes: int = 0
