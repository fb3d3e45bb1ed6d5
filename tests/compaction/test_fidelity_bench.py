"""bench/fidelity.py's session, checked: every planted fact survives six compactions on both summarizers."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "fidelity.py"


def load_bench():
    spec = importlib.util.spec_from_file_location("fidelity_bench", BENCH)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


@pytest.mark.parametrize("summarizer", ["offline", "forgetful"])
def test_every_planted_fact_is_in_the_context_after_every_compaction(summarizer: str):
    bench = load_bench()
    rows = bench.run(summarizer, turns=72, first=22, every=10, keep=20000)
    assert len(rows) == 6
    for row in rows:
        assert row["missing"] == [], (row["turn"], row["missing"])
        assert row["kept"] == row["planted"]
    assert rows[-1]["planted"]["constraint"] == len(bench.CONSTRAINTS) and rows[-1]["planted"]["error"] == len(
        bench.ERRORS
    )
    # The verbatim budget overflowed, so some constraints survived through the digest alone.
    assert rows[-1]["carry"]["digestedMessages"] > 0 and rows[-1]["carry"]["digest"]
    assert rows[-1]["tokens"] < 0.3 * rows[-1]["full"]
    # Errors the agent resolved (the same command succeeded later) are not carried.
    assert all("vite.config.ts not found" not in error["text"] for error in rows[-1]["carry"]["errors"])


def test_tool_result_clearing_postpones_compactions_in_batches_and_loses_no_fact():
    bench = load_bench()
    from sidecar.config import ClearToolResultsSettings

    clearing = ClearToolResultsSettings(enabled=True, triggerTokens=24000, keepToolResults=3, minimumTokens=8000)
    off = bench.run_windowed("offline", 90, 48000, 16384, 10000, ClearToolResultsSettings())
    on = bench.run_windowed("offline", 90, 48000, 16384, 10000, clearing)
    assert len(off["compactions"]) >= 6 and off["clearings"] == []
    # Clearing first: at most one compaction in 90 turns, and later than the first one without it.
    assert len(on["compactions"]) <= 1 and (not on["compactions"] or on["compactions"][0] > 3 * off["compactions"][0])
    # In batches: each clearing frees at least minimumTokens, so the prompt cache breaks every few turns, not every turn.
    assert all(freed >= 8000 for _, _, freed in on["clearings"])
    assert 3 <= len(on["clearings"]) <= 90 // 4
    assert on["missing"] == [] and on["kept"] == on["planted"]
