"""Prompt history (not sessions: what the user typed, for recall and search)."""

from __future__ import annotations

from typing import Literal

from .base import _Params, _Result


class HistoryAddParams(_Params):
    prompt: str
    # The project it was typed in (absolute); absent: no project.
    cwd: str | None = None


class HistorySearchParams(_Params):
    # One word: a case-insensitive substring of the prompt. Several words: each at the start of a
    # word of the prompt, in any order.
    query: str
    cwd: str | None = None
    limit: int = 20
    # "recent": newest first; "relevance": best match first (bm25), then newest.
    order: Literal["recent", "relevance"] = "recent"


class HistoryListParams(_Params):
    cwd: str | None = None
    limit: int = 50
    # Only entries older than this id (the last id of the previous page).
    before: int | None = None


class HistoryEntry(_Result):
    id: int
    prompt: str
    cwd: str | None
    createdAt: str


class HistoryResult(_Result):
    entries: list[HistoryEntry]
