"""The constraint recogniser on a written corpus: recall and false positives, with thresholds that can fail."""

from __future__ import annotations

from sidecar.format.constraints import constraint_sentences, is_constraint, sentences

from .constraint_corpus import CONSTRAINTS, HELD_OUT_CONSTRAINTS, HELD_OUT_ORDINARY, ORDINARY


def rates(constraints: list[str], ordinary: list[str]) -> tuple[float, float, list[str], list[str]]:
    missed = [s for s in constraints if not is_constraint(s)]
    flagged = [s for s in ordinary if is_constraint(s)]
    return 1 - len(missed) / len(constraints), len(flagged) / len(ordinary), missed, flagged


def test_the_corpus_is_large_and_varied_enough():
    assert len(CONSTRAINTS) >= 60 and len(ORDINARY) >= 60
    assert not set(CONSTRAINTS) & set(ORDINARY)
    non_ascii = [s for s in CONSTRAINTS if any(ord(ch) > 127 for ch in s)]
    assert len(non_ascii) >= 8  # other languages than English (with accents or other scripts)


def test_recall_and_false_positives_on_the_corpus():
    recall, false_positives, missed, flagged = rates(CONSTRAINTS, ORDINARY)
    print(f"corpus: recall {recall:.3f} ({len(CONSTRAINTS)}), false positives {false_positives:.3f} ({len(ORDINARY)})")
    assert recall >= 0.97, missed
    assert false_positives <= 0.05, flagged


def test_recall_and_false_positives_on_sentences_it_was_not_tuned_on():
    recall, false_positives, missed, flagged = rates(HELD_OUT_CONSTRAINTS, HELD_OUT_ORDINARY)
    print(f"held out: recall {recall:.3f}, false positives {false_positives:.3f}")
    assert recall >= 0.85, missed
    assert false_positives <= 0.10, flagged


def test_the_words_alone_do_not_decide():
    assert is_constraint("Never commit directly to main.")
    assert not is_constraint("The test never finishes on my machine.")
    assert is_constraint("Use pnpm, not npm.") and not is_constraint("We used npm in the old project.")
    assert is_constraint("Could you avoid touching the CI config?") and not is_constraint("Should we add caching here?")
    assert is_constraint("When you change the schema, regenerate the clients.")
    assert not is_constraint("When I run it, it crashes.")


def test_sentences_split_on_cjk_stops_and_lines():
    assert sentences("不要修改公共接口。请使用 pnpm。") == ["不要修改公共接口。", "请使用 pnpm。"]
    text = "Fix the login bug. Oh, and use pnpm, not npm.\nThanks!"
    assert constraint_sentences(text) == ["Oh, and use pnpm, not npm."]


def test_pasted_material_is_not_read_as_a_rule():
    pasted = "Never " + "retry the upload after a timeout and log the response body " * 20  # one 1,200-char "sentence"
    assert not is_constraint(pasted)
    assert constraint_sentences("Here is the log:\n" + pasted + "\nUse pnpm, not npm.") == ["Use pnpm, not npm."]
