"""What the importers carry over as the JSON text it came as (issue 14's import speed).

Tool outputs, ``toolUseResult`` and the records kept as custom entries go into the pi
file without being decoded and encoded again. These tests import such sources through
a real sidecar and read the entries back: the values are the source's (escapes, quotes,
line separators, astral characters), an output past the store's limit is cut like any
over-long string, odd lines (CRLF, blank, whitespace) keep their numbers in the damage
report, and a record whose ``message`` is no object is kept, not lost.
"""

from __future__ import annotations

import json
from pathlib import Path

from sidecar.store.payload import MAX_CHARS, TRUNCATION_NOTICE

from .test_record_kinds import imported

TRICKY = 'quotes " and \\ backslash\nnew line\ttab \u2028 line sep, \u00e9t\u00e9, \U0001f600, </script>, \x01'
HUGE = "0123456789abcdef\n" * (MAX_CHARS // 17 + 100)


def write_raw(path: Path, lines: list[str], newline: str = "\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(newline.join(lines).encode() + newline.encode())
    return path


def entries_of(got: dict, kind: str) -> list[dict]:
    return [e for e in got["entries"] if e["type"] == kind]


def results(got: dict) -> dict[str, dict]:
    return {
        e["message"]["toolCallId"]: e["message"]
        for e in entries_of(got, "message")
        if e["message"]["role"] == "toolResult"
    }


def test_codex_outputs_and_kept_lines_arrive_as_the_source_wrote_them(tmp_path):
    def line(kind: str, payload: dict, second: int) -> str:
        return json.dumps(
            {"timestamp": f"2026-01-02T03:04:{second:02d}.000Z", "type": kind, "payload": payload},
            ensure_ascii=second % 2 == 0,
        )  # both escaped and raw UTF-8 sources

    state = {"full": True, "state": {"note": TRICKY, "list": [1, 2.5, None, True]}}
    source = write_raw(
        tmp_path / "sessions" / "2026" / "01" / "02" / "rollout-2026-01-02T03-04-05-json.jsonl",
        [
            line("session_meta", {"id": "json-codex", "cwd": "/work/json", "model_provider": "openai"}, 1),
            line("turn_context", {"model": "gpt-json"}, 2),
            line(
                "response_item",
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
                3,
            ),
            "   ",
            line(
                "response_item",
                {
                    "type": "function_call",
                    "name": "exec_command",
                    "call_id": "c1",
                    "arguments": json.dumps({"cmd": "cat"}),
                },
                4,
            ),
            line(
                "response_item",
                {
                    "type": "function_call",
                    "name": "exec_command",
                    "call_id": "c2",
                    "arguments": json.dumps({"cmd": "yes"}),
                },
                5,
            ),
            line("response_item", {"type": "function_call_output", "call_id": "c1", "output": TRICKY}, 6),
            line("response_item", {"type": "function_call_output", "call_id": "c2", "output": HUGE}, 7),
            line("world_state", state, 8),
            "",
            '{"timestamp": "2026-01-02T03:04:09.000Z", "type": "response_item", "payload": {"type": "mess',
            line(
                "response_item",
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]},
                10,
            ),
        ],
        newline="\r\n",
    )
    got = imported(tmp_path / "root", "codex", source)

    assert [d["line"] for d in got["session"]["damaged"]] == [11]
    outputs = results(got)
    assert outputs["c1"]["content"] == [{"type": "text", "text": TRICKY}]
    cut = outputs["c2"]["content"][0]["text"]
    assert len(cut) == MAX_CHARS and cut.endswith(TRUNCATION_NOTICE) and HUGE.startswith(cut[: -len(TRUNCATION_NOTICE)])
    (kept,) = [e for e in entries_of(got, "custom") if e["customType"] == "codex.world_state"]
    assert kept["data"] == {"type": "world_state", "timestamp": "2026-01-02T03:04:08.000Z", "payload": state}
    # The context the model gets holds the output as it was.
    said = [m for m in got["context"]["messages"] if m["role"] == "toolResult"]
    assert said[0]["content"][0]["text"] == TRICKY


def test_claude_code_outputs_details_and_kept_records_arrive_as_the_source_wrote_them(tmp_path):
    def rec(kind: str, uid: str | None, parent: str | None, **fields) -> dict:
        return {
            "type": kind,
            "uuid": uid,
            "parentUuid": parent,
            "sessionId": "json-claude",
            "cwd": "/work/json",
            "timestamp": "2026-01-02T03:04:05.000Z",
            "isSidechain": False,
            **fields,
        }

    def use(uid: str, parent: str, call: str) -> dict:
        return rec(
            "assistant",
            uid,
            parent,
            message={
                "id": f"m-{uid}",
                "role": "assistant",
                "model": "claude-json",
                "content": [{"type": "tool_use", "id": call, "name": "Bash", "input": {"command": "x"}}],
            },
        )

    details = {"stdout": TRICKY, "stderr": "", "interrupted": False, "code": [0, None]}
    attachment = rec("attachment", "at1", "a2", attachment={"type": "note", "text": TRICKY})
    odd = rec("user", "odd1", "at1", message="a message that is a string")
    source = write_raw(
        tmp_path / "project" / "json-claude.jsonl",
        [
            json.dumps(rec("user", "u1", None, message={"role": "user", "content": "start"})),
            json.dumps(use("a1", "u1", "t1")),
            json.dumps(
                rec(
                    "user",
                    "r1",
                    "a1",
                    message={
                        "role": "user",
                        "content": [{"type": "tool_result", "tool_use_id": "t1", "content": TRICKY}],
                    },
                    toolUseResult=details,
                ),
                ensure_ascii=False,
            ),
            "",
            json.dumps(use("a2", "r1", "t2")),
            json.dumps(
                rec(
                    "user",
                    "r2",
                    "a2",
                    message={
                        "role": "user",
                        "content": [{"type": "tool_result", "tool_use_id": "t2", "content": HUGE}],
                    },
                )
            ),
            json.dumps(attachment),
            json.dumps(odd),
            "[1, 2, 3]",
            json.dumps(
                rec(
                    "assistant",
                    "a3",
                    "odd1",
                    message={
                        "id": "m3",
                        "role": "assistant",
                        "model": "claude-json",
                        "content": [{"type": "text", "text": "done"}],
                    },
                )
            ),
        ],
        newline="\r\n",
    )
    got = imported(tmp_path / "root", "claude-code", source)

    assert got["session"]["damaged"] == [{"line": 9, "error": "not a JSON object"}]
    outputs = results(got)
    assert outputs["t1"]["content"] == [{"type": "text", "text": TRICKY}]
    assert outputs["t1"]["details"] == details
    cut = outputs["t2"]["content"][0]["text"]
    assert len(cut) == MAX_CHARS and cut.endswith(TRUNCATION_NOTICE)
    kept = {e["customType"]: e["data"] for e in entries_of(got, "custom")}
    assert kept["claude-code.attachment"] == attachment
    assert kept["claude-code.user"] == odd  # a message that is no object: kept whole, never dropped
    assert by_outcome(got["session"], "user") == {"mapped": 3, "kept": 1}
    # The path runs through the kept records to the last reply (nothing orphaned).
    by_id = {e["id"]: e for e in got["entries"]}
    leaf = got["entries"][-1]
    seen = []
    while leaf is not None:
        seen.append(leaf["type"])
        leaf = by_id.get(leaf["parentId"]) if leaf["parentId"] else None
    assert seen.count("custom") == 2 and seen[-1] == "message"


def by_outcome(session: dict, kind: str) -> dict:
    (count,) = [c for c in session["counts"] if c["kind"] == kind]
    return {k: count[k] for k in ("mapped", "kept", "skipped") if count.get(k)}


def test_a_type_of_another_shape_is_reported_not_a_crash(tmp_path):
    codex = write_raw(
        tmp_path / "sessions" / "2026" / "01" / "02" / "rollout-2026-01-02T03-04-05-odd.jsonl",
        [
            json.dumps({"timestamp": "2026-01-02T03:04:05.000Z", "type": "session_meta", "payload": {"id": "odd"}}),
            json.dumps({"timestamp": "2026-01-02T03:04:06.000Z", "type": "event_msg", "payload": {"type": ["a"]}}),
            json.dumps(
                {
                    "timestamp": "2026-01-02T03:04:06.000Z",
                    "type": "event_msg",
                    "payload": {"type": "item_completed", "item": "not an object"},
                }
            ),
            json.dumps(
                {
                    "timestamp": "2026-01-02T03:04:07.000Z",
                    "type": "response_item",
                    "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
                }
            ),
        ],
    )
    got = imported(tmp_path / "codex-root", "codex", codex)
    assert got["session"]["unrecognised"] == ["event_msg/['a']"]  # kept as a custom entry, like any unknown event
    assert [m["role"] for m in got["context"]["messages"]] == ["user"]

    claude = write_raw(
        tmp_path / "project" / "odd.jsonl",
        [
            json.dumps({"type": ["x"], "uuid": "a"}),
            json.dumps(
                {
                    "type": "user",
                    "uuid": "u1",
                    "parentUuid": None,
                    "sessionId": "odd",
                    "message": {"role": "user", "content": "hi"},
                }
            ),
        ],
    )
    got = imported(tmp_path / "claude-root", "claude-code", claude)
    assert got["session"]["damaged"] == [{"line": 1, "error": 'a record without a string "type"'}]
    assert [m["role"] for m in got["context"]["messages"]] == ["user"]


def test_codex_call_arguments_of_every_shape_arrive_as_pi_would_read_them(tmp_path):
    def call(second: int, call_id: str, arguments: object) -> str:
        return json.dumps(
            {
                "timestamp": f"2026-01-02T03:04:{second:02d}.000Z",
                "type": "response_item",
                "payload": {
                    "type": "function_call",
                    "name": "exec_command",
                    "call_id": call_id,
                    "arguments": arguments,
                },
            }
        )

    source = write_raw(
        tmp_path / "sessions" / "2026" / "01" / "02" / "rollout-2026-01-02T03-04-05-args.jsonl",
        [
            json.dumps({"timestamp": "2026-01-02T03:04:01.000Z", "type": "session_meta", "payload": {"id": "args"}}),
            json.dumps(
                {
                    "timestamp": "2026-01-02T03:04:02.000Z",
                    "type": "response_item",
                    "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
                }
            ),
            call(3, "text", '{"cmd": "ls"}'),
            call(4, "object", {"cmd": "pwd", "n": [1, 2]}),  # written as JSON itself, not as its text
            call(5, "huge", '{"timeout": 1e400}'),  # JSON.parse: Infinity, which pi writes as null
            call(6, "nan", '{"timeout": NaN}'),  # JSON.parse refuses it: the text is kept as it came
            call(7, "list", ["a", "b"]),
        ],
    )
    got = imported(tmp_path / "root", "codex", source)

    assert not got["session"].get("damaged")
    (assistant,) = [e["message"] for e in entries_of(got, "message") if e["message"]["role"] == "assistant"]
    calls = {b["id"]: b["arguments"] for b in assistant["content"] if b["type"] == "toolCall"}
    assert calls == {
        "text": {"cmd": "ls"},
        "object": {"cmd": "pwd", "n": [1, 2]},
        "huge": {"timeout": None},
        "nan": {"raw": '{"timeout": NaN}'},
        "list": {"value": ["a", "b"]},
    }
