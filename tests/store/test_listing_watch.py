"""The listing index's warm path: folders watched by inotify are not looked at until they change;
the full-text index is built off the request path, and a query meanwhile is still right;
hidden temp files of dead processes are removed when a folder is scanned."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from session_builders import assistant, header, message, service, user, write_session

from sidecar import wire
from sidecar.store.files.layout import encode_cwd
from sidecar.store.index import build as indexbuild
from sidecar.store.index import sqlite as index_module
from sidecar.store.index.watch import IN_Q_OVERFLOW, parse


def listed(svc, **params):
    return svc.list(wire.ListParams(all=True, limit=1000, **params)).sessions


def make_root(root: Path, folders: int, per_folder: int, words: str = "alpha beta") -> dict[str, Path]:
    paths = {}
    for f in range(folders):
        cwd = f"/work/p{f}"
        for n in range(per_folder):
            sid = f"s{f}-{n}"
            path = root / encode_cwd(cwd) / f"2025-01-01T00-00-{n:02d}-000Z_{sid}.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            write_session(
                path,
                header(sid, cwd=cwd),
                [
                    message("a1", None, user(f"{words} number {f}-{n}")),
                    message("a2", "a1", assistant("ok", usage={"totalTokens": 10 + n})),
                ],
            )
            paths[sid] = path
    return paths


@pytest.fixture
def scans(monkeypatch):
    """The folders each list scans (lstat of every file), in order."""
    seen: list[str] = []
    real = index_module._scan_folder

    def counting(folder):
        seen.append(str(folder))
        return real(folder)

    monkeypatch.setattr(index_module, "_scan_folder", counting)
    return seen


def test_a_warm_list_scans_only_folders_that_changed(sessions_root, scans):
    paths = make_root(sessions_root, 3, 4)
    svc = service(sessions_root)
    if not svc.store.catalog.index._watch.enabled:
        pytest.skip("no inotify here")
    assert len(listed(svc)) == 12
    assert len(scans) == 3
    scans.clear()
    assert len(listed(svc)) == 12
    assert scans == []  # nothing changed: no folder looked at

    # Another process appends to one file: that folder (only) is scanned, and the list shows the append.
    target = paths["s1-2"]
    code = (
        "import sys; open(sys.argv[1], 'a').write("
        '\'{"type":"message","id":"x1","parentId":"a2","timestamp":"2025-01-01T00:00:09.000Z",'
        '"message":{"role":"user","content":"appended elsewhere"}}\\n\')'
    )
    subprocess.run([sys.executable, "-c", code, str(target)], check=True)
    found = {s.sessionId: s for s in listed(svc)}
    assert found["s1-2"].messageCount == 3
    assert scans == [str(target.parent)]
    scans.clear()
    assert [s.sessionId for s in listed(svc, query="appended elsewhere")] == ["s1-2"]
    assert scans == []

    # A touch (mtime only) counts as a change too.
    os.utime(paths["s0-0"], ns=(1_000_000_000, 1_000_000_000))
    listed(svc)
    assert scans == [str(paths["s0-0"].parent)]
    scans.clear()

    # A queue overflow loses events: every folder is scanned once, then trusted again.
    svc.store.catalog.index._watch.apply([(-1, IN_Q_OVERFLOW, b"")])
    assert len(listed(svc)) == 12
    assert sorted(scans) == sorted({str(p.parent) for p in paths.values()})
    scans.clear()
    listed(svc)
    assert scans == []

    # A new folder appears: scanned (and then watched), the others not.
    more = make_root(sessions_root / ".aside", 1, 1)  # built aside (a dot folder is not listed), moved in whole
    folder = next(iter(more.values())).parent
    os.rename(folder, sessions_root / "--work-new--")
    assert len(listed(svc)) == 13
    assert scans == [str(sessions_root / "--work-new--")]
    scans.clear()

    # A folder renamed away: its sessions go, and a folder given its name later is watched anew.
    gone = paths["s2-0"].parent
    os.rename(gone, sessions_root / ".hidden-away")
    assert len(listed(svc)) == 9
    os.rename(sessions_root / ".hidden-away", gone)
    assert len(listed(svc)) == 13
    scans.clear()
    write_session(
        gone / "2025-01-02T00-00-00-000Z_late.jsonl",
        header("late", cwd="/work/p2"),
        [message("a1", None, user("late one"))],
    )
    assert "late" in {s.sessionId for s in listed(svc)}
    assert scans == [str(gone)]
    svc.store.catalog.index.close()


def test_without_inotify_every_list_checks_every_folder(sessions_root, scans, monkeypatch):
    monkeypatch.setenv("SESSION_SIDECAR_INOTIFY", "0")
    paths = make_root(sessions_root, 2, 3)
    svc = service(sessions_root)
    assert not svc.store.catalog.index._watch.enabled
    listed(svc)
    scans.clear()
    listed(svc)
    assert len(scans) == 2
    with open(paths["s0-1"], "a") as handle:
        handle.write(
            '{"type":"session_info","id":"n1","parentId":"a2","timestamp":"2025-01-01T00:00:09.000Z",'
            '"name":"named elsewhere"}\n'
        )
    assert {s.sessionId: s.name for s in listed(svc)}["s0-1"] == "named elsewhere"


def test_parse_reads_every_event_of_a_buffer():
    import struct

    raw = struct.pack("iIII", 3, 2, 0, 16) + b"a.jsonl".ljust(16, b"\0") + struct.pack("iIII", -1, IN_Q_OVERFLOW, 0, 0)
    assert parse(raw) == [(3, 2, b"a.jsonl"), (-1, IN_Q_OVERFLOW, b"")]


def test_a_query_while_the_full_text_index_is_unbuilt_gives_the_same_answer(sessions_root, monkeypatch):
    make_root(sessions_root, 4, 30, words="needle in a haystack")
    for n in range(5):
        path = sessions_root / "--work-p0--" / f"2025-01-03T00-00-0{n}-000Z_odd{n}.jsonl"
        write_session(
            path,
            header(f"odd{n}", cwd="/work/p0"),
            [
                message("a1", None, user("nothing here")),
                message("a2", "a1", user(f"but a Rare Word {n} later")),
            ],
        )
    started = []
    monkeypatch.setattr(indexbuild.SearchBuilder, "start", lambda self: started.append(1))
    monkeypatch.setattr(indexbuild, "DRAIN_INLINE", 10)  # more pending than a query indexes itself
    svc = service(sessions_root)
    assert len(listed(svc)) == 125
    assert started  # the cold rebuild asked for the full-text index to be built aside
    pending = svc.store.catalog.index._run(lambda c: c.execute("SELECT count(*) FROM pending").fetchone()[0])
    assert pending == 125  # (a row per file: its texts joined)
    unbuilt = {s.sessionId: s.snippet for s in listed(svc, query="rare word")}
    short = {s.sessionId for s in listed(svc, query="3 ")}
    assert svc.store.catalog.index._run(lambda c: c.execute("SELECT count(*) FROM pending").fetchone()[0]) == pending
    assert set(unbuilt) == {f"odd{n}" for n in range(5)}
    assert all(snippet is not None and "**Rare Word**" in snippet for snippet in unbuilt.values())

    monkeypatch.undo()
    svc.store.catalog.index.search_builder.start()
    svc.store.catalog.index.search_builder.thread.join(timeout=60)
    assert svc.store.catalog.index._run(lambda c: c.execute("SELECT count(*) FROM pending").fetchone()[0]) == 0
    built = {s.sessionId: s.snippet for s in listed(svc, query="rare word")}
    assert set(built) == set(unbuilt)
    assert all("**Rare Word**" in snippet for snippet in built.values())
    assert {s.sessionId for s in listed(svc, query="3 ")} == short
    assert len(short) > 0
    svc.store.catalog.index.close()


def test_the_background_build_starts_after_a_cold_rebuild_and_finishes(sessions_root):
    make_root(sessions_root, 2, 40, words="searchable words")
    svc = service(sessions_root)
    listed(svc)
    builder = svc.store.catalog.index.search_builder.thread
    assert builder is not None
    builder.join(timeout=60)
    assert svc.store.catalog.index._run(lambda c: c.execute("SELECT count(*) FROM pending").fetchone()[0]) == 0
    assert len(listed(svc, query="searchable")) == 80
    svc.store.catalog.index.close()


def dead_pid() -> int:
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True
    )
    return int(done.stdout)


def test_temp_files_of_dead_processes_are_removed_when_a_folder_is_scanned(sessions_root):
    paths = make_root(sessions_root, 1, 1)
    folder = next(iter(paths.values())).parent
    old = time.time() - 3600
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        dead = dead_pid()
        names = {
            "dead_tmp": f".2025-01-01T00-00-00-000Z_a.jsonl.tmp-{dead}",
            "dead_new": f".2025-01-01T00-00-00-000Z_b.jsonl.new-{dead}",
            "live": f".2025-01-01T00-00-00-000Z_c.jsonl.new-{live.pid}",
            "ours": f".2025-01-01T00-00-00-000Z_d.jsonl.tmp-{os.getpid()}",
            "fresh": f".2025-01-01T00-00-00-000Z_e.jsonl.new-{dead}",  # just written: maybe another pid namespace's
            "other": f".notes.txt.tmp-{dead}",
        }
        for key, name in names.items():
            (folder / name).write_text("partial")
            if key != "fresh":
                os.utime(folder / name, (old, old))
        svc = service(sessions_root)
        assert len(listed(svc)) == 1
        left = {p.name for p in folder.iterdir()}
        assert names["dead_tmp"] not in left and names["dead_new"] not in left
        assert {names[k] for k in ("live", "ours", "fresh", "other")} <= left

        # A later rescan of the folder (a session changed) removes one left since.
        (folder / f".x.jsonl.new-{dead}").write_text("partial")
        os.utime(folder / f".x.jsonl.new-{dead}", (old, old))
        with open(next(iter(paths.values())), "a") as handle:
            handle.write("\n")
        listed(svc)
        assert not (folder / f".x.jsonl.new-{dead}").exists()
        svc.store.catalog.index.close()
    finally:
        live.kill()
        live.wait()
