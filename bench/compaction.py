"""Compaction cost without the model: everything a compaction does except the LLM call.

    python bench/compaction.py            # generate bench/data/compaction-50mb.jsonl if missing, then measure
    python bench/compaction.py --regen    # generate it again

The session is generated deterministically (seeded): one long linear
pi-shaped conversation of ~50 MB with user requests, assistants with
read/edit/write/bash tool calls, tool results of up to 24 KB, and a
previous compaction in the middle, so the run exercises the update path,
pruning and cumulative file lists. The summarizer is a stand-in that
answers at once; the offline summarizer is timed on its own.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent))

from sidecar.compaction.prepare import prepare_compaction  # noqa: E402
from sidecar.compaction.run import CompactionOptions, run_compaction  # noqa: E402
from sidecar.compaction.serialize import serialize_conversation  # noqa: E402
from sidecar.context.build import build_context  # noqa: E402
from sidecar.providers.base import SummaryRequest, SummaryResponse  # noqa: E402
from sidecar.providers.offline import summarize_offline  # noqa: E402
from sidecar.store.base import FsyncPolicy  # noqa: E402
from sidecar.store.files.session import FileSession as Session  # noqa: E402

DATA = ROOT / "data" / "compaction-50mb.jsonl"
SEED = 4242
TARGET_BYTES = 50 * 1024 * 1024
WORDS = (
    "the parser token cache session branch file line context model test pass fail retry error config "
    "module function class import return value list index path request response"
).split()
TOOLS = ("read", "edit", "write", "bash", "ls")


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def generate(path: Path) -> None:
    rng = random.Random(SEED)
    path.parent.mkdir(parents=True, exist_ok=True)
    size = 0
    count = 0
    parent = None
    call = 0
    compacted = False
    with open(path, "w") as out:

        def write(obj: dict) -> None:
            nonlocal size, count, parent
            count += 1
            obj = {
                "type": obj.pop("type"),
                "id": f"{count:08x}",
                "parentId": parent,
                "timestamp": f"2025-01-01T00:00:00.{count % 1000:03d}Z",
                **obj,
            }
            line = json.dumps(obj, separators=(",", ":"))
            out.write(line + "\n")
            size += len(line) + 1
            parent = obj["id"]

        out.write(
            json.dumps(
                {
                    "type": "session",
                    "version": 3,
                    "id": "bench-compaction",
                    "timestamp": "2025-01-01T00:00:00.000Z",
                    "cwd": "/work/proj",
                },
                separators=(",", ":"),
            )
            + "\n"
        )
        write(
            {
                "type": "session_init",
                "systemPrompt": "You are a careful coding agent. " + _text(rng, 200),
                "task": "Refactor the parser",
            }
        )
        first_user = None
        while size < TARGET_BYTES:
            write(
                {
                    "type": "message",
                    "message": {
                        "role": "user",
                        "content": [{"type": "text", "text": _text(rng, rng.randint(10, 300))}],
                        "timestamp": count,
                    },
                }
            )
            first_user = first_user or parent
            for _ in range(rng.randint(1, 8)):
                calls = []
                for _ in range(rng.randint(1, 3)):
                    call += 1
                    tool = rng.choice(TOOLS)
                    args = (
                        {"command": _text(rng, 6)} if tool == "bash" else {"path": f"src/mod{rng.randint(0, 400)}.py"}
                    )
                    calls.append({"type": "toolCall", "id": f"call_{call}", "name": tool, "arguments": args})
                write(
                    {
                        "type": "message",
                        "message": {
                            "role": "assistant",
                            "content": [{"type": "text", "text": _text(rng, rng.randint(5, 80))}, *calls],
                            "provider": "anthropic",
                            "model": "claude-bench",
                            "stopReason": "toolUse",
                            "timestamp": count,
                        },
                    }
                )
                for block in calls:
                    write(
                        {
                            "type": "message",
                            "message": {
                                "role": "toolResult",
                                "toolCallId": block["id"],
                                "toolName": block["name"],
                                "content": [{"type": "text", "text": _text(rng, rng.randint(20, 4000))}],
                                "isError": rng.random() < 0.05,
                                "timestamp": count,
                            },
                        }
                    )
            write(
                {
                    "type": "message",
                    "message": {
                        "role": "assistant",
                        "content": [{"type": "text", "text": _text(rng, rng.randint(10, 200))}],
                        "provider": "anthropic",
                        "model": "claude-bench",
                        "stopReason": "stop",
                        "timestamp": count,
                    },
                }
            )
            if not compacted and size > TARGET_BYTES // 2:
                compacted = True
                write(
                    {
                        "type": "compaction",
                        "summary": "## Goal\n- refactor the parser\n",
                        "firstKeptEntryId": parent,
                        "tokensBefore": 123456,
                        "details": {"readFiles": ["src/old.py"], "modifiedFiles": ["src/older.py"]},
                    }
                )


class InstantSummarizer:
    """Stands in for the model: the bench measures everything around it."""

    name = "instant"

    def model_for(self, requested: str | None) -> str:
        return "instant"

    async def summarize(self, request: SummaryRequest, on_text, on_retry=None) -> SummaryResponse:
        on_text("## Goal\n- bench\n")
        return SummaryResponse(text="## Goal\n- bench\n", model="instant")


def _timed(label: str, figures: list[tuple[str, float]], fn, *args):
    started = time.perf_counter()
    value = fn(*args)
    figures.append((label, time.perf_counter() - started))
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--regen", action="store_true")
    args = parser.parse_args()
    if args.regen or not DATA.exists():
        started = time.perf_counter()
        generate(DATA)
        print(f"generated {DATA} ({DATA.stat().st_size / 1e6:.1f} MB) in {time.perf_counter() - started:.1f}s")
    figures: list[tuple[str, float]] = []
    work = DATA.with_name("compaction-run.jsonl")
    work.write_bytes(DATA.read_bytes())
    session, _ = _timed("open (parse + index)", figures, Session.load, work, FsyncPolicy("never"))
    path = _timed("path to the leaf", figures, session.path_to, session.leaf_id)
    options = CompactionOptions(keep_recent_tokens=20000, reserve_tokens=16384, context_window=200_000)
    prep = _timed(
        "prepare (context, prune plan, cut, files)", figures, prepare_compaction, path, options.keep_recent_tokens
    )
    _timed("serialize the summarized part", figures, serialize_conversation, prep.history)
    outcome = _timed(
        "whole run but the model (prepare, fit, prompt, rebuild)",
        figures,
        lambda: asyncio.run(run_compaction(path, options, InstantSummarizer())),
    )
    _timed("append the entries (one write)", figures, session.append, outcome.entries)
    _timed("buildContext after", figures, lambda: build_context(session.path_to(session.leaf_id)))
    _timed(
        "offline summarizer (the no-key 'model')",
        figures,
        summarize_offline,
        SummaryRequest("s", "p", 13107, messages=prep.history, previous_summary=prep.previous_summary),
    )
    session.close()
    work.unlink()
    print(
        f"session: {DATA.stat().st_size / 1e6:.1f} MB, {len(path)} entries on the path, "
        f"{len(prep.history)} messages summarized, {len(prep.kept)} kept, "
        f"pruned {len(prep.prune.tool_result_ids) if prep.prune else 0} tool outputs"
    )
    print(
        f"tokens before {outcome.tokens_before:,}, after {outcome.tokens_after:,}; "
        f"{len(outcome.read_files)} read / {len(outcome.modified_files)} modified files"
    )
    for label, seconds in figures:
        print(f"  {label:<58} {seconds * 1000:9.1f} ms")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
