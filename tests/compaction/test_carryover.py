"""The carry-over: what survives every compaction whatever the summarizer writes."""

from __future__ import annotations

import asyncio
from typing import Any

from sidecar.compaction.carryover import CallRecord, CarryOver, OpenError, build_carry_over
from sidecar.compaction.run import CompactionOptions, run_compaction
from sidecar.compaction.serialize import serialize_conversation
from sidecar.context.build import build_context
from sidecar.providers.base import SummaryRequest, SummaryResponse

from .factory import PathBuilder


class ForgetfulModel:
    """A model that writes a plausible short summary and drops every fact it was given."""

    name = "forgetful"

    def __init__(self) -> None:
        self.requests: list[SummaryRequest] = []

    def model_for(self, requested: str | None) -> str:
        return "forgetful-1"

    async def summarize(self, request: SummaryRequest, on_text, on_retry=None) -> SummaryResponse:
        self.requests.append(request)
        text = "## Goal\n- Keep working on the project.\n\n## Progress\n- Several things were changed."
        on_text(text)
        return SummaryResponse(text=text, model="forgetful-1")


def compact(builder: PathBuilder, provider: Any, **options: Any):
    options.setdefault("keep_recent_tokens", 600)
    outcome = asyncio.run(run_compaction(builder.entries, CompactionOptions(**options), provider))
    for obj in outcome.entries:
        builder.add(obj)
    return outcome


def context_text(builder: PathBuilder) -> str:
    return serialize_conversation(build_context(builder.entries).messages)


def filler(builder: PathBuilder, number: int, turns: int = 3) -> None:
    for index in range(turns):
        builder.turn(f"filler {number}.{index}: tidy module {index}", steps=2, output_chars=1500, tool="bash")


CONSTRAINTS = [
    "Use pnpm, not npm.",
    "That signature has to stay as it is.",
    "I'd rather you didn't add new dependencies.",
    "If a test fails, fix the code, not the test.",
    "Ne modifie jamais le fichier de configuration.",
]


def test_five_compactions_by_a_model_that_drops_everything_lose_nothing_structural():
    builder = PathBuilder()
    builder.add(
        {"type": "session_init", "systemPrompt": "You are a careful agent.", "task": "Port the CLI to pnpm workspaces"}
    )
    model = ForgetfulModel()
    _, ids = builder.assistant("", [("bash", {"command": "pnpm install"})])
    builder.result(ids[0], "ERR_PNPM_NO_LOCKFILE lockfile missing in /repo", error=True)
    for round_number, constraint in enumerate(CONSTRAINTS):
        builder.user(f"Work on part {round_number} now. {constraint}")
        _, ids = builder.assistant(
            "Editing.", [("edit", {"path": f"src/part{round_number}.ts", "oldText": "a", "newText": "b"})]
        )
        builder.result(ids[0], "edited", name="edit")
        builder.assistant(f"Part {round_number} done.")
        filler(builder, round_number)
        compact(builder, model)
    builder.user("Now rename the `build` script to `compile`.")
    _, ids = builder.assistant("", [("bash", {"command": "pnpm run compile --filter cli"})])
    builder.result(ids[0], "compiled 12 packages")
    filler(builder, 99)
    outcome = compact(builder, model)
    assert len([e for e in builder.entries if e.type == "compaction"]) == 6
    text = context_text(builder)
    for constraint in CONSTRAINTS:
        assert constraint in text
    assert "ERR_PNPM_NO_LOCKFILE lockfile missing in /repo" in text  # never resolved: exact text
    assert "Now rename the `build` script to `compile`." in text
    assert 'bash(command="pnpm run compile --filter cli")` -> ok: compiled 12 packages' in text
    assert "You are a careful agent." in text and "Port the CLI to pnpm workspaces" in text
    for number in range(5):
        assert f"src/part{number}.ts" in outcome.modified_files and f"src/part{number}.ts" in text
    # The model saw the previous summary without our block; the block is there once, rebuilt.
    last = next(r for r in reversed(model.requests) if r.purpose == "history")
    assert last.previous_summary is not None and "<carry-over>" not in last.prompt
    assert outcome.summary.count("<carry-over>") == 1
    assert outcome.entries[-1]["details"]["carryOver"]["tasks"]["done"]


def test_an_error_resolved_by_a_later_success_of_the_same_call_leaves_the_carry_over():
    messages = [
        {
            "role": "assistant",
            "content": [
                {"type": "toolCall", "id": "1", "name": "bash", "arguments": {"command": "pytest -x"}},
                {"type": "toolCall", "id": "2", "name": "edit", "arguments": {"path": "a.py"}},
                {"type": "toolCall", "id": "3", "name": "bash", "arguments": {"command": "make lint"}},
            ],
        },
        {
            "role": "toolResult",
            "toolCallId": "1",
            "toolName": "bash",
            "isError": True,
            "content": [{"type": "text", "text": "E   AssertionError: 3 != 4"}],
        },
        {
            "role": "toolResult",
            "toolCallId": "2",
            "toolName": "edit",
            "isError": True,
            "content": [{"type": "text", "text": "oldText not found"}],
        },
        {
            "role": "toolResult",
            "toolCallId": "3",
            "toolName": "bash",
            "isError": True,
            "content": [{"type": "text", "text": "lint: 2 problems"}],
        },
    ]
    first = build_carry_over(None, messages)
    assert [e.text for e in first.errors] == ["E   AssertionError: 3 != 4", "oldText not found", "lint: 2 problems"]
    later = [
        {
            "role": "assistant",
            "content": [
                {"type": "toolCall", "id": "4", "name": "bash", "arguments": {"command": "pytest  -x"}},
                {"type": "toolCall", "id": "5", "name": "write", "arguments": {"path": "a.py"}},
            ],
        },
        {
            "role": "toolResult",
            "toolCallId": "4",
            "toolName": "bash",
            "isError": False,
            "content": [{"type": "text", "text": "1 passed"}],
        },
        {
            "role": "toolResult",
            "toolCallId": "5",
            "toolName": "write",
            "isError": False,
            "content": [{"type": "text", "text": "ok"}],
        },
    ]
    second = build_carry_over(CarryOver.from_obj(first.to_obj()), later)
    assert [e.text for e in second.errors] == ["lint: 2 problems"]  # a different command does not resolve it
    assert second.last_calls[-1].call.startswith('write(path="a.py"') and not second.last_calls[-1].error


def test_tasks_move_from_in_progress_to_done_across_compactions():
    builder = PathBuilder()
    builder.turn("first: add the flag", steps=1, output_chars=200)
    builder.user("second: migrate the database")
    _, ids = builder.assistant("Trying.", [("bash", {"command": "alembic upgrade head"})])
    builder.result(ids[0], "FAILED: relation users exists", error=True)
    filler(builder, 1, turns=0)
    carry = build_carry_over(None, build_context(builder.entries).messages)
    assert carry.done == ["first: add the flag"] and carry.in_progress == ["second: migrate the database"]
    _, ids = builder.assistant("Retrying with the fix.", [("bash", {"command": "alembic upgrade head"})])
    builder.result(ids[0], "done")
    builder.assistant("Migrated. Next:\n1. Backfill the emails\n2. Drop the old column")
    nxt = build_carry_over(carry, build_context(builder.entries).messages[-3:])
    assert nxt.done == ["first: add the flag", "second: migrate the database"] and nxt.in_progress == []
    assert nxt.remaining == ["Backfill the emails", "Drop the old column"]
    assert nxt.errors == []  # the same command succeeded
    # The agent's own todo list, when it keeps one, says it best.
    todo = [
        {
            "role": "assistant",
            "content": [
                {
                    "type": "toolCall",
                    "id": "t",
                    "name": "todowrite",
                    "arguments": {
                        "todos": [
                            {"content": "Backfill the emails", "status": "completed"},
                            {"content": "Drop the old column", "status": "in_progress"},
                            {"content": "Update the docs", "status": "pending"},
                        ]
                    },
                }
            ],
        }
    ]
    listed = build_carry_over(nxt, todo)
    assert "Backfill the emails" in listed.done and listed.in_progress == ["Drop the old column"]
    assert listed.remaining == ["Update the docs"]


def test_past_the_budget_older_messages_leave_a_digest_that_names_every_constraint():
    messages = []
    for number in range(30):
        log = "trace line\n" * 200  # a pasted log: ~550 tokens per message
        messages.append(
            {"role": "user", "content": f"Look at run {number}.\n{log}Keep the retry count at {number}, please."}
        )
    messages.append({"role": "user", "content": "Now fix the retry loop."})
    carry = build_carry_over(None, messages).fit(user_tokens=3000, max_tokens=100_000)
    assert carry.user_messages[-1] == "Now fix the retry loop." and len(carry.user_messages) < 10
    assert carry.digested_messages == 31 - len(carry.user_messages)
    digested = {f"Keep the retry count at {n}, please." for n in range(carry.digested_messages)}
    assert digested <= set(carry.digest)
    assert not any("trace line" in line for line in carry.digest)
    assert carry.tokens() < 3000 + 1500  # the verbatim budget, the digest and the task list


def test_what_gives_way_first_and_what_never_does():
    carry = CarryOver(
        user_messages=[f"Message {n}: always use tabs in file {n}." for n in range(5)],
        digest=[f"Old rule {n}: never touch dir{n}." for n in range(5)],
        last_request="Ship it. " + "x" * 400,
        last_calls=[CallRecord(f"bash(cmd{n})", "ok") for n in range(6)],
        errors=[OpenError(f"k{n}", f"c{n}", f"boom {n}") for n in range(3)],
        done=[f"done item {n}" for n in range(10)],
        in_progress=["the release"],
        remaining=["tag v2"],
    )
    parts = ("last_calls", "done", "user_messages", "errors", "digest")
    order: list[str] = []
    while True:
        before = {part: list(getattr(carry, part)) for part in parts}
        carry.fit(user_tokens=10_000, max_tokens=carry.tokens() - 1)
        shrunk = [part for part in parts if len(getattr(carry, part)) < len(before[part])]
        if not shrunk:
            break
        assert len(shrunk) == 1, shrunk
        part = shrunk[0]
        after = getattr(carry, part)
        assert after == before[part][len(before[part]) - len(after) :], part  # the oldest items, always
        if not order or order[-1] != part:
            order.append(part)
    assert order == ["last_calls", "done", "user_messages", "errors", "digest"]
    # What is left never gives way: the last request, the open work, one call and one error.
    assert carry.user_messages == [] and carry.digest == [] and carry.done == []
    assert len(carry.last_calls) == 1 and [e.text for e in carry.errors] == ["boom 2"]
    assert (
        carry.last_request.startswith("Ship it.")
        and carry.in_progress == ["the release"]
        and carry.remaining == ["tag v2"]
    )
    assert carry.dropped["digest"] == 10  # the 5 old lines, then the 5 from the digested messages
    assert "Ship it." in carry.render() and "the release" in carry.render()


def test_a_malformed_stored_carry_over_loses_only_what_is_malformed():
    obj = {
        "userMessages": ["keep me", 3, None],
        "digest": "not a list",
        "lastRequest": 7,
        "lastCalls": [{"call": "x", "outcome": "ok"}, "junk"],
        "tasks": {"done": ["a"], "inProgress": None},
        "dropped": [],
    }
    carry = CarryOver.from_obj(obj)
    assert (
        carry is not None and carry.user_messages == ["keep me"] and carry.digest == [] and carry.last_request is None
    )
    assert [c.call for c in carry.last_calls] == ["x"] and carry.done == ["a"] and carry.in_progress == []
    assert CarryOver.from_obj("nope") is None and CarryOver.from_obj(None) is None
    assert CarryOver.from_obj(carry.to_obj()) == carry


def test_a_quoted_closing_tag_cannot_end_the_block_early():
    from sidecar.compaction.prompts import strip_machine_blocks

    carry = build_carry_over(
        None, [{"role": "user", "content": "Why does it print </carry-over> here? Keep it short."}]
    )
    block = carry.render()
    assert block.count("</carry-over>") == 1 and block.rstrip().endswith("</carry-over>")
    assert strip_machine_blocks("## Goal\n- x" + block) == "## Goal\n- x"


def test_a_session_of_long_user_messages_still_shrinks_and_keeps_its_constraints():
    builder = PathBuilder()
    for number in range(7):
        builder.user(f"Step {number}: edit file{number}.go and make sure the tests pass. " + "context " * 100)
        _, ids = builder.assistant("", [("edit", {"path": f"file{number}.go"})])
        builder.result(ids[0], "ok " * 80, name="edit")
        builder.assistant("Done.")
    outcome = compact(builder, ForgetfulModel(), keep_recent_tokens=400)
    assert outcome.tokens_after < outcome.tokens_before
    carry = outcome.entries[-1]["details"]["carryOver"]
    assert carry["digestedMessages"] > 0
    summarized = [n for n in range(7) if f"file{n}.go" in outcome.modified_files]
    assert len(summarized) >= 3
    for number in summarized:  # verbatim, or its rule in the digest
        assert f"Step {number}: edit file{number}.go and make sure the tests pass." in outcome.summary
