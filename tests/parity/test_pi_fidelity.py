"""Files with tool-result clearings and a provider-native compaction item, read by pi's published package.

pi ignores ``custom`` entries and fields it does not know: it opens such a
file, finds every entry and the same leaf, and builds the same context,
except that the outputs we cleared are in full in its context (the file
keeps them; only our overlay hides them) and the compaction's text summary
is what it shows (the native item is only for its own provider). Never
skips (see test_pi_parity.py).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from compaction.factory import PathBuilder
from store_mode import pi_file
from test_pi15_parity import run_pi15
from test_pi_parity import ensure_pi_installed, our_view, run_pi

from sidecar import wire
from sidecar.config import Settings, apply_overrides
from sidecar.context.pruned import PRUNE_CUSTOM_TYPE
from sidecar.service import SessionService

NATIVE = {
    "provider": "anthropic",
    "model": "claude-sonnet-4-6",
    "item": {"type": "compaction", "content": "Ported rounds 0-1.", "encrypted_content": "b3BhcXVl"},
}


def cleared_session(root: Path) -> tuple[Path, list[str]]:
    settings = apply_overrides(
        Settings(),
        {
            "providers": {"default": "offline"},
            "compaction": {
                "clearToolResults": {
                    "enabled": True,
                    "triggerTokens": 3000,
                    "keepToolResults": 2,
                    "minimumTokens": 1500,
                }
            },
        },
        "test",
    )
    svc = SessionService(root, settings)
    created = svc.create(wire.CreateParams(cwd="/work/proj"))
    leaves: list[str] = []
    for round_number in range(4):
        builder = PathBuilder()
        for number in range(3):
            builder.turn(
                f"round {round_number} step {number}",
                steps=2,
                output_chars=2500,
                tool="read",
                path=f"src/r{round_number}/m{number}.ts",
            )
        for obj in builder.entries:
            bare = {k: v for k, v in obj.obj().items() if k not in ("id", "parentId", "timestamp")}
            result = svc.append(wire.AppendParams(sessionId=created.sessionId, entries=[bare]))
            if result.clearedToolResults is not None:
                leaves.append(result.clearedToolResults.entryId)
        if round_number == 1:
            compacted = asyncio.run(
                svc.compact(
                    wire.CompactParams(
                        sessionId=created.sessionId, keepRecentTokens=400, native=wire.NativeCompaction(**NATIVE)
                    )
                )
            )
            leaves.append(compacted.entryId)
        svc.set_label(
            wire.SetLabelParams(
                sessionId=created.sessionId,
                entryId=svc.session(created.sessionId).leaf_id,
                label=f"round-{round_number}",
            )
        )
    svc.set_name(wire.SetNameParams(sessionId=created.sessionId, name="cleared"))
    path = Path(svc.store.location(svc.session(created.sessionId)))  # a file, or a PostgreSQL place
    svc.close_all()
    return path, leaves


def full_outputs(entries: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {
        e["message"]["toolCallId"]: e["message"]
        for e in entries
        if e["type"] == "message" and e["message"].get("role") == "toolResult"
    }


def read_in_pi(version: str, path: Path, leaves: list[str]) -> dict[str, Any]:
    if version == "pinned":
        _, answers = run_pi(ensure_pi_installed(), [{"path": str(path), "leaves": leaves}])
        return answers[str(path)]
    answer = run_pi15({"read": [{"path": str(path), "leaves": leaves}]})
    return {r["path"]: r for r in answer["results"]}[str(path)]


@pytest.mark.parametrize("version", ["pinned", "1.5"])
def test_cleared_outputs_and_a_native_compaction_item_read_as_pi_reads_them(version: str):
    work = Path(tempfile.mkdtemp(prefix="pi-fidelity-"))
    try:
        path, leaves = cleared_session(work / "ours")
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()[1:]]
        clearings = [e for e in lines if e["type"] == "custom" and e.get("customType") == PRUNE_CUSTOM_TYPE]
        assert len(clearings) >= 3 and all(e["data"]["reason"] == "clearToolResults" for e in clearings)
        assert [e["native"] for e in lines if e["type"] == "compaction"] == [NATIVE]
        ours = our_view(work / "view", path, leaves)
        before = path.read_bytes()
        pi = read_in_pi(version, pi_file(path, work / "exported"), leaves)  # on PostgreSQL: export-root's file
        assert path.read_bytes() == before  # pi only read it
        assert pi["ok"], pi.get("error")
        assert ours["entries"] == pi["entries"] and ours["leafId"] == pi["leafId"]
        assert ours["labels"] == pi["labels"] and ours["name"] == pi["name"] == "cleared"
        outputs = full_outputs(ours["entries"])
        cleared_seen = 0
        for leaf, mine in ours["contexts"].items():
            theirs = pi["contexts"][leaf]
            for key in ("messages", "llm"):
                assert len(mine[key]) == len(theirs[key]), f"{leaf} {key}"
                for our_message, their_message in zip(mine[key], theirs[key]):
                    if our_message == their_message:
                        continue
                    # The only difference: an output we show as the placeholder, in full in pi.
                    assert our_message["role"] == "toolResult"
                    assert our_message["content"][0]["text"].startswith("[Old tool output pruned")
                    assert their_message == outputs[our_message["toolCallId"]]
                    cleared_seen += 1
            summaries = [m for m in theirs["messages"] if m["role"] == "compactionSummary"]
            assert all(m["summary"] and "b3BhcXVl" not in json.dumps(m) for m in summaries)
        assert cleared_seen > 0
    finally:
        shutil.rmtree(work)
