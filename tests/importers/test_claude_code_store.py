"""The incremental Claude Code mapping (importers/claude_code_store.py) in process: what it carries from
batch to batch is what the stored entries give back. For every point of a real transcript, the
entries of a mapping rebuilt there from the entries written so far are the very entries (ids,
parents, lines) of the mapping that went on in memory, a line a batch and a turn a batch."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path
from typing import Any

import pytest

from sidecar.importers.claude_code_store import Transcripts

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "claude-code.tar.xz"
STAMP = "2026-01-01T00:00:00.000Z"


@pytest.fixture(scope="module")
def lines(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict[str, Any]], str, list[dict[str, Any]]]:
    tmp = tmp_path_factory.mktemp("claude")
    with tarfile.open(FIXTURE) as archive:
        archive.extractall(tmp, filter="data")
    path = next((tmp / ".claude" / "projects").glob("*/*.jsonl"))
    main = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    agent = next(path.with_suffix("").glob("subagents/agent-*.jsonl"))
    meta = json.loads(agent.with_suffix("").with_suffix(".meta.json").read_text())
    sub = [{**meta, "type": "agent_metadata"}] + [json.loads(x) for x in agent.read_text().splitlines() if x.strip()]
    return main, f"subagents/{agent.stem}", sub


def batches_of(main: list[dict[str, Any]], subpath: str, sub: list[dict[str, Any]], size: int) -> list[tuple]:
    out: list[tuple] = [(None, main[i : i + size]) for i in range(0, len(main), size)]
    out.insert(len(out) // 2, (subpath, sub))  # the subagent's lines half way
    return out


@pytest.mark.parametrize("size", [1, 3])
def test_a_mapping_rebuilt_anywhere_goes_on_as_the_one_kept_in_memory(lines, size: int):
    main, subpath, sub = lines
    batches = batches_of(main, subpath, sub, size)
    kept = Transcripts()
    written: list[list[dict[str, Any]]] = []
    for path, batch in batches:
        written.append(kept.map_batch(path, batch, STAMP)[0])
    whole = [entry for part in written for entry in part]
    ids = {e["id"] for e in whole}
    assert len(ids) == len(whole) and all(e["parentId"] is None or e["parentId"] in ids for e in whole)
    for cut in range(1, len(batches)):
        rebuilt = Transcripts.of_entries([e for part in written[:cut] for e in part])
        after = [e for path, batch in batches[cut:] for e in rebuilt.map_batch(path, batch, STAMP)[0]]
        assert after == [e for part in written[cut:] for e in part], f"rebuilt after batch {cut}"
