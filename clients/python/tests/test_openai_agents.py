"""The OpenAI Agents SDK's sessions kept in a real sidecar (adapters/openai_agents), judged against its SQLiteSession.

Random sequences of add/get/pop/clear give the same answers from both, and again after
the session is reopened in another sidecar; each kind of item comes back exactly and is
the pi message it should be; pop and clear leave every item in the tree; the compaction
hook runs the sidecar's compaction; a real ``Runner.run`` with tool calls persists through
the sidecar and resumes in a fresh process as it does with SQLiteSession.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from session_sidecar_client import SidecarClient

pytest.importorskip("agents", reason="the OpenAI Agents SDK (pip install 'session-sidecar[openai-agents]')")

from agents import SQLiteSession  # noqa: E402
from session_sidecar_client.adapters.openai_agents import ITEM_TYPE, LEAF_TYPE, SidecarSession  # noqa: E402
from session_sidecar_client.adapters.openai_agents.items import item_kind  # noqa: E402

CLIENT_DIR = Path(__file__).resolve().parents[1]

EXAMPLES: list[dict[str, Any]] = [
    {"role": "user", "content": "What's the weather in Paris?"},
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "and in Lyon"}]},
    {"role": "user", "content": [{"type": "input_text", "text": "a"}, {"type": "input_text", "text": "b"}]},
    {"role": "user", "content": ""},
    {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "Sunny.", "annotations": [], "logprobs": []}],
    },
    {"role": "assistant", "content": "plain assistant text"},
    {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "x", "annotations": []}],
        "status": "completed",
    },
    {
        "type": "function_call",
        "call_id": "call_1",
        "name": "get_weather",
        "arguments": '{"city":"Paris"}',
        "id": "fc_1",
        "status": "completed",
    },
    {
        "type": "function_call",
        "call_id": "call_2",
        "name": "get_weather",
        "arguments": '{"city": "Lyon", "days": [1, 2]}',
    },
    {"type": "function_call", "call_id": "call_3", "name": "noop", "arguments": ""},
    {"type": "function_call", "call_id": "call_4", "name": "list", "arguments": "[1, 2]"},
    {"type": "function_call_output", "call_id": "call_1", "output": "sunny, 21 degrees"},
    {"type": "function_call_output", "call_id": "call_unknown", "output": ""},
    {"type": "function_call_output", "call_id": "call_2", "output": [{"type": "input_text", "text": "in parts"}]},
    {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Think about it."}]},
    {"type": "reasoning", "id": "rs_2", "summary": [], "encrypted_content": "gAAAA"},
    {
        "type": "reasoning",
        "id": "rs_3",
        "summary": [{"type": "summary_text", "text": "one"}, {"type": "summary_text", "text": "two"}],
        "content": [{"type": "reasoning_text", "text": "raw"}],
    },
    {"role": "system", "content": "Be brief."},
    {"role": "developer", "content": "Use metric units."},
    {
        "role": "user",
        "content": [{"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo=", "detail": "auto"}],
    },
    {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": "weather"}},
    {"type": "compaction", "id": "cmp_1", "encrypted_content": "opaque"},
    {"type": "item_reference", "id": "msg_0"},
    {"role": "user", "content": "unicode: é 漢字 🙂 and a \u2028 line separator", "phase": None},
    {"role": "user", "content": "numbers", "n": 1.5, "flag": True, "nested": {"a": [1, {"b": None}]}},
]


@pytest.fixture
async def sidecar(command: list[str], sessions_root: Path):
    client = await SidecarClient.spawn(command=command, session_root=sessions_root)
    try:
        yield client
    finally:
        assert await client.close() == 0


async def test_every_kind_of_item_comes_back_exactly_as_the_pi_message_it_is(sidecar: SidecarClient):
    session = SidecarSession("kinds", client=sidecar)
    await session.add_items(EXAMPLES)
    assert await session.get_items() == EXAMPLES
    entries = (await sidecar.get_entries("kinds"))["entries"]
    assert len(entries) == len(EXAMPLES)
    shapes = [
        e["message"]["role"] + ":" + ",".join(b["type"] for b in e["message"]["content"] if isinstance(b, dict))
        if e["type"] == "message"
        else e["customType"]
        for e in entries
    ]
    assert shapes[:3] == ["user:", "user:text", "user:text,text"]
    assert shapes[4:7] == ["assistant:text"] * 3
    assert shapes[7:11] == ["assistant:toolCall"] * 4
    assert shapes[11:13] == ["toolResult:text"] * 2
    assert shapes[13] == ITEM_TYPE  # an output in parts: kept verbatim
    assert shapes[14:17] == ["assistant:thinking", "assistant:", "assistant:thinking,thinking"]
    assert shapes[17:23] == [ITEM_TYPE] * 6
    assert shapes[23:] == ["user:", "user:"]
    call = entries[7]["message"]["content"][0]
    assert call == {"type": "toolCall", "id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}
    assert entries[11]["message"]["toolCallId"] == "call_1" and entries[11]["message"]["toolName"] == "get_weather"
    assert entries[1]["message"]["openaiAgents"] == {"set": {"type": "message"}}
    assert "openaiAgents" not in entries[0]["message"]  # the message alone gives it back
    # The context a model would get from the sidecar holds them as pi does.
    llm = await sidecar.build_context("kinds", format="llm")
    assert [m["role"] for m in llm["messages"]][:3] == ["user", "user", "user"]


async def test_an_item_added_is_a_copy_and_every_answer_is_the_callers_own(sidecar: SidecarClient):
    session = SidecarSession("copies", client=sidecar)
    item: dict[str, Any] = {"role": "user", "content": [{"type": "input_text", "text": "one"}]}
    await session.add_items([item])
    item["content"][0]["text"] = "changed"
    first = await session.get_items()
    first[0]["content"][0]["text"] = "mutated"
    assert await session.get_items() == [{"role": "user", "content": [{"type": "input_text", "text": "one"}]}]


@pytest.mark.parametrize("turns", [0, 1, 3, 6, 30, None])
async def test_an_add_cancelled_while_its_append_is_in_flight_leaves_the_history_the_sidecars(
    sidecar: SidecarClient, turns: int | None
):
    """add_items sends its append, then copies the items while the sidecar appends: cancelled at any
    point of that, the append is cancelled or made, and the history is the sidecar's either way."""
    session = SidecarSession(f"cancelled-{turns}", client=sidecar)
    before = [{"role": "user", "content": "before"}]
    await session.add_items(before)
    batch = [{"role": "user", "content": f"item {n} " + "x" * 200} for n in range(2000)]
    adding = asyncio.ensure_future(session.add_items(batch))
    if turns is None:  # (cancelled once it is done: nothing to cancel)
        await asyncio.wait([adding])
    for _ in range(turns or 0):  # (0: cancelled before it began; then while sending, copying, waiting)
        await asyncio.sleep(0)
    adding.cancel()
    try:
        await adding
    except asyncio.CancelledError:
        pass
    history = await session.get_items()
    assert history in (before, before + batch)
    if turns is None:
        assert history == before + batch
    assert history == await SidecarSession(f"cancelled-{turns}", client=sidecar).get_items()
    await session.add_items([{"role": "user", "content": "after"}])
    assert (await session.get_items())[-1] == {"role": "user", "content": "after"}


async def test_a_first_read_opens_the_session_once_and_each_later_read_checks_its_leaf_once(sidecar: SidecarClient):
    """The open that finds (or makes) the session gives the leaf the first read needs; a later read asks
    for the leaf again (another writer may have moved it), and reads nothing more when it did not move."""
    await SidecarSession("opens", client=sidecar).add_items([{"role": "user", "content": "one"}])
    sent: list[str] = []
    sidecar.trace = lambda direction, message: (
        sent.append(message.get("method", "")) if direction == "send" and isinstance(message, dict) else None
    )
    try:
        session = SidecarSession("opens", client=sidecar)
        assert await session.get_items() == [{"role": "user", "content": "one"}]
        assert sent == ["session/open", "session/buildContext"]
        sent.clear()
        assert await session.get_items(1) == [{"role": "user", "content": "one"}]
        assert sent == ["session/open"]
    finally:
        sidecar.trace = None


async def test_a_first_add_sends_the_create_with_the_open_and_a_refused_create_changes_nothing(
    sidecar: SidecarClient, sessions_root: Path
):
    """A first add creates the session in the open's round trip (the create goes out before the open's
    answer comes back); on a session that exists the create is refused and nothing of it is written."""
    traced: list[tuple[str, str]] = []

    def trace(direction: str, message: object) -> None:
        if isinstance(message, dict):
            traced.append((direction, str(message.get("method") or message.get("id"))))

    sidecar.trace = trace
    try:
        await SidecarSession("pipelined", client=sidecar).add_items([{"role": "user", "content": "one"}])
    finally:
        sidecar.trace = None
    sends = [name for direction, name in traced if direction == "send"]
    assert sends == ["session/open", "session/create", "session/append"]
    assert traced.index(("send", "session/create")) < next(i for i, (d, _) in enumerate(traced) if d == "receive")
    (path,) = [p for p in sessions_root.rglob("*.jsonl") if "pipelined" in p.name]
    written = path.read_bytes()

    again = SidecarSession("pipelined", client=sidecar)  # (an existing session: its create is refused)
    await again.add_items([{"role": "user", "content": "two"}])
    assert path.read_bytes().startswith(written)
    assert [line for line in path.read_bytes()[len(written) :].splitlines() if line] != []
    assert sum(b'"type":"session"' in line for line in path.read_bytes().splitlines()) == 1
    expected = [{"role": "user", "content": "one"}, {"role": "user", "content": "two"}]
    assert await SidecarSession("pipelined", client=sidecar).get_items() == expected

    # A refused id is kept under its derived one, with the create sent along there too.
    odd = SidecarSession("not a valid id!", client=sidecar)
    await odd.add_items([{"role": "user", "content": "three"}])
    assert odd.sidecar_session_id is not None and odd.sidecar_session_id.startswith("oa-")
    assert await SidecarSession("not a valid id!", client=sidecar).get_items() == [{"role": "user", "content": "three"}]


def random_item(rng: random.Random, n: int) -> dict[str, Any]:
    text = rng.choice(["hi", "", "é漢🙂", "line\nbreak", "x" * rng.randint(1, 300), f"item {n}"])
    kind = rng.randrange(9)
    if kind == 0:
        return {"role": "user", "content": text}
    if kind == 1:
        return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
    if kind == 2:
        part = {"type": "output_text", "text": text, "annotations": []}
        return {"id": f"msg_{n}", "type": "message", "role": "assistant", "status": "completed", "content": [part]}
    if kind == 3:
        arguments = rng.choice(['{"city":"Paris"}', '{"a": 1}', "{}", "not json", json.dumps({"t": text})])
        return {
            "type": "function_call",
            "call_id": f"call_{n}",
            "name": "tool",
            "arguments": arguments,
            "id": f"fc_{n}",
        }
    if kind == 4:
        return {"type": "function_call_output", "call_id": f"call_{n - 1}", "output": text}
    if kind == 5:
        summary = [{"type": "summary_text", "text": text}] * rng.randint(0, 2)
        return {"type": "reasoning", "id": f"rs_{n}", "summary": summary}
    if kind == 6:
        return {
            "type": "web_search_call",
            "id": f"ws_{n}",
            "status": "completed",
            "action": {"type": "search", "query": text},
        }
    if kind == 7:
        return {"role": rng.choice(["system", "developer"]), "content": text}
    return rng.choice(EXAMPLES)


# A session's file is written with its first user or assistant message (as pi 1.5 writes it).
WRITTEN_BY = ("user", "assistant", "function_call", "reasoning")


async def run_sequence(
    rng: random.Random, ours: SidecarSession, theirs: SQLiteSession, steps: int, client: SidecarClient | None = None
) -> bool:
    """Random operations on both, every answer compared; whether the session's file was written.

    With ``client`` (the sidecar ``ours`` uses), a read is now and then also made by a new
    session object, which reads the session from the sidecar whole (what ``ours`` keeps must
    be what the sidecar holds)."""
    done: list[str] = []
    written = False
    n = 0
    for _ in range(steps):
        op = rng.choices(["add", "get", "pop", "clear"], weights=[5, 4, 2, 1])[0]
        if op == "add":
            batch = []
            for _ in range(rng.choice([0, 1, 1, 2, 3, 8])):
                n += 1
                batch.append(random_item(rng, n))
            await ours.add_items(batch)
            await theirs.add_items(batch)
            written = written or any(item_kind(item) in WRITTEN_BY for item in batch)
        elif op == "get":
            limit = rng.choice([None, None, 0, 1, 2, 3, 5, 100, -1])
            assert await ours.get_items(limit) == await theirs.get_items(limit), (done, limit)
            if client is not None and rng.random() < 0.3:
                fresh = SidecarSession(ours.session_id, client=client)
                assert await fresh.get_items(limit) == await theirs.get_items(limit), (done, limit, "fresh")
        elif op == "pop":
            assert await ours.pop_item() == await theirs.pop_item(), done
        else:
            await ours.clear_session()
            await theirs.clear_session()
        done.append(op)
    assert await ours.get_items() == await theirs.get_items(), done
    return written


@pytest.mark.parametrize("seed", range(12))
async def test_random_add_get_pop_clear_answer_as_sqlite_session_does_and_again_reopened(
    seed: int, command: list[str], sessions_root: Path, tmp_path: Path
):
    rng = random.Random(seed)
    theirs = SQLiteSession(f"s{seed}", tmp_path / "sqlite.db")
    client = await SidecarClient.spawn(command=command, session_root=sessions_root)
    ours = SidecarSession(f"s{seed}", client=client)
    try:
        written = await run_sequence(rng, ours, theirs, 40, client)
    finally:
        await ours.close()
        assert await client.close() == 0
    # Another sidecar, the same root: the history (leaf included) is what the file says.
    again = SidecarSession(f"s{seed}", root=sessions_root, command=command)
    try:
        if written:
            assert await again.get_items() == await theirs.get_items()
            await run_sequence(rng, again, theirs, 15)
    finally:
        await again.close()
        theirs.close()


async def test_pop_and_clear_erase_nothing_the_tree_keeps_every_item(sidecar: SidecarClient):
    session = SidecarSession("kept", client=sidecar)
    items = [{"role": "user", "content": f"u{i}"} for i in range(4)]
    await session.add_items(items)
    assert await session.pop_item() == items[3]
    assert await session.pop_item() == items[2]
    await session.add_items([{"role": "user", "content": "after"}])
    await session.clear_session()
    assert await session.get_items() == []
    assert await session.pop_item() is None
    entries = (await sidecar.get_entries("kept"))["entries"]
    texts = [e["message"]["content"] for e in entries if e["type"] == "message"]
    assert texts == ["u0", "u1", "u2", "u3", "after"]
    markers = [e for e in entries if e["type"] == "custom" and e["customType"] == LEAF_TYPE]
    assert len(markers) == 3 and markers[-1]["parentId"] is None
    await session.add_items([{"role": "user", "content": "fresh"}])
    assert await session.get_items() == [{"role": "user", "content": "fresh"}]
    await session.close()
    reopened = SidecarSession("kept", client=sidecar)
    assert await reopened.get_items() == [{"role": "user", "content": "fresh"}]


async def test_a_session_id_the_sidecar_refuses_is_kept_under_a_derived_one(sidecar: SidecarClient):
    session = SidecarSession("user 42 / conversation", client=sidecar)
    await session.add_items([{"role": "user", "content": "hi"}])
    derived = session.sidecar_session_id
    assert derived is not None and derived.startswith("oa-")
    await session.close()
    again = SidecarSession("user 42 / conversation", client=sidecar)
    assert await again.get_items() == [{"role": "user", "content": "hi"}]
    assert again.sidecar_session_id == derived


def conversation(turns: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for turn in range(turns):
        items.append({"role": "user", "content": f"Question {turn}: " + "tell me about the parser. " * 40})
        call = f"call_{turn}"
        items.append(
            {
                "type": "function_call",
                "call_id": call,
                "name": "read",
                "arguments": json.dumps({"path": f"src/f{turn}.py"}),
            }
        )
        items.append({"type": "function_call_output", "call_id": call, "output": "def f():\n    pass\n" * 60})
        items.append(
            {
                "id": f"msg_{turn}",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": f"Answer {turn}. " * 50, "annotations": []}],
            }
        )
    return items


async def test_run_compaction_runs_the_sidecars_compaction_and_the_history_becomes_its_summary(sidecar: SidecarClient):
    progress: list[dict[str, Any]] = []
    session = SidecarSession(
        "compacted",
        client=sidecar,
        compact_options={"provider": "offline", "keep_recent_tokens": 2000},
        on_compaction_progress=progress.append,
    )
    items = conversation(8)
    await session.add_items(items)
    await session.run_compaction()
    assert session.last_compaction is not None
    assert progress and progress[0]["kind"] == "begin" and progress[-1]["kind"] == "end"
    history = await session.get_items()
    summary = history[0]
    assert summary["role"] == "user" and session.last_compaction["summary"] in summary["content"]
    assert summary["content"].startswith("The conversation history before this point was compacted")
    kept = history[1:]
    assert 0 < len(kept) < len(items) and kept == items[-len(kept) :]
    # The history goes on from the compaction; pop takes the newest off, kept items included.
    await session.add_items([{"role": "user", "content": "next"}])
    assert await session.pop_item() == {"role": "user", "content": "next"}
    assert await session.pop_item() == kept[-1]
    assert await session.get_items() == history[:-1]
    await session.close()
    reopened = SidecarSession("compacted", client=sidecar)
    assert await reopened.get_items() == history[:-1]
    # Every item stays in the file: nothing was erased.
    entries = (await sidecar.get_entries("compacted"))["entries"]
    assert sum(1 for e in entries if e["type"] == "message") == len(items) + 1


async def test_the_runners_hook_compacts_when_should_compact_says_so(sidecar: SidecarClient):
    asked: list[Any] = []
    session = SidecarSession(
        "hooked",
        client=sidecar,
        compact_options={"provider": "offline", "keep_recent_tokens": 2000},
        should_compact=lambda appended: asked.append(appended) or len(asked) > 1,
    )
    await session.add_items(conversation(8))
    await session.run_compaction({"response_id": "resp_1"})  # the runner's call after a turn
    assert session.last_compaction is None and len(asked) == 1
    await session.add_items([{"role": "user", "content": "more"}])
    await session.run_compaction({"response_id": "resp_2"})
    assert session.last_compaction is not None
    # Refused compactions in the runner's hook are not raised (nothing to gain on an empty session).
    empty = SidecarSession(
        "empty", client=sidecar, compact_options={"provider": "offline"}, should_compact=lambda _: True
    )
    await empty.add_items([{"role": "user", "content": "hi"}])
    await empty.run_compaction({"response_id": "resp_3"})


def run_turn(kind: str, store: Path, session_id: str, prompt: str, out: Path, command: list[str]) -> dict[str, Any]:
    env = dict(
        os.environ,
        SESSION_SIDECAR_TEST_COMMAND=" ".join(command),
        PYTHONPATH=str(CLIENT_DIR),
        OPENAI_AGENTS_DISABLE_TRACING="1",
    )
    subprocess.run(
        [sys.executable, "-m", "tests.openai_agents_run", kind, str(store), session_id, prompt, str(out)],
        cwd=CLIENT_DIR,
        env=env,
        check=True,
        timeout=120,
    )
    return json.loads(out.read_text())


def test_a_run_with_tool_calls_persists_and_resumes_in_a_fresh_process_as_with_sqlite(
    command: list[str], sessions_root: Path, tmp_path: Path
):
    answers = {}
    for kind, store in (("sidecar", sessions_root), ("sqlite", tmp_path / "agents.db")):
        first = run_turn(kind, store, "weather-1", "What's the weather in Paris?", tmp_path / f"{kind}-1.json", command)
        second = run_turn(kind, store, "weather-1", "And in Lyon?", tmp_path / f"{kind}-2.json", command)
        answers[kind] = (first, second)
    (ours_1, ours_2), (theirs_1, theirs_2) = answers["sidecar"], answers["sqlite"]
    assert ours_1["final"] == theirs_1["final"] == "It is sunny in Paris, 21 degrees."
    assert ours_2["final"] == theirs_2["final"] == "It is sunny in Lyon, 21 degrees."
    # What the model was given (the resumed history included) and what the session holds: the same.
    assert ours_1["inputs"] == theirs_1["inputs"]
    assert ours_2["inputs"] == theirs_2["inputs"]
    assert ours_2["history"] == theirs_2["history"]
    assert len(ours_2["history"]) == 8 and ours_2["inputs"][0][:4] == theirs_1["history"]


def test_the_adapter_imports_without_the_sdk():
    code = (
        "import sys; sys.modules['agents'] = None; sys.modules['openai'] = None\n"
        "from session_sidecar_client.adapters.openai_agents import SidecarSession\n"
        "session = SidecarSession('x', root='/tmp/nowhere')\n"
        "print(session.session_id)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=CLIENT_DIR, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "x"


async def test_two_session_objects_on_one_session_see_each_others_writes_as_sqlite_sessions_do(
    sidecar: SidecarClient, tmp_path: Path
):
    ours = [SidecarSession("shared", client=sidecar), SidecarSession("shared", client=sidecar)]
    theirs = [SQLiteSession("shared", tmp_path / "shared.db"), SQLiteSession("shared", tmp_path / "shared.db")]
    rng = random.Random(7)
    for step in range(40):
        which = rng.randrange(2)
        op = rng.choice(["add", "add", "get", "get10", "pop", "clear"] if step > 3 else ["add"])
        if op == "add":
            batch = [random_item(rng, step * 10 + i) for i in range(rng.randint(1, 3))]
            await ours[which].add_items(batch)
            await theirs[which].add_items(batch)
        elif op == "get":
            assert await ours[which].get_items() == await theirs[which].get_items()
        elif op == "get10":
            assert await ours[which].get_items(10) == await theirs[which].get_items(10)
        elif op == "pop":
            assert await ours[which].pop_item() == await theirs[which].pop_item()
        else:
            await ours[which].clear_session()
            await theirs[which].clear_session()
    for mine, other in zip(ours, theirs):
        assert await mine.get_items() == await other.get_items()
        other.close()


async def test_a_session_another_agent_wrote_reads_as_the_items_its_messages_are(sidecar: SidecarClient):
    await sidecar.create("/work/app", session_id="from-pi")
    await sidecar.append(
        "from-pi",
        [
            {"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": "read main.py"}]}},
            {
                "type": "message",
                "message": {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "Read it first."},
                        {"type": "text", "text": "Reading it."},
                        {"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "main.py"}},
                    ],
                    "stopReason": "toolUse",
                },
            },
            {
                "type": "message",
                "message": {
                    "role": "toolResult",
                    "toolCallId": "call_1",
                    "toolName": "read",
                    "content": [{"type": "text", "text": "print('hi')"}],
                    "isError": False,
                },
            },
            {
                "type": "message",
                "message": {"role": "assistant", "content": [{"type": "text", "text": "It prints hi."}]},
            },
        ],
    )
    session = SidecarSession("from-pi", client=sidecar)
    assert await session.get_items() == [
        {"role": "user", "content": [{"type": "input_text", "text": "read main.py"}]},
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Read it first."}]},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Reading it.", "annotations": []}],
            "status": "completed",
        },
        {"type": "function_call", "call_id": "call_1", "name": "read", "arguments": '{"path":"main.py"}'},
        {"type": "function_call_output", "call_id": "call_1", "output": "print('hi')"},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "It prints hi.", "annotations": []}],
            "status": "completed",
        },
    ]
    # The agent goes on from there. Popping an item of pi's one assistant message takes the message.
    await session.add_items([{"role": "user", "content": "thanks"}])
    assert (await session.get_items(1)) == [{"role": "user", "content": "thanks"}]
    for _ in range(3):
        await session.pop_item()
    assert (await session.pop_item())["type"] == "function_call"
    assert await session.get_items() == [{"role": "user", "content": [{"type": "input_text", "text": "read main.py"}]}]


def test_the_session_is_what_the_sdk_calls_a_compaction_aware_session():
    from agents.memory import OpenAIResponsesCompactionAwareSession, Session
    from agents.memory.session import is_openai_responses_compaction_aware_session

    session = SidecarSession("x", root="/tmp/nowhere")
    assert isinstance(session, Session) and isinstance(session, OpenAIResponsesCompactionAwareSession)
    assert is_openai_responses_compaction_aware_session(session)


async def test_a_real_runs_hook_compacts_through_the_sidecar_when_should_compact_says_so(sidecar: SidecarClient):
    from agents import Agent, ModelResponse, RunConfig, Runner, Usage
    from agents.models.interface import Model
    from openai.types.responses import ResponseOutputMessage, ResponseOutputText

    class TextModel(Model):
        async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
            text = ResponseOutputText(type="output_text", text="done", annotations=[])
            message = ResponseOutputMessage(
                id="msg_x", type="message", role="assistant", status="completed", content=[text]
            )
            return ModelResponse(output=[message], usage=Usage(), response_id="resp_x")

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    decided: list[bool] = []
    progress: list[Any] = []

    def decide(appended: Any) -> bool:
        decided.append(appended["contextTokens"] > 4000)
        return decided[-1]

    session = SidecarSession(
        "run-compacted",
        client=sidecar,
        compact_options={"provider": "offline", "keep_recent_tokens": 2000},
        should_compact=decide,
        on_compaction_progress=progress.append,
    )
    agent = Agent(name="a", model=TextModel())
    offline = RunConfig(tracing_disabled=True)
    await Runner.run(agent, "hello", session=session, run_config=offline)  # a short history: asked, nothing compacted
    assert session.last_compaction is None and decided == [False]
    await session.add_items(conversation(8))
    await Runner.run(agent, "and now?", session=session, run_config=offline)
    assert decided == [False, True] and session.last_compaction is not None
    assert progress[0]["kind"] == "begin" and progress[-1]["kind"] == "end"
    history = await session.get_items()
    assert history[0]["content"].startswith("The conversation history before this point was compacted")
    assert history[-1]["content"][0]["text"] == "done"


def test_a_message_the_typescript_adapter_wrote_reads_as_its_natural_item_with_the_shared_fields():
    from session_sidecar_client.adapters.openai_agents.items import JS_ITEM_TYPE, JS_PATCH, from_message

    call = {
        "role": "assistant",
        "content": [{"type": "toolCall", "id": "call_1", "name": "ls", "arguments": {}}],
        JS_PATCH: {"set": {"id": "fc_1", "status": "completed", "providerData": {"x": 1}}, "order": ["type"]},
    }
    assert from_message(call) == [
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "ls",
            "arguments": "{}",
            "id": "fc_1",
            "status": "completed",
        }
    ]
    empty_reasoning = {"role": "assistant", "content": [], JS_PATCH: {"kind": "reasoning", "set": {"id": "rs_1"}}}
    assert from_message(empty_reasoning) == [{"type": "reasoning", "summary": [], "id": "rs_1"}]
    kept = {"type": "compaction", "id": "cmp_1", "encrypted_content": "opaque"}
    verbatim = {"role": "custom", "customType": JS_ITEM_TYPE, "content": json.dumps(kept)}
    assert from_message(verbatim) == [kept]
    # An item in agents-core's own vocabulary only: not an item of the Responses API.
    hosted = {"type": "hosted_tool_call", "name": "web_search_call", "providerData": {}}
    assert from_message({**verbatim, "content": json.dumps(hosted)}) == []


def _batch_encoded(sidecar: SidecarClient) -> list[bool]:
    """Whether each session/append from here on went out with its entries already encoded (EncodedJson)."""
    from session_sidecar_client.client import EncodedJson

    seen: list[bool] = []
    request = sidecar.request

    async def watched(method: str, params: Any = None, **options: Any) -> Any:
        if method == "session/append":
            seen.append(isinstance(params.get("entries"), EncodedJson))
        return await request(method, params, **options)

    sidecar.request = watched  # type: ignore[method-assign]  # observed, not replaced: the call goes on as it was
    return seen


async def test_a_large_batch_encoded_at_once_writes_what_small_batches_write(sidecar: SidecarClient):
    """A batch past the copy slice goes out encoded by msgspec in one call (when every entry is plain JSON):
    the entries written, and the items read back, are those of the same items added a few at a time."""
    batch = [
        {**item, "n": n} if item.get("role") == "user" and isinstance(item.get("content"), str) else item
        for n, item in enumerate(EXAMPLES * 8)
    ]
    seen = _batch_encoded(sidecar)
    large = SidecarSession("large", client=sidecar)
    await large.add_items(batch)
    small = SidecarSession("small", client=sidecar)
    for start in range(0, len(batch), 50):
        await small.add_items(batch[start : start + 50])
    assert seen[0] is True and not any(seen[1:])
    assert await large.get_items() == batch == await small.get_items()
    assert await SidecarSession("large", client=sidecar).get_items() == batch  # (read back from the sidecar)

    def written(sid: str) -> Any:
        return [{k: v for k, v in e.items() if k not in ("id", "parentId", "timestamp")} for e in entries[sid]]

    entries = {sid: (await sidecar.get_entries(sid))["entries"] for sid in ("large", "small")}
    assert written("large") == written("small")


@pytest.mark.parametrize(
    ("odd", "error", "match"),
    [
        ({"score": float("nan")}, ValueError, "JSON compliant"),
        ({"score": float("inf")}, ValueError, "JSON compliant"),
        ({"tags": {"a", "b"}}, TypeError, "not JSON serializable"),
        ({"at": b"bytes"}, TypeError, "not JSON serializable"),
    ],
)
async def test_a_large_batch_holding_what_json_refuses_fails_as_a_small_one_does(
    sidecar: SidecarClient, odd: dict[str, Any], error: type[Exception], match: str
):
    """msgspec writes NaN as null and a set as an array; json refuses both: such a batch goes the client's
    way (json), fails as it always did, and writes nothing."""
    session = SidecarSession(f"odd-{len(odd)}-{match[:3]}", client=sidecar)
    batch = [{"role": "user", "content": f"item {n}"} for n in range(200)]
    batch[150] = {"type": "reasoning", "id": "rs", "summary": [], **odd}  # (in the patch)
    with pytest.raises(error, match=match):
        await session.add_items(batch)
    call = {"type": "function_call", "call_id": "c", "name": "f", "arguments": '{"x": NaN}'}  # json.loads reads NaN
    with pytest.raises(ValueError, match="JSON compliant"):
        await session.add_items([*batch[:150], call])
    assert await session.get_items() == []
    await session.add_items(batch[:150])
    assert await session.get_items() == batch[:150]


async def test_a_large_batch_holding_a_lone_surrogate_comes_back_as_it_went_in(sidecar: SidecarClient):
    """msgspec refuses a lone surrogate: that batch goes the client's way, which writes it as JavaScript does."""
    session = SidecarSession("surrogate", client=sidecar)
    batch = [{"role": "user", "content": f"item {n}"} for n in range(200)]
    batch[99] = {"role": "user", "content": "cut mid-emoji: \ud83d"}
    await session.add_items(batch)
    assert await session.get_items() == batch
    assert await SidecarSession("surrogate", client=sidecar).get_items() == batch


def test_without_msgspec_a_large_batch_goes_the_clients_way_and_comes_back(command: list[str], sessions_root: Path):
    """The client needs nothing but the standard library: without msgspec (which only makes a large batch's
    encoding and the answers' decoding faster) a large batch is encoded by json and read back the same."""
    code = (
        "import asyncio, json, sys; sys.modules['msgspec'] = None\n"
        "from session_sidecar_client import SidecarClient\n"
        "from session_sidecar_client.adapters.openai_agents import SidecarSession, session\n"
        "assert session._encode_batch is None\n"
        "async def main():\n"
        "    async with SidecarClient.spawn(command=json.loads(sys.argv[1]), session_root=sys.argv[2]) as client:\n"
        "        items = [{'role': 'user', 'content': f'item {n}', 'n': n} for n in range(300)]\n"
        "        await SidecarSession('plain', client=client).add_items(items)\n"
        "        print(await SidecarSession('plain', client=client).get_items() == items)\n"
        "asyncio.run(main())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, json.dumps(command), str(sessions_root)],
        cwd=CLIENT_DIR,
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == "True"
