"""Opening real files: damaged lines, torn tails, files that are not sessions, migration on disk."""

from __future__ import annotations

import json
import os

import pytest
from session_builders import (
    adopt_files,
    append,
    assistant,
    context,
    header,
    line,
    message,
    msg,
    read_lines,
    service,
    stored_at,
    user,
    write_session,
)

from sidecar import wire
from sidecar.errors import DamagedFile
from sidecar.store.files.layout import encode_cwd

CWD = "/work/proj"


def session_path(root, session_id="sess-1"):
    return root / encode_cwd(CWD) / f"2025-01-01T00-00-00-000Z_{session_id}.jsonl"


def v3_file(root, extra_lines=(), tail=""):
    path = session_path(root)
    write_session(path, header(), [message("a", None, user("q")), message("b", "a", assistant("r")), *extra_lines])
    if tail:
        with open(path, "a", encoding="utf-8") as out:
            out.write(tail)
    return path


def test_damaged_lines_are_counted_reported_and_the_file_is_not_rewritten(sessions_root):
    path = v3_file(sessions_root, ["", "{not json", "   ", message("c", "b", user("after"))])
    before = path.read_bytes()
    svc = service(sessions_root)
    adopt_files(svc)
    path = stored_at(svc, path)
    opened = svc.open(wire.OpenParams(sessionId="sess-1"))
    assert opened.parseErrors == 3
    assert opened.entryCount == 3 and opened.leafId == "c"
    assert opened.migratedFrom is None
    assert path.read_bytes() == before
    assert [m["role"] for m in context(svc, "sess-1").messages] == ["user", "assistant", "user"]


def test_a_torn_last_line_is_ignored_and_moved_aside_before_the_next_append(sessions_root):
    torn = '{"type":"message","id":"c","parentId":"b","timesta'
    path = v3_file(sessions_root, tail=torn)
    svc = service(sessions_root)
    adopt_files(svc)
    path = stored_at(svc, path)
    opened = svc.open(wire.OpenParams(sessionId="sess-1"))
    assert opened.parseErrors == 1 and opened.leafId == "b"
    [new_id] = append(svc, "sess-1", msg(user("next")))
    records = read_lines(path)  # every line parses: nothing glued onto the torn bytes
    assert [r["id"] for r in records[1:]] == ["a", "b", new_id]
    assert records[-1]["parentId"] == "b"
    aside = path.with_name(path.name + ".torn")
    assert aside.read_text(encoding="utf-8") == torn + "\n"


def test_a_complete_last_line_without_newline_gets_one_before_the_next_line(sessions_root):
    path = session_path(sessions_root)
    path.parent.mkdir(parents=True)
    path.write_text(
        line(header()) + "\n" + line(message("a", None, user())) + "\n" + line(message("b", "a", assistant()))
    )
    svc = service(sessions_root)
    adopt_files(svc)
    path = stored_at(svc, path)
    assert svc.open(wire.OpenParams(sessionId="sess-1")).parseErrors == 0
    [new_id] = append(svc, "sess-1", msg(user("next")))
    assert [r["id"] for r in read_lines(path)[1:]] == ["a", "b", new_id]


@pytest.mark.parametrize(
    "content",
    [
        "",
        "\n",
        "garbage\n",
        line(message("a", None, user())) + "\n" + line(header()) + "\n",
        line({"type": "session", "timestamp": "x", "cwd": "/"}) + "\n",
    ],
    ids=["empty", "newline", "garbage", "entry-before-header", "header-without-id"],
)
def test_a_file_that_is_not_a_session_is_a_clear_error_and_is_left_alone(sessions_root, content):
    written = session_path(sessions_root)
    written.parent.mkdir(parents=True)
    written.write_text(content)
    svc = service(sessions_root)
    adopt_files(svc)  # on PostgreSQL only a file with a header line becomes a session (the others stay files)
    path = stored_at(svc, written)
    with pytest.raises(DamagedFile) as error:
        svc.open(wire.OpenParams(sessionId="sess-1"))
    assert "not a session" in error.value.message
    assert path.read_text() == content
    if path == written:  # the file store: nothing written beside it
        assert sorted(os.listdir(path.parent)) == [path.name]


def test_a_file_starting_with_a_byte_order_mark_is_refused_as_pi_1_5_reads_no_entries_from_it(sessions_root):
    # pi 0.73.1 read such a file; pi 1.5 finds no header in it and will not open it. We refuse it
    # unchanged, saying what to fix, and never write a BOM ourselves.
    path = session_path(sessions_root)
    path.parent.mkdir(parents=True)
    content = b"\xef\xbb\xbf" + (line(header()) + "\n" + line(message("a", None, user())) + "\n").encode()
    path.write_bytes(content)
    svc = service(sessions_root)
    with pytest.raises(DamagedFile) as error:
        svc.open(wire.OpenParams(sessionId="sess-1"))
    assert "byte order mark" in error.value.message and "first 3 bytes" in error.value.message
    assert path.read_bytes() == content
    path.write_bytes(content[3:])  # fixed as the message says
    assert service(sessions_root).open(wire.OpenParams(sessionId="sess-1")).entryCount == 1


def v1_file(root):
    path = session_path(root)
    write_session(
        path,
        header(version=None),
        [
            {"type": "message", "timestamp": "2025-01-01T00:00:01.000Z", "message": user("one")},
            {"type": "message", "timestamp": "2025-01-01T00:00:02.000Z", "message": assistant("two")},
            {"type": "message", "timestamp": "2025-01-01T00:00:03.000Z", "message": user("three")},
            {
                "type": "compaction",
                "timestamp": "2025-01-01T00:00:04.000Z",
                "summary": "S",
                "firstKeptEntryIndex": 3,
                "tokensBefore": 50,
            },
            {
                "type": "message",
                "timestamp": "2025-01-01T00:00:05.000Z",
                "message": {
                    "role": "hookMessage",
                    "customType": "h",
                    "content": "hooked",
                    "display": True,
                    "timestamp": 5,
                },
            },
        ],
    )
    return path


def test_an_old_file_is_migrated_rewritten_atomically_and_backed_up(sessions_root):
    written = v1_file(sessions_root)
    original = written.read_bytes()
    svc = service(sessions_root)
    adopt_files(svc)
    path = stored_at(svc, written)
    opened = svc.open(wire.OpenParams(sessionId="sess-1"))
    assert opened.migratedFrom == 1 and opened.header["version"] == 3
    backup = path.with_name(path.name + ".v1.bak")
    assert backup.read_bytes() == original
    if path == written:  # the file store: no temp file left beside them
        assert sorted(os.listdir(path.parent)) == sorted([path.name, backup.name])
    records = read_lines(path)
    assert records[0]["version"] == 3
    assert all("id" in r and "parentId" in r for r in records[1:])
    assert records[4]["firstKeptEntryId"] == records[3]["id"]
    assert records[5]["message"]["role"] == "custom"
    ctx = context(svc, "sess-1")
    assert [m["role"] for m in ctx.messages] == ["compactionSummary", "user", "custom"]
    assert ctx.messages[1]["content"] == "three"
    # Reopening finds a current file: no second migration, no rewrite.
    migrated = path.read_bytes()
    svc.close(wire.CloseParams(sessionId="sess-1"))
    again = service(sessions_root).open(wire.OpenParams(sessionId="sess-1"))
    assert again.migratedFrom is None and path.read_bytes() == migrated
    assert backup.read_bytes() == original


def test_a_migrated_file_keeps_damaged_lines_and_appends_cleanly(sessions_root):
    path = v1_file(sessions_root)
    with open(path, "a", encoding="utf-8") as out:
        out.write("{damaged\n" + '{"type":"message","timest')  # a damaged line, then a torn one
    svc = service(sessions_root)
    adopt_files(svc)
    path = stored_at(svc, path)
    opened = svc.open(wire.OpenParams(sessionId="sess-1"))
    assert opened.migratedFrom == 1 and opened.parseErrors == 2
    assert "{damaged" in path.read_text().splitlines()
    append(svc, "sess-1", msg(user("after migration")))
    lines = path.read_text().splitlines()
    assert json.loads(lines[-1])["message"]["content"] == "after migration"
    assert sum(1 for raw in lines if raw.startswith("{damaged")) == 1
