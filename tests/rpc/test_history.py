"""Prompt history (history/add, history/search, history/list) through a real sidecar."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from .harness import SERVER, RpcTestClient


async def add(client: RpcTestClient, prompt: str, cwd: str | None = "/work/a") -> None:
    params = {"prompt": prompt} if cwd is None else {"prompt": prompt, "cwd": cwd}
    assert await client.call("history/add", params) is None


async def test_added_prompts_are_found_at_once_newest_first(client: RpcTestClient):
    for prompt in ["fix the failing test in parser.py", "run the Test suite again", "explain this error"]:
        await add(client, prompt)
    found = await client.call("history/search", {"query": "test"})
    assert [e["prompt"] for e in found["entries"]] == ["run the Test suite again", "fix the failing test in parser.py"]
    first = found["entries"][0]
    assert first["cwd"] == "/work/a" and first["createdAt"].endswith("Z") and isinstance(first["id"], int)
    listed = await client.call("history/list", {})
    assert [e["prompt"] for e in listed["entries"]] == [
        "explain this error",
        "run the Test suite again",
        "fix the failing test in parser.py",
    ]


async def test_consecutive_identical_prompts_are_stored_once(client: RpcTestClient):
    for prompt in ["same", "same", "other", "same", "same"]:
        await add(client, prompt)
    await add(client, "same", cwd="/work/b")  # another project: its own line
    listed = await client.call("history/list", {"limit": 10})
    assert [(e["prompt"], e["cwd"]) for e in listed["entries"]] == [
        ("same", "/work/b"),
        ("same", "/work/a"),
        ("other", "/work/a"),
        ("same", "/work/a"),
    ]


async def test_search_by_cwd_short_queries_quotes_and_paging(client: RpcTestClient):
    await add(client, 'grep for "TODO" in src', cwd="/work/a")
    await add(client, "use pnpm, not npm", cwd="/work/b")
    await add(client, "ok go", cwd="/work/b")
    assert [e["prompt"] for e in (await client.call("history/search", {"query": '"TODO"'}))["entries"]] == [
        'grep for "TODO" in src'
    ]
    assert [e["prompt"] for e in (await client.call("history/search", {"query": "go"}))["entries"]] == ["ok go"]
    assert [
        e["prompt"] for e in (await client.call("history/search", {"query": "pm", "cwd": "/work/b"}))["entries"]
    ] == ["use pnpm, not npm"]
    assert (await client.call("history/search", {"query": "pnpm", "cwd": "/work/a"}))["entries"] == []
    await add(client, "cut 50% of it")
    await add(client, "rename a_b")
    for query, found in (("%", ["cut 50% of it"]), ("_", ["rename a_b"]), ("0%", ["cut 50% of it"]), ("OK", ["ok go"])):
        assert [e["prompt"] for e in (await client.call("history/search", {"query": query}))["entries"]] == found
    page = await client.call("history/list", {"limit": 2})
    rest = await client.call("history/list", {"limit": 2, "before": page["entries"][-1]["id"]})
    assert [e["prompt"] for e in page["entries"] + rest["entries"]] == [
        "rename a_b",
        "cut 50% of it",
        "ok go",
        "use pnpm, not npm",
    ]


async def test_a_query_holding_nul_is_answered_as_any_other(client: RpcTestClient):
    """FTS5 and LIKE stop reading a pattern at NUL (it was an internal error); such a query is matched as it is."""
    await add(client, "split on \x00 Bytes")
    await add(client, "split on bytes")
    for query in ("\x00 by", "n \x00", "\x00", "ON \x00 BYTES"):
        for order in ("recent", "relevance"):
            found = await client.call("history/search", {"query": query, "order": order})
            assert [e["prompt"] for e in found["entries"]] == ["split on \x00 Bytes"], (query, order)


async def test_relevance_order_puts_the_better_match_first(client: RpcTestClient):
    await add(client, "parser: fix the parser, test parser")  # as long as the next, three matches
    await add(client, "please update the old parser tests")
    await add(client, "nothing to see")
    recent = await client.call("history/search", {"query": "parser"})
    assert recent["entries"][0]["prompt"] == "please update the old parser tests"
    ranked = await client.call("history/search", {"query": "parser", "order": "relevance"})
    assert [e["prompt"] for e in ranked["entries"]] == [
        "parser: fix the parser, test parser",
        "please update the old parser tests",
    ]


async def test_several_words_match_each_at_a_word_start_in_any_order(client: RpcTestClient):
    """oh-my-pi's history matches every word, in any order, as a prefix; a substring search found
    nothing for "tokenizer parser"."""
    await add(client, "fix the parser module bug in the tokenizer")
    await add(client, "reparse the tokenizer output")  # "parser" inside a word: not a word start
    await add(client, "Tokenize, then parse it")  # both words as prefixes, in another order
    await add(client, "tokenizer only", cwd="/work/b")
    await add(client, "run it with --force-push and .env loaded")
    for query in ("tokenizer parser", "PARSER   tokenizer", "tokenizer parser module"):
        found = await client.call("history/search", {"query": query})
        assert [e["prompt"] for e in found["entries"]] == ["fix the parser module bug in the tokenizer"], query
    found = await client.call("history/search", {"query": "pars toke"})
    assert [e["prompt"] for e in found["entries"]] == [
        "Tokenize, then parse it",
        "fix the parser module bug in the tokenizer",
    ]
    ranked = await client.call("history/search", {"query": "toke pars", "order": "relevance"})
    assert sorted(e["prompt"] for e in ranked["entries"]) == [
        "Tokenize, then parse it",
        "fix the parser module bug in the tokenizer",
    ]
    # Words shorter than a trigram, punctuation-led words, a cwd, and one word as before (a substring).
    assert [e["prompt"] for e in (await client.call("history/search", {"query": "to pa"}))["entries"]] == [
        "Tokenize, then parse it",
        "fix the parser module bug in the tokenizer",
    ]
    assert [e["prompt"] for e in (await client.call("history/search", {"query": "orce .env"}))["entries"]] == []
    assert [e["prompt"] for e in (await client.call("history/search", {"query": "--force .env"}))["entries"]] == [
        "run it with --force-push and .env loaded"
    ]
    assert (await client.call("history/search", {"query": "tokenizer parser", "cwd": "/work/b"}))["entries"] == []
    assert [e["prompt"] for e in (await client.call("history/search", {"query": "parse"}))["entries"]] == [
        "Tokenize, then parse it",
        "reparse the tokenizer output",
        "fix the parser module bug in the tokenizer",
    ]


@pytest.mark.parametrize(
    "method, params, field",
    [
        ("history/add", {"prompt": "   "}, "prompt"),
        ("history/add", {"prompt": "x", "cwd": "relative/dir"}, "cwd"),
        ("history/search", {"query": ""}, "query"),
        ("history/search", {"query": "x", "cwd": "~/p"}, "cwd"),
    ],
)
async def test_bad_input_gets_a_clear_error(client: RpcTestClient, method, params, field):
    with pytest.raises(JsonRpcException) as refused:
        await client.call(method, params)
    assert refused.value.code == -32602
    assert field in str(refused.value)
    await add(client, "still serving")
    assert (await client.call("history/list", {}))["entries"][0]["prompt"] == "still serving"


async def test_limits_out_of_range_are_refused(client: RpcTestClient):
    with pytest.raises(JsonRpcException) as refused:
        await client.call("history/list", {"limit": 0})
    assert refused.value.code == -32602 and "limit" in str(refused.value)


async def test_history_outlives_the_process_and_the_cli_prints_it(client: RpcTestClient, sessions_root: Path):
    await add(client, "remember me across restarts")
    await client.call("history/list", {})  # settled on disk
    printed = await asyncio.to_thread(
        subprocess.run,
        [*SERVER, "history", "restarts", "--root", str(sessions_root)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert printed.returncode == 0, printed.stderr
    assert "remember me across restarts" in printed.stdout and "/work/a" in printed.stdout
    assert (sessions_root / ".index" / "history.sqlite3").stat().st_mode & 0o077 == 0
