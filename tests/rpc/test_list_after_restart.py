"""A served sidecar started on a root whose listing index another sidecar left: the first request, a query or
a plain list sent right behind ``initialize``, answers what changed while no sidecar ran (the restart check)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sidecar import wire
from sidecar.config import Settings
from sidecar.service import SessionService
from sidecar.store.files.layout import encode_cwd

from .harness import RawServer

FOLDERS = 12  # (several folders: the check compares each folder's rows at once)


def _line(entry_id: str, parent: str | None, role: str, text: str, ms: int) -> str:
    stamp = f"2025-01-01T00:00:{ms % 60:02d}.000Z"
    return json.dumps(
        {
            "type": "message",
            "id": entry_id,
            "parentId": parent,
            "timestamp": stamp,
            "message": {"role": role, "content": text, "timestamp": 1_735_689_600_000 + ms * 1000},
        }
    )


def _root_changed_while_no_sidecar_ran(root: Path) -> set[str]:
    """Sessions listed (so indexed) by a sidecar since gone, then two appended to, one removed, one new;
    the ids a query for "meanwhile" must find."""
    paths = []
    for n in range(FOLDERS):
        cwd = f"/work/p{n}"
        for k in (0, 1):
            sid = f"s{n}-{k}"
            path = root / encode_cwd(cwd) / f"2025-01-01T00-00-0{k}-000Z_{sid}.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            header = {"type": "session", "version": 3, "id": sid, "timestamp": "2025-01-01T00:00:00.000Z", "cwd": cwd}
            lines = [json.dumps(header), _line("a", None, "user", f"first words {n}", 1)]
            path.write_text("\n".join([*lines, _line("b", "a", "assistant", "ok", 2)]) + "\n")
            paths.append(path)
    before = SessionService(root, Settings())
    assert len(before.list(wire.ListParams(all=True, limit=1000)).sessions) == 2 * FOLDERS
    before.store.catalog.index.close()
    changed = [paths[0], paths[-1]]
    for path in changed:
        with open(path, "a") as out:
            out.write(_line("c", "b", "user", "appended meanwhile", 3) + "\n")
    paths[5].unlink()
    new = root / encode_cwd("/work/p3") / "2025-01-02T00-00-00-000Z_new.jsonl"
    new.write_text(paths[6].read_text().replace('"s3-0"', '"new"').replace("first words", "dropped in meanwhile"))
    return {path.stem.split("_")[1] for path in changed} | {"new"}


@pytest.mark.parametrize("first", ["query", "list"])
async def test_the_first_request_after_a_restart_answers_what_changed_while_no_sidecar_ran(
    sessions_root: Path, first: str
):
    expected = _root_changed_while_no_sidecar_ran(sessions_root)
    server = await RawServer.start()
    try:
        server.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"sessionRoot": str(sessions_root)}})
        if first == "query":  # sent with initialize, before its answer is read
            server.send(
                {"jsonrpc": "2.0", "id": 2, "method": "session/list", "params": {"all": True, "query": "meanwhile"}}
            )
        else:
            server.send({"jsonrpc": "2.0", "id": 2, "method": "session/list", "params": {"all": True, "limit": 100}})
        answers = {}
        while len(answers) < 2:
            message = await server.receive()
            if "id" in message:
                answers[message["id"]] = message
        assert "result" in answers[1], answers[1]
        sessions = answers[2]["result"]["sessions"]
        if first == "query":
            assert {s["sessionId"] for s in sessions} == expected
            assert all("meanwhile" in s["snippet"] for s in sessions)
        else:
            counts = {s["sessionId"]: s["messageCount"] for s in sessions}
            assert len(counts) == 2 * FOLDERS  # one gone, one new
            assert "s2-1" not in counts and counts["new"] == 2
            assert {sid for sid, count in counts.items() if count == 3} == expected - {"new"}
    finally:
        await server.stop()
