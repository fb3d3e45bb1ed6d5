"""oh-my-pi 18.3's new session shapes, in files written by hand from its published 18.3.4 sources.

18.3.4's dependencies are not served by the registry here, so its code cannot run
(tests/parity runs 18.2.3's). Each test names the function of
@oh-my-pi/pi-coding-agent 18.3.4 (``npm pack @oh-my-pi/pi-coding-agent@18.3.4``,
``package/src/...``) whose rule the file exercises, and checks what the sidecar
builds under oh-my-pi's compatibility against what that code builds from it.
"""

from __future__ import annotations

from pathlib import Path

from session_builders import (
    assistant,
    entry,
    header,
    message,
    stamp,
    tool_call_assistant,
    tool_result,
    user,
    write_session,
)

from sidecar import wire
from sidecar.format.jstime import js_time
from sidecar.service import SessionService


def omp_root(tmp_path: Path) -> Path:
    root = tmp_path / ".omp" / "agent" / "sessions"
    root.mkdir(parents=True)
    return root


def build(root: Path, entries: list[dict], fmt: str = "agent", name: str = "s.jsonl") -> list[dict]:
    path = write_session(root / "--work-proj--" / name, header("s-183", cwd="/work/proj"), entries)
    svc = SessionService(root)
    sid = svc.open(wire.OpenParams(path=str(path))).sessionId
    try:
        return svc.build_context(wire.BuildContextParams(sessionId=sid, format=fmt)).messages
    finally:
        svc.close_all()


NATIVE = {
    "anthropicCompaction": {
        "provider": "anthropic",
        "content": "The work so far.",
        "encryptedContent": "opaque-state",
        "model": "claude-opus-4-5",
        "usedTokens": 61000,
        "signature": "sig-abc",
    }
}


def _conversation() -> list[dict]:
    return [
        message("u1", None, user("first ask", 10), 10),
        message("a1", "u1", assistant("first answer"), 20),
        message("u2", "a1", user("second ask", 30), 30),
        message("a2", "u2", assistant("second answer"), 40),
    ]


def test_a_native_compaction_keeps_the_entries_after_its_replay_snapshot(tmp_path):
    """session/session-context.ts, buildSessionContext: with ``firstKeptEntryId`` "" and an Anthropic payload,
    ``retainedStart`` is the entry after ``providerReplayThroughEntryId`` (``snapshotIdx + 1``); the summary is
    created with the compaction's timestamp and ``historyRewriteAt`` = that first retained entry's time - 1."""
    root = omp_root(tmp_path)
    compaction = entry(
        "compaction",
        "c1",
        "a2",
        50,
        summary="The work so far.",
        firstKeptEntryId="",
        providerReplayThroughEntryId="a1",
        tokensBefore=61000,
        preserveData=NATIVE,
    )
    messages = build(root, [*_conversation(), compaction, message("u3", "c1", user("third ask", 60), 60)])
    summary, *rest = messages
    assert summary["role"] == "compactionSummary"
    assert summary["timestamp"] == js_time(stamp(50))  # the compaction's own time
    assert summary["historyRewriteAt"] == js_time(stamp(30)) - 1  # u2, the first entry kept, less 1 ms
    # getAnthropicCompactionPayload (pi-agent-core compaction/anthropic.ts): provider, content, and the
    # non-empty encryptedContent / filesText; the summary message carries it as providerPayload.
    assert summary["providerPayload"] == {
        "type": "anthropicCompaction",
        "provider": "anthropic",
        "content": "The work so far.",
        "encryptedContent": "opaque-state",
    }
    assert [m.get("content") for m in rest if m["role"] == "user"] == ["second ask", "third ask"]
    assert [m["role"] for m in rest] == ["user", "assistant", "user"]

    llm = build(
        root,
        [*_conversation(), compaction, message("u3", "c1", user("third ask", 60), 60)],
        fmt="llm",
        name="again.jsonl",
    )
    assert llm[0]["role"] == "user" and llm[0]["attribution"] == "agent"
    assert llm[0]["historyRewriteAt"] == js_time(stamp(30)) - 1 and llm[0]["timestamp"] == js_time(stamp(50))
    assert llm[0]["providerPayload"]["type"] == "anthropicCompaction"
    assert [m["role"] for m in llm] == ["user", "user", "assistant", "user"]


def test_a_native_compaction_with_a_kept_entry_times_its_rewrite_from_that_entry(tmp_path):
    """session/session-context.ts, buildSessionContext: ``firstRetained`` is the ``firstKeptEntryId`` entry when
    it is before the compaction; the replay snapshot is read only when ``firstKeptEntryId`` is ""."""
    root = omp_root(tmp_path)
    compaction = entry(
        "compaction",
        "c1",
        "a2",
        50,
        summary="S",
        firstKeptEntryId="a1",
        providerReplayThroughEntryId="u2",
        tokensBefore=9,
        preserveData=NATIVE,
    )
    summary, *rest = build(root, [*_conversation(), compaction])
    assert summary["historyRewriteAt"] == js_time(stamp(20)) - 1
    assert [m["role"] for m in rest] == ["assistant", "user", "assistant"]  # from a1 on


def test_a_compaction_without_a_native_payload_keeps_no_tail_by_its_snapshot(tmp_path):
    """session/session-context.ts, buildSessionContext: ``snapshotIdx`` needs ``anthropicPayload``; without it (or
    with a payload missing its ``content``) nothing before the compaction is kept and there is no historyRewriteAt."""
    root = omp_root(tmp_path)
    for index, preserve in enumerate([None, {"anthropicCompaction": {"provider": "anthropic", "content": ""}}]):
        compaction = entry(
            "compaction",
            "c1",
            "a2",
            50,
            summary="S",
            firstKeptEntryId="",
            providerReplayThroughEntryId="a1",
            tokensBefore=9,
            **({"preserveData": preserve} if preserve else {}),
        )
        summary, *rest = build(
            root, [*_conversation(), compaction, message("u3", "c1", user("next", 60), 60)], name=f"plain{index}.jsonl"
        )
        assert "historyRewriteAt" not in summary and "providerPayload" not in summary
        assert [m["content"] for m in rest] == ["next"]


def test_a_native_compaction_whose_snapshot_is_its_last_entry_before_it_keeps_nothing(tmp_path):
    """session/session-context.ts, buildSessionContext: ``retainedStart < compactionIdx`` (the snapshot was the
    leaf when it compacted); ``firstRetained`` then falls to the entry after the compaction."""
    root = omp_root(tmp_path)
    compaction = entry(
        "compaction",
        "c1",
        "a2",
        50,
        summary="S",
        firstKeptEntryId="",
        providerReplayThroughEntryId="a2",
        tokensBefore=9,
        preserveData=NATIVE,
    )
    summary, *rest = build(root, [*_conversation(), compaction, message("u3", "c1", user("next", 60), 60)])
    assert summary["historyRewriteAt"] == js_time(stamp(60)) - 1
    assert [m["content"] for m in rest] == ["next"]


HIDDEN_183 = ["session-agent-notice", "eval-prelude-notice", "eval-state-context", "anthropic-usage-wrap-up"]


def test_18_3_hidden_notices_go_to_the_model_as_developer_messages(tmp_path):
    """session/session-tools.ts (SESSION_AGENT_NOTICE_MESSAGE_TYPE, EVAL_PRELUDE_NOTICE_MESSAGE_TYPE),
    session/agent-session.ts (#buildEvalStateContextMessage, #steerAnthropicWrapUp): custom messages with
    ``display: false`` and ``attribution: "agent"``. buildSessionContext leaves out only prewalk-plan and
    vibe-mode-context; messages.ts convertOne's "custom" case sends the rest as developer messages."""
    root = omp_root(tmp_path)
    entries = [message("u1", None, user("go", 10), 10)]
    parent = "u1"
    for index, kind in enumerate(HIDDEN_183):
        details = {"added": ["x"], "removed": []} if kind.endswith("-notice") else None
        entries.append(
            entry(
                "custom_message",
                f"n{index}",
                parent,
                20 + index,
                customType=kind,
                content=f"{kind} body",
                display=False,
                attribution="agent",
                **({"details": details} if details else {}),
            )
        )
        parent = f"n{index}"
    agent = build(root, entries)
    assert [m.get("customType") for m in agent[1:]] == HIDDEN_183
    assert agent[1]["details"] == {"added": ["x"], "removed": []} and "details" not in agent[3]
    llm = build(root, entries, fmt="llm", name="llm.jsonl")
    assert [m["role"] for m in llm] == ["user", "developer", "developer", "developer", "developer"]
    assert [m["content"][0]["text"] for m in llm[1:]] == [f"{kind} body" for kind in HIDDEN_183]
    assert all(m["attribution"] == "agent" for m in llm[1:])


def test_request_controls_on_an_assistant_message_reach_the_model_as_written(tmp_path):
    """messages.ts convertOne, "assistant" case: ``requestControls`` ride on the assistant message (later
    requests replay them from it); the message is sent as it is (convertMessageToLlm returns it)."""
    root = omp_root(tmp_path)
    controls = {"anthropic": {"toolRemoval": ["bash"]}}
    turn = {**tool_call_assistant("c1"), "requestControls": controls}
    llm = build(
        root,
        [
            message("u1", None, user("go", 10), 10),
            message("a1", "u1", turn, 20),
            message("r1", "a1", tool_result("c1"), 30),
        ],
        fmt="llm",
    )
    assert llm[1]["requestControls"] == controls


def test_an_interrupted_empty_turn_stays_out_of_a_context_built_from_the_file(tmp_path):
    """session/session-context.ts, buildSessionContext drops aborted turns (unless an interrupted-thinking marker
    follows); messages.ts convertOne's rule that keeps an empty user-interrupted turn holding ``requestControls``
    therefore never sees one from a file: with or without controls the turn is out, its tool results with it."""
    root = omp_root(tmp_path)
    for index, extra in enumerate([{}, {"requestControls": {"anthropic": {"toolRemoval": ["bash"]}}}]):
        aborted = {
            **assistant(""),
            "content": [],
            "stopReason": "aborted",
            "errorMessage": "Interrupted by user",
            **extra,
        }
        llm = build(
            root,
            [
                message("u1", None, user("go", 10), 10),
                message("a1", "u1", aborted, 20),
                message("u2", "a1", user("again", 30), 30),
            ],
            fmt="llm",
            name=f"x{index}.jsonl",
        )
        assert [m["role"] for m in llm] == ["user", "user"]
