"""The PostgreSQL store end to end: real sidecars (subprocesses over stdio) started with
--database-url on one database, as agents on two hosts would be (issue 12 parts 2 and 3)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import psycopg
from rpc.harness import RawServer, assistant, user


async def start(url: str, root: Path, *extra: str, lease: float | None = None) -> RawServer:
    env = {**os.environ, "SESSION_SIDECAR_DATABASE_URL": url}
    if lease is not None:
        env["SESSION_SIDECAR_LEASE_SECONDS"] = str(lease)
    server = await RawServer.start(*extra, env=env)
    answer = await server.initialize(root)
    assert "result" in answer, answer
    return server


def result(answer: dict[str, Any]) -> Any:
    assert "result" in answer, answer
    return answer["result"]


async def test_two_sidecars_one_database(pg_url: str, tmp_path: Path) -> None:
    a = await start(pg_url, tmp_path / "host-a")
    b = await start(pg_url, tmp_path / "host-b")
    try:
        created = result(await a.request("session/create", {"cwd": "/work/proj"}))
        sid = created["sessionId"]
        appended = result(
            await a.request(
                "session/append",
                {"sessionId": sid, "entries": [user("how do zebras sleep?"), assistant("standing up, mostly")]},
            )
        )
        assert len(appended["entries"]) == 2
        listed = result(await b.request("session/list", {"cwd": "/work/proj"}))["sessions"]
        assert [s["sessionId"] for s in listed] == [sid]
        assert listed[0]["path"].startswith("pg:--work-proj--/") and listed[0]["firstMessage"] == "how do zebras sleep?"
        assert listed[0]["messageCount"] == 2
        found = result(await b.request("session/list", {"all": True, "query": "ZEBRAS"}))["sessions"]
        assert [s["sessionId"] for s in found] == [sid] and "**zebras**" in found[0]["snippet"]
        # One writer: b may read, not write.
        locked = await b.request("session/open", {"sessionId": sid})
        assert locked["error"]["data"]["kind"] == "sessionLocked", locked
        opened = result(await b.request("session/open", {"sessionId": sid, "readOnly": True}))
        assert opened["sessionId"] == sid
        result(await a.request("session/append", {"sessionId": sid, "entries": [user("and horses?")]}))
        context = result(await b.request("session/buildContext", {"sessionId": sid}))
        texts = [
            m["content"][0]["text"] if isinstance(m["content"], list) else m["content"] for m in context["messages"]
        ]
        assert texts[-1] == "and horses?", "the read-only opener did not see the new entry"
        # a closes: its lease is released and b can write.
        result(await a.request("session/close", {"sessionId": sid}))
        result(await b.request("session/close", {"sessionId": sid}))
        result(await b.request("session/open", {"sessionId": sid}))
        result(await b.request("session/append", {"sessionId": sid, "entries": [assistant("them too")]}))
        # archive, unarchive, delete, restore
        result(await b.request("session/close", {"sessionId": sid}))
        archived = result(await a.request("session/archive", {"sessionId": sid}))
        assert archived["path"].startswith("pg:.archive/")
        assert result(await a.request("session/list", {"all": True}))["sessions"] == []
        assert len(result(await a.request("session/list", {"all": True, "includeArchived": True}))["sessions"]) == 1
        result(await a.request("session/unarchive", {"sessionId": sid}))
        trashed = result(await a.request("session/delete", {"sessionId": sid}))
        assert trashed["trashPath"].startswith("pg:.trash/")
        result(await a.request("session/restore", {"sessionId": sid}))
        entries = result(await a.request("session/getEntries", {"sessionId": sid}))["entries"]
        assert [e["message"]["role"] for e in entries if e["type"] == "message"] == [
            "user",
            "assistant",
            "user",
            "assistant",
        ]
    finally:
        await a.stop()
        await b.stop()
    with psycopg.connect(pg_url) as conn:
        lines = conn.execute("SELECT count(*) FROM sidecar_lines WHERE session_id = %s", (sid,)).fetchone()[0]
    assert lines == 5  # the header and four messages: nothing on disk, all in the database
    assert not any(p.suffix == ".jsonl" for p in tmp_path.rglob("*"))


async def test_a_killed_writers_session_is_taken_once_its_lease_expires(pg_url: str, tmp_path: Path) -> None:
    a = await start(pg_url, tmp_path / "a", lease=0.5)
    sid = result(await a.request("session/create", {"cwd": "/w"}))["sessionId"]
    result(await a.request("session/append", {"sessionId": sid, "entries": [user("hi"), assistant("hello")]}))
    a.process.kill()  # SIGKILL: no close, the lease stays until it expires
    await a.stop()
    b = await start(pg_url, tmp_path / "b", lease=0.5)
    try:
        import asyncio

        for _ in range(50):
            answer = await b.request("session/open", {"sessionId": sid})
            if "result" in answer:
                break
            assert answer["error"]["data"]["kind"] == "sessionLocked"
            await asyncio.sleep(0.1)
        assert "result" in answer, "the lease of a dead writer never expired"
        result(await b.request("session/append", {"sessionId": sid, "entries": [user("still there?")]}))
    finally:
        await b.stop()


async def test_bad_database_urls_are_clear_errors(tmp_path: Path, cluster) -> None:
    for url, said in (
        ("mysql://x@h/db", "must start with postgresql://"),
        (f"postgresql://sidecar:nope@127.0.0.1:{cluster.port}/sidecar", "password"),
        ("postgresql://sidecar:sidecar@127.0.0.1:1/sidecar", "check that the server runs"),
    ):
        env = {**os.environ, "SESSION_SIDECAR_DATABASE_URL": url}
        server = await RawServer.start(env=env)
        try:
            answer = await server.initialize(tmp_path)
            assert "error" in answer and said in answer["error"]["message"], answer
            assert "nope" not in answer["error"]["message"]
        finally:
            await server.stop()


async def test_move_to_another_cwd_rewrites_only_the_header_cwd(pg_url: str, tmp_path: Path) -> None:
    a = await start(pg_url, tmp_path / "a")
    try:
        sid = result(await a.request("session/create", {"cwd": "/work/old"}))["sessionId"]
        result(await a.request("session/append", {"sessionId": sid, "entries": [user("move me"), assistant("ok")]}))
        with psycopg.connect(pg_url) as conn:
            before = [
                bytes(r[0])
                for r in conn.execute("SELECT line FROM sidecar_lines WHERE session_id = %s ORDER BY seq", (sid,))
            ]
        moved = result(await a.request("session/move", {"sessionId": sid, "cwd": "/work/new"}))
        assert moved["path"].startswith("pg:--work-new--/")
        with psycopg.connect(pg_url) as conn:
            after = [
                bytes(r[0])
                for r in conn.execute("SELECT line FROM sidecar_lines WHERE session_id = %s ORDER BY seq", (sid,))
            ]
        assert after[1:] == before[1:] and b'"cwd":"/work/new"' in after[0]
        assert after[0].replace(b"/work/new", b"/work/old") == before[0]
        listed = result(await a.request("session/list", {"cwd": "/work/new"}))["sessions"]
        assert [s["sessionId"] for s in listed] == [sid]
        result(await a.request("session/append", {"sessionId": sid, "entries": [user("still writable")]}))
    finally:
        await a.stop()


async def test_session_import_writes_into_postgresql_the_lines_a_file_root_gets(pg_url: str, tmp_path: Path) -> None:
    """session/import on PostgreSQL: one session in one transaction, found again by a second import, and its
    lines (as export-root writes them) byte for byte those the same import writes into a file root."""
    import subprocess
    import sys

    from session_builders import service

    from sidecar import wire

    source = tmp_path / "cc.jsonl"
    source.write_text(
        '{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"cc","cwd":"/w",'
        '"timestamp":"2026-01-02T03:04:05.000Z","message":{"role":"user","content":"hi"}}\n'
        '{"type":"assistant","uuid":"u2","parentUuid":"u1","sessionId":"cc","cwd":"/w",'
        '"timestamp":"2026-01-02T03:04:06.000Z","message":{"role":"assistant","model":"claude-x",'
        '"content":[{"type":"text","text":"hello"}]}}\n'
    )
    server = await start(pg_url, tmp_path / "host")
    try:
        first = result(await server.request("session/import", {"tool": "claude-code", "paths": [str(source)]}))
        [imported] = first["sessions"]
        assert imported["created"] is True and imported["path"].startswith("pg:--w--/")
        again = result(await server.request("session/import", {"tool": "claude-code", "paths": [str(source)]}))
        assert again["sessions"][0]["created"] is False and again["sessions"][0]["path"] == imported["path"]
        built = result(await server.request("session/buildContext", {"sessionId": imported["sessionId"]}))
        assert [m["role"] for m in built["messages"]] == ["user", "assistant"]
        listed = result(await server.request("session/list", {"cwd": "/w"}))["sessions"]
        assert [(s["sessionId"], s["messageCount"]) for s in listed] == [(imported["sessionId"], 2)]
    finally:
        await server.stop()
    on_files = service(tmp_path / "files")
    [file_import] = on_files.import_(wire.ImportParams(tool="claude-code", paths=[str(source)])).sessions
    on_files.close_all()
    exported = tmp_path / "exported"
    done = subprocess.run(
        [sys.executable, "-m", "sidecar", "export-root", "--database-url", pg_url, "--to", str(exported)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert file_import.sessionId == imported["sessionId"]
    assert (exported / imported["path"][3:]).read_bytes() == Path(file_import.path).read_bytes()


async def test_oh_my_pi_mode_is_refused_at_start_up_naming_the_setting(pg_url: str, tmp_path: Path) -> None:
    """store.compat "omp" is never quietly turned into "pi" on PostgreSQL: initialize says which setting to change."""
    env = {**os.environ, "SESSION_SIDECAR_DATABASE_URL": pg_url, "SESSION_SIDECAR_COMPAT": "omp"}
    server = await RawServer.start(env=env)
    try:
        answer = await server.initialize(tmp_path)
        assert answer["error"]["code"] == -32602 and answer["error"]["data"]["field"] == "store.compat", answer
        assert "store.compat" in answer["error"]["message"] and '"pi"' in answer["error"]["message"]
    finally:
        await server.stop()
    # Given over initialize's settings, the same; unset (or "pi"), the sidecar serves and says "pi".
    server = await RawServer.start(env={**os.environ, "SESSION_SIDECAR_DATABASE_URL": pg_url})
    try:
        refused = await server.initialize(tmp_path, settings={"store": {"compat": "omp"}})
        assert refused["error"]["data"]["field"] == "store.compat", refused
    finally:
        await server.stop()
    server = await start(pg_url, tmp_path)
    try:
        assert result(await server.request("session/list", {}))["sessions"] == []
    finally:
        await server.stop()
