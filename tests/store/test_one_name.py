"""One name per session (store/files/titles.py): session/open, setName and session/list answer the name the tool of
the session's compatibility reads, in ``name`` and in ACP's ``title`` alike.

pi reads its last ``session_info``; oh-my-pi its title line, else the header's ``title`` (a file that starts
with a title line is oh-my-pi's under either compatibility). The listing index keeps whether a file starts
with a title line (schema 6), so an index of schema 5 is made anew.
"""

from __future__ import annotations

import sqlite3

from session_builders import adopt_files, assistant, entry, header, message, service, user, write_session

from sidecar import wire
from sidecar.format.titleslot import slot_line
from sidecar.store.index.schema import SCHEMA_VERSION
from sidecar.store.index.sqlite import INDEX_DIR, INDEX_NAME


def _files(root):
    """Three files of one project: pi-named with a header title, header-titled only, title-lined."""
    folder = root / "--work-proj--"
    turn = [message("u1", None, user("hello", 1)), message("a1", "u1", assistant("hi"))]
    write_session(
        folder / "2025-01-01T00-00-00-000Z_named.jsonl",
        header("named", cwd="/work/proj", title="Header title"),
        [*turn, entry("session_info", "n1", "a1", 3, name="Old"), entry("session_info", "n2", "n1", 4, name="Pi name")],
    )
    write_session(
        folder / "2025-01-01T00-00-01-000Z_headed.jsonl", header("headed", cwd="/work/proj", title="Only header"), turn
    )
    lined = folder / "2025-01-01T00-00-02-000Z_lined.jsonl"
    write_session(
        lined,
        header("lined", cwd="/work/proj", title="Under the line"),
        [*turn, entry("session_info", "n1", "a1", 3, name="Ignored by omp")],
    )
    lined.write_bytes(slot_line("Slot title", "2025-01-01T00:00:05.000Z", "user") + b"\n" + lined.read_bytes())


def _answers(svc) -> dict[str, tuple]:
    listed = {s.sessionId: (s.name, s.title) for s in svc.list(wire.ListParams(all=True)).sessions}
    opened = {}
    for sid in listed:
        result = svc.open(wire.OpenParams(sessionId=sid))
        opened[sid] = (result.name, result.title)
    svc.close_all()
    assert opened == listed, "session/open and session/list answer the same name"
    return listed


def test_under_pi_the_name_is_the_last_session_info_unless_the_file_has_a_title_line(sessions_root):
    _files(sessions_root)
    svc = service(sessions_root)
    adopt_files(svc)
    assert _answers(svc) == {
        "named": ("Pi name", "Pi name"),
        "headed": (None, None),  # pi reads no header title
        "lined": ("Slot title", "Slot title"),  # a title line makes the file oh-my-pi's
    }


def test_under_omp_the_name_is_the_title_line_else_the_header_title(tmp_path):
    root = tmp_path / ".omp" / "agent" / "sessions"
    _files(root)
    svc = service(root)
    assert svc.store.compat == "omp"
    assert _answers(svc) == {
        "named": ("Header title", "Header title"),  # oh-my-pi reads no session_info
        "headed": ("Only header", "Only header"),
        "lined": ("Slot title", "Slot title"),
    }


def test_set_name_answers_the_one_name_and_the_listing_follows(sessions_root, tmp_path):
    for root in (sessions_root, tmp_path / ".omp" / "agent" / "sessions"):
        svc = service(root)
        sid = svc.create(wire.CreateParams(cwd="/work/proj")).sessionId
        svc.append(
            wire.AppendParams(
                sessionId=sid,
                entries=[{"type": "message", "message": user("q")}, {"type": "message", "message": assistant("a")}],
            )
        )
        named = svc.set_name(wire.SetNameParams(sessionId=sid, name="  The  name "))
        assert named.name == named.title and named.name is not None and "The" in named.name
        listed = {s.sessionId: s for s in svc.list(wire.ListParams(all=True)).sessions}[sid]
        assert (listed.name, listed.title) == (named.name, named.title), root
        svc.close_all()


def test_an_in_memory_session_lists_with_its_one_name(tmp_path):
    svc = service(tmp_path / ".omp" / "agent" / "sessions")
    sid = svc.create(wire.CreateParams(cwd="/work/proj", persist=False)).sessionId
    svc.set_name(wire.SetNameParams(sessionId=sid, name="Kept in memory"))
    listed = {s.sessionId: s for s in svc.list(wire.ListParams(all=True)).sessions}[sid]
    assert listed.inMemory and (listed.name, listed.title) == ("Kept in memory", "Kept in memory")


def test_an_index_of_schema_5_is_made_anew_and_lists_title_lined_files_by_their_line(sessions_root):
    _files(sessions_root)
    svc = service(sessions_root)
    expected = _answers(svc)
    svc.store.catalog.index.close()
    index_file = sessions_root / INDEX_DIR / INDEX_NAME
    old = sqlite3.connect(index_file)
    old.execute("ALTER TABLE files DROP COLUMN titled")  # schema 5's table, which had no such column
    old.execute("UPDATE files SET name = 'stale', title = 'stale'")
    old.execute("PRAGMA user_version=5")
    old.commit()
    old.close()
    again = service(sessions_root)
    assert _answers(again) == expected
    again.store.catalog.index.close()
    check = sqlite3.connect(index_file)
    assert check.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 6
    check.close()


def test_an_open_from_the_tree_cache_answers_the_name_without_building_the_tree(sessions_root, monkeypatch):
    """The tree cache keeps the last session_info's name (schema 5), a lone surrogate in it too."""
    from sidecar.format import jsonl
    from sidecar.store.files import treecache

    monkeypatch.setattr(jsonl, "MAP_THRESHOLD", 0)
    monkeypatch.setattr(treecache, "MIN_CACHED_BYTES", 0)
    for index, name in enumerate(["Cached name", "lone \ud83d surrogate"]):
        svc = service(sessions_root)
        sid = svc.create(wire.CreateParams(cwd=f"/work/p{index}")).sessionId
        svc.append(
            wire.AppendParams(
                sessionId=sid,
                entries=[{"type": "message", "message": user("q")}, {"type": "message", "message": assistant("a")}],
            )
        )
        named = svc.set_name(wire.SetNameParams(sessionId=sid, name=name)).name
        svc.close_all()  # writes the tree cache
        again = service(sessions_root)
        opened = again.open(wire.OpenParams(sessionId=sid))
        assert not again.session(sid).tree_loaded  # answered from the cache
        assert opened.name == opened.title == named == name
        again.close_all()
