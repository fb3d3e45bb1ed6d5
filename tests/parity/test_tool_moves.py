"""A session moves between oh-my-pi and pi with one command each way, judged by the tools' own code.

* oh-my-pi to pi: oh-my-pi 18.2.3 (tests/parity/omp, under Bun) writes seeded
  sessions (images in user messages, tool results and custom messages, names,
  labels, branches, summaries, compactions, reopenings); ``session-sidecar
  to-pi`` runs on its sessions folder; pi 1.5.2 and 1.6.0 (tests/parity/pi15,
  pi16, under Node 22) open the files and build, at the leaf and at every entry,
  the context oh-my-pi built (the images as the bytes oh-my-pi was given), and
  name them as oh-my-pi did.
* pi to oh-my-pi: pi 1.6.0 writes seeded sessions (the same kinds, names as
  ``session_info``); ``session-sidecar to-omp`` runs on the files placed in
  oh-my-pi's sessions folder; oh-my-pi opens them with pi's contexts and name,
  its images now in its blob folder.

Both commands keep a backup, change nothing on a second run, and leave a
session another sidecar holds alone. Without the tools' packages these tests
fail: they never skip.
"""

from __future__ import annotations

import base64
import json
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from test_omp_parity import ensure_omp_installed, images_in, omp_ops, run_omp
from test_pi15_parity import PI_VERSIONS, run_pi

from sidecar.format.titleslot import SLOT_BYTES, clean_title, slot_line
from sidecar.store.files.lock import lock_path, unlock

SEEDS = range(6)


def sidecar(*args: str) -> subprocess.CompletedProcess[str]:
    """The command as a user runs it: a real process."""
    return subprocess.run([sys.executable, "-m", "sidecar", *args], capture_output=True, text=True, timeout=300)


def comparable(context: dict) -> dict:
    """What both tools must agree on in a context: the messages the agent holds (roles, content with
    images, tool calls and results, summaries), and the images convertToLlm sends. Left out, as each
    tool's own rules, not the file's: oh-my-pi's ``attribution: "agent"`` on a custom message that
    has none, and how convertToLlm words and places summaries and custom messages."""
    messages = [
        {k: v for k, v in m.items() if not (m["role"] == "custom" and k == "attribution")} for m in context["messages"]
    ]
    return {"messages": messages, "llm images": images_in(context["llm"])}


def settled(context: dict) -> bool:
    """Every tool call in the context has its result. At an entry between a call and its result
    oh-my-pi leaves the call out of its context and pi keeps it: the tools' own rules, not the move's."""
    calls = {
        block["id"]
        for m in context["messages"]
        if m["role"] == "assistant"
        for block in m.get("content") or []
        if block.get("type") == "toolCall"
    }
    return calls <= {m.get("toolCallId") for m in context["messages"] if m["role"] == "toolResult"}


def assert_same_contexts(where: str, mine: dict, theirs: dict, leaves: list[str]) -> int:
    """The contexts two tools build of one file at the leaf and at every entry, where settled; how many
    were compared (a branch may leave a call without its result anywhere on the path)."""
    compared = 0
    for leaf in ["@leaf", *leaves]:
        if not (settled(mine["contexts"][leaf]) and settled(theirs["contexts"][leaf])):
            continue
        assert comparable(mine["contexts"][leaf]) == comparable(theirs["contexts"][leaf]), f"{where} at {leaf}"
        compared += 1
    return compared


@pytest.fixture(scope="module")
def home():
    ensure_omp_installed()
    folder = Path(tempfile.mkdtemp(prefix="tool-moves-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


# -- oh-my-pi to pi --------------------------------------------------------------------


@pytest.fixture(scope="module")
def omp_to_pi(home):
    root = home / ".omp" / "agent" / "sessions"
    sent: set[str] = set()
    specs = [{"cwd": str(home), "dir": str(root / f"--omp-{seed}--"), "ops": omp_ops(seed, sent)} for seed in SEEDS]
    written = run_omp(home, {"write": specs})["written"]
    assert all("error" not in item for item in written), written
    theirs = {
        r["path"]: r
        for r in run_omp(home, {"describe": [{"path": w["path"], "leaves": w["ids"]} for w in written]})["results"]
    }
    before = {w["path"]: Path(w["path"]).read_bytes() for w in written}
    first = sidecar("to-pi", "--root", str(root))
    after = {w["path"]: Path(w["path"]).read_bytes() for w in written}
    second = sidecar("to-pi", "--root", str(root))
    read = {
        version: {
            r["path"]: r
            for r in run_pi({"read": [{"path": w["path"], "leaves": w["ids"]} for w in written]}, version)["results"]
        }
        for version in PI_VERSIONS
    }
    return {
        "root": root,
        "sent": sent,
        "written": written,
        "omp": theirs,
        "before": before,
        "after": after,
        "first": first,
        "second": second,
        "pi": read,
    }


def test_omp_files_are_unreadable_by_pi_before_the_move(omp_to_pi, home):
    """What the command is for: pi reads no entries past oh-my-pi's title line."""
    scratch = home / "unmoved"
    scratch.mkdir()
    paths = []
    for index, (_path, data) in enumerate(omp_to_pi["before"].items()):
        copy = scratch / f"{index}.jsonl"
        copy.write_bytes(data)
        paths.append(str(copy))
    results = run_pi({"read": [{"path": p, "leaves": []} for p in paths]}, PI_VERSIONS[-1])["results"]
    assert all(not r["ok"] or r["contexts"]["@leaf"]["messages"] == [] for r in results)


def test_to_pi_rewrites_each_file_once_with_a_backup(omp_to_pi):
    first, second = omp_to_pi["first"], omp_to_pi["second"]
    assert first.returncode == 0, first.stderr
    assert f"{len(SEEDS)} sessions rewritten for pi, 0 already were" in first.stdout
    assert second.returncode == 0, second.stderr
    assert f"0 sessions rewritten for pi, {len(SEEDS)} already were; 0 images" in second.stdout
    for path, old in omp_to_pi["before"].items():
        assert old[:15] == b'{"type":"title"'
        assert Path(path + ".to-pi.bak").read_bytes() == old
        new = omp_to_pi["after"][path]
        assert new.startswith(b'{"type":"session"') and b"blob:sha256:" not in new
        assert Path(path).read_bytes() == new  # the second run changed nothing


@pytest.mark.parametrize("version", PI_VERSIONS)
def test_pi_builds_oh_my_pis_contexts_and_name_after_to_pi(omp_to_pi, version):
    named = images = compared = 0
    for item in omp_to_pi["written"]:
        path = item["path"]
        omp, pi = omp_to_pi["omp"][path], omp_to_pi["pi"][version][path]
        assert pi["ok"], pi.get("error")
        assert pi["name"] == omp["name"] == item["name"], path
        named += pi["name"] is not None
        assert pi["labels"] == omp["labels"]
        compared += assert_same_contexts(path, pi, omp, item["ids"])
        found = images_in(pi["contexts"]["@leaf"]["llm"])
        assert all(data in omp_to_pi["sent"] for data in found)
        images += len(found)
    assert named >= 2 and images >= 5 and compared >= 60


# -- pi to oh-my-pi --------------------------------------------------------------------


def _png(rng: random.Random, size: int = 1500) -> str:
    return base64.b64encode(rng.randbytes(size)).decode()


def pi_ops(seed: int, sent: set[str]) -> list[list[Any]]:
    """Operations for pi_session.mjs that both tools read alike (no 1.5-only entries or roles)."""
    rng = random.Random(3000 + seed)
    usage = {
        "input": 1,
        "output": 1,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 2,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }
    ops: list[list[Any]] = []
    for step in range(rng.randint(10, 22)):
        kind = rng.choice(["turn", "turn", "image", "custom", "label", "name", "branch", "summary", "compaction"])
        if kind in ("turn", "image"):
            content: list[dict] = [{"type": "text", "text": f"ask {step} é"}]
            if kind == "image":
                content.append({"type": "image", "data": _png(rng), "mimeType": "image/png"})
                sent.add(content[-1]["data"])
            ops.append(["message", {"role": "user", "content": content, "timestamp": step}])
            calls = [f"c{seed}_{step}_{n}" for n in range(rng.randint(0, 2))]
            ops.append(
                [
                    "message",
                    {
                        "role": "assistant",
                        "content": [{"type": "text", "text": f"answer {step}"}]
                        + [{"type": "toolCall", "id": c, "name": "read", "arguments": {"path": c}} for c in calls],
                        "api": "anthropic-messages",
                        "provider": "anthropic",
                        "model": "claude-x",
                        "usage": usage,
                        "stopReason": "toolUse" if calls else "stop",
                        "timestamp": step,
                    },
                ]
            )
            for call in calls:
                result: list[dict] = [{"type": "text", "text": f"out {call}"}]
                if rng.random() < 0.5:
                    result.append({"type": "image", "data": _png(rng, 1100), "mimeType": "image/png"})
                    sent.add(result[-1]["data"])
                ops.append(
                    [
                        "message",
                        {
                            "role": "toolResult",
                            "toolCallId": call,
                            "toolName": "read",
                            "content": result,
                            "isError": False,
                            "timestamp": step,
                        },
                    ]
                )
        elif kind == "custom":
            data = _png(rng)
            sent.add(data)
            ops.append(
                [
                    "custom_message",
                    "ext",
                    [
                        {"type": "text", "text": f"note {step}"},
                        {"type": "image", "data": data, "mimeType": "image/png"},
                    ],
                    True,
                    None,
                ]
            )
        elif kind == "label":
            ops.append(["label", rng.randrange(1000), rng.choice(["a", "b"])])
        elif kind == "name":
            ops.append(["session_info", rng.choice(["First title", "Titre é", "two\nlines"])])
        elif kind == "branch":
            ops.append(["branch", rng.randrange(1000)])
        elif kind == "summary":
            ops.append(["branch_summary", rng.randrange(1000), f"elsewhere {step}"])
        else:
            ops.append(["compaction", f"sum {step}", rng.randrange(1000), 100])
    return ops


@pytest.fixture(scope="module")
def pi_to_omp(home):
    sent: set[str] = set()
    work = home / "pi-written"
    written = run_pi(
        {"write": [{"dir": str(work / f"s{seed}"), "cwd": "/work/moved", "ops": pi_ops(seed, sent)} for seed in SEEDS]},
        PI_VERSIONS[-1],
    )["written"]
    assert all(made["persisted"] and not made["errors"] for made in written), written
    root = home / ".omp" / "agent" / "sessions"
    folder = root / "--pi-moved--"
    folder.mkdir(parents=True)
    paths = []
    for made in written:
        target = folder / Path(made["path"]).name
        shutil.copyfile(made["path"], target)
        paths.append(str(target))
    ids = {p: [json.loads(line)["id"] for line in Path(p).read_text().splitlines()[1:]] for p in paths}
    pi = {
        r["path"]: r
        for r in run_pi({"read": [{"path": p, "leaves": ids[p]} for p in paths]}, PI_VERSIONS[-1])["results"]
    }
    before = {p: Path(p).read_bytes() for p in paths}
    first = sidecar("to-omp", "--root", str(root), *paths)
    after = {p: Path(p).read_bytes() for p in paths}
    second = sidecar("to-omp", "--root", str(root), *paths)
    omp = {r["path"]: r for r in run_omp(home, {"describe": [{"path": p, "leaves": ids[p]} for p in paths]})["results"]}
    return {
        "paths": paths,
        "ids": ids,
        "pi": pi,
        "omp": omp,
        "sent": sent,
        "before": before,
        "after": after,
        "first": first,
        "second": second,
        "blobs": home / ".omp" / "agent" / "blobs",
    }


def test_to_omp_writes_the_title_line_and_moves_images_to_the_blob_folder(pi_to_omp):
    first, second = pi_to_omp["first"], pi_to_omp["second"]
    assert first.returncode == 0, first.stderr
    assert f"{len(SEEDS)} sessions rewritten for oh-my-pi" in first.stdout
    assert second.returncode == 0 and f"0 sessions rewritten for oh-my-pi, {len(SEEDS)} already were" in second.stdout
    stored = {base64.b64encode(p.read_bytes()).decode() for p in pi_to_omp["blobs"].iterdir()}
    assert pi_to_omp["sent"] <= stored
    for path in pi_to_omp["paths"]:
        new = pi_to_omp["after"][path]
        slot = new.split(b"\n", 1)[0]
        assert len(slot) + 1 == SLOT_BYTES and json.loads(slot)["type"] == "title"
        assert b'"data":"blob:sha256:' in new or not images_in(
            json.loads(b"[" + b",".join(pi_to_omp["before"][path].splitlines()) + b"]")
        )
        assert Path(path + ".to-omp.bak").read_bytes() == pi_to_omp["before"][path]
        assert Path(path).read_bytes() == new


def test_oh_my_pi_builds_pis_contexts_and_name_after_to_omp(pi_to_omp):
    named = images = compared = 0
    for path in pi_to_omp["paths"]:
        pi, omp = pi_to_omp["pi"][path], pi_to_omp["omp"][path]
        assert pi["ok"] and omp["ok"], omp.get("error")
        assert omp["name"] == (clean_title(pi["name"]) if pi["name"] else None), path
        named += omp["name"] is not None
        assert omp["labels"] == pi["labels"]
        compared += assert_same_contexts(path, omp, pi, pi_to_omp["ids"][path])
        found = images_in(omp["contexts"]["@leaf"]["llm"])
        assert all(data in pi_to_omp["sent"] for data in found)
        images += len(found)
    assert named >= 2 and images >= 5 and compared >= 60


def test_a_session_another_sidecar_holds_is_left_alone(tmp_path):
    """Refused while another sidecar holds it (its flock); moved once it is let go."""
    path = tmp_path / "--w--" / "2025-01-01T00-00-00-000Z_held.jsonl"
    path.parent.mkdir()
    header = {"type": "session", "version": 3, "id": "held", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/w"}
    named = {
        "type": "session_info",
        "id": "n1",
        "parentId": None,
        "timestamp": "2025-01-01T00:00:01.000Z",
        "name": "kept",
    }
    data = (json.dumps(header) + "\n" + json.dumps(named) + "\n").encode()
    path.write_bytes(data)
    held = lock_path(path)
    try:
        refused = sidecar("to-omp", "--root", str(tmp_path))
    finally:
        unlock(held)
    assert refused.returncode == 1 and "another sidecar has it open" in refused.stderr
    assert path.read_bytes() == data and not Path(str(path) + ".to-omp.bak").exists()
    done = sidecar("to-omp", "--root", str(tmp_path), "held")
    assert done.returncode == 0, done.stderr
    assert json.loads(path.read_bytes().split(b"\n", 1)[0])["title"] == "kept"
    unknown = sidecar("to-pi", "--root", str(tmp_path), "nosuch")
    assert unknown.returncode == 1 and "no session nosuch" in unknown.stderr


def test_back_to_oh_my_pi_after_to_pi_it_builds_what_it_built_before(omp_to_pi, home):
    """oh-my-pi to pi and back: oh-my-pi opens the file with its own contexts, labels and name again."""
    folder = home / ".omp" / "agent" / "sessions" / "--round-trip--"
    folder.mkdir()
    copies = {}
    for item in omp_to_pi["written"]:
        copy = folder / Path(item["path"]).name
        shutil.copyfile(item["path"], copy)  # the file to-pi made
        copies[item["path"]] = str(copy)
    done = sidecar("to-omp", "--root", str(omp_to_pi["root"]), *copies.values())
    assert done.returncode == 0, done.stderr
    again = {
        r["path"]: r
        for r in run_omp(
            home, {"describe": [{"path": copies[item["path"]], "leaves": item["ids"]} for item in omp_to_pi["written"]]}
        )["results"]
    }
    compared = 0
    for item in omp_to_pi["written"]:
        before, after = omp_to_pi["omp"][item["path"]], again[copies[item["path"]]]
        assert after["ok"], after.get("error")
        assert after["name"] == before["name"] and after["labels"] == before["labels"]
        compared += assert_same_contexts(item["path"], after, before, item["ids"])
    assert compared >= 60


def test_a_name_set_in_pi_after_to_pi_is_kept_by_a_second_run(tmp_path):
    """The title line is folded once: a later rename in pi is not undone by running to-pi again."""
    path = tmp_path / "--w--" / "2025-01-01T00-00-00-000Z_renamed.jsonl"
    path.parent.mkdir()
    header = {
        "type": "session",
        "version": 3,
        "id": "renamed",
        "timestamp": "2025-01-01T00:00:00.000Z",
        "cwd": "/w",
        "title": "Header title",
    }
    first = {
        "type": "message",
        "id": "u1",
        "parentId": None,
        "timestamp": "2025-01-01T00:00:01.000Z",
        "message": {"role": "user", "content": "hello", "timestamp": 1},
    }
    path.write_bytes(
        slot_line("From oh-my-pi", "2025-01-01T00:00:02.000Z", "user")
        + b"\n"
        + (json.dumps(header) + "\n" + json.dumps(first) + "\n").encode()
    )
    assert sidecar("to-pi", "--root", str(tmp_path)).returncode == 0
    moved = path.read_bytes()
    [info] = [json.loads(line) for line in moved.splitlines() if b'"session_info"' in line]
    assert info["parentId"] == "u1" and info["name"] == "From oh-my-pi"
    renamed = {
        "type": "session_info",
        "id": "n2",
        "parentId": info["id"],
        "timestamp": "2025-01-01T00:00:09.000Z",
        "name": "Renamed in pi",
    }
    path.write_bytes(moved + (json.dumps(renamed) + "\n").encode())
    again = sidecar("to-pi", "--root", str(tmp_path))
    assert again.returncode == 0 and "0 sessions rewritten for pi, 1 already were" in again.stdout
    [pi] = run_pi({"read": [{"path": str(path), "leaves": []}]}, PI_VERSIONS[-1])["results"]
    assert pi["name"] == "Renamed in pi"
    assert [m["content"] for m in pi["contexts"]["@leaf"]["messages"]] == ["hello"]
