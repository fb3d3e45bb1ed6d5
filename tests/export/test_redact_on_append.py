"""store.redactOnAppend: secrets are replaced before anything reaches the file; the tree stays whole."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from rpc.crash_harness import Child
from snapshots.sidecar_process import Sidecar

from . import rich
from .secrets_corpus import entries, leaks, plant


class RedactingSidecar(Sidecar):
    """A real sidecar initialized with settings (``Sidecar`` initializes with none)."""

    def __init__(self, root: Path, **settings: object) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "sidecar", "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.child = Child(self.process.pid, os.dup(self.process.stdin.fileno()), os.dup(self.process.stdout.fileno()))
        self.process.stdin.close()
        self.process.stdout.close()
        self.child.initialize(root, **settings)


def _session_file(root: Path, sid: str) -> Path:
    return next(root.rglob(f"*_{sid}.jsonl"))


def test_nothing_secret_is_written_and_every_parent_is_there(sessions_root: Path, tmp_path: Path):
    server = RedactingSidecar(sessions_root, store={"redactOnAppend": True})
    try:
        sid = server.call("session/create", cwd=str(tmp_path))["sessionId"]
        ids = rich.build(server.append, lambda method, **params: server.call(method, **params), sid)
        planted = plant()
        batch = entries(planted)
        for start in range(0, len(batch), 50):
            server.call("session/append", sessionId=sid, entries=batch[start : start + 50])
        server.call("session/flush", sessionId=sid)
        on_disk = _session_file(sessions_root, sid).read_text()
        assert [s.kind for s in leaks(planted, on_disk)] == []
        assert rich.AWS_KEY not in on_disk and rich.GH_TOKEN not in on_disk and "Sup3rS3cretPw" not in on_disk
        assert "[REDACTED:aws-access-key:1]" in on_disk
        lines = [json.loads(line) for line in on_disk.splitlines()]
        by_id = {line["id"]: line for line in lines[1:]}
        assert all(line["parentId"] is None or line["parentId"] in by_id for line in lines[1:])
        # Labels, names, branch summaries, compactions and tool pairing survive as they were.
        assert by_id[ids["compaction"]]["firstKeptEntryId"] == ids["found"]
        assert by_id[ids["summary"]]["fromId"] == ids["main_leaf"]
        assert by_id[ids["env"]]["message"]["toolCallId"] == "call_env"
        tree = server.call("session/getTree", sessionId=sid)
        labels = {node["id"]: node.get("label") for node in tree["nodes"]}
        assert labels[ids["ask"]] == "bug report"
        # The image is kept byte for byte.
        image = by_id[ids["shot"]]["message"]["content"][1]
        assert image["data"] == rich.PNG
    finally:
        server.stop()


def test_off_by_default(sidecar, rich_session, sessions_root: Path):
    sid, _ = rich_session
    sidecar.call("session/flush", sessionId=sid)
    assert rich.AWS_KEY in _session_file(sessions_root, sid).read_text()
