"""pi itself reads what session/convert writes from a spec session: the same entries, leaf, name and contexts.

The spec sessions are written by a real sidecar on a spec root (messages, tool calls, a compaction, a
name) and by converting the real pi fixtures to spec; each is converted back to pi's format and handed to
pi's published package (pi_context.mjs), as the other parity tests do. Never skips.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from conftest import PI_FIXTURES
from session_builders import service
from test_pi_parity import assert_same, ensure_pi_installed, our_view, run_pi

from sidecar import wire
from sidecar.config import Settings, StoreSettings
from sidecar.service import SessionService
from sidecar.store.base import FsyncPolicy
from sidecar.store.files.session import FileSession as Session


def _text(role: str, text: str) -> dict:
    return {"type": "message", "message": {"role": role, "content": [{"type": "text", "text": text}]}}


def _native_spec_session(root: Path) -> str:
    svc = SessionService(root, Settings(store=StoreSettings(format="spec", fsync="never")))
    sid = svc.create(wire.CreateParams(cwd="/w", name="spec native")).sessionId
    svc.append(
        wire.AppendParams(
            sessionId=sid,
            entries=[
                _text("user", "What pods are running? " + "please " * 30),
                {
                    "type": "message",
                    "message": {
                        "role": "assistant",
                        "content": [
                            {"type": "text", "text": "Let me check."},
                            {
                                "type": "toolCall",
                                "id": "tc_1",
                                "name": "bash",
                                "arguments": {"command": "kubectl get pods"},
                            },
                        ],
                    },
                },
                {
                    "type": "message",
                    "message": {
                        "role": "toolResult",
                        "toolCallId": "tc_1",
                        "toolName": "bash",
                        "content": [{"type": "text", "text": "nginx 1/1 Running"}],
                        "isError": False,
                    },
                },
                _text("assistant", "One pod: nginx. " + "detail " * 30),
                _text("user", "Restart it"),
                _text("assistant", "Restarted."),
            ],
        )
    )
    session = svc.session(sid)
    path = session.path_to(session.leaf_id)
    svc.append(
        wire.AppendParams(
            sessionId=sid,
            entries=[
                {
                    "type": "compaction",
                    "summary": "## Goal\n- pods",
                    "firstKeptEntryId": path[4].id,
                    "tokensBefore": 120,
                    "details": {"readFiles": [], "modifiedFiles": []},
                }
            ],
        )
    )
    svc.append(wire.AppendParams(sessionId=sid, entries=[_text("user", "Thanks"), _text("assistant", "Welcome.")]))
    svc.close_all()
    return sid


def test_pi_reads_spec_sessions_converted_to_its_format():
    node = ensure_pi_installed()
    work = Path(tempfile.mkdtemp(prefix="pi-spec-parity-"))
    try:
        spec_root, back_root, pi_root = work / "spec", work / "back", work / "pi"
        for root in (spec_root, back_root, pi_root):
            root.mkdir()
        folders = [spec_root / _native_spec_session(spec_root)]
        converter = service(pi_root, allowExternalPaths=True)
        for fixture in ("before-compaction.jsonl", "large-session.jsonl"):
            copy = pi_root / "--fixtures--" / fixture
            copy.parent.mkdir(exist_ok=True)
            shutil.copyfile(PI_FIXTURES / fixture, copy)
            Session.load(copy, FsyncPolicy.NEVER)[0].close()  # migrated to v3 as pi would read it
            folders.append(
                Path(converter.convert(wire.ConvertParams(to="spec", targetRoot=str(spec_root), path=str(copy))).path)
            )
        cases = {}
        for folder in folders:
            back = converter.convert(wire.ConvertParams(to="pi", targetRoot=str(back_root), path=str(folder), cwd="/w"))
            ids = [json.loads(line)["id"] for line in Path(back.path).read_text().split("\n")[1:-1]]
            cases[back.path] = (our_view(back_root, Path(back.path), ids[:: max(1, len(ids) // 5)]), ids)
        converter.close_all()
        _, answers = run_pi(
            node, [{"path": path, "leaves": list(view["contexts"])[1:]} for path, (view, _) in cases.items()]
        )
        for path, (view, ids) in cases.items():
            assert_same(f"spec->pi:{Path(path).name}", view, answers[path], compare_lines=True)
            assert len(ids) > 5
        native = next(view for view, _ in cases.values() if view["name"] == "spec native")
        assert native["contexts"]["@leaf"]["messages"][0]["role"] == "compactionSummary"
    finally:
        shutil.rmtree(work)
