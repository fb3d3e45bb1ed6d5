"""Opening a session from PostgreSQL parses its rows chunk by chunk as they arrive (lease.py,
format/linelist.py): what it gives is what the file store gives for the same file, with the
rows read in chunks of any size or in one result, read-only or with the lease taken.

The session: oh-my-pi's title line, damage before and after the header, labels, names, custom
entries, a compaction, branches, CR, non-UTF-8 and control bytes, a blob reference, and a torn
last line; over a thousand lines, so a chunk boundary falls everywhere the default size puts it.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import msgspec
import psycopg
import pytest

from sidecar.config import Settings
from sidecar.context.build import build_context
from sidecar.format.titleslot import slot_line
from sidecar.store.base import FsyncPolicy
from sidecar.store.files.session import FileSession as Session
from sidecar.store.postgres import lease
from sidecar.store.postgres.db import connect_checked
from sidecar.store.postgres.opening import postgres_store
from sidecar.store.postgres.schema import ensure_schema
from sidecar.store.postgres.transfer import import_root

SESSION_ID = "0b7c1a2e-5f3d-4e6a-9b8c-7d6e5f4a3b2c"


def _entry(kind: str, entry_id: str, parent: str | None, n: int, **fields: object) -> bytes:
    obj = {
        "type": kind,
        "id": entry_id,
        "parentId": parent,
        "timestamp": f"2026-01-01T00:{n // 60 % 60:02d}:{n % 60:02d}.000Z",
    }
    obj.update(fields)
    return json.dumps(obj, separators=(",", ":")).encode()


def _message(entry_id: str, parent: str | None, n: int, role: str, text: str) -> bytes:
    body: dict[str, object] = {"role": role, "content": [{"type": "text", "text": text}], "timestamp": n}
    if role == "assistant":
        body.update(
            provider="anthropic",
            model=f"m{n % 3}",
            stopReason="stop",
            usage={"input": n, "output": 5, "totalTokens": n + 5},
        )
    return _entry("message", entry_id, parent, n, message=body)


def session_file() -> bytes:
    rng = random.Random(12)
    rows = [
        slot_line("A title", "2026-01-01T00:00:00.000Z", "user").rstrip(b"\n"),
        b"{damage before the header",
        json.dumps(
            {
                "type": "session",
                "version": 3,
                "id": SESSION_ID,
                "timestamp": "2026-01-01T00:00:00.000Z",
                "cwd": "/work/proj",
            }
        ).encode(),
    ]
    ids: list[str] = []
    parent = None
    for n in range(1200):
        entry_id = f"e{n:05d}"
        if ids and rng.random() < 0.05:
            parent = rng.choice(ids)  # a branch
        pick = rng.randrange(12)
        if pick == 0 and ids:
            rows.append(_entry("label", entry_id, parent, n, targetId=rng.choice(ids), label=f"l{n}"))
        elif pick == 1:
            rows.append(_entry("session_info", entry_id, parent, n, name=f"name {n}"))
        elif pick == 2:
            rows.append(_entry("custom", entry_id, parent, n, customType="ext", data={"n": n, "text": "ÿ"}))
        elif pick == 3 and len(ids) > 10:
            rows.append(
                _entry(
                    "compaction", entry_id, parent, n, summary=f"sum {n}", firstKeptEntryId=ids[-5], tokensBefore=1000
                )
            )
        elif pick == 4:
            rows.append(rng.choice([b"", b"  ", b"{not json", b"[1]", b"\xff\xfe raw bytes, not UTF-8"]))
            continue
        elif pick == 5:
            rows.append(_message(entry_id, parent, n, "user", "ends in CR") + b"\r")
        elif pick == 6:
            rows.append(_entry("custom", entry_id, parent, n, customType="raw").replace(b'"raw"', b'"r\x01\x02\x7f"'))
        elif pick == 7:
            rows.append(_message(entry_id, parent, n, "user", 'see "blob:sha256:' + "b" * 64 + '"'))
        else:
            rows.append(
                _message(entry_id, parent, n, rng.choice(["user", "assistant"]), f"text {n} " * rng.randrange(1, 40))
            )
        ids.append(entry_id)
        parent = entry_id
    return b"\n".join(rows) + b"\n" + b'{"type":"message","id":"torn","parentId":null,"message":{"role":"us'


def _answers(session: Session) -> list:
    tree = session.tree
    entries = [(e.type, e.id, e.parent_id, e.timestamp, e.raw, e.holds_blobs()) for e in tree.entries]
    answers = [
        session.header.raw,
        session.prefix,
        session.title_slot,
        session.title_fault,
        session.parse_errors,
        session.leaf_id,
        tree.labels,
        tree.name,
        entries,
        tree.dangling(),
    ]
    for leaf in [session.leaf_id, *list(tree.by_id)[::97]]:
        context = build_context(tree.path(leaf))
        answers.append((context.messages, context.entry_ids, context.model, context.thinking_level))
    return answers


def migrated_session(tmp_path: Path, pg_url: str, data: bytes) -> Path:
    """``data`` as a session file of a root below ``tmp_path``, migrated into the database; the file's path."""
    folder = tmp_path / "root" / "--work-proj--"
    folder.mkdir(parents=True)
    path = folder / f"2026-01-01T00-00-00-000Z_{SESSION_ID}.jsonl"
    path.write_bytes(data)
    database = connect_checked(pg_url)
    try:
        ensure_schema(database)
        import_root(database, tmp_path / "root")
    finally:
        database.close()
    return path


@pytest.fixture
def stored(tmp_path: Path, pg_url: str) -> tuple[Path, Settings, list]:
    path = migrated_session(tmp_path, pg_url, session_file())
    on_files, _ = Session.load(path, FsyncPolicy.ASSISTANT, read_only=True)
    try:
        expected = _answers(on_files)
    finally:
        on_files.close()
    settings = Settings()
    settings = msgspec.structs.replace(settings, store=msgspec.structs.replace(settings.store, databaseUrl=pg_url))
    return tmp_path / "host", settings, expected


@pytest.mark.parametrize("read_only", [True, False], ids=["read-only", "writing"])
@pytest.mark.parametrize("rows", ["chunks of 256", "chunks of 7", "one result"])
def test_an_open_from_rows_gives_what_the_file_store_gives(stored, monkeypatch, rows, read_only) -> None:
    root, settings, expected = stored
    if rows == "chunks of 7":
        monkeypatch.setattr(lease, "STREAM_CHUNK", 7)
    elif rows == "one result":
        monkeypatch.setattr(lease, "_CAN_STREAM", False)
    fed: list[int] = []
    feed = lease.LineParser.feed
    monkeypatch.setattr(lease.LineParser, "feed", lambda self, lines: (fed.append(len(lines)), feed(self, lines))[1])
    store = postgres_store(root, settings)
    try:
        session, report = store.open(SESSION_ID, None, read_only)
        assert _answers(session) == expected
        assert report.parse_errors == expected[4] > 0
        assert session.title_slot is not None and session.title_slot.title == "A title"
        assert sum(fed) == session.writer.line_count  # every whole line, fed once
        if rows == "one result":
            assert fed == [session.writer.line_count]
        else:
            size = lease.STREAM_CHUNK
            assert len(fed) > 1 and all(n == size for n in fed[:-1])
        assert session.writer.size == len(session_file())
        if not read_only:
            assert session.writer.fence is not None
            assert session.writer.needs_newline is False  # the torn tail is cut before the next append
    finally:
        store.close_all()
        store.db.close()


# -- a read-only holder catching up with another host's appends (PgSession.catch_up) -----------------

CUT = 300  # the lines the reader opened with: the title line, damage, the header and the first entries


def _split() -> tuple[bytes, list[bytes], bytes]:
    """The session file as what the reader opened, the whole lines appended since, and a torn tail."""
    data = session_file()
    lines, torn = data.split(b"\n")[:-1], data[data.rindex(b"\n") + 1 :]
    return b"\n".join(lines[:CUT]) + b"\n", lines[CUT:], torn


@pytest.mark.parametrize("rows", ["chunks of 256", "chunks of 7", "one result"])
def test_a_catch_up_from_rows_gives_what_the_file_stores_follow_gives(
    tmp_path: Path, pg_url: str, monkeypatch, rows
) -> None:
    if rows == "chunks of 7":
        monkeypatch.setattr(lease, "STREAM_CHUNK", 7)
    elif rows == "one result":
        monkeypatch.setattr(lease, "_CAN_STREAM", False)
    opened, appended, torn = _split()
    assert any(b"\xff" in line for line in appended) and any(line.endswith(b"\r") for line in appended)
    assert any(line.startswith(b"{not json") for line in appended) and b"" in appended
    path = migrated_session(tmp_path, pg_url, opened)

    # The file store: a read-only holder follows what another program appended to the file.
    on_files, _ = Session.load(path, FsyncPolicy.ASSISTANT, read_only=True)
    settings = Settings()
    settings = msgspec.structs.replace(settings, store=msgspec.structs.replace(settings.store, databaseUrl=pg_url))
    store = postgres_store(tmp_path / "host", settings)
    try:
        in_rows, _ = store.open(SESSION_ID, None, True)
        assert _answers(in_rows) == _answers(on_files)
        with open(path, "ab") as file:
            file.write(b"\n".join(appended) + b"\n" + torn)
        followed = on_files.follow(wait=False)
        assert followed is not None and len(followed.appended) > 500

        # PostgreSQL: another host appended the same lines (and left the same torn tail); the reader
        # catches up in two steps, as a leaf notice makes it (``upto``), then the rest.
        with psycopg.connect(pg_url, autocommit=True) as conn, conn.transaction():
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO sidecar_lines (session_id, seq, line) VALUES (%s, %s, %s)",
                    [(SESSION_ID, CUT + n, line) for n, line in enumerate(appended)],
                )
            conn.execute(
                "UPDATE sidecar_sessions SET line_count = %s, tail = %s WHERE id = %s",
                (CUT + len(appended), torn, SESSION_ID),
            )
        first = in_rows.catch_up(upto=CUT + 400)
        rest = in_rows.catch_up()
        assert first is not None and rest is not None
        assert [e.id for e in first.appended + rest.appended] == [e.id for e in followed.appended]
        assert in_rows.writer.line_count == CUT + len(appended)
        assert in_rows.known_size == on_files.known_size == len(opened) + len(b"\n".join(appended)) + 1
        assert [(e.offset, e.length) for e in in_rows.tree.entries] == [
            (e.offset, e.length) for e in on_files.tree.entries
        ]
        assert _answers(in_rows) == _answers(on_files)
        assert in_rows.parse_errors == on_files.parse_errors > 0
        assert in_rows.catch_up() is None  # nothing more: the torn tail is not a line yet
    finally:
        on_files.close()
        store.close_all()
        store.db.close()


def test_lines_after_a_header_parse_as_the_file_parses_them() -> None:
    from sidecar.format.jsonl import parse_tail
    from sidecar.format.linelist import LineParser

    _, appended, _ = _split()
    data = b"\n".join(appended) + b"\n"
    expected = parse_tail(data, 1234)
    parser = LineParser.after_header(1234)
    parser.feed(appended[:100])
    parser.feed(appended[100:])
    got = parser.finish(b"")
    assert got.header is None and got.size == 1234 + expected.size == 1234 + len(data)
    assert got.parse_errors == expected.parse_errors > 0
    shape = lambda items: [
        (i.type, i.id, i.parent_id, i.raw, i.offset, i.length, i.has_blobs) if not isinstance(i, bytes) else i
        for i in items
    ]
    assert shape(got.items) == shape(expected.items)
