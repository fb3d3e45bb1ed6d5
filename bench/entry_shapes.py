"""What checking appended entries against pi's shapes costs (sidecar/format/entries.py), per entry.

    python bench/entry_shapes.py [--entries 20000] [--repeat 5]

Three workloads of appends as agents send them: a user text, a tool turn (an
assistant message with thinking, text, a toolCall and usage, then its
toolResult), and a mix with custom and label entries. For each, the check of a
batch (``validate_entries``: one msgspec conversion into the types) beside the
baseline every append pays anyway, encoding the same entries as JSON lines;
the least CPU time of ``--repeat`` runs (CPU time, not wall time: on a shared
machine the wall clock of a run this short is mostly other processes'),
microseconds per entry.
"""

from __future__ import annotations

import argparse
import time

import msgspec

from sidecar.format.entries import validate_entries

USAGE = {
    "input": 812,
    "output": 40,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 852,
    "cost": {"input": 0.0024, "output": 0.0006, "cacheRead": 0, "cacheWrite": 0, "total": 0.003},
}
ENVELOPE = {"parentId": "00000000", "timestamp": "2026-01-01T00:00:00.000Z"}


def user(n: int) -> dict:
    return {
        "type": "message",
        "id": f"u{n:07d}",
        **ENVELOPE,
        "message": {"role": "user", "content": f"please look at file {n}.py and fix the bug", "timestamp": n},
    }


def tool_turn(n: int) -> list[dict]:
    return [
        {
            "type": "message",
            "id": f"a{n:07d}",
            **ENVELOPE,
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "I should read the file first.", "thinkingSignature": "sig" * 10},
                    {"type": "text", "text": "Reading it."},
                    {
                        "type": "toolCall",
                        "id": f"call_{n}",
                        "name": "read",
                        "arguments": {"path": f"{n}.py", "limit": 200},
                    },
                ],
                "api": "anthropic-messages",
                "provider": "anthropic",
                "model": "claude-sonnet-4-5",
                "usage": USAGE,
                "stopReason": "toolUse",
                "timestamp": n,
            },
        },
        {
            "type": "message",
            "id": f"t{n:07d}",
            **ENVELOPE,
            "message": {
                "role": "toolResult",
                "toolCallId": f"call_{n}",
                "toolName": "read",
                "content": [{"type": "text", "text": "def f():\n    return 1\n" * 20}],
                "isError": False,
                "timestamp": n,
            },
        },
    ]


def mixed(n: int) -> list[dict]:
    return [
        user(n),
        *tool_turn(n),
        {"type": "custom", "id": f"c{n:07d}", **ENVELOPE, "customType": "agent", "data": {"step": n}},
        {"type": "label", "id": f"l{n:07d}", **ENVELOPE, "targetId": f"u{n:07d}", "label": "x"},
    ]


def best(action, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        action()
        times.append(time.process_time() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--batch", type=int, default=10, help="entries per append call")
    args = parser.parse_args()
    workloads = {
        "user text": [user(n) for n in range(args.entries)],
        "tool turn": [e for n in range(args.entries // 2) for e in tool_turn(n)],
        "mixed": [e for n in range(args.entries // 5) for e in mixed(n)],
    }
    encode = msgspec.json.encode
    print(f"{'workload':<12} {'check us/entry':>15} {'encode us/entry (baseline)':>27}   batches of {args.batch}")
    for name, entries in workloads.items():
        batches = [entries[at : at + args.batch] for at in range(0, len(entries), args.batch)]
        check = best(lambda: [validate_entries(batch) for batch in batches], args.repeat)
        lines = best(lambda: [[encode(e) for e in batch] for batch in batches], args.repeat)
        print(f"{name:<12} {check / len(entries) * 1e6:>15.2f} {lines / len(entries) * 1e6:>27.2f}")


if __name__ == "__main__":
    main()
