"""A Codex import writes the same file and gives the same answer on the compiled core as on Python (issue 42).

The compiled core maps a main rollout's lines itself (core/src/import_codex.rs) or refuses the whole
file, which codex.py then maps; either way the session file written and the answer must be the
Python path's byte for byte. Each source here is imported through the service twice in one
process, once per core (``corepath.choose``): the committed fixtures the real Codex wrote, those
fixtures without the lines the compiled mapping refuses (a compaction, a subagent's spawn: so it
maps real shapes end to end), bench/imports.py's generator at a small size, the edge lines
test_import_bytes.py pins, the generated rollout with lines torn, broken or holding lone
surrogates, and rollouts hypothesis makes of the shapes Codex writes and of odd ones. Where a source
is one the compiled mapping is meant to take, the test also holds it to taking it (else the
compiled path would be compiled in name only).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import msgspec
import pytest
from both_cores import needs_compiled_core
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from sidecar import corepath, wire
from sidecar.importers import codex
from sidecar.importers.common import read_source

from .importing import unpack
from .test_import_bytes import CODEX_RELATIVE, _codex_edges, _generated

pytestmark = [needs_compiled_core, pytest.mark.usefixtures("core_restored")]


def _imported(core: str, source: Path, root: Path) -> tuple[bytes, bytes]:
    """The file the import of ``source`` writes on ``core`` and its answer, ``root`` written as <root>."""
    from sidecar.service import SessionService

    corepath.choose(core)
    service = SessionService(root)
    held: list[object] = []
    try:
        with service.upkeep_held(held):  # (as the rpc layer runs it: the listing index folded in after)
            result = service.import_(wire.ImportParams(tool="codex", paths=[str(source)]))
        service.run_upkeep(held)
    except Exception as error:  # noqa: BLE001  # (codex.py fails on some odd shapes, e.g. a summary that is a number:
        # the compiled path refuses those, so both cores must fail alike)
        return b"<no file>", f"{type(error).__name__}: {error}".encode()
    finally:
        service.close_all()
    (session,) = result.sessions
    # (an import with nothing to write, or only what the store keeps unwritten, leaves no file: compared as such)
    written = Path(session.path).read_bytes() if Path(session.path).is_file() else b"<no file>"
    answer = msgspec.json.encode(result)
    where = str(root).encode()
    return written.replace(where, b"<root>"), answer.replace(where, b"<root>")


def _same_on_both(source: Path, work: Path) -> None:
    work.mkdir(parents=True, exist_ok=True)
    python = _imported("python", source, work / "python")
    compiled = _imported("compiled", source, work / "compiled")
    assert compiled[1] == python[1], "the answers differ"
    assert compiled[0] == python[0], "the files differ"


def _taken_by_compiled(source: Path) -> bool:
    return corepath.codex_mapping_of("compiled", codex.VOCABULARY).map(read_source(source)) is not None


def _fixture_rollouts(tmp_path: Path) -> list[Path]:
    return sorted((unpack("codex", tmp_path / "fixtures") / ".codex").rglob("rollout-*.jsonl"))


def _rollout_path(root: Path, name: str) -> Path:
    path = root / name / CODEX_RELATIVE
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def test_the_fixtures_import_the_same(tmp_path):
    rollouts = _fixture_rollouts(tmp_path)
    assert rollouts
    for index, rollout in enumerate(rollouts):
        _same_on_both(rollout, tmp_path / f"run{index}")


def test_the_fixtures_without_what_it_refuses_are_mapped_compiled_and_import_the_same(tmp_path):
    mapped = 0
    for index, rollout in enumerate(_fixture_rollouts(tmp_path)):
        kept = [
            line
            for line in rollout.read_bytes().splitlines()
            if b'"type":"compacted"' not in line and b"CollabAgentToolCall" not in line
        ]
        source = _rollout_path(tmp_path / "trimmed", str(index))
        source.write_bytes(b"\n".join(kept) + b"\n")
        assert _taken_by_compiled(source), rollout.name
        mapped += 1
        _same_on_both(source, tmp_path / f"run{index}")
    assert mapped


def test_the_benchmark_generator_is_mapped_compiled_and_imports_the_same(tmp_path):
    source = tmp_path / "generated" / CODEX_RELATIVE
    _generated("codex", source)
    assert _taken_by_compiled(source)
    _same_on_both(source, tmp_path / "run")


def test_the_edge_lines_import_the_same(tmp_path):
    source = _rollout_path(tmp_path, "edges")
    source.write_bytes(_codex_edges())
    _same_on_both(source, tmp_path / "run")


# Every character msgspec writes as an escape, and text around what the mapping reads (lstrip's spaces, the
# context prefixes, non-ASCII and astral text, a float msgspec writes back as it came).
TRICKY = [
    "".join(map(chr, range(32))),
    'a "quoted" \\ back\\slash /',
    "é 😀 \U0010ffff \u2028",
    " \u3000\x1c<environment_context>x",
]


def _every_common_shape(text: str, ascii_only: bool) -> list[str]:
    """A rollout of each line shape the compiled mapping takes, ``text`` in every string it decodes."""

    def line(second: int, kind: str, payload: object) -> str:
        made = {"timestamp": f"2026-01-02T03:04:{second:02d}.123Z", "type": kind, "payload": payload}
        return json.dumps(made, ensure_ascii=ascii_only)

    part = {"type": "input_text", "text": text}
    return [
        line(0, "session_meta", {"id": "t", "cwd": "/w", "model_provider": text or "openai"}),
        line(1, "turn_context", {"model": text}),
        line(2, "response_item", {"type": "message", "role": "user", "content": [part, part]}),
        line(
            3,
            "response_item",
            {"type": "message", "role": "user", "content": [{"type": "text", "text": "<turn_aborted>" + text}]},
        ),
        line(
            4,
            "response_item",
            {
                "type": "message",
                "role": "developer",
                "content": [part],
                "meta": {"t": 1.25, text: [text, 7, None, True]},
            },
        ),
        line(
            5,
            "response_item",
            {"type": "reasoning", "summary": [{"type": "summary_text", "text": text}] * 2, "encrypted_content": text},
        ),
        line(
            6,
            "response_item",
            {
                "type": "function_call",
                "name": text,
                "call_id": text,
                "arguments": json.dumps({text: {"n": [1, 0.5, text]}}),
            },
        ),
        line(
            7, "event_msg", {"type": "item_completed", "item": {"type": "CommandExecution", "aggregated_output": text}}
        ),
        line(8, "response_item", {"type": "function_call_output", "call_id": text, "output": text}),
        line(9, "response_item", {"type": "custom_tool_call", "name": "apply_patch", "call_id": "p", "input": text}),
        line(10, "response_item", {"type": "custom_tool_call_output", "call_id": "p", "output": text}),
        line(11, "token_usage_record", {"usage": {"input_tokens": 3}}),
        line(
            12,
            "response_item",
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text}, {"type": "refusal", "refusal": text}],
            },
        ),
        line(13, "world_state", {"state": {"note": text}}),
        line(14, "event_msg", {"type": "thread_settings_applied", "thread_settings": {"model": text + "-2"}}),
        line(15, "event_msg", {"type": "a_new_event", "note": text}),
        line(16, "response_item", {"type": "a_new_item", "note": text}),
        line(17, "a_new_kind", {"note": text}),
        line(18, "response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": text}]}),
    ]


@pytest.mark.parametrize("ascii_only", [True, False])
@pytest.mark.parametrize("which", range(len(TRICKY)))
def test_text_of_every_kind_is_mapped_compiled_and_imports_the_same(tmp_path, which, ascii_only):
    source = _rollout_path(tmp_path, "tricky")
    source.write_text("\n".join(_every_common_shape(TRICKY[which], ascii_only)) + "\n", encoding="utf-8")
    assert _taken_by_compiled(source)
    _same_on_both(source, tmp_path / "run")


BREAKS = [
    lambda line: line[: len(line) // 2],  # torn
    lambda line: line.replace(b'"text":"', b'"text":"\\ud83d cut ', 1),  # a lone surrogate escape
    lambda line: line.replace(b'"payload":', b'"payload":[', 1),  # not JSON any more
    lambda line: line.replace(b'"type":"', b'"typ\\u0065":"', 1),  # an escaped key
    lambda line: line.replace(b'"timestamp":"', b'"timestamp":"x', 1),  # a time of another shape
    lambda line: line.replace(b"}", b',"payload":{}}', 1),  # a repeated key
    lambda line: line + b"\xff",  # not UTF-8
    lambda line: b"  \t" + line + b"\r",  # blanks around it
    lambda line: b"",  # blank
]


@pytest.mark.parametrize("which", range(len(BREAKS)))
def test_a_generated_rollout_with_damaged_lines_imports_the_same(tmp_path, which):
    generated = tmp_path / "generated" / CODEX_RELATIVE
    _generated("codex", generated)
    lines = generated.read_bytes().splitlines()
    rng = random.Random(which)
    for at in rng.sample(range(1, len(lines)), 6):
        lines[at] = BREAKS[which](lines[at])
    source = _rollout_path(tmp_path, "damaged")
    source.write_bytes(b"\n".join(lines) + b"\n")
    _same_on_both(source, tmp_path / "run")


# ---- rollouts hypothesis makes ------------------------------------------------------------------

# Text of every kind a string may hold: escapes, control characters, non-ASCII and astral text, what
# lstrip takes off, the context prefixes, quotes and backslashes.
texts = st.one_of(
    st.text(max_size=12),
    st.sampled_from(
        [
            "",
            "plain",
            "<environment_context>cwd",
            " \u3000<user_instructions>x",
            "\x1c# AGENTS.md instructions",
            'quote " and \\ slash',
            "tab\tnew\nline\x01",
            "é 😀 \U0010ffff",
            "\u2028",
        ]
    ),
)
stamps = st.one_of(
    st.builds(
        lambda second, milli: f"2026-01-02T03:04:{second:02d}.{milli:03d}Z",
        st.integers(0, 99),
        st.integers(0, 999),
    ),
    st.sampled_from(["2026-02-30T00:00:00.000Z", "2026-01-02T03:04:05Z", "2026-01-02 03:04:05.000Z", ""]),
    st.none(),
)
json_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=False, allow_infinity=False),
        texts,
    ),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=6,
)


def _text_parts(kind: str) -> st.SearchStrategy[list[object]]:
    part = st.one_of(
        st.fixed_dictionaries({"type": st.just(kind), "text": texts}),
        st.fixed_dictionaries({"type": st.sampled_from(["text", "refusal", "other"]), "refusal": texts}),
        json_values,
    )
    return st.lists(part, max_size=3)


payloads = st.one_of(
    st.fixed_dictionaries(
        {"type": st.just("message"), "role": st.sampled_from(["user", "assistant", "developer", "system"])},
        optional={"content": _text_parts("input_text") | _text_parts("output_text") | json_values},
    ),
    st.fixed_dictionaries(
        {"type": st.just("reasoning")},
        optional={
            "summary": st.lists(st.fixed_dictionaries({"type": st.just("summary_text"), "text": texts}), max_size=2)
            | json_values,
            "content": _text_parts("reasoning_text"),
            "encrypted_content": st.one_of(st.none(), texts),
        },
    ),
    st.fixed_dictionaries(
        {"type": st.just("function_call"), "name": texts, "call_id": st.sampled_from(["c1", "c2", ""])},
        optional={"arguments": st.one_of(json_values.map(json.dumps), texts, json_values)},
    ),
    st.fixed_dictionaries(
        {"type": st.just("custom_tool_call"), "name": texts, "call_id": st.sampled_from(["c1", "c2"])},
        optional={"input": json_values},
    ),
    st.fixed_dictionaries(
        {
            "type": st.sampled_from(["function_call_output", "custom_tool_call_output"]),
            "call_id": st.sampled_from(["c1", "c2", "c3"]),
            "output": st.one_of(texts, json_values),
        }
    ),
    st.fixed_dictionaries({"type": st.sampled_from(["local_shell_call", "web_search_call", "new_item"])}),
)
events = st.fixed_dictionaries(
    {
        "type": st.sampled_from(
            ["item_completed", "token_count", "task_started", "agent_message", "thread_settings_applied", "odd_event"]
        )
    },
    optional={
        "item": st.one_of(st.none(), st.fixed_dictionaries({"type": st.sampled_from(["AgentMessage", "Reasoning"])})),
        "thread_settings": st.one_of(st.none(), st.fixed_dictionaries({}, optional={"model": texts})),
        "note": json_values,
    },
)
lines = st.one_of(
    st.tuples(st.just("response_item"), payloads),
    st.tuples(st.just("response_item"), payloads),
    st.tuples(st.just("event_msg"), events),
    st.tuples(st.just("turn_context"), st.fixed_dictionaries({}, optional={"model": st.one_of(texts, st.none())})),
    st.tuples(st.sampled_from(["world_state", "token_usage_record", "token_count", "mystery"]), json_values),
    st.tuples(st.just("session_meta"), st.fixed_dictionaries({"id": texts, "model_provider": texts})),
)


@needs_compiled_core
@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(
    made=st.lists(st.tuples(lines, stamps, st.booleans()), min_size=1, max_size=12),
    provider=st.sampled_from(["openai", "", "azure"]),
)
def test_hypothesis_rollouts_import_the_same(tmp_path_factory, made, provider):
    work = tmp_path_factory.mktemp("rollout")
    header = {"timestamp": "2026-01-02T03:04:00.000Z", "type": "session_meta"}
    header["payload"] = {"id": "hypothesis-thread", "cwd": "/work", "model_provider": provider}
    rendered = [json.dumps(header, separators=(",", ":"))]
    for (kind, payload), stamp, ascii_only in made:
        line: dict[str, object] = {"type": kind, "payload": payload}
        if stamp is not None:
            line["timestamp"] = stamp
        rendered.append(json.dumps(line, ensure_ascii=ascii_only, separators=(",", ":") if ascii_only else None))
    source = _rollout_path(work, "made")
    source.write_bytes("\n".join(rendered).encode("utf-8", "surrogatepass") + b"\n")
    event("mapped compiled" if _taken_by_compiled(source) else "refused: mapped by Python")
    _same_on_both(source, work / "run")
