"""The command line: one-shot ``call``, ``demo`` and the schema generator, as real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from store_mode import bring_in, stored_root

from sidecar import schema

from .harness import SERVER


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SERVER, *args], input=stdin, capture_output=True, text=True, timeout=60)


def test_call_prints_the_result_and_exits_0(sessions_root: Path):
    created = run("call", "session/create", '{"cwd": "/w", "sessionId": "c1"}', "--root", str(sessions_root))
    assert created.returncode == 0, created.stderr
    assert json.loads(created.stdout)["sessionId"] == "c1"
    listed = run("call", "session/list", "-", "--root", str(sessions_root), stdin='{"all": true}')
    assert listed.returncode == 0 and json.loads(listed.stdout) == {"sessions": [], "nextCursor": None}


def test_call_prints_the_error_and_exits_1(sessions_root: Path):
    failed = run("call", "session/getTree", '{"sessionId": "ghost"}', "--root", str(sessions_root))
    assert failed.returncode == 1
    error = json.loads(failed.stdout)["error"]
    assert error["code"] == -33001 and error["data"]["kind"] == "sessionNotFound"
    assert "-33001" in failed.stderr
    not_json = run("call", "session/list", "{oops", "--root", str(sessions_root))
    assert not_json.returncode == 2 and "not JSON" in not_json.stderr


def test_a_root_the_command_cannot_reach_is_a_line_not_a_traceback(tmp_path: Path):
    """A root below a file (or below /proc) ended reindex and history with a Python traceback."""
    (tmp_path / "a-file").write_text("not a folder")
    for command in ("reindex", "history"):
        done = run(command, "--root", str(tmp_path / "a-file" / "sessions"))
        assert done.returncode == 1, (command, done.stderr)
        assert done.stderr.startswith(f"session-sidecar {command}: ") and "Traceback" not in done.stderr, done.stderr
        assert str(tmp_path / "a-file") in done.stderr


def test_demo_drives_a_whole_session(tmp_path: Path):
    root = tmp_path / "demo-root"
    demo = run("demo", "--root", str(root))
    assert demo.returncode == 0, demo.stdout + demo.stderr
    for step in (
        "session/create",
        "session/append",
        "session/buildContext",
        "session/branch",
        "session/fork",
        "session/list",
    ):
        assert step in demo.stdout
    assert "sidecar exited with code 0" in demo.stdout
    files = sorted(stored_root(root, tmp_path / "stored").rglob("*.jsonl"))
    assert len(files) == 2  # the session and its fork
    headers = [json.loads(f.read_text().splitlines()[0]) for f in files]
    assert sum("parentSession" in h for h in headers) == 1
    # The demo compacts on the offline summarizer: one compaction entry, a summary shown.
    assert "not compacted" not in demo.stdout and "## Goal" in demo.stdout
    assert sum(f.read_text().count('"type":"compaction"') for f in files) == 1


def test_schema_json_is_up_to_date():
    # Stale? Run: python -m sidecar.schema
    assert schema.SCHEMA_PATH.read_text() == schema.render()


def test_schema_check_flag_detects_a_stale_file(tmp_path: Path):
    stale = tmp_path / "schema.json"
    stale.write_text("{}\n")
    assert schema.main(["--check", "--output", str(stale)]) == 1
    assert schema.main(["--output", str(stale)]) == 0
    assert schema.main(["--check", "--output", str(stale)]) == 0
    generated = json.loads(stale.read_text())
    assert set(generated["methods"]) >= {"initialize", "shutdown", "session/append"}
    assert {"code": -33001, "kind": "sessionNotFound"}.items() <= next(
        e for e in generated["errors"] if e["code"] == -33001
    ).items()


def test_help_and_version():
    assert run("--version").stdout.startswith("session-sidecar ")
    assert "call" in run("--help").stdout


def test_doctor_finds_and_mends_a_file_cut_off_by_an_old_fork(sessions_root: Path):
    folder = sessions_root / "--w--"
    folder.mkdir(parents=True)
    path = folder / "2025-01-01T00-00-00-000Z_d1.jsonl"
    lines = [
        {"type": "session", "version": 3, "id": "d1", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/w"},
        {
            "type": "message",
            "id": "a1",
            "parentId": None,
            "timestamp": "2025-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": "one", "timestamp": 1},
        },
        {
            "type": "message",
            "id": "a2",
            "parentId": "a-label",
            "timestamp": "2025-01-01T00:00:02.000Z",
            "message": {"role": "user", "content": "two", "timestamp": 2},
        },
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    opened = json.loads(
        run("call", "session/open", json.dumps({"path": str(path)}), "--root", str(sessions_root)).stdout
    )
    assert opened["warnings"][0]["kind"] == "danglingParent" and opened["warnings"][0]["entryIds"] == ["a2"]
    checked = run("doctor", "--root", str(sessions_root))
    assert checked.returncode == 1 and "a2: parent a-label -> a1" in checked.stdout
    fixed = run("doctor", "--fix", "--root", str(sessions_root))
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "the original is kept at" in fixed.stdout
    opened = json.loads(
        run("call", "session/open", json.dumps({"path": str(path)}), "--root", str(sessions_root)).stdout
    )
    assert "warnings" not in opened
    built = json.loads(
        run(
            "call", "session/buildContext", "-", "--root", str(sessions_root), stdin=json.dumps({"sessionId": "d1"})
        ).stdout
    )
    assert [m["content"] for m in built["messages"]] == ["one", "two"]


def test_du_prune_and_empty_trash_on_the_command_line(sessions_root: Path):
    folder = sessions_root / "--w--"
    folder.mkdir(parents=True)
    for sid, age_days in (("keep", 1), ("stale", 200)):
        path = folder / f"2025-01-01T00-00-00-000Z_{sid}.jsonl"
        stamp = time.time() - age_days * 86400
        # Aged alike on both stores: by the file's time (files) and by its last message's (PostgreSQL).
        said = {
            "type": "message",
            "id": f"{sid}-u",
            "parentId": None,
            "timestamp": "2025-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": "hello", "timestamp": int(stamp * 1000)},
        }
        path.write_text(
            json.dumps(
                {"type": "session", "version": 3, "id": sid, "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/w"}
            )
            + "\n"
            + json.dumps(said)
            + "\n"
        )
        os.utime(path, (stamp, stamp))
    bring_in(sessions_root)  # on PostgreSQL: migrated, as a user brings a root in
    stored = lambda: stored_root(sessions_root, sessions_root.parent / "exported")  # noqa: E731
    du = run("du", "--root", str(sessions_root))
    assert du.returncode == 0 and "2 session files" in du.stdout and "--w--" in du.stdout
    bad = run("prune", "--older-than", "soon", "--root", str(sessions_root))
    assert bad.returncode == 2 and "90d" in bad.stdout
    bad_size = run("prune", "--max-total", "5 gigs", "--root", str(sessions_root))
    assert bad_size.returncode == 2 and "5GB" in bad_size.stdout and "GiB" in bad_size.stdout
    everything = run("prune", "--older-than", "0s", "--root", str(sessions_root))
    assert everything.returncode == 2 and "--yes" in everything.stdout and "every one of the 2" in everything.stdout
    assert len(list((stored() / "--w--").glob("*.jsonl"))) == 2
    pruned = run("prune", "--older-than", "90d", "--root", str(sessions_root))
    assert pruned.returncode == 0, pruned.stdout + pruned.stderr
    assert "stale.jsonl" in pruned.stdout and "1 sessions" in pruned.stdout
    assert not (stored() / "--w--" / "2025-01-01T00-00-00-000Z_stale.jsonl").exists()
    assert (stored() / ".trash" / "--w--" / "2025-01-01T00-00-00-000Z_stale.jsonl").is_file()
    erased = run("empty-trash", "--root", str(sessions_root))
    assert erased.returncode == 0 and "erased 1 files" in erased.stdout
    assert not any((stored() / ".trash").rglob("*.jsonl"))
    assert (stored() / "--w--" / "2025-01-01T00-00-00-000Z_keep.jsonl").is_file()


def _conversation_file(root: Path, session_id: str, turns: int) -> Path:
    folder = root / "--w--"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"2025-01-01T00-00-00-000Z_{session_id}.jsonl"
    lines = [{"type": "session", "version": 3, "id": session_id, "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/w"}]
    parent = None
    for turn in range(turns):
        for role, text in (
            ("user", f"please change file{turn}.py " + "word " * 400),
            ("assistant", f"changed file{turn}.py"),
        ):
            entry_id = f"{role[0]}{turn}"
            message = {"role": role, "content": [{"type": "text", "text": text}], "timestamp": turn}
            if role == "assistant":
                message.update(
                    api="anthropic-messages",
                    provider="anthropic",
                    model="m",
                    stopReason="stop",
                    usage={
                        "input": 0,
                        "output": 0,
                        "cacheRead": 0,
                        "cacheWrite": 0,
                        "totalTokens": 0,
                        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
                    },
                )
            lines.append(
                {
                    "type": "message",
                    "id": entry_id,
                    "parentId": parent,
                    "timestamp": f"2025-01-01T00:00:{turn % 60:02d}.000Z",
                    "message": message,
                }
            )
            parent = entry_id
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_call_runs_a_coroutine_method_to_its_end_and_closes_the_session(sessions_root: Path):
    # session/compact is the service's one coroutine: call answers it in its own process, on its own loop.
    path = _conversation_file(sessions_root, "k1", 12)
    bring_in(sessions_root)
    before = path.read_bytes()
    done = run(
        "call",
        "session/compact",
        json.dumps({"sessionId": "k1", "provider": "offline", "keepRecentTokens": 1000}),
        "--root",
        str(sessions_root),
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["provider"] == "offline" and result["tokensAfter"] < result["tokensBefore"]
    after = (stored_root(sessions_root, sessions_root.parent / "stored") / path.relative_to(sessions_root)).read_bytes()
    assert after.startswith(before)  # appended to, nothing rewritten
    written = [json.loads(line) for line in after[len(before) :].splitlines()]
    assert written[-1]["type"] == "compaction" and written[-1]["id"] == result["entryId"]
    assert written[-1]["firstKeptEntryId"] == result["firstKeptEntryId"]
    # The session was closed as at shutdown: another sidecar may open it for writing at once.
    again = run("call", "session/buildContext", json.dumps({"sessionId": "k1"}), "--root", str(sessions_root))
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["messages"][0]["role"] == "compactionSummary"


def test_call_refuses_bad_params_as_the_server_does(sessions_root: Path):
    failed = run(
        "call", "session/append", json.dumps({"sessionId": "x", "entries": "nope"}), "--root", str(sessions_root)
    )
    assert failed.returncode == 1
    error = json.loads(failed.stdout)["error"]
    assert error["code"] == -32602 and error["data"] == {
        "kind": "invalidParams",
        "method": "session/append",
        "field": "entries",
    }
    # Not a session method: still answered by a spawned sidecar, with the server's own answer.
    unknown = run("call", "session/nothing", "{}", "--root", str(sessions_root))
    assert unknown.returncode == 1 and json.loads(unknown.stdout)["error"]["code"] == -32601


def test_global_options_go_before_or_after_the_subcommand(sessions_root: Path):
    """The README shows `--root` as a global option; `--root DIR call ...` and `--root DIR du` were
    "unrecognized arguments"."""
    folder = sessions_root / "--w--"
    folder.mkdir(parents=True)
    (folder / "2025-01-01T00-00-00-000Z_g1.jsonl").write_text(
        json.dumps({"type": "session", "version": 3, "id": "g1", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/w"})
        + "\n"
        + json.dumps(
            {
                "type": "message",
                "id": "u1",
                "parentId": None,
                "timestamp": "2025-01-01T00:00:01.000Z",
                "message": {"role": "user", "content": "hello", "timestamp": 1735689601000},
            }
        )
        + "\n"
    )
    bring_in(sessions_root)
    for words in (
        ("--root", str(sessions_root), "call", "session/list", '{"all": true}'),
        ("call", "session/list", '{"all": true}', "--root", str(sessions_root)),
        (f"--root={sessions_root}", "--log-level", "error", "call", "session/list", '{"all": true}'),
    ):
        listed = run(*words)
        assert listed.returncode == 0, (words, listed.stderr)
        assert [s["sessionId"] for s in json.loads(listed.stdout)["sessions"]] == ["g1"], words
    du = run("--log-level", "error", "--root", str(sessions_root), "du")
    assert du.returncode == 0 and "1 session file" in du.stdout, du.stdout + du.stderr
    # A global option given before a command that has no use for it is said, not ignored.
    refused = run("--root", str(sessions_root), "migrate", "--from", str(sessions_root))
    assert refused.returncode == 2 and "--root does not apply to migrate" in refused.stderr


def test_serve_is_the_default_after_global_options(sessions_root: Path):
    """No subcommand: the sidecar serves stdio, with the global options given before it."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
    done = subprocess.run(
        [*SERVER, "--root", str(sessions_root), "--jsonl"],
        input=body + "\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert json.loads(done.stdout.splitlines()[0])["id"] == 1, done.stderr


def test_no_abbreviation_of_a_long_option_is_taken(tmp_path: Path):
    """`serve --token X` was taken as `--token-file X`: it wrote a random token into a file named X."""
    done = subprocess.run(
        [*SERVER, "serve", "--token", "X", "--root", str(tmp_path / "root")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2 and "unrecognized arguments: --token X" in done.stderr
    assert not (tmp_path / "X").exists()
    abbreviated = run("--ro", str(tmp_path / "root"), "du")
    assert abbreviated.returncode == 2, abbreviated.stdout


def test_call_runs_our_package_whatever_the_current_folder_holds(tmp_path: Path, sessions_root: Path):
    """`call` spawns a sidecar for most methods; run from a folder holding a `sidecar/` package it
    imported that folder's package instead of ours."""
    decoy = tmp_path / "checkout"
    (decoy / "sidecar").mkdir(parents=True)
    (decoy / "sidecar" / "__init__.py").write_text("raise SystemExit('the current folder was imported')\n")
    (decoy / "sidecar" / "__main__.py").write_text("raise SystemExit('the current folder was imported')\n")
    command = Path(sys.executable).with_name("session-sidecar")
    assert command.is_file(), f"the installed command is missing: {command}"
    created = subprocess.run(
        [str(command), "call", "session/create", '{"cwd": "/w", "sessionId": "d1"}', "--root", str(sessions_root)],
        cwd=decoy,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert created.returncode == 0 and "current folder" not in created.stderr, created.stderr
    assert json.loads(created.stdout)["sessionId"] == "d1"


SERVE_ARGVS = [
    [],
    ["serve"],
    ["serve", "--jsonl", "--workers", "3"],
    ["--root", "/r", "--log-level", "debug"],
    ["--root=/r", "serve", "--config", "/c.toml", "--compat", "omp"],
    ["--database-url", "postgresql://h/db", "serve", "--socket", "/s", "--token-file", "/t"],
    ["serve", "--listen", "127.0.0.1:7000", "--format", "spec"],
]


def test_serve_is_parsed_by_its_own_parser_as_the_whole_parser_parses_it():
    """serve's parser (cli._parse: the other commands' parsers are not made to serve) gives the
    namespace the whole parser gives, for every option serve takes, before or after the subcommand."""
    from sidecar import cli

    for argv in SERVE_ARGVS:
        whole = cli._parsed(*cli._parser(), cli._with_command(argv))
        assert cli._parse(argv) == whole, argv
        assert whole.command == "serve"


def test_what_serves_own_parser_refuses_the_whole_parser_answers(tmp_path: Path):
    """An argument serve's parser refuses is parsed again by the whole parser: its usage names every
    subcommand, and an option of another command is refused as it always was."""
    unknown = run("--root", str(tmp_path), "nosuch", stdin="")
    assert unknown.returncode == 2 and "unrecognized arguments: nosuch" in unknown.stderr
    assert "{serve,call,demo," in unknown.stderr  # the whole parser's usage, not serve's alone
    misplaced = run("serve", "--workers", "many", stdin="")
    assert misplaced.returncode == 2 and "argument --workers: invalid int value: 'many'" in misplaced.stderr
    assert misplaced.stderr.startswith("usage: session-sidecar serve [-h]")
    help_text = run("serve", "--help")
    assert help_text.returncode == 0 and "--token-file" in help_text.stdout
