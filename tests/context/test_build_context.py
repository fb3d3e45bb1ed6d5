"""buildContext: the path walk, compaction overlay, settings and message shapes of pi."""

from __future__ import annotations

import pytest
from session_builders import assistant, entry, message, stamp, user

from sidecar.context.build import build_context, js_time
from sidecar.format.jsonl import Entry
from sidecar.store.tree import SessionTree


def tree_of(objs: list[dict]) -> SessionTree:
    tree = SessionTree()
    for obj in objs:
        tree.add(Entry.from_obj(obj))
    return tree


def ctx_at(objs: list[dict], leaf: str | None):
    return build_context(tree_of(objs).path(leaf))


def texts(ctx) -> list[str]:
    out = []
    for m in ctx.messages:
        if m["role"] in ("compactionSummary", "branchSummary"):
            out.append(f"{m['role']}:{m['summary']}")
        elif isinstance(m.get("content"), str):
            out.append(m["content"])
        else:
            out.append(" ".join(b.get("text", "") for b in m["content"]))
    return out


def conversation(n: int) -> list[dict]:
    """u1, a2, u3, a4, ... chained, ids "1".."n"."""
    objs = []
    for i in range(1, n + 1):
        body = user(f"m{i}") if i % 2 else assistant(f"m{i}")
        objs.append(message(str(i), str(i - 1) if i > 1 else None, body, second=i))
    return objs


def test_an_empty_path_gives_an_empty_context_with_defaults():
    ctx = build_context([])
    assert ctx.messages == [] and ctx.thinking_level == "off" and ctx.model is None
    assert ctx.mode == "none" and ctx.injected_rules == [] and ctx.models == {}


def test_a_simple_conversation_passes_messages_through_unchanged():
    objs = conversation(4)
    ctx = ctx_at(objs, "4")
    assert ctx.messages == [o["message"] for o in objs]
    assert ctx.entry_ids == ["1", "2", "3", "4"]


def test_thinking_level_is_the_last_change_on_the_path():
    objs = conversation(2) + [
        entry("thinking_level_change", "t1", "2", thinkingLevel="high"),
        entry("thinking_level_change", "t2", "t1", thinkingLevel="low"),
        entry("thinking_level_change", "other", "2", thinkingLevel="medium"),  # another branch
    ]
    assert ctx_at(objs, "t2").thinking_level == "low"
    assert ctx_at(objs, "t1").thinking_level == "high"
    assert ctx_at(objs, "other").thinking_level == "medium"
    assert ctx_at(objs, "2").thinking_level == "off"
    assert [m["role"] for m in ctx_at(objs, "t2").messages] == ["user", "assistant"]


def test_model_comes_from_model_change_then_from_later_assistant_messages():
    objs = [
        message("1", None, user()),
        entry("model_change", "mc", "1", provider="openai", modelId="gpt-x"),
        message("2", "mc", user("again")),
        message("3", "2", assistant(provider="anthropic", model="claude-y")),
        entry("model_change", "mc2", "3", provider="google", modelId="gem"),
    ]
    assert ctx_at(objs, "1").model is None
    assert ctx_at(objs, "2").model == {"provider": "openai", "modelId": "gpt-x"}
    assert ctx_at(objs, "3").model == {"provider": "anthropic", "modelId": "claude-y"}
    assert ctx_at(objs, "mc2").model == {"provider": "google", "modelId": "gem"}


def test_an_assistant_message_that_ended_in_error_still_sets_the_model():
    failed = assistant("", provider="openai", model="o-9", stopReason="error", errorMessage="boom")
    objs = [message("1", None, user()), message("2", "1", failed)]
    ctx = ctx_at(objs, "2")
    assert ctx.model == {"provider": "openai", "modelId": "o-9"}
    assert ctx.messages[1] == failed


def test_compaction_emits_summary_then_kept_entries_then_what_follows():
    objs = conversation(6) + [
        entry("compaction", "c", "6", second=10, summary="S", firstKeptEntryId="3", tokensBefore=999),
        message("7", "c", user("after"), second=11),
    ]
    ctx = ctx_at(objs, "7")
    assert ctx.messages[0] == {
        "role": "compactionSummary",
        "summary": "S",
        "tokensBefore": 999,
        "timestamp": js_time(stamp(10)),
    }
    assert texts(ctx) == ["compactionSummary:S", "m3", "m4", "m5", "m6", "after"]
    assert ctx.entry_ids == ["c", "3", "4", "5", "6", "7"]
    assert ctx.after_compaction == 5


def test_compaction_keeping_from_the_first_message_keeps_everything():
    objs = conversation(4) + [entry("compaction", "c", "4", summary="S", firstKeptEntryId="1", tokensBefore=1)]
    assert texts(ctx_at(objs, "c")) == ["compactionSummary:S", "m1", "m2", "m3", "m4"]


def test_only_the_last_compaction_on_the_path_counts():
    objs = conversation(4) + [
        entry("compaction", "c1", "4", summary="first", firstKeptEntryId="2", tokensBefore=1),
        message("5", "c1", user("m5")),
        message("6", "5", assistant("m6")),
        entry("compaction", "c2", "6", summary="second", firstKeptEntryId="5", tokensBefore=2),
        message("7", "c2", user("m7")),
    ]
    assert texts(ctx_at(objs, "7")) == ["compactionSummary:second", "m5", "m6", "m7"]
    assert texts(ctx_at(objs, "6")) == ["compactionSummary:first", "m2", "m3", "m4", "m5", "m6"]


def test_kept_entries_are_used_only_when_first_kept_is_on_the_path():
    objs = conversation(4) + [
        message("x", "2", user("other branch")),
        entry("compaction", "c", "4", summary="S", firstKeptEntryId="x", tokensBefore=1),
        message("5", "c", user("m5")),
    ]
    assert texts(ctx_at(objs, "5")) == ["compactionSummary:S", "m5"]


def test_a_compaction_on_another_branch_does_not_count():
    objs = conversation(4) + [
        entry("compaction", "c", "4", summary="S", firstKeptEntryId="3", tokensBefore=1),
        message("b", "2", user("branch")),
    ]
    assert texts(ctx_at(objs, "b")) == ["m1", "m2", "branch"]


def test_the_path_follows_the_chosen_leaf_only():
    objs = conversation(3) + [message("4a", "3", assistant("left")), message("4b", "3", assistant("right"))]
    assert texts(ctx_at(objs, "4a")) == ["m1", "m2", "m3", "left"]
    assert texts(ctx_at(objs, "4b")) == ["m1", "m2", "m3", "right"]


def test_branch_summary_becomes_a_branch_summary_message_when_not_empty():
    objs = conversation(2) + [
        entry("branch_summary", "bs", "2", second=7, fromId="9", summary="went elsewhere", details={"k": 1}),
        entry("branch_summary", "empty", "bs", fromId="9", summary=""),
        message("3", "empty", user("m3")),
    ]
    ctx = ctx_at(objs, "3")
    assert ctx.messages[2] == {
        "role": "branchSummary",
        "summary": "went elsewhere",
        "fromId": "9",
        "timestamp": js_time(stamp(7)),
    }
    assert texts(ctx) == ["m1", "m2", "branchSummary:went elsewhere", "m3"]


def test_custom_message_becomes_a_custom_message_with_the_entry_fields():
    objs = [
        message("1", None, user()),
        entry(
            "custom_message", "cm", "1", second=5, customType="ext", content="injected", display=False, details={"d": 1}
        ),
        entry("custom_message", "cm2", "cm", second=6, customType="ext", content=[{"type": "text", "text": "x"}]),
    ]
    ctx = ctx_at(objs, "cm2")
    assert ctx.messages[1] == {
        "role": "custom",
        "customType": "ext",
        "content": "injected",
        "display": False,
        "details": {"d": 1},
        "timestamp": js_time(stamp(5)),
    }
    # Fields the entry lacks are absent, as JSON.stringify drops undefined.
    assert ctx.messages[2] == {
        "role": "custom",
        "customType": "ext",
        "content": [{"type": "text", "text": "x"}],
        "timestamp": js_time(stamp(6)),
    }


def test_entries_that_carry_no_message_are_ignored():
    objs = [
        message("1", None, user()),
        entry("custom", "c", "1", customType="state", data={"x": 1}),
        entry("label", "l", "c", targetId="1", label="mark"),
        entry("session_info", "n", "l", name="named"),
        entry("session_init", "si", "n", systemPrompt="p", tools=["read"]),
        entry("from_the_future", "f", "si", payload={"role": "user"}),
        message("2", "f", assistant()),
    ]
    ctx = ctx_at(objs, "2")
    assert [m["role"] for m in ctx.messages] == ["user", "assistant"]
    assert ctx.entry_ids == ["1", "2"]


def test_oh_my_pi_state_mode_rules_and_model_roles():
    objs = [
        message("1", None, user()),
        entry("ttsr_injection", "r1", "1", injectedRules=["a", "b"]),
        entry("mode_change", "m1", "r1", mode="plan", data={"planFile": "/p.md"}),
        entry("ttsr_injection", "r2", "m1", injectedRules=["b", "c"]),
        entry("model_change", "mc", "r2", model="openai/gpt-5", role="default"),
        entry("model_change", "mc2", "mc", model="anthropic/haiku", role="smol"),
        message("2", "mc2", assistant(provider="x", model="y")),
        entry("mode_change", "m2", "2", mode="agent"),
    ]
    ctx = ctx_at(objs, "m2")
    assert ctx.injected_rules == ["a", "b", "c"]
    assert ctx.mode == "agent" and ctx.mode_data is None
    assert ctx.models == {"default": "openai/gpt-5", "smol": "anthropic/haiku"}
    mid = ctx_at(objs, "mc2")
    assert mid.mode == "plan" and mid.mode_data == {"planFile": "/p.md"}
    assert mid.model == {"provider": "openai", "modelId": "gpt-5"}


def test_without_an_explicit_default_model_the_assistant_sets_the_default_role():
    objs = [message("1", None, user()), message("2", "1", assistant(provider="p", model="m"))]
    assert ctx_at(objs, "2").models == {"default": "p/m"}


def test_an_orphan_path_stops_at_the_missing_parent():
    objs = [message("1", None, user("root")), message("2", "missing", assistant("orphan"))]
    assert texts(ctx_at(objs, "2")) == ["orphan"]


@pytest.mark.parametrize(
    ("iso", "expected"),
    [
        ("2025-01-01T00:00:00.000Z", 1735689600000),
        ("2025-01-01T00:00:00Z", 1735689600000),
        ("2025-01-01T01:00:00.250+01:00", 1735689600250),
        ("not a date", None),
        (None, None),
    ],
)
def test_js_time_reads_iso_stamps_like_new_date(iso, expected):
    assert js_time(iso) == expected


def test_model_fields_follow_the_source_null_stays_null_and_missing_stays_missing():
    with_null = {**assistant(), "provider": None}
    without = {k: v for k, v in assistant().items() if k != "provider"}
    assert ctx_at([message("1", None, with_null)], "1").model == {"provider": None, "modelId": "claude-test"}
    assert ctx_at([message("1", None, without)], "1").model == {"modelId": "claude-test"}
    change = entry("model_change", "m", None, provider="p")
    assert ctx_at([change], "m").model == {"provider": "p"}


def test_the_default_role_prints_missing_and_null_fields_as_javascript_does():
    # oh-my-pi builds `${provider}/${model}` in JavaScript: undefined and null print as words.
    without = {k: v for k, v in assistant().items() if k not in ("provider", "model")}
    with_null = {**assistant(), "provider": None}
    assert ctx_at([message("1", None, without)], "1").models == {"default": "undefined/undefined"}
    assert ctx_at([message("1", None, with_null)], "1").models == {"default": "null/claude-test"}
