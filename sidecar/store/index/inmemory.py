"""In-memory sessions (``persist: false``) in ``session/list``: every store lists them first on the first page.

They have no file and no row, so no index or SQL query sees them; each store
adds the ones this sidecar holds, summarized from their entries in memory.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from ..base import Listed, ListQuery
from .listing import matches, summarize

if TYPE_CHECKING:
    from ..session import Session


def listed_in_memory(query: ListQuery, held: list[Session]) -> list[Listed]:
    found = []
    for session in held:
        if not session.in_memory:
            continue
        header = session.header_obj()
        if not query.all and query.cwd is not None and header.get("cwd") != query.cwd:
            continue
        data = b"\n".join([session.header.raw, *(e.raw for e in session.tree.entries)])
        summary = summarize(session.path, data, int(time.time() * 1000))
        if summary is None:
            continue
        if query.query and not matches(summary, query.query):
            continue
        found.append(
            Listed(
                session_id=summary.session_id,
                location="",
                cwd=summary.cwd,
                created=summary.created,
                modified_ms=summary.modified_ms,
                message_count=summary.message_count,
                first_message=summary.first_message,
                tokens_total=summary.tokens_total or 0,
                tokens_last=summary.tokens_last or 0,
                name=session.name,
                title=session.name,
                parent_session=summary.parent_session,
                archived=False,
                in_memory=True,
            )
        )
    return found
