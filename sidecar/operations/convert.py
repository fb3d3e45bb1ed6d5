"""session/convert: a session copied into the other format, with what the target cannot hold listed.

The source is read without its lock being kept (nothing is written to it);
the copy is a new session below ``targetRoot``, written whole before this
returns. pi -> spec keeps one branch; spec -> pi keeps everything but the
metadata pi has no place for (source, cronJobId), which is listed.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from .. import wire
from ..errors import InvalidParams, InvalidState, SessionExists, SessionNotFound
from ..format.jsonl import Entry
from ..store import FsyncPolicy, Session
from ..store.files import FileSession, Layout
from ..store.spec import (
    SESSION_FILE,
    SpecLayout,
    SpecSession,
    SpecWriter,
    check_ulid,
    new_metadata,
    new_ulid,
    pi_to_spec,
)

if TYPE_CHECKING:
    from ..store import SessionStore


def ulid_for(session_id: str) -> str:
    """A pi session id (a UUID) as the ULID of the same 128 bits (a UUIDv7's time prefix stays in front,
    so converted sessions sort as they did); any other id gets a new ULID."""
    try:
        value = uuid.UUID(session_id).int
    except ValueError:
        return new_ulid()
    chars = []
    for _ in range(26):
        chars.append("0123456789ABCDEFGHJKMNPQRSTVWXYZ"[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def _resolve(store: SessionStore, raw: str) -> Path:
    """A path a client named, below the root unless store.allowExternalPaths (the same rule as session/open's)."""
    path = Path(raw).expanduser()
    if not path.is_absolute():
        path = store.root / path
    if not store.settings.store.allowExternalPaths:
        Layout(store.root).check_inside(path)
    return path


def _source(store: SessionStore, params: wire.ConvertParams) -> tuple[Session, bool]:
    """The session to copy, and whether this call loaded it (then it is closed afterwards)."""
    if (params.sessionId is None) == (params.path is None):
        raise InvalidParams("session/convert takes exactly one of sessionId and path")
    if params.sessionId is not None:
        return store.live(params.sessionId)[0], False
    assert params.path is not None  # (exactly one of the two, checked above)
    path = _resolve(store, params.path)
    folder = path.parent if path.name == SESSION_FILE else path
    if folder.is_dir() and (folder / SESSION_FILE).is_file():
        check_ulid(folder.name)
        return SpecSession.load(folder, FsyncPolicy.NEVER, read_only=True)[0], True
    if not path.is_file():
        raise SessionNotFound(f"no session file or spec session folder at {path}", path=str(path))
    return FileSession.load(path, FsyncPolicy.NEVER, read_only=True)[0], True


def convert(store: SessionStore, params: wire.ConvertParams) -> wire.ConvertResult:
    source, loaded = _source(store, params)
    try:
        # Writing below another root is as much a reach outside as reading there: the same setting allows it.
        target_root = _resolve(store, params.targetRoot)
        if params.to == "spec":
            return _to_spec(source, target_root, params.leafId)
        return _to_pi(source, target_root, params.cwd or "")
    finally:
        if loaded:
            source.close()


def _to_spec(source: Session, target_root: Path, leaf_id: str | None) -> wire.ConvertResult:
    if isinstance(source, SpecSession):
        raise InvalidParams('the session is in the spec format already; convert it to "pi"', field="to")
    leaf = leaf_id if leaf_id is not None else source.leaf_id
    path = source.path_to(leaf)
    new_id = ulid_for(source.id)
    done = pi_to_spec(new_id, source.header_obj(), path, list(source.tree.entries))
    folder = SpecLayout(target_root).folder(new_id)
    if folder.exists():
        raise SessionExists(
            f"{folder} exists already (converted before?); delete it to convert again",
            path=str(folder),
            sessionId=new_id,
        )
    writer = SpecWriter(folder, FsyncPolicy.ALWAYS, exists=False)  # written once: forced to disk
    writer.create(new_metadata(new_id, done.metadata.createdAt))
    try:
        writer.append(done.records, done.metadata, durable=True)
    finally:
        writer.close()
    return wire.ConvertResult(
        sessionId=new_id,
        path=str(folder),
        format="spec",
        written=len(done.records),
        leftOut=[
            wire.ConvertLoss(kind=item.kind, what=item.what, entryIds=item.entry_ids)  # type: ignore[arg-type]  # the converter's kinds are the wire's, as plain str
            for item in done.left_out
        ],
    )


def _to_pi(source: Session, target_root: Path, cwd: str) -> wire.ConvertResult:
    if not isinstance(source, SpecSession):
        raise InvalidParams('the session is in pi\'s format already; convert it to "spec"', field="to")
    metadata = source.metadata
    objs = [e.obj() for e in source.tree.entries if e.id in source.seq_of]  # (a name set since is metadata)
    if not objs:
        raise InvalidState(f"session {source.id} has no records: there is nothing to convert", sessionId=source.id)
    if metadata.name:
        objs.append(
            {
                "type": "session_info",
                "id": "00000000",
                "parentId": objs[-1]["id"],
                "timestamp": metadata.lastMessageAt,
                "name": metadata.name,
            }
        )
    layout = Layout(target_root)
    if layout.find(source.id) is not None:
        raise SessionExists(
            f"session {source.id} exists already below {target_root} (converted before?)", sessionId=source.id
        )
    target = layout.new_session_path(cwd, metadata.createdAt, source.id)
    copied = FileSession.copied(
        target, source.id, cwd, FsyncPolicy.ALWAYS, [Entry.from_obj(o) for o in objs], timestamp=metadata.createdAt
    )
    copied.close()
    left_out = []
    if metadata.source == "cron" or metadata.cronJobId:
        left_out.append(
            wire.ConvertLoss(
                kind="session",
                what=f"source {metadata.source!r} and cronJobId {metadata.cronJobId!r} "
                "(pi's format has no place for them)",
                entryIds=[],
            )
        )
    if metadata.systemPromptOverride:
        left_out.append(
            wire.ConvertLoss(kind="session", what="systemPromptOverride (pi's format has no place for it)", entryIds=[])
        )
    return wire.ConvertResult(sessionId=source.id, path=str(target), format="pi", written=len(objs), leftOut=left_out)
