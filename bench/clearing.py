"""What compaction.clearToolResults costs an append: the time of session/append off and on.

    python bench/clearing.py [--turns 100 300 1000]

A session of N turns (user, assistant with a tool call, a 4,000-character tool
output, assistant), then 200 more appends of one message each, timed. With
clearing on and the context past its trigger, an append only carries forward
what a clearing could free (sidecar/operations/clearing.py); the context is
built when a batch is due (or after a branch or compaction). The figures
show the cost per append at each session size, next to clearing off, and
the slowest append (the one that clears: two context builds).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent))

from sidecar import wire  # noqa: E402
from sidecar.config import Settings, apply_overrides  # noqa: E402
from sidecar.service import SessionService  # noqa: E402


def turn(number: int) -> list[dict]:
    call = f"c{number}"
    return [
        {"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": f"step {number}"}]}},
        {
            "type": "message",
            "message": {
                "role": "assistant",
                "content": [{"type": "toolCall", "id": call, "name": "read", "arguments": {"path": f"f{number}.ts"}}],
            },
        },
        {
            "type": "message",
            "message": {
                "role": "toolResult",
                "toolCallId": call,
                "toolName": "read",
                "content": [{"type": "text", "text": "z" * 4000}],
            },
        },
        {"type": "message", "message": {"role": "assistant", "content": [{"type": "text", "text": f"done {number}"}]}},
    ]


def timed_appends(root: Path, turns: int, clearing: bool) -> tuple[float, float, int]:
    settings = apply_overrides(
        Settings(),
        {
            "store": {"fsync": "never"},
            "compaction": {
                "clearToolResults": {
                    "enabled": clearing,
                    "triggerTokens": 10_000,
                    "keepToolResults": 3,
                    "minimumTokens": 20_000,
                }
            },
        },
        "bench",
    )
    svc = SessionService(root, settings)
    session_id = svc.create(wire.CreateParams(cwd="/bench")).sessionId
    for number in range(turns):
        svc.append(wire.AppendParams(sessionId=session_id, entries=turn(number)))
    times, cleared = [], 0
    for number in range(turns, turns + 50):
        for entry in turn(number):
            started = time.perf_counter()
            result = svc.append(wire.AppendParams(sessionId=session_id, entries=[entry]))
            times.append(time.perf_counter() - started)
            cleared += result.clearedToolResults is not None
    svc.close_all()
    return statistics.median(times) * 1000, max(times) * 1000, cleared


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, nargs="+", default=[100, 300, 1000])
    args = parser.parse_args()
    print("turns  entries   append off: median / max      on: median / max   clearings in the 200 timed appends")
    for turns in args.turns:
        with tempfile.TemporaryDirectory() as off_dir, tempfile.TemporaryDirectory() as on_dir:
            off = timed_appends(Path(off_dir), turns, False)
            on = timed_appends(Path(on_dir), turns, True)
        print(
            f"{turns:>5}  {turns * 4:>7}   {off[0]:>8.2f} / {off[1]:>6.2f} ms     {on[0]:>8.2f} / {on[1]:>6.2f} ms   {on[2]}"
        )


if __name__ == "__main__":
    main()
