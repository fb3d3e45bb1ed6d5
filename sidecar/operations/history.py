"""``history/*``: the prompts the user typed, across sessions (sidecar/history/)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable

from .. import wire
from ..errors import InvalidParams, StorageError
from ..history import MAX_PROMPT_CHARS, HistoryUnavailable, Prompt, PromptHistory
from ..store.index import iso_from_ms
from .results import MAX_LIST_LIMIT


def add(history: PromptHistory, params: wire.HistoryAddParams) -> None:
    if not params.prompt.strip():
        raise InvalidParams("prompt is empty; send the text the user typed", field="prompt")
    if len(params.prompt) > MAX_PROMPT_CHARS:
        raise InvalidParams(
            f"prompt is longer than {MAX_PROMPT_CHARS} characters; it is not one a user typed",
            field="prompt",
            length=len(params.prompt),
        )
    history.add(params.prompt, _cwd(params.cwd))


def search(history: PromptHistory, params: wire.HistorySearchParams) -> wire.HistoryResult:
    if not params.query:
        raise InvalidParams("query is empty; use history/list for the newest prompts", field="query")
    found = _read(
        history,
        lambda: history.search(params.query, _cwd(params.cwd), _limit(params.limit), params.order == "relevance"),
    )
    return wire.HistoryResult(entries=[_entry(p) for p in found])


def recent(history: PromptHistory, params: wire.HistoryListParams) -> wire.HistoryResult:
    found = _read(history, lambda: history.recent(_cwd(params.cwd), _limit(params.limit), params.before))
    return wire.HistoryResult(entries=[_entry(p) for p in found])


def _read(history: PromptHistory, read: Callable[[], list[Prompt]]) -> list[Prompt]:
    try:
        return read()
    except (HistoryUnavailable, sqlite3.Error) as exc:
        raise StorageError(str(exc), path=str(history.path)) from exc


def _cwd(cwd: str | None) -> str | None:
    if cwd is not None and not os.path.isabs(cwd):
        raise InvalidParams(f"cwd must be an absolute path, not {cwd!r}", field="cwd")
    return cwd


def _limit(limit: int) -> int:
    if not 1 <= limit <= MAX_LIST_LIMIT:
        raise InvalidParams(f"limit must be between 1 and {MAX_LIST_LIMIT}", limit=limit)
    return limit


def _entry(prompt: Prompt) -> wire.HistoryEntry:
    return wire.HistoryEntry(
        id=prompt.id, prompt=prompt.prompt, cwd=prompt.cwd, createdAt=iso_from_ms(prompt.created_ms)
    )
