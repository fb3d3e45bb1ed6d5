"""import_spec: a spec session folder as pi entries, for session/import --from spec."""

from __future__ import annotations

from pathlib import Path

from rpc.harness import RawServer, assistant, user

from sidecar.context.build import build_context
from sidecar.context.llm import convert_to_llm
from sidecar.format.jsonl import Entry
from sidecar.importers.spec import import_spec
from sidecar.store.base import FsyncPolicy
from sidecar.store.files.layout import Layout
from sidecar.store.files.session import FileSession as Session

from .helpers import SpecServer, llm_texts
from .test_scenarios import new_session, pods_conversation


async def test_a_spec_folder_imports_as_the_same_conversation(sessions_root: Path, tmp_path: Path):
    spec = await SpecServer.start(sessions_root)
    try:
        sid = await new_session(spec, name="pods", cronJobId="nightly")
        await pods_conversation(spec, sid)
        await spec.call("session/compact", {"sessionId": sid, "provider": "offline", "keepRecentTokens": 10})
        await spec.call("session/append", {"sessionId": sid, "entries": [user("And services?"), assistant("None.")]})
        expected = await spec.call("session/buildContext", {"sessionId": sid, "format": "llm"})
    finally:
        await spec.stop()
    log = sessions_root / sid / "session.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:2]) + b"{not json\n" + b"".join(lines[2:]) + b'{"recordType":"mes')

    imported = import_spec(sessions_root / sid, cwd="/ops")
    assert imported.session_id == sid and imported.name == "pods"
    assert imported.origin() == {"tool": "spec", "id": sid, "path": str(sessions_root / sid)}
    assert imported.tally.counts["message/user"] == {"mapped": 2}
    assert imported.tally.counts["message/assistant"] == {"mapped": 3}
    assert imported.tally.counts["message/toolResult"] == {"mapped": 1}
    assert imported.tally.counts["compaction"] == {"mapped": 1}
    assert [d["line"] for d in imported.tally.damaged] == [3, 9]  # the damaged line, the partial last one
    kept = imported.entries[-1]
    assert kept["type"] == "custom" and kept["data"]["source"] == "cron" and kept["data"]["cronJobId"] == "nightly"

    target = Layout(tmp_path / "pi").new_session_path("/ops", imported.timestamp, imported.session_id)
    Session.copied(
        target,
        imported.session_id,
        "/ops",
        FsyncPolicy.NEVER,
        [Entry.from_obj(e) for e in imported.entries],
        timestamp=imported.timestamp,
    ).close()
    session, report = Session.load(target, FsyncPolicy.NEVER, read_only=True)
    assert report.parse_errors == 0 and session.header_obj()["cwd"] == "/ops"
    context = convert_to_llm(build_context(session.tree.path(session.leaf_id)).messages)
    session.close()
    assert llm_texts(context) == llm_texts(expected["messages"])
    assert import_spec(sessions_root / sid).session_id == sid  # the same folder, the same session


async def test_session_import_from_spec_through_the_protocol_finds_it_the_second_time(tmp_path: Path):
    spec_root, pi_root = tmp_path / "spec-root", tmp_path / "pi-root"
    spec = await SpecServer.start(spec_root)
    try:
        sid = await new_session(spec, name="pods")
        await pods_conversation(spec, sid)
        expected = await spec.call("session/buildContext", {"sessionId": sid, "format": "llm"})
    finally:
        await spec.stop()
    server = await RawServer.start()
    try:
        await server.initialize(pi_root)
        first = (await server.request("session/import", {"tool": "spec", "paths": [str(spec_root)]}))["result"]
        [imported] = first["sessions"]
        assert imported["created"] is True and imported["sessionId"] == sid and imported["tool"] == "spec"
        users = sum(1 for m in expected["messages"] if m["role"] == "user")
        assert {c["kind"]: c.get("mapped", 0) for c in imported["counts"]}["message/user"] == users
        built = (await server.request("session/buildContext", {"sessionId": sid, "format": "llm"}))["result"]
        assert llm_texts(built["messages"]) == llm_texts(expected["messages"])
        again = (await server.request("session/import", {"tool": "spec", "paths": [str(spec_root / sid)]}))["result"]
        assert again["sessions"][0]["created"] is False and again["sessions"][0]["path"] == imported["path"]
    finally:
        await server.stop()


async def test_an_import_into_a_spec_root_is_refused_naming_the_format(tmp_path: Path):
    source = tmp_path / "cc.jsonl"
    source.write_text(
        '{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"cc","cwd":"/w",'
        '"timestamp":"2026-01-02T03:04:05.000Z","message":{"role":"user","content":"hi"}}\n'
    )
    spec = await SpecServer.start(tmp_path / "spec-root")
    try:
        error = await spec.error("session/import", {"tool": "claude-code", "paths": [str(source)]})
        assert error["code"] == -33090 and error["data"]["format"] == "spec" and "session/convert" in error["message"]
        root = tmp_path / "spec-root"
        assert not root.exists() or [p.name for p in root.iterdir() if not p.name.startswith(".")] == []
    finally:
        await spec.stop()
