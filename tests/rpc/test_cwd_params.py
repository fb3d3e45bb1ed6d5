"""An empty or relative ``cwd`` is refused (-32602, ``data.field`` "cwd") wherever a method takes one.

Before, ``""`` was filed under a project folder named ``----`` and ``relative/dir`` under
``--relative-dir--``: sessions no project ever lists. Nothing may be written for a refused call.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .harness import RawServer, assistant, snapshot, user

BAD_CWDS = ["", "relative/dir", "src", "./here", "~/project"]


async def _written(raw: RawServer, session_id: str) -> None:
    created = await raw.request("session/create", {"cwd": "/work/a", "sessionId": session_id})
    assert "result" in created, created
    appended = await raw.request(
        "session/append", {"sessionId": session_id, "entries": [user("hi"), assistant("hello")]}
    )
    assert "result" in appended, appended


def _refused_for_cwd(answer: dict, cwd: str) -> None:
    assert "error" in answer, answer
    error = answer["error"]
    assert error["code"] == -32602 and error["data"]["field"] == "cwd", error
    assert "absolute" in error["message"] and repr(cwd) in error["message"], error["message"]


@pytest.mark.parametrize("cwd", BAD_CWDS)
async def test_create_move_list_fork_and_continue_refuse_a_cwd_that_is_not_absolute(
    raw: RawServer, sessions_root: Path, cwd: str
):
    await _written(raw, "cwd-1")
    before = snapshot(sessions_root)
    calls = [
        ("session/create", {"cwd": cwd}),
        ("session/create", {"cwd": cwd, "sessionId": "cwd-new", "persist": False}),
        ("session/move", {"sessionId": "cwd-1", "cwd": cwd}),
        ("session/list", {"cwd": cwd}),
        ("session/continueRecent", {"cwd": cwd}),
        ("session/fork", {"sessionId": "cwd-1", "cwd": cwd}),
    ]
    for method, params in calls:
        _refused_for_cwd(await raw.request(method, params), cwd)
    # Nothing was written: no folder like "----" or "--relative-dir--", the session where it was.
    assert snapshot(sessions_root) == before
    assert sorted(p.name for p in sessions_root.iterdir() if not p.name.startswith(".")) == ["--work-a--"]
    listed = await raw.request("session/list", {"cwd": "/work/a"})
    assert [s["sessionId"] for s in listed["result"]["sessions"]] == ["cwd-1"]
    # The process keeps serving, and an absolute cwd is still taken as it was.
    created = await raw.request("session/create", {"cwd": "/work/b", "sessionId": "cwd-2"})
    assert created["result"]["header"]["cwd"] == "/work/b"
