"""The OpenAI Agents SDK adapter against the SDK's own SQLiteSession, side by side in one run.

    python bench/openai_agents.py [--items 1000] [--rounds 7]

Each round, on a fresh session of each store (SQLiteSession on a file in a temp dir,
SidecarSession on a sidecar spawned on a temp root, fsync policy of its defaults):

- ``add 1000``: one ``add_items`` of N items (a conversation's mix: user messages, function
  calls and their outputs, assistant messages, reasoning);
- ``get all (reopened)``: ``get_items()`` from a new session object on the same store (the
  SDK's resume: nothing read yet);
- ``get all``: ``get_items()`` again on that object;
- ``get 10``: ``get_items(limit=10)`` on it;
- ``first turn``: one ``add_items`` of 3 items then ``get_items(limit=10)`` (a turn of a run),
  the first on the reopened session (the sidecar's first append to a session it opened reads
  what the append needs of it: the context's size at the leaf);
- ``turn``: the median of 10 more such turns.

After each of our timed calls an untimed ``session/open`` waits for what the sidecar does once it
has answered (a large append's listing-index fold), so that none of it falls in SQLiteSession's
time or the next figure. Medians over the rounds, milliseconds, and the ratio ours / theirs. Needs the SDK
(``pip install -e '.[openai-agents]'``). The TypeScript adapter's figures, the same rows against
agents-core's MemorySession: ``clients/typescript/bench/openai-agents.mjs``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "clients" / "python"))

from agents import SQLiteSession  # noqa: E402
from session_sidecar_client import SidecarClient  # noqa: E402
from session_sidecar_client.adapters.openai_agents import SidecarSession  # noqa: E402


def conversation(count: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    n = 0
    while len(items) < count:
        n += 1
        call = f"call_{n}"
        items += [
            {"role": "user", "content": f"Question {n}: why does the parser fail on empty input? " * 3},
            {
                "type": "reasoning",
                "id": f"rs_{n}",
                "summary": [{"type": "summary_text", "text": "Look at the parser."}],
            },
            {
                "type": "function_call",
                "call_id": call,
                "name": "read_file",
                "arguments": json.dumps({"path": f"src/parser_{n}.py"}),
                "id": f"fc_{n}",
                "status": "completed",
            },
            {
                "type": "function_call_output",
                "call_id": call,
                "output": "def parse(text):\n    return text.split(',')[0]\n" * 4,
            },
            {
                "id": f"msg_{n}",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [
                    {"type": "output_text", "text": f"Answer {n}: it indexes an empty list. " * 4, "annotations": []}
                ],
            },
        ]
    return items[:count]


async def timed(call: Callable[[], Awaitable[object]]) -> float:
    start = time.perf_counter()
    await call()
    return (time.perf_counter() - start) * 1000


async def one_round(
    index: int, items: list[dict[str, Any]], db: Path, client: SidecarClient
) -> dict[str, tuple[float, float]]:
    figures: dict[str, tuple[float, float]] = {}
    sid = f"bench-{index}"
    theirs = SQLiteSession(sid, db)
    ours = SidecarSession(sid, client=client)
    turn = items[:3]

    async def settled(call: Callable[[], Awaitable[object]]) -> float:
        """Our call's time, then a round trip that waits for what the sidecar does after answering (an
        append's listing-index upkeep): it must not run into SQLiteSession's time, nor the next figure."""
        ms = await timed(call)
        if ours.sidecar_session_id is not None:
            await client.open(session_id=ours.sidecar_session_id)
        return ms

    async def both(name: str, mine: Callable[[], Awaitable[object]], other: Callable[[], Awaitable[object]]) -> None:
        # Alternate which goes first, so neither always runs on a warmer machine.
        if index % 2:
            figures[name] = (await settled(mine), await timed(other))
        else:
            other_ms = await timed(other)
            figures[name] = (await settled(mine), other_ms)

    await both(f"add {len(items)}", lambda: ours.add_items(items), lambda: theirs.add_items(items))
    await ours.close()
    theirs.close()
    theirs = SQLiteSession(sid, db)
    ours = SidecarSession(sid, client=client)
    await both("get all (reopened)", ours.get_items, theirs.get_items)
    await both("get all", ours.get_items, theirs.get_items)
    await both("get 10", lambda: ours.get_items(10), lambda: theirs.get_items(10))

    async def our_turn() -> None:
        await ours.add_items(turn)
        await ours.get_items(10)

    async def their_turn() -> None:
        await theirs.add_items(turn)
        await theirs.get_items(10)

    await both("first turn (add 3, get 10)", our_turn, their_turn)
    turns = []
    for _ in range(10):
        await both("turn", our_turn, their_turn)
        turns.append(figures.pop("turn"))
    figures["turn (add 3, get 10)"] = (statistics.median(t[0] for t in turns), statistics.median(t[1] for t in turns))
    assert await ours.get_items() == await theirs.get_items()
    await ours.close()
    theirs.close()
    return figures


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--command", default=None, help="the sidecar to spawn (default: this interpreter's -m sidecar)")
    args = parser.parse_args()
    items = conversation(args.items)
    command = args.command.split() if args.command else [sys.executable, "-m", "sidecar"]
    rows: dict[str, list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp) / "sessions"
        root.mkdir()
        async with SidecarClient.spawn(command=command, root=root) as client:
            await one_round(-1, items, Path(temp) / "warmup.db", client)  # imports, caches
            for index in range(args.rounds):
                for name, pair in (await one_round(index, items, Path(temp) / "agents.db", client)).items():
                    rows.setdefault(name, []).append(pair)
    print(f"{'':28} {'SidecarSession':>15} {'SQLiteSession':>14} {'ratio':>6}   (median ms of {args.rounds})")
    for name, pairs in rows.items():
        mine = statistics.median(p[0] for p in pairs)
        other = statistics.median(p[1] for p in pairs)
        print(f"{name:28} {mine:15.2f} {other:14.2f} {mine / other:6.2f}x")


if __name__ == "__main__":
    asyncio.run(main())
