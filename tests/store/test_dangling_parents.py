"""Files whose entries name parents that are not there: reported on open, mended by the doctor.

Such files come from pi 0.73.1's fork (and ours before issue 23), which left
label entries out of the copy without re-chaining the entries after them.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from session_builders import (
    adopt_files,
    assistant,
    context,
    entry,
    header,
    read_lines,
    service,
    stored_at,
    user,
    write_session,
)

from sidecar import wire
from sidecar.doctor import run_doctor
from sidecar.errors import SessionLocked
from sidecar.store.files.repair import reconnect_dangling


def broken_fork(root: Path, name: str = "sess-1") -> Path:
    """What pi 0.73.1 writes when it forks across two labels: 'b1' and 'c1' follow labels it left out."""
    return write_session(
        root / "--w--" / f"2025-01-01T00-00-00-000Z_{name}.jsonl",
        header(name),
        [
            entry("message", "a1", None, 1, message=user("first question")),
            entry("message", "a2", "a1", 2, message=assistant("first answer")),
            entry("message", "b1", "lab1", 4, message=user("second question")),
            entry("message", "b2", "b1", 5, message=assistant("second answer")),
            entry("custom", "cu", "b2", 6, customType="ext", data={}),
            entry("compaction", "cp", "cu", 7, summary="so far", firstKeptEntryId="b1", tokensBefore=10),
            entry("message", "c1", "lab2", 9, message=user("third question")),
            entry("message", "c2", "c1", 10, message=assistant("third answer")),
            entry("label", "l3", "c2", 11, targetId="a2", label="kept"),
        ],
    )


def test_open_warns_about_entries_cut_off_from_their_history(sessions_root):
    path = broken_fork(sessions_root)
    svc = service(sessions_root)
    adopt_files(svc)
    opened = svc.open(wire.OpenParams(sessionId="sess-1"))
    [warning] = opened.warnings
    assert warning.kind == "danglingParent"
    assert warning.entryIds == ["b1", "c1"]
    assert "doctor --fix" in warning.message and opened.path in warning.message
    if stored_at(svc, path) == path:  # the file store: the file is named and the doctor runs on it
        assert opened.path == str(path) and "on the file" in warning.message
    else:
        assert "export-root" in warning.message
    # What a reader sees today: the path stops at c1.
    assert len(context(svc, opened.sessionId).messages) == 2
    svc.close_all()


def test_doctor_reports_then_reconnects_each_to_the_entry_written_before_it(sessions_root):
    path = broken_fork(sessions_root)
    before = path.read_bytes()
    out = io.StringIO()
    assert run_doctor(sessions_root, [], fix=False, out=out) == 1
    assert "b1: parent lab1 -> a2" in out.getvalue() and "c1: parent lab2 -> cp" in out.getvalue()
    assert path.read_bytes() == before  # only --fix writes

    out = io.StringIO()
    assert run_doctor(sessions_root, [], fix=True, out=out) == 0
    assert path.with_name(path.name + ".doctor.bak").read_bytes() == before
    lines = read_lines(path)
    by_id = {o["id"]: o for o in lines[1:]}
    assert by_id["b1"]["parentId"] == "a2" and by_id["c1"]["parentId"] == "cp"
    # Every other line kept its bytes.
    old_lines = before.decode().split("\n")
    new_lines = path.read_text().split("\n")
    changed = [i for i, (a, b) in enumerate(zip(old_lines, new_lines)) if a != b]
    assert changed == [3, 7]

    svc = service(sessions_root)
    opened = svc.open(wire.OpenParams(path=str(path)))
    assert opened.warnings == []
    messages = context(svc, opened.sessionId).messages
    assert messages[0]["role"] == "compactionSummary" and messages[0]["summary"] == "so far"
    texts = [m["content"] if isinstance(m["content"], str) else m["content"][0]["text"] for m in messages[1:]]
    assert texts == ["second question", "second answer", "third question", "third answer"]
    assert svc.session(opened.sessionId).tree.labels == {"a2": "kept"}
    svc.close_all()
    assert run_doctor(sessions_root, [], fix=True, out=io.StringIO()) == 0  # nothing left to do: no new backup
    assert not path.with_name(path.name + ".doctor-2.bak").exists()


def test_a_loop_is_never_closed_and_a_first_entry_becomes_a_root(sessions_root):
    path = write_session(
        sessions_root / "--w--" / "2025-01-01T00-00-00-000Z_loop.jsonl",
        header("loop"),
        [
            entry("message", "x1", "gone", 1, message=user("q")),
            entry("message", "x2", "x1", 2, message=assistant("a")),
            entry("message", "x3", "x2", 3, message=user("q2")),
            entry("message", "y1", "gone-too", 4, message=user("other")),
        ],
    )
    report = reconnect_dangling(path)
    assert [(r.entry_id, r.new_parent) for r in report.reconnected] == [("x1", None), ("y1", "x3")]
    assert read_lines(path)[1]["parentId"] is None


def test_the_doctor_leaves_a_file_a_sidecar_holds_open(sessions_root):
    path = broken_fork(sessions_root)
    svc = service(sessions_root)
    svc.open(wire.OpenParams(path=str(path)))
    with pytest.raises(SessionLocked):
        reconnect_dangling(path)
    before = path.read_bytes()
    out = io.StringIO()
    assert run_doctor(sessions_root, [path], fix=True, out=out) == 2
    assert f"in process {os.getpid()}" in out.getvalue() and "close it there" in out.getvalue()
    assert path.read_bytes() == before
    svc.close_all()


def test_a_tree_cache_carries_the_warning(sessions_root, monkeypatch):
    from sidecar.format import jsonl
    from sidecar.store.files import treecache

    monkeypatch.setattr(jsonl, "MAP_THRESHOLD", 0)
    monkeypatch.setattr(treecache, "MIN_CACHED_BYTES", 0)
    path = broken_fork(sessions_root)
    svc = service(sessions_root)
    svc.open(wire.OpenParams(path=str(path)))
    svc.close_all()  # writes the tree cache
    assert any(treecache.cache_path(sessions_root, path).parent.iterdir())
    again = service(sessions_root)
    opened = again.open(wire.OpenParams(path=str(path)))
    assert not again.session(opened.sessionId).tree_loaded  # answered from the cache
    assert [w.entryIds for w in opened.warnings] == [["b1", "c1"]]
    again.close_all()
