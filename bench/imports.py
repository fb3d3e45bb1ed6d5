"""Import speed: a 50 MB Codex rollout and a 50 MB Claude Code transcript against our own open of a 50 MB pi file.

    python bench/imports.py            # generate the sources in bench/data/ if missing, then measure
    python bench/imports.py --regen    # generate them again

The sources are seeded and shaped like what Codex 0.169 and Claude Code 2.1 write
(tests/importers/fixtures): Codex turns with turn_context, world_state, the
``item_completed`` copies of every item, reasoning, exec_command calls and their
outputs, token records; Claude Code turns of one content block per assistant line,
attachments, ``api-request-blob`` copies, tool results, cost-state lines. The pi file
is bench/load.py's (~50 MB). "open" is bench/load.py's open + buildContext; "import"
reads the source, maps it and writes the pi session through the store (a fresh root
each time), timed to the answer as the rpc layer gives it: the listing index is
folded in after the answer (its time is printed beside). Each measurement runs in a fresh process.

Also measured, without a goal: a ~50 MB opencode database (the tables opencode 1.18
writes, as the importer reads them: steps with reasoning, text and a tool part with
its output) and a ~50 MB spec-format session (bench/spec_store.py's conversation).
Wall time moves with the machine's load; the CPU time of the same rounds (median) is
printed beside it, with the load average before and after the run.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT.parent))

import load  # noqa: E402  (bench/load.py: the 50 MB pi file and its open)

DATA = ROOT / "data"
CODEX = (
    DATA
    / "codex"
    / "sessions"
    / "2026"
    / "01"
    / "01"
    / "rollout-2026-01-01T00-00-00-0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000.jsonl"
)
CLAUDE = DATA / "claude" / "-work-bench" / "0199aaaa-bbbb-4ccc-8ddd-eeeeffff0001.jsonl"
OPENCODE = DATA / "opencode" / "opencode.db"
SPEC = DATA / "spec" / "01JBENCH0000000000000000SP"
TARGET = 50_000_000
SEED = 20261125


def _stamp(step: int) -> str:
    return load._stamp(step)


def generate_codex(path: Path) -> None:
    rng = random.Random(SEED)
    thread = "0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000"
    lines = []
    size = 0
    step = 0

    def add(kind: str, payload: dict) -> None:
        nonlocal size, step
        step += 1
        line = json.dumps({"timestamp": _stamp(step), "type": kind, "ordinal": step, "payload": payload})
        lines.append(line)
        size += len(line) + 1

    add(
        "session_meta",
        {
            "id": thread,
            "timestamp": _stamp(0),
            "cwd": "/work/bench",
            "originator": "codex_exec",
            "cli_version": "0.169.0",
            "model_provider": "openai",
            "base_instructions": {"text": load._text(rng, 2000)},
        },
    )
    turn = 0
    while size < TARGET:
        turn += 1
        tid = f"turn-{turn}"
        add("event_msg", {"type": "task_started", "turn_id": tid})
        add("turn_context", {"turn_id": tid, "cwd": "/work/bench", "model": "gpt-5.1-codex"})
        add("world_state", {"full": False, "state": {"model": "gpt-5.1-codex"}})
        prompt = load._text(rng, rng.randrange(5, 60))
        add("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]})
        add(
            "event_msg",
            {
                "type": "item_completed",
                "turn_id": tid,
                "item": {"type": "UserMessage", "content": [{"type": "text", "text": prompt}]},
            },
        )
        for call_index in range(rng.randrange(1, 4)):
            thought = load._text(rng, 30)
            add("event_msg", {"type": "item_completed", "item": {"type": "Reasoning", "summary_text": [thought]}})
            add(
                "response_item",
                {
                    "type": "reasoning",
                    "summary": [{"type": "summary_text", "text": thought}],
                    "encrypted_content": None,
                },
            )
            call = f"call_{turn}_{call_index}"
            command = load._text(rng, 4)
            add(
                "response_item",
                {
                    "type": "function_call",
                    "name": "exec_command",
                    "call_id": call,
                    "arguments": json.dumps({"cmd": command}),
                },
            )
            add("token_usage_record", {"turn_id": tid, "usage": {"input_tokens": 1000, "output_tokens": 200}})
            output = load._output(rng, min(int(rng.lognormvariate(7.95, 1.0)), 60_000))
            add(
                "event_msg",
                {
                    "type": "item_completed",
                    "item": {
                        "type": "CommandExecution",
                        "id": call,
                        "command": ["bash", "-lc", command],
                        "aggregated_output": output,
                        "exit_code": 0,
                    },
                },
            )
            add("response_item", {"type": "function_call_output", "call_id": call, "output": output})
            add("event_msg", {"type": "token_count", "info": {"total_token_usage": {"input_tokens": turn}}})
        answer = load._text(rng, 40)
        add(
            "event_msg",
            {"type": "item_completed", "item": {"type": "AgentMessage", "content": [{"type": "Text", "text": answer}]}},
        )
        add(
            "response_item",
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": answer, "annotations": []}],
            },
        )
        add("event_msg", {"type": "task_complete", "turn_id": tid, "last_agent_message": answer})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


def generate_claude(path: Path) -> None:
    rng = random.Random(SEED + 1)
    session = path.stem
    lines = []
    size = 0
    step = 0
    parent = None

    def add(obj: dict, chained: bool = True) -> None:
        nonlocal size, step, parent
        step += 1
        if chained:
            uid = f"00000000-0000-4000-8000-{step:012d}"
            obj = {
                "parentUuid": parent,
                "isSidechain": False,
                **obj,
                "uuid": uid,
                "timestamp": _stamp(step),
                "sessionId": session,
                "cwd": "/work/bench",
                "version": "2.1.331",
            }
            parent = uid
        line = json.dumps(obj)
        lines.append(line)
        size += len(line) + 1

    usage = {"input_tokens": 1000, "output_tokens": 200, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}
    turn = 0
    while size < TARGET:
        turn += 1
        prompt = load._text(rng, rng.randrange(5, 60))
        add({"type": "queue-operation", "operation": "enqueue", "content": prompt}, chained=False)
        add({"type": "user", "message": {"role": "user", "content": prompt}})
        add(
            {
                "type": "attachment",
                "attachment": {"type": "total_tokens_reminder", "text": "<total_tokens>1</total_tokens>"},
            }
        )
        add(
            {"type": "api-request-blob", "message": {"role": "user", "content": [{"type": "text", "text": prompt}]}},
            chained=False,
        )
        for call_index in range(rng.randrange(1, 4)):
            mid = f"msg_{turn}_{call_index}"
            call = f"toolu_{turn}_{call_index}"
            for block in (
                {"type": "thinking", "thinking": load._text(rng, 30), "signature": "sig"},
                {"type": "text", "text": load._text(rng, 25)},
                {"type": "tool_use", "id": call, "name": "Bash", "input": {"command": load._text(rng, 4)}},
            ):
                add(
                    {
                        "type": "assistant",
                        "message": {
                            "id": mid,
                            "role": "assistant",
                            "model": "claude-sonnet-4-5",
                            "content": [block],
                            "usage": usage,
                            "stop_reason": "tool_use",
                        },
                    }
                )
            output = load._output(rng, min(int(rng.lognormvariate(7.95, 1.0)), 60_000))
            add(
                {
                    "type": "user",
                    "message": {
                        "role": "user",
                        "content": [{"type": "tool_result", "tool_use_id": call, "content": output, "is_error": False}],
                    },
                    "toolUseResult": {"stdout": output[:200], "stderr": ""},
                }
            )
            add(
                {
                    "type": "api-request-blob",
                    "message": {
                        "role": "user",
                        "content": [{"type": "tool_result", "tool_use_id": call, "content": output}],
                    },
                },
                chained=False,
            )
        add(
            {
                "type": "assistant",
                "message": {
                    "id": f"msg_{turn}_end",
                    "role": "assistant",
                    "model": "claude-sonnet-4-5",
                    "content": [{"type": "text", "text": load._text(rng, 40)}],
                    "usage": usage,
                    "stop_reason": "end_turn",
                },
            }
        )
        add({"type": "last-prompt", "lastPrompt": prompt, "leafUuid": parent}, chained=False)
        add({"type": "cost-state", "totalCostUSD": turn * 0.01}, chained=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


def generate_opencode(path: Path) -> None:
    rng = random.Random(SEED + 2)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    con = sqlite3.connect(path)
    con.executescript("""
        create table session (id text primary key, parent_id text, directory text, title text, agent text,
                              time_created integer);
        create table message (id text primary key, session_id text, time_created integer, data text);
        create table part (id text primary key, message_id text, session_id text, time_created integer, data text);
    """)
    session, at = "ses_bench0000000000000000000", 1767323045000
    con.execute("insert into session values (?, null, '/work/bench', 'Bench', 'build', ?)", (session, at))
    size, turn, serial = 0, 0, 0

    def add(table: str, row: tuple) -> None:
        nonlocal size
        size += sum(len(str(v)) for v in row)
        con.execute(f"insert into {table} values ({', '.join('?' * len(row))})", row)

    def part(message: str, data: dict) -> None:
        nonlocal serial
        serial += 1
        add("part", (f"prt_{serial:012d}", message, session, at, json.dumps(data)))

    while size < TARGET:
        turn += 1
        at += 60_000
        user = f"msg_{turn:08d}_0"
        add(
            "message",
            (
                user,
                session,
                at,
                json.dumps(
                    {"role": "user", "time": {"created": at}, "model": {"providerID": "openai", "modelID": "gpt-5.1"}}
                ),
            ),
        )
        part(user, {"type": "text", "text": load._text(rng, rng.randrange(5, 60))})
        reply = f"msg_{turn:08d}_1"
        add(
            "message",
            (
                reply,
                session,
                at + 1000,
                json.dumps(
                    {"role": "assistant", "providerID": "openai", "modelID": "gpt-5.1", "time": {"created": at + 1000}}
                ),
            ),
        )
        for call_index in range(rng.randrange(1, 4)):
            part(reply, {"type": "step-start"})
            part(reply, {"type": "reasoning", "text": load._text(rng, 30)})
            part(reply, {"type": "text", "text": load._text(rng, 25)})
            output = load._output(rng, min(int(rng.lognormvariate(7.95, 1.0)), 60_000))
            part(
                reply,
                {
                    "type": "tool",
                    "tool": "bash",
                    "callID": f"call_{turn}_{call_index}",
                    "state": {
                        "status": "completed",
                        "input": {"command": load._text(rng, 4)},
                        "output": output,
                        "title": "bash",
                        "metadata": {"exit": 0},
                    },
                },
            )
            part(
                reply,
                {
                    "type": "step-finish",
                    "reason": "tool-calls",
                    "tokens": {"input": 1000, "output": 200, "cache": {"read": 0, "write": 0}},
                },
            )
        part(reply, {"type": "step-start"})
        part(reply, {"type": "text", "text": load._text(rng, 40)})
        part(reply, {"type": "step-finish", "reason": "stop", "tokens": {"input": 1000, "output": 200}})
    con.commit()
    con.close()


def generate_spec(folder: Path) -> None:
    from spec_store import records

    from sidecar.store.base import FsyncPolicy
    from sidecar.store.spec.metadata import new_metadata
    from sidecar.store.spec.records import encode_record
    from sidecar.store.spec.session import SpecSession

    shutil.rmtree(folder, ignore_errors=True)
    folder.parent.mkdir(parents=True, exist_ok=True)  # the session's own folder is made by create
    made = records(TARGET // 1_000_000)
    SpecSession.create(folder, new_metadata(folder.name, "2025-02-11T00:00:00.000Z"), FsyncPolicy.NEVER).close()
    (folder / "session.jsonl").write_bytes(b"".join(encode_record(r) + b"\n" for r in made))


SOURCES = {
    "codex": (CODEX, "codex"),
    "claude": (CLAUDE, "claude-code"),
    "opencode": (OPENCODE, "opencode"),
    "spec": (SPEC, "spec"),
}


def measure(kind: str, repeat: int) -> None:
    from sidecar import wire
    from sidecar.service import SessionService

    times, cpu, detail = [], [], "-"
    for _ in range(repeat):
        if kind == "open":
            start, start_cpu = time.perf_counter(), time.process_time()
            from sidecar.context.build import build_context
            from sidecar.store.base import FsyncPolicy
            from sidecar.store.files.session import FileSession as Session

            session, _ = Session.load(load.DATA, FsyncPolicy.ASSISTANT)
            build_context(session.tree.path(session.leaf_id))
            session.close()
            times.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
            continue
        root = Path(tempfile.mkdtemp(prefix="bench-import-"))
        source, tool = SOURCES[kind]
        try:
            service = SessionService(root)
            held: list = []
            start, start_cpu = time.perf_counter(), time.process_time()
            # As the rpc layer runs it: the answer once the file is written, the listing index folded in after.
            with service.upkeep_held(held):
                result = service.import_(wire.ImportParams(tool=tool, paths=[str(source)]))
            times.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
            service.run_upkeep(held)
            index_s = time.perf_counter() - start - times[-1]
            (session,) = result.sessions
            detail = (
                f"{session.entries}-entries,{Path(session.path).stat().st_size / 1e6:.1f}-MB-written,"
                f"then-{index_s:.2f}-s-of-index-upkeep"
            )
            service.close_all()
        finally:
            shutil.rmtree(root, ignore_errors=True)
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # The CPU time rides in the detail field (load.run reads four fields): "cpu=<median s>,<detail>".
    print(f"{min(times):.4f} {statistics.median(times):.4f} {peak_kb} cpu={statistics.median(cpu):.4f},{detail}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--regen", action="store_true")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--measure", choices=["open", *SOURCES])
    args = parser.parse_args()
    if args.measure:
        measure(args.measure, args.repeat)
        return
    if args.regen or not load.DATA.exists():
        load.generate(load.DATA)
    if args.regen or not CODEX.exists():
        generate_codex(CODEX)
    if args.regen or not CLAUDE.exists():
        generate_claude(CLAUDE)
    if args.regen or not OPENCODE.exists():
        generate_opencode(OPENCODE)
    if args.regen or not (SPEC / "session.jsonl").exists():
        generate_spec(SPEC)
    for path in (load.DATA, CODEX, CLAUDE, OPENCODE, SPEC / "session.jsonl"):
        print(f"{path.relative_to(ROOT.parent)}: {path.stat().st_size / 1e6:.1f} MB")
    load_before = os.getloadavg()
    rows = {}
    for kind in ("open", *SOURCES):
        best, median, peak, detail = load.run(kind, args.repeat, __file__)
        cpu, _, detail = detail.partition(",")
        rows[kind] = (best, median, float(cpu.removeprefix("cpu=")), peak, detail)
    load_after = os.getloadavg()
    base, base_cpu = rows["open"][0], rows["open"][2]
    labels = {
        "open": "open + buildContext of the 50 MB pi file",
        "codex": "import of the 50 MB Codex rollout",
        "claude": "import of the 50 MB Claude Code transcript",
        "opencode": "import of the 50 MB opencode database",
        "spec": "import of the 50 MB spec session",
    }
    print(f"load average (1 min) {load_before[0]:.1f} before, {load_after[0]:.1f} after, on {os.cpu_count()} CPUs")
    print(
        f"{'what':<46} {'best s':>8} {'median s':>9} {'x open':>7} {'CPU s':>7} {'CPU x':>7} {'peak RSS MB':>12}  detail"
    )
    for kind, (best, median, cpu, peak, detail) in rows.items():
        print(
            f"{labels[kind]:<46} {best:>8.3f} {median:>9.3f} {best / base:>7.2f} {cpu:>7.3f} {cpu / base_cpu:>7.2f} "
            f"{peak / 1024:>12.0f}  {detail}"
        )


if __name__ == "__main__":
    main()
