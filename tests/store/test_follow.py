"""Another program writing a session file the service holds open (store/files/follow.py, issue 28).

Here the other program is this test appending lines as pi does (one
``write`` per line on an append-mode descriptor); tests/parity/test_pi_follow.py
does the same with pi's own SessionManager.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from session_builders import (
    assistant,
    context,
    header,
    line,
    message,
    msg,
    read_lines,
    service,
    user,
    write_session,
)

from sidecar import wire
from sidecar.errors import SessionChanged
from sidecar.store.files import follow
from sidecar.store.files.treecache import read_cache


def pi_append(path: Path, *objs: dict) -> None:
    """Append entries as pi's appendFileSync does: one write of each line with its newline."""
    with open(path, "ab") as out:
        for obj in objs:
            out.write((line(obj) + "\n").encode("utf-8"))


def opened(tmp_path: Path, entries: list[dict] | None = None, **store):
    root = tmp_path / "sessions"
    path = root / "--work-proj--" / "2025-01-01T00-00-00-000Z_s1.jsonl"
    write_session(
        path,
        header("s1"),
        entries if entries is not None else [message("u1", None, user("one")), message("a1", "u1", assistant("two"))],
    )
    svc = service(root, **store)
    svc.open(wire.OpenParams(sessionId="s1"))
    return svc, path


def texts(result: wire.BuildContextResult) -> list:
    return [m["content"] if isinstance(m["content"], str) else m["content"][0]["text"] for m in result.messages]


def test_build_context_shows_entries_another_program_appended_without_a_reopen(tmp_path):
    svc, path = opened(tmp_path)
    pi_append(path, message("u2", "a1", user("three")), message("a2", "u2", assistant("four")))
    result = context(svc, "s1")
    assert texts(result) == ["one", "two", "three", "four"]
    assert result.leafId == "a2"
    assert result.external is not None and result.external.entryIds == ["u2", "a2"]
    assert result.external.reloaded is None
    # Reported once: the next call finds the file as it saw it.
    assert context(svc, "s1").external is None


def test_the_next_append_lands_after_the_other_programs_entries(tmp_path):
    svc, path = opened(tmp_path)
    pi_append(path, message("u2", "a1", user("three")))
    result = svc.append(wire.AppendParams(sessionId="s1", entries=[msg(assistant("four"))]))
    assert result.entries[0].parentId == "u2"
    assert result.external is not None and result.external.entryIds == ["u2"]
    lines = read_lines(path)
    assert [o.get("parentId") for o in lines[1:]] == [None, "u1", "a1", "u2"]
    # One path holds every message, as pi would load it.
    assert texts(context(svc, "s1")) == ["one", "two", "three", "four"]


def test_expected_leaf_refuses_an_append_after_another_program_moved_it(tmp_path):
    svc, path = opened(tmp_path)
    size = path.stat().st_size
    pi_append(path, message("u2", "a1", user("three")), message("a2", "u2", assistant("four")))
    grown = path.stat().st_size
    with pytest.raises(SessionChanged) as caught:
        svc.append(wire.AppendParams(sessionId="s1", entries=[msg(user("mine"))], expectedLeafId="a1"))
    error = caught.value
    assert error.code == -33012 and error.data["kind"] == "sessionChanged"
    assert error.data["leafId"] == "a2" and error.data["expectedLeafId"] == "a1"
    assert error.data["entryIds"] == ["u2", "a2"]
    assert [e["id"] for e in error.data["entries"]] == ["u2", "a2"]
    assert error.data["entries"][0]["message"]["content"] == "three"
    assert path.stat().st_size == grown > size  # nothing written
    # With the leaf it now knows, the client's append goes through, after pi's entries.
    result = svc.append(wire.AppendParams(sessionId="s1", entries=[msg(user("mine"))], expectedLeafId="a2"))
    assert result.entries[0].parentId == "a2"


def test_expected_leaf_that_still_holds_writes(tmp_path):
    svc, path = opened(tmp_path)
    result = svc.append(wire.AppendParams(sessionId="s1", entries=[msg(user("x"))], expectedLeafId="a1"))
    assert result.entries[0].parentId == "a1" and result.external is None


def test_session_changed_names_only_ids_when_the_unseen_entries_are_large(tmp_path):
    svc, path = opened(tmp_path)
    big = "x" * 300_000
    pi_append(path, message("u2", "a1", user(big)))
    with pytest.raises(SessionChanged) as caught:
        svc.append(wire.AppendParams(sessionId="s1", entries=[msg(user("y"))], expectedLeafId="a1"))
    assert caught.value.data["entryIds"] == ["u2"] and "entries" not in caught.value.data


def test_our_own_appends_are_not_taken_for_another_writers(tmp_path):
    svc, path = opened(tmp_path)
    for n in range(20):
        result = svc.append(wire.AppendParams(sessionId="s1", entries=[msg(user(f"m{n}"))]))
        assert result.external is None
    session = svc.session("s1")
    assert not session.changed_behind()
    assert len(session.tree.entries) == 22 and len(read_lines(path)) == 23


def test_alternating_writers_keep_every_message_on_one_path(tmp_path):
    svc, path = opened(tmp_path)
    leaf = "a1"
    for n in range(50):
        pi_append(path, message(f"p{n}", leaf, user(f"pi {n}")))
        result = svc.append(wire.AppendParams(sessionId="s1", entries=[msg(assistant(f"sidecar {n}"))]))
        leaf = result.leafId
    got = texts(context(svc, "s1"))
    assert len(got) == 2 + 100
    assert got[2:] == [t for n in range(50) for t in (f"pi {n}", f"sidecar {n}")]
    # Reopened from the file, the same path.
    svc.close_all()
    again = service(tmp_path / "sessions")
    again.open(wire.OpenParams(sessionId="s1"))
    assert texts(context(again, "s1")) == got


def test_a_rewrite_behind_our_back_is_read_again_and_reported(tmp_path):
    svc, path = opened(tmp_path)
    svc.append(wire.AppendParams(sessionId="s1", entries=[msg(user("ours"))]))
    # Another program writes the file anew, in place (pi's _rewriteFile): other entries.
    write_session(path, header("s1"), [message("x1", None, user("new start")), message("x2", "x1", assistant("ok"))])
    result = context(svc, "s1")
    assert result.external is not None and result.external.reloaded in ("rewritten", "truncated")
    assert texts(result) == ["new start", "ok"] and result.leafId == "x2"
    assert svc.append(wire.AppendParams(sessionId="s1", entries=[msg(user("next"))])).entries[0].parentId == "x2"
    assert [o["id"] for o in read_lines(path)[1:3]] == ["x1", "x2"]


def test_a_longer_rewrite_is_not_taken_for_growth(tmp_path):
    svc, path = opened(tmp_path)
    write_session(
        path,
        header("s1"),
        [
            message("x1", None, user("a much longer first message than before")),
            message("x2", "x1", assistant("and more")),
            message("x3", "x2", user("z")),
        ],
    )
    result = context(svc, "s1")
    assert result.external.reloaded == "rewritten" and texts(result) == [
        "a much longer first message than before",
        "and more",
        "z",
    ]


def test_a_file_renamed_over_ours_is_followed_and_its_lock_taken(tmp_path):
    svc, path = opened(tmp_path)
    other = path.with_name("other.tmp")
    write_session(other, header("s1"), [message("r1", None, user("renamed in"))])
    os.replace(other, path)
    result = context(svc, "s1")
    assert result.external.reloaded == "replaced" and texts(result) == ["renamed in"]
    svc.append(wire.AppendParams(sessionId="s1", entries=[msg(assistant("after"))]))
    assert [o["id"] for o in read_lines(path)][1] == "r1" and len(read_lines(path)) == 3
    # The lock is on the new file: another service cannot take it.
    from sidecar.errors import SessionLocked

    with pytest.raises(SessionLocked):
        service(tmp_path / "sessions").open(wire.OpenParams(sessionId="s1"))


def test_a_header_rewritten_in_place_at_the_same_length_is_not_a_reload(tmp_path):
    root = tmp_path / "sessions"
    path = root / "--work-proj--" / "2025-01-01T00-00-00-000Z_s1.jsonl"
    # oh-my-pi keeps its title in a fixed-width first line and rewrites it in place: same length.
    write_session(
        path,
        header("s1", title="first title".ljust(40)),
        [message("u1", None, user("one")), message("a1", "u1", assistant("two"))],
    )
    svc = service(root, compat="omp")  # (oh-my-pi's: its name is the header's title)
    svc.open(wire.OpenParams(sessionId="s1"))
    session = svc.session("s1")
    tree_before = session.tree
    size = path.stat().st_size
    with open(path, "r+b") as out:
        out.write(line(header("s1", title="retitled".ljust(40))).encode())
    assert path.stat().st_size == size
    result = context(svc, "s1")
    assert result.external is not None and result.external.headerChanged and result.external.reloaded is None
    assert session.tree is tree_before  # not read again
    assert session.header_obj()["title"].strip() == "retitled"
    assert texts(result) == ["one", "two"]
    appended = svc.append(wire.AppendParams(sessionId="s1", entries=[msg(user("three"))]))
    assert appended.external is None and appended.entries[0].parentId == "a1"
    assert svc.list(wire.ListParams(all=True)).sessions[0].title.strip() == "retitled"


def test_an_unfinished_last_line_is_waited_for_and_never_damage(tmp_path, monkeypatch):
    monkeypatch.setattr(follow, "PARTIAL_LINE_WAIT_S", 0.05)
    svc, path = opened(tmp_path)
    whole = (line(message("u2", "a1", user("slow"))) + "\n").encode()
    with open(path, "ab") as out:
        out.write(whole[:20])
    result = context(svc, "s1")
    assert texts(result) == ["one", "two"] and result.external is None
    session = svc.session("s1")
    assert session.parse_errors == 0
    assert not path.with_name(path.name + ".torn").exists()
    with open(path, "ab") as out:
        out.write(whole[20:])
    result = context(svc, "s1")
    assert texts(result) == ["one", "two", "slow"] and result.external.entryIds == ["u2"]
    assert session.parse_errors == 0


def test_an_unfinished_line_nobody_finishes_is_set_aside_before_our_write(tmp_path, monkeypatch):
    monkeypatch.setattr(follow, "PARTIAL_LINE_WAIT_S", 0.02)
    svc, path = opened(tmp_path)
    with open(path, "ab") as out:
        out.write(b'{"type":"message","id":"dead"')
    result = svc.append(wire.AppendParams(sessionId="s1", entries=[msg(user("after"))]))
    assert result.entries[0].parentId == "a1"
    assert [o["id"] for o in read_lines(path)[1:]] == ["u1", "a1", result.entries[0].id]
    assert path.with_name(path.name + ".torn").read_bytes() == b'{"type":"message","id":"dead"\n'


def test_the_listing_index_counts_the_other_programs_messages(tmp_path):
    svc, path = opened(tmp_path)
    assert svc.list(wire.ListParams(all=True)).sessions[0].messageCount == 2
    pi_append(path, message("u2", "a1", user("three")))
    svc.append(wire.AppendParams(sessionId="s1", entries=[msg(assistant("four"))]))
    assert svc.list(wire.ListParams(all=True)).sessions[0].messageCount == 4


def test_the_tree_cache_describes_the_file_with_the_other_programs_lines(tmp_path, monkeypatch):
    from sidecar.store.files import treecache

    monkeypatch.setattr(treecache, "MIN_CACHED_BYTES", 0)
    svc, path = opened(tmp_path)
    pi_append(path, message("u2", "a1", user("three")))
    assert texts(context(svc, "s1"))[-1] == "three"
    svc.close_all()
    cache = read_cache(tmp_path / "sessions", path)
    assert cache is not None and cache.entry_count == 3 and cache.leaf_id == "u2"
    assert cache.stamp.size == path.stat().st_size
    # Reopened from that cache, then grown again by the other program.
    svc = service(tmp_path / "sessions")
    svc.open(wire.OpenParams(sessionId="s1"))
    pi_append(path, message("a2", "u2", assistant("four")))
    assert texts(context(svc, "s1")) == ["one", "two", "three", "four"]


def test_a_read_only_viewer_follows_too(tmp_path):
    root = tmp_path / "sessions"
    path = root / "--work-proj--" / "2025-01-01T00-00-00-000Z_s1.jsonl"
    write_session(path, header("s1"), [message("u1", None, user("one"))])
    svc = service(root)
    svc.open(wire.OpenParams(sessionId="s1", readOnly=True))
    pi_append(path, message("a1", "u1", assistant("two")))
    assert texts(context(svc, "s1")) == ["one", "two"]


def test_a_torn_line_found_on_open_and_cut_by_our_append_is_not_taken_for_a_rewrite(tmp_path):
    svc, path = opened(
        tmp_path,
        [message("u1", None, user("one")), message("a1", "u1", assistant("two")), '{"type":"message","id":"torn'],
    )
    # (write_session ends every line with a newline: take the torn line's off, as a crash leaves it)
    path.write_bytes(path.read_bytes()[:-1])
    svc.close_all()
    svc = service(tmp_path / "sessions")
    svc.open(wire.OpenParams(sessionId="s1"))
    appended = svc.append(wire.AppendParams(sessionId="s1", entries=[msg(user("three"))]))
    assert appended.external is None and appended.entries[0].parentId == "a1"
    result = context(svc, "s1")
    assert result.external is None and texts(result) == ["one", "two", "three"]
    assert not svc.session("s1").changed_behind()


def test_an_append_waits_for_a_line_the_other_program_finishes_and_goes_after_it(tmp_path, monkeypatch):
    import threading

    monkeypatch.setattr(follow, "PARTIAL_LINE_WAIT_S", 5.0)
    svc, path = opened(tmp_path)
    context(svc, "s1")
    whole = (line(message("u2", "a1", user("slow"))) + "\n").encode()
    with open(path, "ab") as out:
        out.write(whole[:25])

    def finish() -> None:
        with open(path, "ab") as out:
            out.write(whole[25:])

    threading.Timer(0.05, finish).start()
    result = svc.append(wire.AppendParams(sessionId="s1", entries=[msg(assistant("after it"))]))
    assert result.entries[0].parentId == "u2"
    assert [o["id"] for o in read_lines(path)[1:]] == ["u1", "a1", "u2", result.entries[0].id]
    assert not path.with_name(path.name + ".torn").exists() and svc.session("s1").parse_errors == 0


def test_a_compaction_lands_after_what_another_program_appended_while_the_model_summarized(tmp_path, monkeypatch):
    import asyncio

    from sidecar.compaction import coordinator
    from sidecar.config import Settings, apply_overrides
    from sidecar.service import SessionService

    settings = apply_overrides(Settings(), {"providers": {"default": "offline", "maxRetries": 0}}, "test")
    svc = SessionService(tmp_path / "sessions", settings)
    sid = svc.create(wire.CreateParams(cwd="/work/proj")).sessionId
    for n in range(6):
        svc.append(
            wire.AppendParams(
                sessionId=sid,
                entries=[msg(user(f"question {n} " + "x" * 2000)), msg(assistant(f"answer {n} " + "y" * 2000))],
            )
        )
    session = svc.session(sid)
    leaf, path = session.leaf_id, session.path
    real = coordinator.run_compaction

    async def summarize_while_pi_appends(*args, **kwargs):
        outcome = await real(*args, **kwargs)
        pi_append(path, message("pi1", leaf, user("written by pi meanwhile")))
        return outcome

    monkeypatch.setattr(coordinator, "run_compaction", summarize_while_pi_appends)
    result = asyncio.run(svc.compact(wire.CompactParams(sessionId=sid, keepRecentTokens=1000)))
    entry = svc.get_entries(wire.GetEntriesParams(sessionId=sid, ids=[result.entryId])).entries[0]
    assert entry["parentId"] == "pi1"
    built = context(svc, sid)
    assert built.messages[0]["role"] == "compactionSummary"
    assert built.messages[-1]["content"] == "written by pi meanwhile" and built.leafId == result.entryId


def test_opening_a_file_whose_last_line_is_being_written_waits_for_it(tmp_path, monkeypatch):
    import threading

    monkeypatch.setattr(follow, "PARTIAL_LINE_WAIT_S", 5.0)
    # The half line counts as being written while the file is this fresh; on a loaded machine making
    # the service alone can take longer than the real 0.1 s, and the line was then taken for an old tear.
    monkeypatch.setattr(follow, "_FRESH_S", 5.0)
    root = tmp_path / "sessions"
    path = root / "--work-proj--" / "2025-01-01T00-00-00-000Z_s1.jsonl"
    write_session(path, header("s1"), [message("u1", None, user("one"))])
    whole = (line(message("a1", "u1", assistant("two"))) + "\n").encode()
    with open(path, "ab") as out:
        out.write(whole[:30])

    def finish() -> None:
        with open(path, "ab") as out:
            out.write(whole[30:])

    threading.Timer(0.05, finish).start()
    svc = service(root)
    opened_result = svc.open(wire.OpenParams(sessionId="s1"))
    assert opened_result.parseErrors == 0 and opened_result.leafId == "a1"
    assert not path.with_name(path.name + ".torn").exists()


def test_an_old_torn_line_is_not_waited_for(tmp_path, monkeypatch):
    import time

    def no_waiting(seconds: float) -> None:
        raise AssertionError("waited for a line nobody is writing")

    root = tmp_path / "sessions"
    path = root / "--work-proj--" / "2025-01-01T00-00-00-000Z_s1.jsonl"
    write_session(path, header("s1"), [message("u1", None, user("one"))])
    with open(path, "ab") as out:
        out.write(b'{"type":"mess')
    old = time.time() - 60
    os.utime(path, (old, old))  # a crash's leftover: nobody has written the file for a minute
    monkeypatch.setattr(follow.time, "sleep", no_waiting)
    result = service(root).open(wire.OpenParams(sessionId="s1"))
    assert result.parseErrors == 1 and result.leafId == "u1"


# -- the rpc layer's inline test (FileStore.is_current with the event loop's turn) --------------------


def test_a_check_just_before_a_call_stands_for_the_calls_own_and_a_new_turn_looks_again(tmp_path):
    svc, path = opened(tmp_path)
    svc.append(wire.AppendParams(sessionId="s1", entries=[msg(user("ours"))]))
    assert svc.store.is_current("s1", turn=1)
    # Our own appends within the same turn keep the answer: no other program's line is taken for ours.
    svc.append(wire.AppendParams(sessionId="s1", entries=[msg(assistant("ours too"))]))
    assert svc.store.is_current("s1", turn=1)
    svc.append(wire.AppendParams(sessionId="s1", entries=[msg(user("third"))]))
    pi_append(path, message("x1", None, user("theirs")))
    # Requests of a later turn (read after the other program wrote) see its line before they run.
    assert not svc.store.is_current("s1", turn=2)
    assert not svc.store.is_current("s1")
    result = svc.append(wire.AppendParams(sessionId="s1", entries=[msg(assistant("after theirs"))]))
    assert result.external is not None and result.external.entryIds == ["x1"]
    assert result.entries[0].parentId == "x1"


def test_a_write_interleaved_with_ours_is_looked_for_again_within_the_turn(tmp_path):
    svc, path = opened(tmp_path)
    svc.append(wire.AppendParams(sessionId="s1", entries=[msg(user("ours"))]))
    session = svc.session("s1")
    assert svc.store.is_current("s1", turn=7)
    # The other program's line lands between the check and our write: the write notices it
    # (its bytes do not start where we ended), and the same turn's next check does not stand on the old one.
    pi_append(path, message("x1", None, user("theirs")))
    session.append([msg(assistant("ours, after theirs"))])
    assert not svc.store.is_current("s1", turn=7)
    result = context(svc, "s1")
    assert result.external is not None and result.external.reloaded == "interleaved"
    assert texts(result)[-1] == "ours, after theirs"
    assert [o["id"] for o in read_lines(path)].count("x1") == 1
