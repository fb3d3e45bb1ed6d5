"""Images in files the sidecar writes under pi's compatibility open in pi as the bytes we sent (issue 20).

The judge is pi's published package (the version test_pi_parity.py pins):
its SessionManager.open + buildSessionContext + convertToLlm
(pi_context.mjs), and its own CLI, ``pi --export FILE out.html``, whose page
embeds the session it read (base64 JSON) and shows the images from it.
On PostgreSQL (``SIDECAR_TEST_STORE=postgres``) the sessions are written to the database and pi is
given the files ``export-root`` writes for them.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from store_mode import ON_POSTGRES, pi_file
from test_omp_parity import _assistant, images_in
from test_pi_parity import PARITY_DIR, ensure_pi_installed, run_pi

from sidecar import wire
from sidecar.service import SessionService
from sidecar.store.payload import MAX_CHARS

# The sessions are written once, by the module's fixture: on PostgreSQL into one schema for the module.
ONE_STORE_PER_MODULE = True


def write_with_images(root: Path, sent: list[str]) -> Path:
    svc = SessionService(root)
    assert svc.store.compat == "pi"
    sid = svc.create(wire.CreateParams(cwd="/work/shots")).sessionId
    small, huge = base64.b64encode(os.urandom(4000)).decode(), base64.b64encode(os.urandom(MAX_CHARS)).decode()
    shot, note = base64.b64encode(os.urandom(2500)).decode(), base64.b64encode(os.urandom(1800)).decode()
    sent += [small, huge, shot, note]
    image = lambda data: {"type": "image", "data": data, "mimeType": "image/png"}  # noqa: E731
    svc.append(
        wire.AppendParams(
            sessionId=sid,
            entries=[
                {
                    "type": "message",
                    "message": {
                        "role": "user",
                        "content": [{"type": "text", "text": "see"}, image(small)],
                        "timestamp": 1,
                    },
                },
                {"type": "message", "message": _assistant("reading", ["c1"])},
                {
                    "type": "message",
                    "message": {
                        "role": "toolResult",
                        "toolCallId": "c1",
                        "toolName": "screenshot",
                        "content": [{"type": "text", "text": "shot"}, image(shot)],
                        "isError": False,
                        "timestamp": 3,
                    },
                },
                {"type": "custom_message", "customType": "ext", "display": True, "content": [image(note)]},
                {"type": "message", "message": {"role": "user", "content": [image(huge)], "timestamp": 4}},
                {"type": "message", "message": _assistant("seen", [])},
            ],
        )
    )
    path = Path(svc.store.location(svc.session(sid)))  # a file, or a PostgreSQL place
    svc.close_all()
    return path


@pytest.fixture(scope="module")
def written():
    node = ensure_pi_installed()
    home = Path(tempfile.mkdtemp(prefix="pi-images-"))
    sent: list[str] = []
    files = [
        write_with_images(home / ".pi" / "agent" / "sessions", sent),  # pi's own folder
        write_with_images(home / "sidecar-root", sent),
    ]  # any other root: pi's compatibility by default
    assert all(str(path).startswith("pg:") == ON_POSTGRES for path in files)  # written to the store of the pass
    yield node, home, files, sent
    shutil.rmtree(home, ignore_errors=True)


def test_images_stay_inline_whole_and_no_blob_store_is_made(written):
    _, home, files, sent = written
    for path in files:
        text = path.read_text()
        assert "blob:sha256:" not in text
        assert sum(data in text for data in sent) == 4
    assert not list(home.rglob("blobs")) and not list(home.rglob(".blobs"))


def test_pi_reads_the_original_base64_byte_for_byte(written):
    node, home, files, sent = written
    given = [pi_file(path, home / "exported") for path in files]  # on PostgreSQL: export-root's files
    _, answers = run_pi(node, [{"path": str(p), "leaves": []} for p in given])
    for index, path in enumerate(given):
        answer = answers[str(path)]
        assert answer["ok"], answer.get("error")
        context = answer["contexts"]["@leaf"]
        small, huge, shot, note = sent[4 * index : 4 * index + 4]
        assert images_in(context["messages"]) == [small, shot, note, huge]  # in the order of the path
        assert sorted(images_in(context["llm"])) == sorted(sent[4 * index : 4 * index + 4])


def test_pi_export_shows_the_original_base64(written):
    _, home, files, sent = written
    pi = PARITY_DIR / "node_modules" / ".bin" / "pi"
    for index, path in enumerate(files):
        out = home / f"export-{index}.html"
        done = subprocess.run(
            [str(pi), "--export", str(pi_file(path, home / "exported")), str(out)],
            cwd=PARITY_DIR,
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "HOME": str(home)},
        )
        assert done.returncode == 0, done.stderr
        page = out.read_text()
        embedded = []
        for blob in re.findall(r"[A-Za-z0-9+/=]{200,}", page):
            try:
                embedded.append(json.loads(base64.b64decode(blob)))
            except ValueError:
                continue
        sessions = [e for e in embedded if isinstance(e, dict) and "entries" in e]
        assert len(sessions) == 1, "the export page embeds the session it read"
        assert sorted(images_in(sessions[0]["entries"])) == sorted(sent[4 * index : 4 * index + 4])
