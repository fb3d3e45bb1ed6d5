"""Moving a session between the tools: oh-my-pi's file made pi's, and pi's made oh-my-pi's.

The two tools write the same v3 entries but read a file differently
(compat.py): oh-my-pi starts it with a title line and keeps images as
``blob:sha256:`` references into its blob folder; pi reads neither (a title
line first means no header to pi, so it builds an empty context; a reference
reaches its model as image data) and names a session with ``session_info``.

* ``to_pi``: the title line dropped and its title folded into a
  ``session_info`` entry appended after the last entry (so the leaf's path,
  and with it the context, stay as they were), every reference replaced by
  its image's base64. A file without a title line is named by its header's
  ``title`` the same way, unless pi already names it.
* ``to_omp``: a title line (oh-my-pi's fixed width) put first, holding pi's
  name cleaned as oh-my-pi cleans a name; the images of messages and custom
  messages moved to oh-my-pi's blob folder, as oh-my-pi stores them.

Each file is rewritten atomically, its old bytes kept beside it as
``<file>.to-pi.bak`` / ``<file>.to-omp.bak``; a file already in the target
tool's shape is left untouched, so a second run changes nothing. A session
another sidecar holds open for writing is refused and reported; a reference
whose blob is nowhere stays as it is and is reported.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ...errors import InvalidSessionId, SessionLocked
from ...format.codec import decode_object
from ...format.jsonl import BLOB_MARK, Entry, NotASession, parse_path, serialize
from ...format.jsstr import session_name
from ...format.migrate import new_entry_id
from ...format.titleslot import clean_title, slot_line
from ..compat import omp_blob_folder
from ..ids import iso_now
from ..payload import BlobStore, externalize, resolve
from .blobmove import blob_references, session_files
from .layout import Layout
from .lock import lock_path, unlock
from .writer import atomic_write

Tool = Literal["pi", "omp"]
_OMP_AGENT_PARTS = (".omp", "agent", "sessions")


@dataclass
class ToolMoveReport:
    changed: list[str] = field(default_factory=list)  # files rewritten (old bytes in <file>.to-<tool>.bak)
    unchanged: list[str] = field(default_factory=list)  # files already in the tool's shape
    images: int = 0  # image references inlined (to pi) or images moved to blobs (to oh-my-pi)
    named: list[str] = field(default_factory=list)  # "<file>: <name>" carried into the target tool's place
    missing: list[str] = field(default_factory=list)  # references whose blob is nowhere
    locked: list[str] = field(default_factory=list)  # files another sidecar holds
    unknown: list[str] = field(default_factory=list)  # ids or paths given that name no session file
    damaged: list[str] = field(default_factory=list)  # "<file>: why": files that are no session (left alone)


def backup_of(path: Path, tool: Tool) -> Path:
    return path.with_name(f"{path.name}.to-{tool}.bak")


def move_sessions(root: Path, tool: Tool, sessions: list[str] | None = None) -> ToolMoveReport:
    """Make the sessions named (ids below ``root`` or file paths; default every session below ``root``)
    readable by ``tool``: see the module doc."""
    root = Path(root)
    report = ToolMoveReport()
    for path in _targets(root, sessions, report):
        try:
            lock_fd = lock_path(path)
        except SessionLocked:
            report.locked.append(str(path))
            continue
        try:
            if tool == "pi":
                _to_pi(path, root, report)
            else:
                _to_omp(path, root, report)
        except NotASession as exc:
            report.damaged.append(f"{path}: {exc}")
        finally:
            unlock(lock_fd)
    return report


def _targets(root: Path, sessions: list[str] | None, report: ToolMoveReport) -> list[Path]:
    if not sessions:
        return session_files(root)
    layout = Layout(root)
    found: list[Path] = []
    for given in sessions:
        path = Path(given).expanduser()
        if path.suffix == ".jsonl" or "/" in given:
            if path.is_file():
                found.append(path.absolute())
            else:
                report.unknown.append(given)
            continue
        try:
            located = layout.find(given)
        except InvalidSessionId:  # not a session id at all
            located = None
        if located is None:
            report.unknown.append(given)
        else:
            found.append(located)
    return found


def _omp_agent_folder(path: Path) -> Path | None:
    """The oh-my-pi agent folder (``~/.omp/agent``) whose sessions folder holds ``path``, if any."""
    parts = path.absolute().parts
    for end in range(len(parts), 2, -1):
        if tuple(parts[end - 3 : end]) == _OMP_AGENT_PARTS:
            return Path(*parts[: end - 1])
    return None


def _blob_folder(path: Path, root: Path) -> Path:
    agent = _omp_agent_folder(path)
    return agent / "blobs" if agent is not None else omp_blob_folder(root)


def _pi_name(items: list) -> tuple[bool, str | None, str | None]:
    """Whether any ``session_info`` is there, pi's name (the last one's, trimmed) and that entry's time."""
    for item in reversed(items):
        if isinstance(item, Entry) and item.type == "session_info":
            name = decode_object(item.raw).get("name")
            text = name.strip() if isinstance(name, str) else ""
            return True, text or None, item.timestamp
    return False, None, None


def _to_pi(path: Path, root: Path, report: ToolMoveReport) -> None:
    parsed = parse_path(path)
    items: list[Entry | bytes] = []
    reader = BlobStore(root, also_read=(omp_blob_folder(root), _blob_folder(path, root)))
    changed = bool(parsed.prefix)
    for item in parsed.items:
        if isinstance(item, Entry) and BLOB_MARK in item.raw:
            obj = decode_object(item.raw)
            before = blob_references(obj)
            resolve(obj, reader)
            after = blob_references(obj)
            report.images += len(before) - len(after)
            report.missing += [f"{path}: {ref}" for ref in after]
            if len(after) < len(before):
                item = Entry.from_obj(obj)  # only the lines that held a reference are encoded again
                changed = True
        items.append(item.held() if isinstance(item, Entry) else item)
    has_info, pi_name, _ = _pi_name(items)
    title = parsed.header.obj().get("title")
    if parsed.title_slot is not None:
        wanted = parsed.title_slot.name  # oh-my-pi's name; its header's title is not read then
        fold = wanted != pi_name
    else:
        wanted = title if isinstance(title, str) and title else None
        fold = wanted is not None and not has_info
    if fold:
        ids = {item.id for item in items if isinstance(item, Entry) and item.id}
        last = next((item.id for item in reversed(items) if isinstance(item, Entry) and item.id), None)
        # pi's leaf is the file's last entry: the name goes after it, so the leaf's path stays the same.
        info = {
            "type": "session_info",
            "id": new_entry_id(ids),
            "parentId": last,
            "timestamp": iso_now(),
            "name": session_name(wanted or ""),
        }
        items.append(Entry.from_obj(info))
        report.named.append(f"{path}: {wanted or '(no name)'}")
        changed = True
    if not changed:
        report.unchanged.append(str(path))
        return
    atomic_write(path, serialize(parsed.header, items, b""), backup=backup_of(path, "pi"))
    report.changed.append(str(path))


def _to_omp(path: Path, root: Path, report: ToolMoveReport) -> None:
    parsed = parse_path(path)
    blobs = BlobStore(root, _blob_folder(path, root))
    items: list[Entry | bytes] = []
    changed = False
    for item in parsed.items:
        if isinstance(item, Entry) and b'"image"' in item.raw:
            obj = decode_object(item.raw)
            moved = externalize(obj, blobs)
            if moved is not obj:
                report.images += len(blob_references(moved)) - len(blob_references(obj))
                item = Entry.from_obj(moved)
                changed = True
        items.append(item.held() if isinstance(item, Entry) else item)
    prefix = parsed.prefix
    if parsed.title_slot is None:
        _, pi_name, named_at = _pi_name(items)
        title = clean_title(pi_name or "")
        if title:
            prefix = slot_line(title, named_at or iso_now(), "user") + b"\n"
            report.named.append(f"{path}: {title}")
        else:
            stamp = parsed.header.timestamp or iso_now()
            prefix = slot_line("", stamp, None) + b"\n"
        changed = True
    if not changed:
        report.unchanged.append(str(path))
        return
    atomic_write(path, serialize(parsed.header, items, prefix), backup=backup_of(path, "omp"))
    report.changed.append(str(path))
