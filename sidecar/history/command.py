"""``session-sidecar history [QUERY]``: the newest prompts, or those holding QUERY, one per line."""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from ..store.index import INDEX_DIR, iso_from_ms
from .store import HistoryUnavailable, PromptHistory

_SHOWN_CHARS = 200


def print_history(root: Path, query: str | None, cwd: str | None, limit: int, out: TextIO) -> int:
    history = PromptHistory(root / INDEX_DIR)
    try:
        found = history.search(query, cwd, limit) if query else history.recent(cwd, limit)
    except HistoryUnavailable as exc:
        print(f"session-sidecar: {exc}", file=out)
        return 2
    finally:
        history.close()
    for prompt in found:
        text = " ".join(prompt.prompt.split())
        if len(text) > _SHOWN_CHARS:
            text = text[: _SHOWN_CHARS - 1] + "…"
        when = iso_from_ms(prompt.created_ms)[:16].replace("T", " ")
        print(f"{when}  {prompt.cwd or '-'}  {text}", file=out)
    return 0
