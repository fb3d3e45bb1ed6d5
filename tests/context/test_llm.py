"""convert_to_llm: only user / assistant / toolResult reach the model, wrapped as pi wraps them.

The wrapper strings themselves are checked against pi's real code by the
parity test; here we check where they go and what surrounds them.
"""

from __future__ import annotations

from session_builders import assistant, bash_execution, tool_result, user

from sidecar.context.llm import (
    BRANCH_SUMMARY_PREFIX,
    BRANCH_SUMMARY_SUFFIX,
    COMPACTION_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_SUFFIX,
    convert_to_llm,
)


def only_text(message: dict) -> str:
    assert message["role"] == "user"
    [block] = message["content"]
    assert block["type"] == "text"
    return block["text"]


def test_model_roles_pass_through_as_the_same_objects():
    messages = [user(), assistant(), tool_result()]
    out = convert_to_llm(messages)
    assert out == messages
    assert all(a is b for a, b in zip(out, messages))


def test_summaries_become_user_messages_wrapped_in_summary_tags():
    out = convert_to_llm(
        [
            {"role": "compactionSummary", "summary": "old stuff", "tokensBefore": 5, "timestamp": 11},
            {"role": "branchSummary", "summary": "side trip", "fromId": "x", "timestamp": 12},
        ]
    )
    assert only_text(out[0]) == COMPACTION_SUMMARY_PREFIX + "old stuff" + COMPACTION_SUMMARY_SUFFIX
    assert only_text(out[1]) == BRANCH_SUMMARY_PREFIX + "side trip" + BRANCH_SUMMARY_SUFFIX
    assert [m["timestamp"] for m in out] == [11, 12]
    assert "<summary>" in COMPACTION_SUMMARY_PREFIX and "</summary>" in BRANCH_SUMMARY_SUFFIX


def test_custom_messages_become_user_messages_with_text_or_their_own_blocks():
    image = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    out = convert_to_llm(
        [
            {"role": "custom", "customType": "x", "content": "plain", "display": True, "timestamp": 1},
            {
                "role": "custom",
                "customType": "x",
                "content": [{"type": "text", "text": "t"}, image],
                "display": False,
                "timestamp": 2,
            },
        ]
    )
    assert out[0] == {"role": "user", "content": [{"type": "text", "text": "plain"}], "timestamp": 1}
    assert out[1] == {"role": "user", "content": [{"type": "text", "text": "t"}, image], "timestamp": 2}


def test_bash_execution_text_with_output_and_a_failing_exit_code():
    out = convert_to_llm([bash_execution("make", "err: x", exit_code=2)])
    assert only_text(out[0]) == "Ran `make`\n```\nerr: x\n```\n\nCommand exited with code 2"
    assert out[0]["timestamp"] == 4


def test_bash_execution_text_without_output_cancelled_and_truncated():
    assert only_text(convert_to_llm([bash_execution("true", "", exit_code=0)])[0]) == "Ran `true`\n(no output)"
    cancelled = bash_execution("sleep 9", "", exit_code=None, cancelled=True)
    assert only_text(convert_to_llm([cancelled])[0]) == "Ran `sleep 9`\n(no output)\n\n(command cancelled)"
    truncated = bash_execution("cat big", "head", exit_code=0, truncated=True, fullOutputPath="/tmp/out.txt")
    assert only_text(convert_to_llm([truncated])[0]) == (
        "Ran `cat big`\n```\nhead\n```\n\n[Output truncated. Full output: /tmp/out.txt]"
    )
    # truncated without a path says nothing more
    assert "truncated" not in only_text(convert_to_llm([bash_execution(truncated=True)])[0])


def test_bash_execution_excluded_from_context_is_dropped():
    out = convert_to_llm([user(), bash_execution(excludeFromContext=True), bash_execution(excludeFromContext=False)])
    assert [m["role"] for m in out] == ["user", "user"]
    assert only_text(out[1]).startswith("Ran `ls`")


def test_unknown_roles_do_not_reach_the_model():
    assert convert_to_llm([{"role": "hookMessage", "content": "x"}, {"role": "mystery"}, user()]) == [user()]
