"""Every transcript in protocol/vectors/ replayed against a real sidecar, in both framings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .harness import REPO_ROOT, RawServer
from .vectors import Mismatch, match, substitute

VECTORS = sorted((REPO_ROOT / "protocol" / "vectors").glob("*.json"))


def test_there_are_vectors():
    assert len(VECTORS) >= 3


@pytest.mark.parametrize("framing", ["lsp", "jsonl"])
@pytest.mark.parametrize("vector", VECTORS, ids=lambda path: path.stem)
async def test_vector(vector: Path, framing: str, tmp_path: Path):
    steps = json.loads(vector.read_text())
    names: dict[str, object] = {"root": str(tmp_path / "sessions")}
    server = await RawServer.start(framing=framing)
    try:
        for number, step in enumerate(steps):
            if step.get("framing", framing) != framing:
                continue
            if "send" in step:
                server.send(substitute(step["send"], names))
            if "sendRaw" in step:
                server.send_raw(step["sendRaw"].encode())
            for expected in step.get("expect", []):
                actual = await server.receive()
                try:
                    match(expected, actual, names)
                except Mismatch as error:
                    raise AssertionError(f"{vector.name} step {number} ({step.get('comment', '')}): {error}") from None
        if steps and steps[-1].get("send", {}).get("method") == "exit":
            assert await server.wait() == 0
    finally:
        await server.stop()


def test_the_matcher_rejects_what_it_should():
    names: dict[str, object] = {"root": "/r"}
    match({"a": "<capture:x>", "b": "${x}", "p": "${root}/<*>_s.jsonl"}, {"a": 5, "b": 5, "p": "/r/2025_s.jsonl"}, names)
    for expected, actual in [
        ({"a": 1}, {"a": 1, "b": 2}),
        ("<integer>", True),
        ("<timestamp>", "yesterday"),
        ("${root}/<*>_s.jsonl", "/other/x_s.jsonl"),
        ([1, 2], [1]),
        (1, 1.0),
    ]:
        with pytest.raises(Mismatch):
            match(expected, actual, dict(names))
