"""The tree cache (store/files/treecache.py) and lazily read entry bodies (format/jsonl.py).

Sessions in these tests are small, so the size thresholds are lowered to
zero: every file is mapped and its lines read back by offset, and every
session gets a tree cache when it closes.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from random_sessions import operations, play, start
from session_builders import append, assistant, msg, service, tool_call_assistant, tool_result, user

from sidecar import wire
from sidecar.errors import StorageError
from sidecar.format import jsonl
from sidecar.store.files import treecache
from sidecar.store.files.treecache import cache_path

PROPERTY_SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@contextmanager
def every_file_cached() -> Iterator[None]:
    with mock.patch.object(jsonl, "MAP_THRESHOLD", 0), mock.patch.object(treecache, "MIN_CACHED_BYTES", 0):
        yield


@pytest.fixture
def cached() -> Iterator[None]:
    with every_file_cached():
        yield


def state(svc, session_id: str) -> dict:
    session = svc.session(session_id)
    return {
        "entries": [(e.type, e.id, e.parent_id, e.timestamp, e.raw, e.holds_blobs()) for e in session.tree.entries],
        "labels": dict(session.tree.labels),
        "name": session.tree.name,
        "leaf": session.leaf_id,
        "has_conversation": session.tree.has_conversation,
        "header": session.header.raw,
    }


def answer(svc, session_id: str, **params) -> dict:
    """buildContext as it goes over the wire (decoded back), so kept JSON and built lists compare equal."""
    result = svc.build_context(wire.BuildContextParams(sessionId=session_id, **params))
    messages = result.messages
    # Through JSON text, as a client sees it (lone surrogates escaped as JSON.stringify writes them).
    messages = json.loads(bytes(messages) if isinstance(messages, msgspec.Raw) else jsonl.encode(messages))
    data = msgspec.to_builtins(msgspec.structs.replace(result, messages=[]))
    data["messages"] = messages
    return data


def reopened(root: Path, session_id: str, read_only: bool = True):
    svc = service(root)
    svc.raw_results = True
    opened = svc.open(wire.OpenParams(sessionId=session_id, readOnly=read_only))
    return svc, opened


@PROPERTY_SETTINGS
@given(steps=operations())
def test_random_histories_reopen_from_the_cache_as_from_the_file(steps):
    root = Path(tempfile.mkdtemp(prefix="prop-cache-"))
    try:
        with every_file_cached():
            svc = service(root)
            sid = start(svc)
            forks = play(svc, sid, steps)
            persisted = [s for s in [sid, *forks] if svc.session(s).persisted]
            svc.close_all()  # writes the caches
            for session_id in persisted:
                assert cache_path(root, svc.store.layout.find(session_id)).is_file()
                warm, opened = reopened(root, session_id)
                assert not warm.session(session_id).tree_loaded
                warm_answer = answer(warm, session_id)
                assert not warm.session(session_id).tree_loaded  # answered from the kept context
                cache_path(root, svc.store.layout.find(session_id)).unlink()
                cold, cold_opened = reopened(root, session_id)
                assert cold.session(session_id).tree_loaded
                assert warm_answer == answer(cold, session_id)
                assert (opened.leafId, opened.entryCount, opened.parseErrors) == (
                    cold_opened.leafId,
                    cold_opened.entryCount,
                    cold_opened.parseErrors,
                )
                assert state(warm, session_id) == state(cold, session_id)
                for leaf in [e.id for e in cold.session(session_id).tree.entries][::3]:
                    assert answer(warm, session_id, leafId=leaf) == answer(cold, session_id, leafId=leaf)
                cold.close_all()  # rewrites the cache for the next session's turn
                warm.close_all()
    finally:
        shutil.rmtree(root)


def test_appending_after_a_cached_open_keeps_file_and_cache_in_agreement(sessions_root, cached):
    svc = service(sessions_root)
    sid = svc.create(wire.CreateParams(cwd="/w")).sessionId
    append(svc, sid, msg(user("one")), msg(assistant("two")))
    svc.close_all()
    svc, _ = reopened(sessions_root, sid, read_only=False)
    ids = append(svc, sid, msg(user("three")), msg(assistant("four")))
    assert svc.session(sid).tree_loaded  # an append needs the tree
    before = answer(svc, sid)
    svc.close_all()
    again, opened = reopened(sessions_root, sid)
    assert opened.leafId == ids[-1] and opened.entryCount == 4
    assert not again.session(sid).tree_loaded
    assert answer(again, sid) == before
    assert [m["role"] for m in before["messages"]] == ["user", "assistant", "user", "assistant"]
    # Every entry reads its own line back from its offset.
    lines = again.session(sid).path.read_bytes().split(b"\n")[1:-1]
    assert [e.raw for e in again.session(sid).tree.entries] == lines


def test_a_file_that_grew_behind_our_back_is_read_from_where_the_cache_ends(sessions_root, cached):
    svc = service(sessions_root)
    sid = svc.create(wire.CreateParams(cwd="/w")).sessionId
    first = append(svc, sid, msg(user("one")), msg(assistant("two")))
    path = svc.session(sid).path
    svc.close_all()
    added = {
        "type": "message",
        "id": "added-by-pi",
        "parentId": first[-1],
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": user("written by another program"),
    }
    with open(path, "ab") as file:
        file.write(json.dumps(added, separators=(",", ":")).encode() + b"\n")
    svc, opened = reopened(sessions_root, sid)
    assert opened.leafId == "added-by-pi" and opened.entryCount == 3
    assert answer(svc, sid)["messages"][-1]["content"] == "written by another program"


@pytest.mark.parametrize("change", ["rewritten same size", "truncated", "replaced"])
def test_a_file_changed_otherwise_is_parsed_again(sessions_root, cached, change):
    svc = service(sessions_root)
    sid = svc.create(wire.CreateParams(cwd="/w")).sessionId
    append(svc, sid, msg(user("alpha")), msg(assistant("beta")))
    path = svc.session(sid).path
    svc.close_all()
    data = path.read_bytes()
    if change == "rewritten same size":
        changed = data.replace(b"alpha", b"gamma")
        stat = path.stat()
        path.write_bytes(changed)
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # even the same mtime
    elif change == "truncated":
        changed = b"\n".join(data.split(b"\n")[:2]) + b"\n"
        path.write_bytes(changed)
    else:
        changed = data.replace(b"alpha", b"other text")
        tmp = path.with_name("replacement")
        tmp.write_bytes(changed)
        os.replace(tmp, path)
    svc, _ = reopened(sessions_root, sid)
    assert svc.session(sid).tree_loaded  # parsed, not taken from the cache
    texts = [m["content"] for m in answer(svc, sid)["messages"] if m["role"] == "user"]
    assert texts == {"rewritten same size": ["gamma"], "truncated": ["alpha"], "replaced": ["other text"]}[change]


@pytest.mark.parametrize(
    "damage", ["garbage", "cut short", "entries damaged", "kept context damaged", "other version", "empty"]
)
def test_a_damaged_cache_is_ignored(sessions_root, cached, damage):
    svc = service(sessions_root)
    sid = svc.create(wire.CreateParams(cwd="/w")).sessionId
    ids = append(svc, sid, msg(user("one")), msg(assistant("two")))
    path = svc.session(sid).path
    expected = answer(svc, sid)
    svc.close_all()
    cache_file = cache_path(sessions_root, path)
    data = cache_file.read_bytes()
    if damage == "garbage":
        cache_file.write_bytes(b"\x00not msgpack" * 10)
    elif damage == "empty":
        cache_file.write_bytes(b"")
    elif damage == "cut short":
        cache_file.write_bytes(data[: len(data) // 2])
    elif damage == "other version":
        cache = msgspec.msgpack.decode(data, type=treecache.TreeCache)
        cache.version += 1
        cache_file.write_bytes(msgspec.msgpack.encode(cache))
    elif damage == "kept context damaged":
        cache = msgspec.msgpack.decode(data, type=treecache.TreeCache)
        cache.context.messages = msgspec.Raw(msgspec.msgpack.encode(7))  # not the bytes of a JSON array
        cache_file.write_bytes(msgspec.msgpack.encode(cache))
    else:
        cache = msgspec.msgpack.decode(data, type=treecache.TreeCache)
        cache.columns = msgspec.Raw(b"\x93\x01\x02")  # decodes as an array, not the columns
        cache_file.write_bytes(msgspec.msgpack.encode(cache))
    svc, opened = reopened(sessions_root, sid)
    assert opened.entryCount == 2 and opened.leafId == ids[-1]
    assert answer(svc, sid) == expected
    assert [e.id for e in svc.session(sid).tree.entries] == ids  # the tree, from the file when the cache failed


def test_a_fork_of_a_lazily_read_session_outlives_its_source(sessions_root, cached):
    svc = service(sessions_root)
    sid = svc.create(wire.CreateParams(cwd="/w")).sessionId
    append(svc, sid, msg(user("q")), msg(tool_call_assistant("c1")), msg(tool_result("c1", "body")), msg(user("q2")))
    svc.close_all()
    svc, _ = reopened(sessions_root, sid)
    first, last = svc.session(sid).tree.entries[0].id, svc.session(sid).tree.entries[-1].id
    forked = svc.fork(wire.ForkParams(sessionId=sid, entryId=first))
    assert forked.persisted  # a user message: written at once (pi 1.5)
    svc.close(wire.CloseParams(sessionId=sid))
    append(svc, forked.sessionId, msg(assistant("answer")))
    lines = [json.loads(x) for x in Path(svc.session(forked.sessionId).path).read_text().splitlines()]
    assert [(line["message"]["role"], line["message"]["content"]) for line in lines[1:]][0] == ("user", "q")
    assert len(lines) == 3
    # The source, reopened, still reads its own lines where they are.
    svc2, _ = reopened(sessions_root, sid)
    assert [m["role"] for m in answer(svc2, sid, leafId=last)["messages"]] == [
        "user",
        "assistant",
        "toolResult",
        "user",
    ]


def test_a_file_cut_behind_an_open_session_says_so(sessions_root, cached):
    svc = service(sessions_root)
    sid = svc.create(wire.CreateParams(cwd="/w")).sessionId
    append(svc, sid, msg(user("one " * 100)), msg(assistant("two " * 100)))
    path = svc.session(sid).path
    svc.close_all()
    svc, _ = reopened(sessions_root, sid, read_only=True)
    first_line = path.read_bytes().split(b"\n")[0]
    with open(path, "r+b") as file:
        file.truncate(len(first_line) + 1)
    # The next call notices the cut (issue 28), reads the file again and says so.
    result = svc.build_context(wire.BuildContextParams(sessionId=sid))
    assert result.external is not None and result.external.reloaded == "truncated"
    assert result.messages == [] and result.leafId is None and svc.session(sid).entry_count == 0


def test_moving_a_session_drops_its_cache(sessions_root, cached):
    svc = service(sessions_root)
    sid = svc.create(wire.CreateParams(cwd="/w")).sessionId
    append(svc, sid, msg(user("one")), msg(assistant("two")))
    path = svc.session(sid).path
    svc.close_all()
    assert cache_path(sessions_root, path).exists()
    svc = service(sessions_root)
    svc.archive(wire.ArchiveParams(sessionId=sid))
    assert not cache_path(sessions_root, path).exists()


def test_small_sessions_get_no_cache(sessions_root):
    with (
        mock.patch.object(jsonl, "MAP_THRESHOLD", 256 * 1024),
        mock.patch.object(treecache, "MIN_CACHED_BYTES", 256 * 1024),
    ):
        small_sessions_get_no_cache(sessions_root)


def small_sessions_get_no_cache(sessions_root):
    svc = service(sessions_root)
    sid = svc.create(wire.CreateParams(cwd="/w")).sessionId
    append(svc, sid, msg(user("one")), msg(assistant("two")))
    path = svc.session(sid).path
    svc.close_all()
    assert not cache_path(sessions_root, path).exists()
    assert not (sessions_root / treecache.TREES_DIR).exists()


def test_a_failed_write_leaves_no_cache_behind(sessions_root, cached, monkeypatch):
    svc = service(sessions_root)
    sid = svc.create(wire.CreateParams(cwd="/w")).sessionId
    append(svc, sid, msg(user("one")), msg(assistant("two")))
    path = svc.session(sid).path
    session = svc.session(sid)
    monkeypatch.setattr(session.writer, "_cut_back", lambda fd, start: False)  # the undo cannot be verified

    def failing_write(fd, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("sidecar.store.files.writer._write_all", failing_write)
    with pytest.raises(StorageError):
        append(svc, sid, msg(user("three")))
    svc.close_all()
    assert not cache_path(sessions_root, path).exists()  # a latched session's memory is not trusted


def test_a_read_only_session_whose_file_grew_meanwhile_leaves_no_stale_cache(sessions_root, cached):
    writer = service(sessions_root)
    sid = writer.create(wire.CreateParams(cwd="/w")).sessionId
    append(writer, sid, msg(user("one")), msg(assistant("two")))
    reader, _ = reopened(sessions_root, sid, read_only=True)
    _ = reader.session(sid).tree  # parsed as it is now
    added = append(writer, sid, msg(user("three")))  # the writer goes on
    writer.close_all()
    reader.close_all()  # last to close: must not describe the longer file with its shorter tree
    again, opened = reopened(sessions_root, sid)
    assert opened.leafId == added[-1] and opened.entryCount == 3


def test_a_migrated_file_is_cached_with_its_new_offsets(sessions_root, cached):
    from session_builders import header, write_session

    folder = sessions_root / "--w--"
    folder.mkdir()
    path = write_session(
        folder / "2025-01-01T00-00-00-000Z_old.jsonl",
        header("old", version=1),
        [
            {"type": "message", "timestamp": "2025-01-01T00:00:01.000Z", "message": user("v1 question")},
            {"type": "message", "timestamp": "2025-01-01T00:00:02.000Z", "message": assistant("v1 answer")},
        ],
    )
    svc = service(sessions_root)
    opened = svc.open(wire.OpenParams(path=str(path)))
    assert opened.migratedFrom == 1
    expected = answer(svc, "old")
    svc.close_all()
    again, _ = reopened(sessions_root, "old")
    assert answer(again, "old") == expected
    assert [e.raw for e in again.session("old").tree.entries] == path.read_bytes().split(b"\n")[1:-1]


@pytest.mark.parametrize("content", [b"\n" * 10, b"not json at all\n" * 5, b'{"type":"message","id":"x"}\n'])
def test_a_mapped_file_that_is_not_a_session_is_a_clear_error(sessions_root, cached, content):
    from sidecar.errors import DamagedFile

    folder = sessions_root / "--w--"
    folder.mkdir()
    path = folder / "2025-01-01T00-00-00-000Z_bad.jsonl"
    path.write_bytes(content)
    with pytest.raises(DamagedFile, match="is not a session file"):
        service(sessions_root).open(wire.OpenParams(path=str(path)))
    assert path.read_bytes() == content


def test_temp_files_of_killed_cache_writers_are_removed(sessions_root, cached):
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    trees = sessions_root / treecache.TREES_DIR
    trees.mkdir(parents=True)
    leftover = trees / f".abc.msgpack.tmp-{int(dead.stdout)}"
    leftover.write_bytes(b"half a cache")
    alive = trees / f".def.msgpack.tmp-{os.getppid()}"  # a live process (pytest's parent) may still be writing it
    alive.write_bytes(b"in progress")
    svc = service(sessions_root)
    sid = svc.create(wire.CreateParams(cwd="/w")).sessionId
    append(svc, sid, msg(user("one")), msg(assistant("two")))
    svc.close_all()
    assert not leftover.exists() and alive.exists()
    assert cache_path(sessions_root, svc.store.layout.find(sid)).exists()
