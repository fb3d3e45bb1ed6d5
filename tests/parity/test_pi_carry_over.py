"""Files our compaction engine wrote (carry-over and fallback in ``details``) read in pi as they read in ours.

pi's own code reads ``details.readFiles`` / ``details.modifiedFiles`` of a
compaction and nothing else there; the carry-over is in the summary text,
which pi hands to its model as is. Never skips (see test_pi_parity.py).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
from pathlib import Path

from compaction.factory import PathBuilder
from providers.servers import LoopbackServer, anthropic_events, sse
from store_mode import pi_file
from test_pi_parity import assert_same, ensure_pi_installed, our_view, run_pi

from sidecar import wire
from sidecar.config import Settings, apply_overrides
from sidecar.service import SessionService


def compacted_session(root: Path, server_url: str) -> Path:
    settings = apply_overrides(
        Settings(),
        {"providers": {"default": "offline", "maxRetries": 0, "anthropic": {"apiKey": "k", "baseUrl": server_url}}},
        "test",
    )
    svc = SessionService(root, settings)
    created = svc.create(wire.CreateParams(cwd="/work/proj"))
    for round_number in range(4):
        builder = PathBuilder()
        builder.user(f"Round {round_number}: port module {round_number}. Use pnpm, not npm.")
        _, ids = builder.assistant("", [("bash", {"command": f"pnpm test m{round_number}"})])
        builder.result(ids[0], f"ERR_{round_number}: cannot find module", error=True)
        for number in range(4):
            builder.turn(
                f"round {round_number} step {number}",
                steps=2,
                output_chars=2500,
                tool="edit",
                path=f"src/r{round_number}/m{number}.ts",
            )
        objs = [{k: v for k, v in e.obj().items() if k not in ("id", "parentId", "timestamp")} for e in builder.entries]
        svc.append(wire.AppendParams(sessionId=created.sessionId, entries=objs))
        provider = "anthropic" if round_number == 2 else "offline"  # round 2: an empty answer, the offline fallback
        result = asyncio.run(
            svc.compact(wire.CompactParams(sessionId=created.sessionId, provider=provider, keepRecentTokens=1500))
        )
        assert (result.details.fallback is not None) == (round_number == 2)
    path = Path(created.path)
    svc.close_all()
    return path


def test_compactions_with_carry_over_and_fallback_read_the_same_in_pi():
    node = ensure_pi_installed()
    work = Path(tempfile.mkdtemp(prefix="pi-carry-"))
    try:
        with LoopbackServer() as server:
            server.push(*(sse(anthropic_events([])) for _ in range(4)))
            path = compacted_session(work / "ours", server.url)
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()[1:]]
        compactions = [e for e in lines if e["type"] == "compaction"]
        assert len(compactions) == 4 and all("carryOver" in c["details"] for c in compactions)
        assert compactions[2]["details"]["fallback"]["reason"] == "empty"
        leaves = [c["id"] for c in compactions]
        ours = our_view(work / "view", path, leaves)
        before = path.read_bytes()
        given = pi_file(path, work / "exported")  # on PostgreSQL: the session as export-root writes it
        _, answers = run_pi(node, [{"path": str(given), "leaves": leaves}])
        pi = answers[str(given)]
        assert path.read_bytes() == before
        assert_same("engine-compacted", ours, pi, compare_lines=True)
        summary = pi["contexts"]["@leaf"]["messages"][0]
        assert summary["role"] == "compactionSummary" and "<carry-over>" in summary["summary"]
        for number in range(4):
            assert f"ERR_{number}: cannot find module" in summary["summary"]  # never resolved, still there
    finally:
        shutil.rmtree(work)
