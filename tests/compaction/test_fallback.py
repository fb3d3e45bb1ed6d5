"""A provider's empty, blank or garbled summary never becomes a compaction: the offline one stands in.

Through the real service and real files, against loopback servers speaking
the Anthropic and OpenAI streaming formats.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from providers.servers import LoopbackServer, anthropic_events, openai_events, sse

from sidecar.compaction.quality import unusable_reason
from sidecar.format.jsonl import parse_file

from .test_service import compact, filled_session, make_service

ANSWERS = {
    "empty": [],
    "whitespace": ["  \n", "\t\n\n  "],
    "replacement characters": ["\ufffd\ufffd\ufffd\ufffd" * 30],
    "control bytes": ["\u0001\u0002\u0003 ab \u0004\u0005\u0006" * 20],
    "a loop": ["summary " * 200],
    "a non-answer": ["ok"],
    "a bare heading": ["## Goal\n", "##"],
}
REASONS = {"empty": "empty", "whitespace": "empty"}


def answer(provider: str, pieces: list[str]):
    return sse(anthropic_events(pieces) if provider == "anthropic" else openai_events(pieces))


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
@pytest.mark.parametrize("kind", list(ANSWERS))
def test_an_unusable_summary_falls_back_to_the_offline_one_and_says_so(sessions_root: Path, provider: str, kind: str):
    with LoopbackServer() as server:
        server.push(*(answer(provider, ANSWERS[kind]) for _ in range(2)))  # a split turn asks twice
        endpoint = {"apiKey": "k", "baseUrl": server.url}
        service = make_service(
            sessions_root, providers={"default": "offline", "maxRetries": 0, "anthropic": endpoint, "openai": endpoint}
        )
        session_id, path = filled_session(service)
        result = compact(service, session_id, provider=provider)
        assert server.requests  # the model was asked
    fallback = result.details.fallback
    assert fallback is not None and fallback.provider == provider and fallback.usedProvider == "offline"
    assert fallback.reason == REASONS.get(kind, "garbage") and "history" in fallback.summaries
    # A named provider's answer replaced is never silent: the result says so at its top too.
    assert (result.provider, result.fellBack, result.fellBackReason) == (provider, True, fallback.reason)
    # The offline summary's sections, from the real messages, and the carry-over beside them.
    assert result.summary.startswith("## Goal\n") and "request 0: change module 0" in result.summary
    assert "<carry-over>" in result.summary and "src/m0.py" in result.summary
    entry = parse_file(path.read_bytes()).items[-1].obj()  # type: ignore[union-attr]
    assert entry["type"] == "compaction" and entry["details"]["fallback"]["reason"] == fallback.reason
    assert entry["summary"] == result.summary


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_short_real_summary_is_kept_as_the_model_wrote_it(sessions_root: Path, provider: str):
    text = "## Goal\n- Change the modules.\n## Progress\n- Modules 0 to 3 changed."
    with LoopbackServer() as server:
        server.push(*(answer(provider, [text]) for _ in range(2)))
        endpoint = {"apiKey": "k", "baseUrl": server.url}
        service = make_service(
            sessions_root, providers={"default": "offline", "maxRetries": 0, "anthropic": endpoint, "openai": endpoint}
        )
        session_id, path = filled_session(service)
        result = compact(service, session_id, provider=provider)
    assert result.details.fallback is None and result.summary.startswith(text)
    assert "fallback" not in parse_file(path.read_bytes()).items[-1].obj()["details"]  # type: ignore[union-attr]


def test_what_counts_as_unusable():
    assert unusable_reason("") == unusable_reason(" \n\t ") == "empty"
    for garbage in (
        "ok",
        "Done.",
        ".",
        "\ufffd" * 50,
        "x y " * 40,
        "## Goal\n##\n##",
        "\x00\x01\x02" * 30 + "abc def ghi jkl mno",
        "the summary " * 30,
    ):
        assert unusable_reason(garbage) == "garbage", garbage
    # Terse is not garbage: a client's own summarizer may answer in two words.
    for terse in ("plain", "late summary", "summary of a, b and c", "SUMMARY[history]"):
        assert unusable_reason(terse) is None, terse
    for fine in (
        "The parser now handles empty input; next: the writer.",
        "修复了解析器的空输入问题，下一步是写入器的测试用例。" * 2,
        "## Goal\n- Fix the login bug in `auth/session.py` (KeyError: 'user_id').",
        "Исправлен парсер: пустой ввод теперь возвращает None.",
    ):
        assert unusable_reason(fine) is None, fine
