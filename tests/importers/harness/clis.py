"""Run the real Codex, Claude Code and opencode CLIs offline against the scripted model server.

Each CLI is pinned in package-lock.json and installed here by ``npm install --ignore-scripts`` from the lock
(its native binary ships inside an npm package); node_modules is reused when present.
Every run gets a fresh temporary HOME and project folder, an environment holding only
what the run needs (no proxy, no real keys), telemetry and updates off, and a loopback
model server. The scenario is the same for every CLI: a turn with thinking, text and
a shell tool call; a resumed turn that starts a subagent; a resumed turn on another
model; a compaction; a turn after it. ``run_<cli>(work)`` returns the session files.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

from model_server import serve

HARNESS = Path(__file__).resolve().parent
MODULES = HARNESS / "node_modules"
CLAUDE = MODULES / "@anthropic-ai" / "claude-code-linux-x64" / "claude"
# Claude Code 2.0 shipped as JavaScript run by Node (installed under an alias beside 2.1).
CLAUDE_20 = MODULES / "claude-code-2.0" / "cli.js"
CODEX_PACKAGE = MODULES / "@openai" / "codex-linux-x64"
OPENCODE = MODULES / "opencode-linux-x64" / "bin" / "opencode"
TIMEOUT = 180


def ensure_installed() -> None:
    """The three CLIs from the lock file; reused when node_modules holds them."""
    if CLAUDE.is_file() and CLAUDE_20.is_file() and OPENCODE.is_file() and codex_binary() is not None:
        return
    npm = shutil.which("npm")
    assert npm, "npm is not on PATH: cannot install the CLIs the import tests run"
    # `npm install` with the lock file, not `npm ci`: opencode-ai lists its other platforms' packages
    # as optional dependencies without versions, which npm 11's `ci` takes for a lock out of sync
    # ("Missing: opencode-darwin-arm64@ from lock file") while `install` installs exactly the lock.
    done = subprocess.run(
        [npm, "install", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=HARNESS,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert done.returncode == 0, f"npm install failed in {HARNESS}:\n{done.stdout}\n{done.stderr}"
    assert CLAUDE.is_file() and CLAUDE_20.is_file() and OPENCODE.is_file() and codex_binary() is not None, (
        "a CLI binary is missing"
    )


def codex_binary() -> Path | None:
    found = sorted(CODEX_PACKAGE.glob("vendor/*/codex/codex")) + sorted(CODEX_PACKAGE.glob("vendor/*/bin/codex"))
    found += sorted(CODEX_PACKAGE.glob("**/codex"))
    return next((p for p in found if p.is_file() and os.access(p, os.X_OK)), None)


def _base_env(home: Path) -> dict[str, str]:
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local/state"),
        "TMPDIR": str(home / "tmp"),
    }


def _run(argv: list[str], env: dict[str, str], cwd: Path, log: Path) -> str:
    done = subprocess.run(
        argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL
    )
    with log.open("a") as out:
        out.write(f"$ {' '.join(argv)}\n-- rc {done.returncode}\n{done.stdout}\n-- stderr\n{done.stderr}\n")
    assert done.returncode == 0, f"{argv[0]} failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def _workdirs(work: Path, name: str) -> tuple[Path, Path]:
    home, project = work / name / "home", work / name / "project"
    for folder in (home / "tmp", project):
        folder.mkdir(parents=True, exist_ok=True)
    return home, project


# ---- Claude Code ----------------------------------------------------------------------------


def run_claude(work: Path) -> dict:
    """Claude Code 2.1 in print mode, resumed by session id; /compact compacts."""
    return _run_claude(
        work,
        "claude",
        [str(CLAUDE)],
        ("[[SWITCH]] Now on another model.", "/compact", "[[AFTER]] After the compaction."),
    )


def run_claude_20(work: Path) -> dict:
    """Claude Code 2.0.77 (Node runs its cli.js): a tool turn, then a resumed turn starting a subagent,
    which 2.0 wrote beside the transcript (agent-<id>.jsonl), with the cache-warming agents it started."""
    node = shutil.which("node")
    assert node, "node is not on PATH: cannot run Claude Code 2.0"
    return _run_claude(work, "claude-2.0", [node, str(CLAUDE_20)], ())


def _run_claude(work: Path, name: str, command: list[str], later: tuple[str, ...]) -> dict:
    ensure_installed()
    home, project = _workdirs(work, name)
    server = serve(work / name / "server")
    try:
        env = {
            **_base_env(home),
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{server.server_address[1]}",
            "ANTHROPIC_API_KEY": "sk-ant-harness-dummy",
            "IS_SANDBOX": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        }
        log = work / name / "cli.log"

        def claude(prompt: str, model: str, resume: str | None) -> dict:
            argv = [
                *command,
                "-p",
                prompt,
                "--output-format",
                "json",
                "--dangerously-skip-permissions",
                "--model",
                model,
            ] + (["--resume", resume] if resume else [])
            return json.loads(_run(argv, env, project, log))

        first = claude("[[TOOL]] Create a note file.", "claude-sonnet-4-5", None)
        sid = first["session_id"]
        results = [first, claude("[[AGENT]] Delegate a subtask.", "claude-sonnet-4-5", sid)]
        for prompt in later:
            results.append(claude(prompt, "claude-opus-4-1", sid))
    finally:
        server.shutdown()
    transcripts = sorted((home / ".claude" / "projects").glob(f"*/{sid}.jsonl"))
    assert len(transcripts) == 1, transcripts
    return {
        "sessionId": sid,
        "path": transcripts[0],
        "results": results,
        "project": project,
        "home": home,
        "subagents": sorted(transcripts[0].with_suffix("").glob("subagents/agent-*.jsonl")),
        "beside": sorted(transcripts[0].parent.glob("agent-*.jsonl")),
    }


# ---- Codex ------------------------------------------------------------------------------------


def run_codex(work: Path) -> dict:
    """Codex 0.169 ``exec`` against a Responses-API provider, then ``exec resume``."""
    ensure_installed()
    home, project = _workdirs(work, "codex")
    server = serve(work / "codex" / "server")
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    port = server.server_address[1]
    (codex_home / "config.toml").write_text(
        'model = "gpt-5.1-codex"\nmodel_provider = "scripted"\napproval_policy = "never"\n'
        'sandbox_mode = "danger-full-access"\nmodel_auto_compact_token_limit = 50000\n'
        "include_apply_patch_tool = true\n"
        "check_for_update_on_startup = false\n\n"
        "[features]\napply_patch_freeform = true\nmulti_agent = true\n\n"
        '[analytics]\nenabled = false\n\n[otel]\nexporter = "none"\n\n'
        '[model_providers.scripted]\nname = "scripted"\n'
        f'base_url = "http://127.0.0.1:{port}/v1"\nwire_api = "responses"\nenv_key = "SCRIPTED_API_KEY"\n'
        "request_max_retries = 0\nstream_max_retries = 0\n"
    )
    env = {**_base_env(home), "CODEX_HOME": str(codex_home), "SCRIPTED_API_KEY": "dummy"}
    log = work / "codex" / "cli.log"
    binary = str(codex_binary())
    common = ["--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--json"]
    try:
        _run([binary, "exec", *common, "-m", "gpt-5.1-codex", "[[TOOL]] Create a note file."], env, project, log)
        rollouts = sorted((codex_home / "sessions").rglob("rollout-*.jsonl"))
        assert len(rollouts) == 1, rollouts
        sid = json.loads(rollouts[0].read_text().split("\n", 1)[0])["payload"]["id"]
        for prompt, model in (
            ("[[PATCH]] Add a file with a patch.", "gpt-5.1-codex"),
            ("[[AGENT]] Delegate a subtask.", "gpt-5.1-codex"),
            ("[[SWITCH]] Now on another model.", "gpt-5.2"),
            ("[[BIG]] A turn that fills the context.", "gpt-5.2"),
            ("[[AFTER]] After the compaction.", "gpt-5.2"),
        ):
            _run([binary, "exec", "resume", *common, "-m", model, sid, prompt], env, project, log)
    finally:
        server.shutdown()
    rollouts = sorted((codex_home / "sessions").rglob("rollout-*.jsonl"))
    main = [p for p in rollouts if sid in p.name]
    return {"sessionId": sid, "path": main[0], "all": rollouts, "project": project, "home": home}


# ---- opencode ---------------------------------------------------------------------------------


def run_opencode(work: Path) -> dict:
    """opencode 1.18 ``run`` with an openai-compatible provider, then ``run --session``."""
    ensure_installed()
    home, project = _workdirs(work, "opencode")
    server = serve(work / "opencode" / "server")
    port = server.server_address[1]
    config = home / ".config" / "opencode"
    config.mkdir(parents=True, exist_ok=True)
    models = {
        "small": {"name": "small", "limit": {"context": 4000, "output": 1000}, "reasoning": True},
        "large": {"name": "large", "limit": {"context": 200000, "output": 8000}, "reasoning": True},
    }
    (config / "opencode.json").write_text(
        json.dumps(
            {
                "$schema": "https://opencode.ai/config.json",
                "autoupdate": False,
                "share": "disabled",
                "provider": {
                    "scripted": {
                        "npm": "@ai-sdk/openai-compatible",
                        "name": "scripted",
                        "options": {"baseURL": f"http://127.0.0.1:{port}/v1", "apiKey": "dummy"},
                        "models": models,
                    }
                },
            }
        )
    )
    env = {
        **_base_env(home),
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_SHARE": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
    }
    log = work / "opencode" / "cli.log"
    db = home / ".local" / "share" / "opencode" / "opencode.db"
    try:
        _run([str(OPENCODE), "run", "-m", "scripted/large", "[[TOOL]] Create a note file."], env, project, log)
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
            sid = con.execute("select id from session where parent_id is null order by time_created").fetchone()[0]
        big = "[[BIG]] A turn that fills the context."
        for prompt, model in (
            ("[[AGENT]] Delegate a subtask.", "scripted/large"),
            ("[[SWITCH]] Now on another model.", "scripted/small"),
            (big, "scripted/small"),
            ("[[AFTER]] After the compaction.", "scripted/small"),
        ):
            _run([str(OPENCODE), "run", "-m", model, "--session", sid, prompt], env, project, log)
    finally:
        server.shutdown()
    return {"sessionId": sid, "path": db, "project": project, "home": home}
