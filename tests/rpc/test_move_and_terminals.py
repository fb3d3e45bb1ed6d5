"""session/move and terminal-scoped continueRecent, through a real sidecar."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from .harness import RpcTestClient, assistant, user


async def written(client: RpcTestClient, session_id: str, cwd: str = "/work/a", **extra) -> dict:
    created = await client.call("session/create", {"cwd": cwd, "sessionId": session_id, **extra})
    await client.call(
        "session/append", {"sessionId": session_id, "entries": [user(f"hi {session_id}"), assistant("hello")]}
    )
    return created


async def test_move_rewrites_the_header_and_follows_with_index_cache_and_lock(
    client: RpcTestClient, sessions_root: Path
):
    created = await written(client, "mv-1")
    await client.call(
        "session/setLabel",
        {
            "sessionId": "mv-1",
            "entryId": (await client.call("session/getTree", {"sessionId": "mv-1"}))["nodes"][0]["id"],
            "label": "start",
        },
    )
    old = Path(created["path"])
    old_lines = old.read_text().split("\n")
    moved = await client.call("session/move", {"sessionId": "mv-1", "cwd": "/work/b"})
    new = Path(moved["path"])
    assert moved["path"] == created["path"].replace("/--work-a--/", "/--work-b--/").replace(
        ":--work-a--/", ":--work-b--/"
    )
    assert new.name == old.name and not old.exists()
    new_lines = new.read_text().split("\n")
    assert json.loads(new_lines[0])["cwd"] == "/work/b"
    assert new_lines[1:] == old_lines[1:]  # every entry byte for byte
    # Still open here, at its new place: appends go to the moved file.
    await client.call("session/append", {"sessionId": "mv-1", "entries": [user("after the move")]})
    assert "after the move" in new.read_text()
    listed = await client.call("session/list", {"cwd": "/work/b"})
    assert [(s["sessionId"], s["path"], s["cwd"]) for s in listed["sessions"]] == [("mv-1", str(new), "/work/b")]
    assert (await client.call("session/list", {"cwd": "/work/a"}))["sessions"] == []
    tree = await client.call("session/getTree", {"sessionId": "mv-1"})
    assert [n["label"] for n in tree["nodes"] if n.get("label")] == ["start"]


@pytest.mark.parametrize(
    "params, code, field",
    [
        ({"sessionId": "mv-2", "cwd": "relative"}, -32602, "cwd"),
        ({"sessionId": "nobody", "cwd": "/work/b"}, -33001, None),
    ],
)
async def test_move_refuses_bad_input(client: RpcTestClient, params, code, field):
    await written(client, "mv-2")
    with pytest.raises(JsonRpcException) as refused:
        await client.call("session/move", params)
    assert refused.value.code == code
    if field:
        assert field in str(refused.value)


async def test_move_onto_an_existing_file_is_refused_and_changes_nothing(client: RpcTestClient, sessions_root: Path):
    created = await written(client, "mv-3")
    source = Path(created["path"])
    blocker = sessions_root / "--work-b--" / source.name
    blocker.parent.mkdir(parents=True)
    blocker.write_text("not mine\n")
    before = source.read_bytes()
    with pytest.raises(JsonRpcException) as refused:
        await client.call("session/move", {"sessionId": "mv-3", "cwd": "/work/b"})
    assert refused.value.code == -33008 and str(blocker) in str(refused.value)
    assert source.read_bytes() == before and blocker.read_text() == "not mine\n"


@pytest.mark.parametrize("copy_folder", ["--work-b--", "--work-c--"])
@pytest.mark.parametrize("copy_name", ["0000-00-00T00-00-00-000Z", "9999-99-99T99-99-99-999Z"])
async def test_move_of_a_session_with_a_copy_of_its_file_is_refused(
    client: RpcTestClient, sessions_root: Path, copy_folder: str, copy_name: str
):
    """A copy of the session's file (same id, another name) in the target folder, or in any other:
    the move answered success and either moved nothing (it found the copy first and moved it onto
    itself) or left two files of one id in one folder."""
    created = await written(client, "mv-5")
    source = Path(created["path"])
    copy = sessions_root / copy_folder / f"{copy_name}_mv-5.jsonl"
    copy.parent.mkdir(parents=True, exist_ok=True)
    copy.write_bytes(source.read_bytes())
    before = {path: path.read_bytes() for path in sessions_root.rglob("*.jsonl")}
    with pytest.raises(JsonRpcException) as refused:
        await client.call("session/move", {"sessionId": "mv-5", "cwd": "/work/b"})
    assert refused.value.code == -33008 and str(copy) in str(refused.value)
    assert {path: path.read_bytes() for path in sessions_root.rglob("*.jsonl")} == before


async def test_continue_recent_prefers_the_terminals_own_session(client: RpcTestClient, sessions_root: Path):
    await written(client, "t-old", terminalId="tty-1")
    await written(client, "t-new", terminalId="tty-2")  # newer: what continueRecent alone picks
    assert (await client.call("session/continueRecent", {"cwd": "/work/a"}))["sessionId"] == "t-new"
    assert (await client.call("session/continueRecent", {"cwd": "/work/a", "terminalId": "tty-1"}))[
        "sessionId"
    ] == "t-old"
    # A terminal never seen, or a breadcrumb of another cwd: the newest of the cwd.
    assert (await client.call("session/continueRecent", {"cwd": "/work/a", "terminalId": "tty-9"}))[
        "sessionId"
    ] == "t-new"
    # Opening another session from a terminal moves its breadcrumb.
    await client.call("session/open", {"sessionId": "t-new", "terminalId": "tty-1"})
    assert (await client.call("session/continueRecent", {"cwd": "/work/a", "terminalId": "tty-1"}))[
        "sessionId"
    ] == "t-new"
    crumb = (sessions_root / ".terminals" / "tty-1").read_text().split("\n")
    assert crumb[0] == "/work/a" and crumb[1].endswith("_t-new.jsonl")


async def test_a_breadcrumb_pointing_outside_the_root_is_ignored(
    client: RpcTestClient, sessions_root: Path, tmp_path: Path
):
    await written(client, "t-1")
    outside = tmp_path / "elsewhere" / "2025-01-01T00-00-00-000Z_evil.jsonl"
    outside.parent.mkdir()
    outside.write_text(
        '{"type":"session","version":3,"id":"evil","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/work/a"}\n'
    )
    (sessions_root / ".terminals").mkdir()
    (sessions_root / ".terminals" / "tty-x").write_text(f"/work/a\n{outside}\n")
    assert (await client.call("session/continueRecent", {"cwd": "/work/a", "terminalId": "tty-x"}))[
        "sessionId"
    ] == "t-1"


@pytest.mark.parametrize("terminal", ["../escape", "a/b", ".hidden", "", "x" * 200])
async def test_terminal_ids_that_are_not_plain_names_are_refused(client: RpcTestClient, terminal):
    with pytest.raises(JsonRpcException) as refused:
        await client.call("session/continueRecent", {"cwd": "/work/a", "terminalId": terminal})
    assert refused.value.code == -32602 and "terminalId" in str(refused.value)


async def test_move_of_a_session_another_process_holds_is_refused(client: RpcTestClient, sessions_root: Path):
    from sidecar import wire
    from sidecar.service import SessionService

    created = await written(client, "mv-4")
    await client.call("session/close", {"sessionId": "mv-4"})
    other = SessionService(sessions_root)  # another writer, in this test's process
    other.open(wire.OpenParams(sessionId="mv-4"))
    try:
        with pytest.raises(JsonRpcException) as refused:
            await client.call("session/move", {"sessionId": "mv-4", "cwd": "/work/b"})
        assert refused.value.code == -33004
        assert (
            Path(created["path"]).is_file()
            and json.loads(Path(created["path"]).read_text().split("\n")[0])["cwd"] == "/work/a"
        )
    finally:
        other.close_all()
