"""Every transcript in protocol/vectors/ replayed against a real sidecar, in both framings."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from .harness import REPO_ROOT, RawServer
from .vectors import Mismatch, match, substitute

VECTORS = sorted((REPO_ROOT / "protocol" / "vectors").glob("*.json"))
ON_POSTGRES = os.environ.get("SIDECAR_TEST_STORE") == "postgres"


def for_postgres(expected: Any) -> Any:
    """An expected answer as a PostgreSQL store gives it (PROTOCOL.md, "PostgreSQL store"): a session's
    ``path`` is its place ``pg:<area>/<folder>/<file>`` instead of the file below the root, and a filesystem
    path given to session/open is refused as invalid params (the store has no files to be outside of)."""
    if isinstance(expected, str):
        return "pg:" + expected[len("${root}/") :] if expected.startswith("${root}/") else expected
    if isinstance(expected, list):
        return [for_postgres(item) for item in expected]
    if not isinstance(expected, dict):
        return expected
    data = expected.get("data")
    if isinstance(data, dict) and data.get("kind") == "pathOutsideRoot":
        return {**expected, "code": -32602, "data": {"kind": "invalidParams", "field": "path"}}
    return {key: for_postgres(item) for key, item in expected.items()}


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
            expects = step.get("expect", [])
            received = [await server.receive() for _ in expects]
            if ON_POSTGRES:
                expects, received = answers_first([for_postgres(e) for e in expects], received)
            for expected, actual in zip(expects, received):
                try:
                    match(expected, actual, names)
                except Mismatch as error:
                    raise AssertionError(f"{vector.name} step {number} ({step.get('comment', '')}): {error}") from None
        if steps and steps[-1].get("send", {}).get("method") == "exit":
            assert await server.wait() == 0
    finally:
        await server.stop()


def answers_first(expects: list[Any], received: list[Any]) -> tuple[list[Any], list[Any]]:
    """A step's answers, then its notifications, each in the order they came. On PostgreSQL an append
    runs on a worker thread and its session/didAppend may reach the subscriber before the answer (the
    file store answers appends inline, first); PROTOCOL.md promises the events' order, not their place
    relative to the answer. Answers first, because a notification may name what an answer captured."""

    def split(messages: list[Any]) -> list[Any]:
        return [m for m in messages if "id" in m] + [m for m in messages if "id" not in m]

    return split(expects), split(received)


def test_the_postgres_form_of_an_answer_changes_only_paths_and_the_outside_root_error():
    answer = {"result": {"path": "${root}/--w--/<*>_a.jsonl", "cwd": "/w", "sessionRoot": "${root}"}}
    assert for_postgres(answer) == {"result": {"path": "pg:--w--/<*>_a.jsonl", "cwd": "/w", "sessionRoot": "${root}"}}
    refused = {"error": {"code": -33007, "message": "<string>", "data": {"kind": "pathOutsideRoot", "path": "/x"}}}
    assert for_postgres(refused)["error"] == {
        "code": -32602,
        "message": "<string>",
        "data": {"kind": "invalidParams", "field": "path"},
    }


def test_the_matcher_rejects_what_it_should():
    names: dict[str, object] = {"root": "/r"}
    match(
        {"a": "<capture:x>", "b": "${x}", "p": "${root}/<*>_s.jsonl"}, {"a": 5, "b": 5, "p": "/r/2025_s.jsonl"}, names
    )
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
