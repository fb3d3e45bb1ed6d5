"""Which core a sidecar runs (issue 42): ``--version`` names it, ``SIDECAR_CORE`` picks it, and a core asked
for by name that cannot run fails the start with a line saying why (never a traceback at the first open)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from both_cores import COMPILED_CORE_INSTALLED as COMPILED
from both_cores import needs_compiled_core

from .harness import SERVER

# The sidecar's own entry point, with the compiled module made unimportable for this one process
# (a None in sys.modules makes its import raise ImportError, as in an install without the core's wheel).
WITHOUT_COMPILED = [
    sys.executable,
    "-c",
    "import sys; sys.modules['sidecar_core'] = None; from sidecar.cli import main; sys.exit(main(sys.argv[1:]))",
]


def _run(command: list[str], core: str | None, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != "SIDECAR_CORE"}
    if core is not None:
        env["SIDECAR_CORE"] = core
    return subprocess.run([*command, *args], input=stdin, capture_output=True, text=True, timeout=60, env=env)


def test_version_names_the_python_core_when_asked_or_when_the_compiled_one_is_absent():
    for command, core in [(SERVER, "python"), (WITHOUT_COMPILED, None), (WITHOUT_COMPILED, "auto")]:
        done = _run(command, core, "--version")
        assert done.returncode == 0, done.stderr
        assert done.stdout.endswith(" (core: python)\n") and done.stdout.startswith("session-sidecar ")


@needs_compiled_core
def test_version_names_the_compiled_core_by_default_and_when_asked():
    for core in (None, "auto", "compiled"):
        done = _run(SERVER, core, "--version")
        assert done.returncode == 0 and done.stdout.endswith(" (core: compiled)\n"), (core, done.stdout, done.stderr)


def test_a_core_that_cannot_run_fails_the_start_with_a_line_saying_why():
    missing = _run(WITHOUT_COMPILED, "compiled", "serve")
    assert missing.returncode == 2
    assert "SIDECAR_CORE=compiled but the compiled core" in missing.stderr and "Traceback" not in missing.stderr
    misspelt = _run(SERVER, "rust", "serve")
    assert misspelt.returncode == 2
    assert "SIDECAR_CORE must be one of auto, python, compiled, not 'rust'" in misspelt.stderr


@pytest.mark.parametrize("core", ["python", *(["compiled"] if COMPILED else [])])
def test_each_core_answers_the_same_context(core: str, tmp_path: Path):
    """A session file (over the size that is mapped) read by a process running each core, through ``call``."""
    folder = tmp_path / "sessions" / "--w--"
    folder.mkdir(parents=True)
    header = {"type": "session", "version": 3, "id": "k1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}
    lines = [json.dumps(header)]
    parent = None
    for n in range(400):
        text = f'turn {n}: "quoted" é 😀 ' + "x" * 700
        role = "user" if n % 2 == 0 else "assistant"
        body: dict = {"role": role, "content": [{"type": "text", "text": text}]}
        if role == "assistant":
            body.update(provider="p", model="m", stopReason="stop", timestamp=n)
        entry = {"type": "message", "id": f"e{n}", "parentId": parent, "timestamp": "2026-01-01T00:00:01.000Z"}
        lines.append(json.dumps({**entry, "message": body}, ensure_ascii=n % 3 == 0))
        parent = f"e{n}"
    (folder / "2026-01-01T00-00-00-000Z_k1.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    built = _run(
        SERVER, core, "call", "session/buildContext", '{"sessionId": "k1"}', "--root", str(tmp_path / "sessions")
    )
    assert built.returncode == 0, built.stderr
    messages = json.loads(built.stdout)["messages"]
    assert len(messages) == 400 and messages[-1]["content"][0]["text"].startswith('turn 399: "quoted" é 😀 ')
