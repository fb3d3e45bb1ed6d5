"""Results several operations share: an opened session, a listed session, the warnings of an open."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import wire
from ..store.index import iso_from_ms

if TYPE_CHECKING:  # (the session handle's module, its tree and its appends are not needed to list)
    from ..store import Listed, Session

DEFAULT_LIST_LIMIT = 50
MAX_LIST_LIMIT = 1000


def open_result(session: Session, location: str, parse_errors: int, migrated_from: int | None) -> wire.OpenResult:
    return wire.OpenResult(
        sessionId=session.id,
        path=location,
        header=session.header_obj(),
        leafId=session.leaf_id,
        entryCount=session.entry_count,
        parseErrors=parse_errors,
        persisted=session.persisted,
        migratedFrom=migrated_from,
        warnings=_open_warnings(session, location),
        titleFault=session.title_fault or _missing_title(session),
        name=session.name,
        title=session.name,
    )


def _missing_title(session: Session) -> str | None:
    """oh-my-pi's files start with a title line; one under its compatibility without it is reported."""
    if session.compat == "omp" and not session.prefix and session.persisted:
        return "the file has no title line (oh-my-pi adds one at its next rename); its name is the header's title"
    return None


def _open_warnings(session: Session, location: str) -> list[wire.OpenWarning]:
    dangling = session.dangling()
    if not dangling:
        return []
    shown = ", ".join(dangling[:5]) + (f" and {len(dangling) - 5} more" if len(dangling) > 5 else "")
    # The doctor mends files: a session kept elsewhere (a database: its location is not its path) goes out
    # to a file root and back.
    where = (
        "on the file"
        if location == str(session.path)
        else ("on it in a file root (session-sidecar export-root, then migrate the mended root back)")
    )
    return [
        wire.OpenWarning(
            kind="danglingParent",
            message=(
                f"{len(dangling)} entr{'y names a parent' if len(dangling) == 1 else 'ies name parents'} not in "
                f"{location or session.path} ({shown}): the history before {'it' if len(dangling) == 1 else 'them'} "
                f"is cut off from the context; run `session-sidecar doctor --fix` {where} to reconnect each to the "
                "entry written before it (the original is kept as a backup)"
            ),
            entryIds=dangling,
        )
    ]


def session_info(found: Listed) -> wire.SessionInfo:
    modified = iso_from_ms(found.modified_ms)
    info = wire.SessionInfo(
        sessionId=found.session_id,
        path=found.location,
        cwd=found.cwd,
        created=found.created,
        modified=modified,
        updatedAt=modified,  # ACP's SessionInfo field
        messageCount=found.message_count,
        firstMessage=found.first_message or "(no messages)",
        archived=found.archived,
        tokens=wire.SessionTokens(total=found.tokens_total, last=found.tokens_last),
        name=found.name,
        title=found.title,
        parentSession=found.parent_session,
        snippet=found.snippet,
    )
    if found.in_memory:
        info.inMemory = True
    return info
