"""The bytes an append of 1,000 entries of mixed shapes writes stay what main's append wrote.

The append path was restructured for speed (issue 41: an append of 1,000 entries within 2x of
SQLiteSession); a change meant only to be faster must not move a byte of the session file, nor a
field of the answer. A real sidecar appends 1,000 entries of every kind an append meets (ids,
parents and timestamps given, absent or null; keys in any order; extra fields; non-ASCII text, a
lone surrogate, an image, a string past the store's limit, a label of an entry of the batch),
then a turn of 3. What a run draws anew (the ids and timestamps the sidecar assigns, the header's
timestamp) is written in the file as placeholders named by the answer, and the file and the
answers are hashed and compared with the figure main's append gave (``EXPECTED``; run this file
with ``--print`` to see it again, for a change meant to move bytes, which its commit then says).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from .harness import RawServer

# sha256 of the placeholder-written file, then of the answers, made by main's append (73e729d).
EXPECTED = (
    "08c8d7cdaea31e46075781ef4a6338f530eff1e45c28f7a22d97fcc73e1c20fd",
    "79fb1baf4187a39ed5d6888c05e17aa237769bcd79a75a5b3f2429653d3d94b0",
)

SESSION = "bytes-pin"
IMAGE = "iVBORw0KGgo" + "A" * 2048  # (past the size an image moves to the blob store at)


def mixed(count: int, tag: str = "") -> list[dict[str, Any]]:
    """``count`` entries cycling through the shapes an append meets (``tag`` in their own ids)."""
    entries: list[dict[str, Any]] = []
    n = 0
    while len(entries) < count:
        n += 1
        call = f"call_{n}"
        entries += [
            {"type": "message", "message": {"role": "user", "content": f"question {n}: why é ✓ 😀?", "timestamp": n}},
            {
                "type": "message",
                "message": {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "look at the parser"},
                        {"type": "text", "text": f"reading {n}"},
                        {"type": "toolCall", "id": call, "name": "read", "arguments": {"path": f"src/{n}.py"}},
                    ],
                    "api": "openai-responses",
                    "provider": "openai",
                    "model": "gpt-5",
                    "usage": {
                        "input": 100 + n,
                        "output": 20,
                        "cacheRead": 0,
                        "cacheWrite": 0,
                        "totalTokens": 120 + n,
                        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
                    },
                    "stopReason": "toolUse",
                    "timestamp": 1767261600000 + n,
                },
            },
            # Its own id and timestamp, keys out of pi's order, an extra field.
            {
                "message": {
                    "role": "toolResult",
                    "toolCallId": call,
                    "toolName": "read",
                    "content": [{"type": "text", "text": "def parse(text):\n\treturn text.split(',')[0]\n" * 3}],
                    "isError": False,
                    "timestamp": 1767261600000 + n,
                },
                "extra": {"kept": [1, 2.5, None, True]},
                "timestamp": "2020-01-01T00:00:00.000Z",
                "type": "message",
                "id": f"own{tag}-{n:04d}",
            },
            # Null id and timestamp: assigned, as when absent.
            {"type": "custom", "customType": "x.state", "data": {"n": n}, "id": None, "timestamp": None},
            {"type": "custom_message", "customType": "x.note", "content": f"note {n} \ud83d cut", "display": False},
            {"type": "model_change", "provider": "openai", "modelId": "gpt-5"},
            {"type": "label", "targetId": f"own{tag}-{n:04d}", "label": f"result {n}"},
        ]
        if n % 50 == 1:
            entries.append(
                {
                    "type": "message",
                    "message": {
                        "role": "user",
                        "content": [
                            {"type": "text", "text": "this screenshot"},
                            {"type": "image", "data": IMAGE, "mimeType": "image/png"},
                        ],
                        "timestamp": n,
                    },
                }
            )
        if n % 70 == 2:
            entries.append({"type": "custom", "customType": "x.big", "data": {"text": "y" * 600_000}})
        if n % 40 == 3:
            # Below an earlier entry of the batch, not the one before it (a branch within the batch).
            entries.append(
                {
                    "type": "message",
                    "parentId": f"own{tag}-{n - 1:04d}",
                    "message": {"role": "user", "content": "aside"},
                }
            )
        if n % 90 == 4:
            entries.append({"type": "session_info", "name": f"pinned {n}"})
    return entries[:count]


async def appended(root: Path) -> tuple[str, str]:
    """The sha256 of the session file with what a run draws anew as placeholders, and of the answers."""
    server = await RawServer.start()
    try:
        assert "result" in await server.initialize(root)
        assert "result" in await server.request("session/create", {"cwd": "/w", "sessionId": SESSION})
        answers = []
        for entries in (mixed(1000), mixed(3, "t")):
            answer = await server.request("session/append", {"sessionId": SESSION, "entries": entries})
            assert "result" in answer, answer
            answers.append(answer["result"])
        await server.request("shutdown")
    finally:
        await server.stop()
    [path] = [p for p in root.rglob("*.jsonl") if SESSION in p.name]
    data = path.read_bytes()
    header = json.loads(data.split(b"\n", 1)[0])
    drawn = {header["timestamp"]: "HEADER-TS"}
    for turn, result in enumerate(answers):
        for index, entry in enumerate(result["entries"]):
            if not entry["id"].startswith("own"):
                drawn[entry["id"]] = f"ID-{turn}-{index:04d}"
            if entry["timestamp"] != "2020-01-01T00:00:00.000Z":
                drawn[entry["timestamp"]] = "TS"
    for value, placeholder in drawn.items():
        data = data.replace(b'"%s"' % value.encode(), b'"%s"' % placeholder.encode())
    answer_text = json.dumps(answers, sort_keys=True)
    for value, placeholder in drawn.items():
        answer_text = answer_text.replace(f'"{value}"', f'"{placeholder}"')
    assert data.count(b"\n") == 1 + 1000 + 3  # the header and every entry, whole lines
    return hashlib.sha256(data).hexdigest(), hashlib.sha256(answer_text.encode()).hexdigest()


async def test_a_large_append_of_mixed_shapes_writes_the_bytes_mains_append_wrote(sessions_root: Path):
    assert await appended(sessions_root) == EXPECTED


if __name__ == "__main__" and "--print" in sys.argv:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        print(asyncio.run(appended(Path(folder))))
