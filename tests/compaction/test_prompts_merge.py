"""How a split turn's condensed start joins the history summary."""

from __future__ import annotations

from sidecar.compaction.prompts import SPLIT_TURN_HEADING, merge_split_turn


def test_the_turn_part_follows_the_history_after_a_separator():
    merged = merge_split_turn("## Goal\n- fix the parser\n", "## Original Request\nfix it")
    assert merged.startswith("## Goal\n- fix the parser\n\n---\n\n" + SPLIT_TURN_HEADING)
    assert merged.endswith("## Original Request\nfix it")


def test_with_no_history_the_turn_part_stands_alone():
    merged = merge_split_turn("  \n", "## Original Request\nfix it")
    assert merged == f"{SPLIT_TURN_HEADING}\n\n## Original Request\nfix it"
