"""Hand-built v3 session files for the pi parity test: every entry type and the corners of buildContext."""

from __future__ import annotations

from session_builders import (
    assistant,
    bash_execution,
    entry,
    header,
    message,
    tool_call_assistant,
    tool_result,
    user,
)


def every_entry_type() -> list[dict]:
    return [
        message("u1", None, user("first")),
        entry("thinking_level_change", "t1", "u1", 1, thinkingLevel="high"),
        entry("model_change", "mc", "t1", 2, provider="openai", modelId="gpt-x"),
        message("a1", "mc", tool_call_assistant("c1"), 3),
        message("r1", "a1", tool_result("c1", "result text"), 4),
        message("bx", "r1", bash_execution("ls -la", "x\ny", 0), 5),
        message(
            "cm",
            "bx",
            {"role": "custom", "customType": "legacy", "content": "as message", "display": True, "timestamp": 9},
            6,
        ),
        entry("custom", "cu", "cm", 7, customType="state", data={"s": 1}),
        entry("custom_message", "cx", "cu", 8, customType="ext", content="injected", display=False, details={"k": [1]}),
        entry("label", "lb", "cx", 9, targetId="u1", label="start"),
        entry("session_info", "si", "lb", 10, name="named session"),
        entry("from_the_future", "ff", "si", 11, payload={"role": "user", "content": "never in context"}),
        entry("ttsr_injection", "tt", "ff", 12, injectedRules=["r1"]),
        entry("session_init", "sn", "tt", 13, systemPrompt="sys", task="t", tools=["read"]),
        entry("mode_change", "md", "sn", 14, mode="plan", data={"planFile": "/p"}),
        entry("branch_summary", "bs", "md", 15, fromId="a1", summary="came back", details={"d": 1}, fromHook=True),
        entry(
            "compaction",
            "cp",
            "bs",
            16,
            summary="compacted",
            firstKeptEntryId="bx",
            tokensBefore=1234,
            details={"readFiles": ["a"]},
            fromHook=False,
        ),
        message(
            "u2",
            "cp",
            user([{"type": "text", "text": "with image"}, {"type": "image", "data": "QUJD", "mimeType": "image/png"}]),
            17,
        ),
        message("a2", "u2", assistant("done", provider="anthropic", model="claude-z"), 18),
    ]


def compactions() -> list[dict]:
    objs = [message("1", None, user("m1"))]
    for i in range(2, 9):
        objs.append(message(str(i), str(i - 1), user(f"m{i}") if i % 2 else assistant(f"m{i}"), i))
    objs += [
        entry("compaction", "c1", "8", 20, summary="first", firstKeptEntryId="5", tokensBefore=100),
        message("9", "c1", user("m9"), 21),
        message("10", "9", assistant("m10"), 22),
        entry("compaction", "c2", "10", 23, summary="second", firstKeptEntryId="9", tokensBefore=200),
        message("11", "c2", user("m11"), 24),
        # first kept on another branch, then not an entry at all
        message("side", "4", user("side branch"), 25),
        entry("compaction", "c3", "side", 26, summary="off path", firstKeptEntryId="7", tokensBefore=1),
        message("12", "c3", user("m12"), 27),
        entry("compaction", "c4", "10", 28, summary="bogus kept", firstKeptEntryId="nope", tokensBefore=2),
        message("13", "c4", assistant("m13", stopReason="error", errorMessage="x", provider="err", model="e"), 29),
    ]
    return objs


def branches_and_summaries() -> list[dict]:
    return [
        message("u1", None, user("q")),
        message("a1", "u1", assistant("a")),
        entry("branch_summary", "b0", None, 2, fromId="root", summary="from the root"),
        message("u2", "b0", user("restart")),
        entry("branch_summary", "b1", "a1", 3, fromId="a1", summary=""),
        message("u3", "b1", user("after empty summary")),
        entry("branch_summary", "b2", "u3", 4, fromId="zz", summary="a </summary> inside"),
        message("orphan", "missing-parent", user("orphan")),
        message("u4", "orphan", assistant("below orphan")),
    ]


def custom_messages_and_bash() -> list[dict]:
    return [
        message("u", None, user("go")),
        message("b1", "u", bash_execution("make", "", 2.0)),
        message("b2", "b1", bash_execution("sleep", "partial", None, cancelled=True)),
        message("b3", "b2", bash_execution("cat", "head", 1, truncated=True, fullOutputPath="/tmp/full")),
        message("b4", "b3", bash_execution("secret", "hidden", 0, excludeFromContext=True)),
        message("b5", "b4", bash_execution("t", "no path", 0, truncated=True)),
        entry(
            "custom_message", "c1", "b5", 5, customType="x", content=[{"type": "text", "text": "blocks"}], display=True
        ),
        entry("custom_message", "c2", "c1", 6, customType="x", content="null details", display=True, details=None),
        entry("custom_message", "c3", "c2", 7, customType="x", content="no display"),
        message("a", "c3", assistant("ok")),
        message("n1", "a", {**assistant("null provider"), "provider": None}),
        message("n2", "a", {k: v for k, v in assistant("no provider").items() if k != "provider"}),
    ]


def labels_unknown_and_odd_text() -> list[dict]:
    return [
        message("u1", None, user('cut emoji \ud83d and \u2028 and "quotes" \\ back')),
        message("a1", "u1", assistant("é中😀")),
        entry("label", "l1", "a1", 2, targetId="u1", label="one"),
        entry("label", "l2", "l1", 3, targetId="u1", label="two"),
        entry("label", "l3", "l2", 4, targetId="a1", label="gone"),
        entry("label", "l4", "l3", 5, targetId="a1"),
        entry("unknown_kind", "k1", "l4", 6, nested={"a": [1, 2.5, None]}),
        message("u2", "k1", user("below unknown")),
        entry("label", "l5", "u1", 7, targetId="u2", label="other branch"),
        message("u3", "l5", user("timestamps", timestamp=1_700_000_000_123)),
        entry("custom_message", "tz", "u3", 0, customType="x", content="offset stamp", display=True),
        entry("branch_summary", "bad", "tz", 0, fromId="x", summary="bad stamp"),
    ]


def odd_timestamps(objs: list[dict]) -> list[dict]:
    for obj in objs:
        if obj["id"] == "tz":
            obj["timestamp"] = "2025-06-01T12:00:00+02:00"
        elif obj["id"] == "bad":
            obj["timestamp"] = "not a time"
    return objs


CASES = {
    "every_entry_type": (header("hb-every"), every_entry_type),
    "compactions": (header("hb-compactions"), compactions),
    "branches_and_summaries": (header("hb-branches"), branches_and_summaries),
    "custom_messages_and_bash": (header("hb-custom"), custom_messages_and_bash),
    "labels_unknown_and_odd_text": (header("hb-labels"), lambda: odd_timestamps(labels_unknown_and_odd_text())),
}
