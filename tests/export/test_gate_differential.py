"""Redaction's line gate on the compiled core against the full walk and the Python gate (issue 38).

Both gates run in one process over the same lines: the planted-secret corpus (every form in every
place, written as pi writes it, with every non-ASCII character escaped, and with "=" escaped as
Gson writes it), the same forms under pi's message shapes (the tail after the content, an error
after the tail), the repository's ordinary text, the pi fixtures, and lines hypothesis makes with
a planted secret at a random offset. Where the compiled gate says "clean", the full walk must
change nothing, and the Python gate must say "clean" too (the compiled one may only be more
cautious). Where both read the same line they must find the same free text, and on these lines
give the same verdicts (a gate that said "walk" for everything would be sound and useless). Then
the corpus session exported to each format is byte-identical on either core.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from both_cores import needs_compiled_core
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sidecar import corepath
from sidecar.export import export_session
from sidecar.export.redact import Redactor, rules
from sidecar.export.redact.verdicts import forget
from sidecar.store.base import FsyncPolicy
from sidecar.store.files.session import FileSession

from .secrets_corpus import corpus, every_form, ordinary_texts

try:
    from sidecar.corepath.compiled import CompiledLineGate
except ImportError:
    CompiledLineGate = None  # type: ignore[assignment,misc]  # the module is absent in a pure-Python install

pytestmark = [needs_compiled_core, pytest.mark.usefixtures("core_restored")]

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "pi"
TAIL = {
    "api": "anthropic-messages",
    "provider": "anthropic",
    "model": "claude-sonnet-4-20250514",
    "usage": {"input": 1, "output": 20, "cost": {"input": 0.003, "total": 0.01}, "totalTokens": 2},
    "stopReason": "toolUse",
    "timestamp": 1735689607007,
}


def _compiled() -> Any:
    return CompiledLineGate(rules._GATE_RULES, rules._key_names_secret)


def _with_envelope(number: int, entry: dict[str, Any]) -> dict[str, Any]:
    envelope = {
        "type": entry.get("type", "message"),
        "id": f"{number:08x}",
        "parentId": f"{number - 1:08x}" if number else None,
        "timestamp": "2025-01-01T00:00:07.007Z",
    }
    return {**envelope, **{key: value for key, value in entry.items() if key not in envelope}}


def _writings(obj: dict[str, Any]) -> list[bytes]:
    """The line as pi writes it, every non-ASCII character escaped, and "=" escaped (Gson's \\u003d)."""
    as_pi = json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()
    return [as_pi, json.dumps(obj, separators=(",", ":")).encode(), as_pi.replace(b"=", b"\\u003d")]


def _message_lines(text: str) -> list[dict[str, Any]]:
    """``text`` in the places pi's messages hold text, with a message's tail where pi writes one."""
    messages = [
        {"role": "user", "content": text},
        {
            "role": "assistant",
            "content": [{"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": text}}],
            **TAIL,
        },
        {"role": "toolResult", "toolCallId": "c1", "toolName": "bash", "content": [{"type": "text", "text": text}]},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": text}], **TAIL},
        # pi writes an error after the usage, the stop reason and the last timestamp.
        {"role": "assistant", "content": [], **TAIL, "stopReason": "error", "errorMessage": text},
    ]
    return [_with_envelope(1, {"type": "message", "message": message}) for message in messages]


def _corpus_lines() -> list[bytes]:
    lines: list[bytes] = []
    _, placed = corpus()
    number = 0
    for _place, entries in placed:
        for entry in entries:
            number += 1
            lines.extend(_writings(_with_envelope(number, entry)))
    for secret in every_form(6):
        for text in (secret.text, f"x {secret.text} y", f'"{secret.text}"', json.dumps(secret.text)):
            for obj in _message_lines(text):
                lines.extend(_writings(obj))
        if secret.name:
            custom = {"type": "custom", "customType": "config", "data": {"config": {secret.name: secret.value}}}
            lines.extend(_writings(_with_envelope(2, custom)))
    return lines


def _ordinary_lines() -> list[bytes]:
    lines: list[bytes] = []
    for text in ordinary_texts(REPO)[:60]:
        for obj in _message_lines(text):
            lines.extend(_writings(obj))
    for path in sorted(FIXTURES.glob("*.jsonl")):
        lines.extend(line for line in path.read_bytes().splitlines() if line.strip())
    return lines


def _walk_changes(raw: bytes) -> bool:
    obj = json.loads(raw)
    return Redactor().value(obj) is not obj


def _check(gate: Any, raw: bytes) -> bool:
    """The compiled verdict on ``raw``, held to the walk and to Python's; True when it says "walk"."""
    compiled = gate.may_hold_secret(raw)
    python = rules.line_may_hold_secret(raw)
    assert CompiledLineGate.free_bounds(raw) == rules._free_bounds(raw), raw[:200]
    if not compiled:
        assert not python, ("compiled clean, Python walks", raw[:300])
        assert not _walk_changes(raw), ("compiled clean, the walk redacts", raw[:300])
    assert compiled == python, ("the gates differ", compiled, raw[:300])
    return compiled


def test_every_planted_form_is_walked_and_the_gates_agree():
    gate = _compiled()
    lines = _corpus_lines()
    verdicts = [_check(gate, raw) for raw in lines]
    changed = [raw for raw in lines if _walk_changes(raw)]
    assert len(changed) > 1000  # the corpus plants secrets in most of its lines
    assert all(gate.which_may_hold_secret(changed))
    assert gate.which_may_hold_secret(lines) == verdicts  # the batch form answers as the line form does


def test_ordinary_lines_get_the_python_gates_verdicts():
    gate = _compiled()
    lines = _ordinary_lines()
    verdicts = [_check(gate, raw) for raw in lines]
    # Code and prose 40 lines to a text hold long runs and are mostly walked; short ones are let through.
    assert verdicts.count(False) >= 100, (verdicts.count(False), len(verdicts))


# Text around a planted secret: words, code, separators, quotes, escapes, non-ASCII.
_FILLER = st.text(
    alphabet=st.sampled_from(list('abcxyz KEY_token=:-/"\\\n\t{}[],.@é…💥0123456789')), min_size=0, max_size=60
)
_FORMS = every_form(11)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(before=_FILLER, after=_FILLER, form=st.sampled_from(range(len(_FORMS))), place=st.integers(0, 4))
def test_a_secret_planted_at_any_offset_is_never_let_through(before: str, after: str, form: int, place: int):
    gate = _compiled()
    text = before + _FORMS[form].text + after
    for raw in _writings(_message_lines(text)[place]):
        _check(gate, raw)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_FILLER, place=st.integers(0, 4))
def test_lines_without_a_planted_secret_get_the_same_verdicts(text: str, place: int):
    gate = _compiled()
    for raw in _writings(_message_lines(text)[place]):
        _check(gate, raw)


def test_the_corpus_session_exports_byte_for_byte_alike_on_either_core(tmp_path: Path):
    _, placed = corpus()
    header = {
        "type": "session",
        "version": 3,
        "id": "gate-corpus",
        "timestamp": "2025-01-01T00:00:00.000Z",
        "cwd": "/w",
    }
    lines = [json.dumps(header, separators=(",", ":"))]
    number = 0
    for _place, entries in placed:
        for entry in entries:
            number += 1
            lines.append(json.dumps(_with_envelope(number, entry), separators=(",", ":"), ensure_ascii=False))
    for text in ordinary_texts(REPO)[:20]:
        number += 1
        lines.append(
            json.dumps(_with_envelope(number, _message_lines(text)[1]), ensure_ascii=False, separators=(",", ":"))
        )
    path = tmp_path / "corpus.jsonl"
    path.write_text("\n".join(lines) + "\n")
    session, _ = FileSession.load(path, FsyncPolicy.NEVER, read_only=True)
    try:
        for fmt in ("markdown", "json", "html"):
            exported = {}
            for core in ("python", "compiled"):
                corepath.choose(core)
                forget(session)
                exported[core] = export_session(session, fmt, whole_tree=True, redact=True)
            assert exported["compiled"].data == exported["python"].data, fmt
            assert exported["compiled"].redaction == exported["python"].redaction
            assert exported["python"].redaction.total > 1000, fmt
    finally:
        session.close()


def test_runs_are_measured_alike_wherever_they_fall():
    """The compiled gate reads 16 bytes a step: a run of 11, 12, 19 or 20 (the lengths the rows turn on)
    across every place a step can cut it, with a space, a quote, a colon, an "=" or a control character
    before and after, gets Python's verdict."""
    gate = _compiled()
    for offset in range(40):
        for length in (11, 12, 19, 20):
            for edge in (" ", '"', ":", "=", "\x1c", "\t"):
                text = ("a " * offset)[:offset] + edge + "q" * length + edge + "b"
                for raw in _writings(_message_lines(text)[0]):
                    _check(gate, raw)


def test_threads_reading_lines_at_once_get_the_same_verdicts():
    """Exports run on the sidecar's worker threads: while one thread's gate asks Python about a key it has
    not met (and lets the GIL go), another's call reads on, with the verdicts one thread alone gets."""
    import threading
    import time

    def slow_judge(key: bytes) -> bool:
        time.sleep(0.0002)  # lets the GIL go, as any Python may between two bytecodes
        return rules._key_names_secret(key)

    lines = _corpus_lines()[:600] + _ordinary_lines()[:600]
    expected = [rules.line_may_hold_secret(raw) for raw in lines]
    gate = CompiledLineGate(rules._GATE_RULES, slow_judge)
    found: dict[int, list[bool]] = {}
    failures: list[BaseException] = []

    def read(number: int) -> None:
        try:
            if number % 2:
                found[number] = gate.which_may_hold_secret(lines)
            else:
                found[number] = [gate.may_hold_secret(raw) for raw in lines]
        except BaseException as failure:  # noqa: BLE001  # reported by the main thread below
            failures.append(failure)

    threads = [threading.Thread(target=read, args=(number,)) for number in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures
    assert all(verdicts == expected for verdicts in found.values()) and len(found) == 4
