"""``to_entries`` (the OpenAI adapter's mapping of a batch, its direct path for the SDK's usual items) gives,
entry for entry, what ``to_entry`` and ``plain_entry`` give, the reference it was made to match.

Random items of every mapped kind, then mutated (fields added, dropped, reordered, given odd types: a
tuple, NaN, a str key that is an int, a part without its annotations...), go through both; their entries
must be equal key order and value types included (a dict's ``==`` ignores key order, which the session
file and the TypeScript adapter read), their plainness the same, and the tool names noted the same.
"""

from __future__ import annotations

import json
import math
import random
from typing import Any

import pytest
from session_sidecar_client.adapters.openai_agents import items as mapping

ODD = ["x", "", 1, 1.5, float("nan"), None, True, [], [1], {}, {"a": 1}, ("t",), "é\ud83d", 2**70, {3: "int key"}]
ARGUMENTS = [
    '{"city":"Paris"}',
    '{"a": 1}',
    "{}",
    "not json",
    "[1]",
    '{"n":NaN}',
    '{"f":1e400}',
    '{"x":1.0,"y":[true,null]}',
    '{"u":"\\ud83d"}',
    '{"big":123456789012345678901234567890}',
    json.dumps({"path": "src/é.py", "nested": {"k": [1, 2.5]}}),
]


def same(a: object, b: object) -> bool:
    """Equal in value, key order and type all the way down (NaN equal to NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        assert isinstance(b, dict)
        return list(a) == list(b) and all(same(a[key], b[key]) for key in a)
    if isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple))
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return a == b


def random_item(rng: random.Random, n: int) -> dict[str, Any]:
    parts = rng.randint(0, 3)
    makers = [
        lambda: {"role": "user", "content": rng.choice(["hi", "", "é🙂"])},
        lambda: {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "t"}] * parts},
        lambda: {
            "id": f"msg_{n}",
            "type": "message",
            "role": "assistant",
            "status": rng.choice(["completed", "in_progress"]),
            "content": [
                {"type": "output_text", "text": "a", "annotations": rng.choice([[], [{"x": 1}]])}
                for _ in range(max(parts, 1))
            ],
        },
        lambda: {"role": "assistant", "content": "plain"},
        lambda: {
            "type": "function_call",
            "call_id": f"call_{n}",
            "name": "tool",
            "arguments": rng.choice(ARGUMENTS),
            "id": f"fc_{n}",
            "status": "completed",
        },
        lambda: {"type": "function_call_output", "call_id": f"call_{n - 1}", "output": "out"},
        lambda: {"type": "reasoning", "id": f"rs_{n}", "summary": [{"type": "summary_text", "text": "s"}] * parts},
    ]
    item: dict[Any, Any] = rng.choice(makers)()
    for _ in range(rng.randint(0, 3)):
        roll = rng.random()
        if roll < 0.3:
            item[rng.choice(["id", "status", "extra", 3, "type", "phase", "role"])] = rng.choice(ODD)
        elif roll < 0.45 and item:
            del item[rng.choice(list(item))]
        elif roll < 0.7:
            listed = item.get("content") if isinstance(item.get("content"), list) else item.get("summary")
            if isinstance(listed, list) and listed:
                at = rng.randrange(len(listed))
                part = dict(listed[at])
                part[rng.choice(["annotations", "logprobs", "type", "text", 7])] = rng.choice(
                    [*ODD, "output_text", "input_text", "summary_text"]
                )
                if rng.random() < 0.3:
                    part.pop("annotations", None)
                listed[at] = part
        elif roll < 0.85:
            keys = list(item)
            rng.shuffle(keys)
            item = {key: item[key] for key in keys}
    return item


def reference(batch: list[dict[str, Any]], names: dict[str, str]) -> tuple[list[Any], bool]:
    """What add_items made before ``to_entries``: each item noted, then ``to_entry`` and ``plain_entry``."""
    entries, plain = [], True
    for item in batch:
        if item.get("type") == "function_call" and isinstance(item.get("call_id"), str):
            names[item["call_id"]] = str(item.get("name", ""))
        entry = mapping.to_entry(item, names)
        entries.append(entry)
        plain = plain and mapping.plain_entry(entry)
    return entries, plain


@pytest.mark.parametrize("seed", range(6))
def test_to_entries_gives_what_to_entry_and_plain_entry_give(seed: int):
    rng = random.Random(seed)
    direct = 0
    for trial in range(600):
        batch = [random_item(rng, trial * 10 + i) for i in range(rng.randint(1, 6))]
        theirs_names: dict[str, str] = {}
        ours_names: dict[str, str] = {}
        try:
            expected = reference(batch, theirs_names)
        except Exception as error:  # (an item the mapping refuses: refused the same way)
            with pytest.raises(type(error)):
                mapping.to_entries(batch, ours_names)
            continue
        got = mapping.to_entries(batch, ours_names)
        assert same(got[0], expected[0]), batch
        assert got[1] == expected[1], batch
        assert ours_names == theirs_names
        direct += sum(mapping._direct(item, ours_names) is not None for item in batch if type(item) is dict)
    assert direct > 1000  # (most items took the direct path: it is what was compared)


def test_the_sdks_usual_items_take_the_direct_path_and_an_odd_one_does_not():
    usual = [
        {"role": "user", "content": "hi"},
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "look"}]},
        {"type": "function_call", "call_id": "c1", "name": "read", "arguments": '{"p": 1}', "id": "fc_1"},
        {"type": "function_call_output", "call_id": "c1", "output": "text"},
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "done", "annotations": []}],
        },
    ]
    assert all(mapping._direct(item, {}) is not None for item in usual)
    odd = [
        {"role": "user", "content": [{"type": "input_text", "text": "t", "annotations": ()}], "type": None},
        {"type": "function_call_output", "call_id": "c1", "output": [{"type": "input_text", "text": "x"}]},
        {"role": "assistant", "content": [{"type": "output_text", "text": "a", "annotations": ("t",)}]},
    ]
    assert all(mapping._direct(item, {}) is None for item in odd)
