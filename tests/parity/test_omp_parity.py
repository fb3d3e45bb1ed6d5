"""Parity with oh-my-pi's real, published code, both ways.

oh-my-pi 18.2.3 (tests/parity/omp, installed from its lock with ``npm ci``,
Bun from the npm package @oven/bun-linux-x64-baseline) runs its own
SessionManager, buildSessionContext and convertToLlm under a temporary HOME;
the sidecar's root is HOME/.omp/agent/sessions, oh-my-pi's own folder, so the
sidecar follows oh-my-pi's compatibility there without being told.

* Sessions the sidecar writes (generated operations, fixed seeds: tool calls,
  images in user messages, tool results and custom messages, labels, names,
  branches, branch summaries, compactions, forks, close and reopen) open in
  oh-my-pi with the same entries, tree, labels, name and context at every
  entry, and every image comes back as the bytes we sent.
* Sessions oh-my-pi writes (title lines, title changes, images in its blob
  store, labels, branch summaries, compactions) open in the sidecar by path
  with oh-my-pi's context; after we append to them, oh-my-pi opens them again
  and sees our entries and our name.

Without Bun's package or when ``npm ci`` fails, these tests fail: they never skip.
"""

from __future__ import annotations

import base64
import json
import os
import random
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from sidecar import wire
from sidecar.format.titleslot import SLOT_BYTES
from sidecar.service import SessionService

OMP_DIR = Path(__file__).resolve().parent / "omp"
OMP_PACKAGE = "@oh-my-pi/pi-coding-agent"
OMP_VERSION = json.loads((OMP_DIR / "package.json").read_text())["dependencies"][OMP_PACKAGE]
BUN = OMP_DIR / "node_modules" / "@oven" / "bun-linux-x64-baseline" / "bin" / "bun"
OUR_SEEDS = range(12)
THEIR_SEEDS = range(8)


def ensure_omp_installed() -> Path:
    if not (OMP_DIR / "node_modules" / OMP_PACKAGE / "package.json").is_file() or not BUN.is_file():
        npm = shutil.which("npm")
        assert npm, "npm is not on PATH: cannot install oh-my-pi and Bun for the parity test"
        # --omit=optional: oh-my-pi's optional speech and ML packages (1 GB) are not needed to read sessions.
        done = subprocess.run(
            [npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--omit=optional"],
            cwd=OMP_DIR,
            capture_output=True,
            text=True,
            timeout=1200,
        )
        assert done.returncode == 0, f"npm ci failed in {OMP_DIR}:\n{done.stdout}\n{done.stderr}"
    assert BUN.is_file(), f"no Bun binary at {BUN}"
    return BUN


def run_omp(home: Path, request: dict) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "PI_", "OMP_"))}
    env["HOME"] = str(home)
    out = home / "answer.json"
    done = subprocess.run(
        [str(BUN), "omp_context.ts"],
        cwd=OMP_DIR,
        input=json.dumps({**request, "out": str(out)}),
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    answer = json.loads(out.read_text())
    out.unlink()
    assert answer["version"] == OMP_VERSION
    return answer


def plain(value: Any) -> Any:
    return json.loads(json.dumps(value))


def image(rng: random.Random, size: int = 1500) -> str:
    return base64.b64encode(rng.randbytes(size)).decode()


def images_in(value: Any) -> list[str]:
    """Every image block's data anywhere in ``value``."""
    found: list[str] = []
    if isinstance(value, dict):
        if value.get("type") == "image" and isinstance(value.get("data"), str):
            found.append(value["data"])
        for item in value.values():
            found.extend(images_in(item))
    elif isinstance(value, list):
        for item in value:
            found.extend(images_in(item))
    return found


# -- sessions the sidecar writes ----------------------------------------------------


def _assistant(text: str, calls: list[str], model: str = "claude-x") -> dict:
    content: list[dict] = [{"type": "text", "text": text}]
    content += [{"type": "toolCall", "id": c, "name": "read", "arguments": {"path": c}} for c in calls]
    return {
        "role": "assistant",
        "content": content,
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": model,
        "usage": {
            "input": 10,
            "output": 5,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 15,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        },
        "stopReason": "toolUse" if calls else "stop",
        "timestamp": 1_700_000_000_000,
    }


_ABSENT = object()


def write_ours(svc: SessionService, root: Path, seed: int, sent: set[str]) -> list[str]:
    """One session (and its forks) written by the sidecar from operations drawn with ``seed``; returns their ids."""
    rng = random.Random(seed)
    sid = svc.create(wire.CreateParams(cwd=f"/work/p{seed % 3}")).sessionId
    made = [sid]
    labelled = False

    def add(*objs: dict) -> None:
        svc.append(wire.AppendParams(sessionId=sid, entries=list(objs)))

    def ids() -> list[str]:
        return [e.id for e in svc.session(sid).tree.entries]

    add(
        {"type": "message", "message": {"role": "user", "content": "start", "timestamp": 1}},
        {"type": "message", "message": _assistant("ok", [])},
    )
    for step in range(rng.randint(15, 30)):
        kind = rng.choice(
            [
                "turn",
                "turn",
                "turn",
                "image_turn",
                "label",
                "name",
                "branch",
                "summary",
                "compaction",
                "custom",
                "settings",
                "reopen",
                "fork",
                "error",
            ]
        )
        if kind in ("turn", "image_turn"):
            content: list[dict] = [{"type": "text", "text": f"do {step} é 😀"}]
            if kind == "image_turn":
                data = image(rng)
                sent.add(data)
                content.append({"type": "image", "data": data, "mimeType": "image/png"})
            add({"type": "message", "message": {"role": "user", "content": content, "timestamp": step}})
            calls = [f"call{seed}_{step}_{n}" for n in range(rng.randint(0, 2))]
            add({"type": "message", "message": _assistant(f"on it {step}", calls)})
            for call in calls:
                if rng.random() < 0.15:
                    continue  # a call left without a result: oh-my-pi drops it from the context
                result: list[dict] = [{"type": "text", "text": f"result of {call}"}]
                if rng.random() < 0.4:
                    data = image(rng, 1200)
                    sent.add(data)
                    result.append({"type": "image", "data": data, "mimeType": "image/png"})
                add(
                    {
                        "type": "message",
                        "message": {
                            "role": "toolResult",
                            "toolCallId": call,
                            "toolName": "read",
                            "content": result,
                            "isError": False,
                            "timestamp": step,
                        },
                    }
                )
            if calls:
                add({"type": "message", "message": _assistant(f"done {step}", [])})
        elif kind == "label":
            target = rng.choice(ids())
            svc.set_label(wire.SetLabelParams(sessionId=sid, entryId=target, label=rng.choice(["keep", "mark", None])))
            labelled = True
        elif kind == "name":
            svc.set_name(
                wire.SetNameParams(sessionId=sid, name=rng.choice(["Fix  the\tparser", "Nom é 😀", "x" * 300]))
            )
        elif kind == "branch":
            svc.branch(wire.BranchParams(sessionId=sid, entryId=rng.choice(ids())))
        elif kind == "summary":
            target = rng.choice(ids())
            svc.branch(wire.BranchParams(sessionId=sid, entryId=target))
            add({"type": "branch_summary", "fromId": target, "summary": f"tried something else {step}"})
        elif kind == "compaction":
            add(
                {
                    "type": "compaction",
                    "summary": f"so far {step}",
                    "firstKeptEntryId": rng.choice(ids()),
                    "tokensBefore": 1000 + step,
                }
            )
        elif kind == "custom":
            content = [{"type": "text", "text": f"note {step}"}]
            if rng.random() < 0.5:
                data = image(rng)
                sent.add(data)
                content.append({"type": "image", "data": data, "mimeType": "image/png"})
            custom: dict = {"type": "custom_message", "customType": "ext", "content": content, "display": True}
            # details and attribution as a file may hold them: absent, null, or a value (any attribution
            # but "user" reaches oh-my-pi's context as "agent"; null details stay null)
            details = rng.choice([_ABSENT, None, {"k": step}])
            attribution = rng.choice([_ABSENT, None, "user", "agent", "system"])
            if details is not _ABSENT:
                custom["details"] = details
            if attribution is not _ABSENT:
                custom["attribution"] = attribution
            add(custom)
        elif kind == "settings":
            add(
                {"type": "thinking_level_change", "thinkingLevel": rng.choice(["low", "high"])},
                {"type": "model_change", "model": rng.choice(["anthropic/claude-y", "openai/gpt-z"])},
            )
        elif kind == "error":
            add(
                {
                    "type": "message",
                    "message": {**_assistant("", []), "stopReason": "error", "content": [], "errorMessage": "rejected"},
                }
            )
        elif kind == "reopen":
            svc.close(wire.CloseParams(sessionId=sid))
            svc.open(wire.OpenParams(sessionId=sid))
        elif kind == "fork" and not labelled:  # forks across labels: issue 23, fixed on main
            messages = [
                e.id
                for e in svc.session(sid).tree.path(svc.session(sid).leaf_id)
                if e.type == "message" and e.role() == "assistant"
            ]  # a fork with a reply is written at once
            made.append(svc.fork(wire.ForkParams(sessionId=sid, entryId=rng.choice(messages))).sessionId)
    return made


def our_view(svc: SessionService, sid: str) -> dict:
    opened = svc.open(wire.OpenParams(sessionId=sid))
    session = svc.session(sid)
    ids = [e.id for e in session.tree.entries]
    contexts = {}
    for key in ["@leaf", *ids]:
        params = {} if key == "@leaf" else {"leafId": key}
        agent = svc.build_context(wire.BuildContextParams(sessionId=sid, format="agent", **params))
        llm = svc.build_context(wire.BuildContextParams(sessionId=sid, format="llm", **params))
        contexts[key] = {
            "messages": plain(agent.messages),
            "llm": plain(llm.messages),
            "thinkingLevel": agent.thinkingLevel,
            "models": agent.models,
        }
    entries = svc.get_entries(wire.GetEntriesParams(sessionId=sid)).entries
    assert opened.name == opened.title == session.name, "session/open answers one name, in name and in ACP's title"
    return {
        "path": opened.path,
        "ids": ids,
        "entries": plain(entries),
        "leafId": opened.leafId,
        "labels": dict(session.tree.labels),
        "name": opened.name,
        "contexts": contexts,
        "titleFault": opened.titleFault,
    }


def assert_same(name: str, ours: dict, theirs: dict) -> None:
    assert theirs["ok"], f"{name}: oh-my-pi failed to open the file:\n{theirs.get('error')}"
    assert ours["entries"] == theirs["entries"], f"{name}: entries differ"
    assert ours["leafId"] == theirs["leafId"], name
    assert ours["labels"] == theirs["labels"], name
    assert ours["name"] == theirs["name"], f"{name}: names differ"
    for leaf, mine in ours["contexts"].items():
        other = theirs["contexts"][leaf]
        where = f"{name} at {leaf}"
        assert mine["messages"] == other["messages"], f"{where}: contexts differ"
        assert mine["llm"] == other["llm"], f"{where}: convertToLlm differs"
        assert mine["thinkingLevel"] == other["thinkingLevel"], where
        assert mine["models"] == other["models"], where


@pytest.fixture(scope="module")
def home():
    ensure_omp_installed()
    folder = Path(tempfile.mkdtemp(prefix="omp-home-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def ours_in_omp(home):
    """Sessions the sidecar wrote in oh-my-pi's folder, read by us and by oh-my-pi (one Bun run)."""
    root = home / ".omp" / "agent" / "sessions"
    svc = SessionService(root)
    sent: set[str] = set()
    sids = [sid for seed in OUR_SEEDS for sid in write_ours(svc, root, seed, sent)]
    svc.close_all()
    views = {sid: our_view(svc, sid) for sid in sids}
    svc.close_all()
    before = {sid: Path(v["path"]).read_bytes() for sid, v in views.items()}
    answer = run_omp(home, {"describe": [{"path": v["path"], "leaves": v["ids"]} for v in views.values()]})
    theirs = {r["path"]: r for r in answer["results"]}
    return svc, root, sent, views, theirs, before


def test_omp_is_pinned_to_one_exact_version():
    lock = json.loads((OMP_DIR / "package-lock.json").read_text())
    assert lock["packages"][f"node_modules/{OMP_PACKAGE}"]["version"] == OMP_VERSION == "18.2.3"
    assert lock["packages"]["node_modules/@oven/bun-linux-x64-baseline"]["version"] == "1.3.14"


def test_the_sidecar_follows_oh_my_pi_in_its_folder(ours_in_omp, home):
    svc, root, sent, views, _, _ = ours_in_omp
    assert svc.store.compat == "omp"
    blobs = home / ".omp" / "agent" / "blobs"
    assert sent and {base64.b64encode(p.read_bytes()).decode() for p in blobs.iterdir() if "." not in p.name} >= sent
    assert not (root / ".blobs").exists()
    for view in views.values():
        first = Path(view["path"]).read_bytes().split(b"\n", 1)[0]
        assert len(first) + 1 == SLOT_BYTES and json.loads(first)["type"] == "title"
        assert view["titleFault"] is None
        assert "blob:sha256:" not in json.dumps(view["contexts"])


def test_files_we_write_open_in_oh_my_pi_with_the_same_tree_labels_name_and_contexts(ours_in_omp):
    _, _, _, views, theirs, before = ours_in_omp
    assert len(views) >= len(OUR_SEEDS)
    named = 0
    compared = 0
    svc = ours_in_omp[0]
    listed = {s.sessionId: s for s in svc.list(wire.ListParams(all=True, limit=1000)).sessions}
    for sid, view in views.items():
        assert_same(sid, view, theirs[view["path"]])
        # session/list answers oh-my-pi's name (its getSessionName) in name and in ACP's title
        assert listed[sid].name == listed[sid].title == theirs[view["path"]]["name"], sid
        assert Path(view["path"]).read_bytes() == before[sid], f"{sid}: oh-my-pi rewrote our file"
        named += view["name"] is not None
        compared += len(view["contexts"])
    assert named >= 3 and compared > 200


def test_images_in_oh_my_pi_are_the_bytes_we_sent(ours_in_omp):
    _, _, sent, views, theirs, _ = ours_in_omp
    seen = set()
    for view in views.values():
        for context in theirs[view["path"]]["contexts"].values():
            for data in images_in(context["llm"]) + images_in(context["messages"]):
                assert data in sent, "oh-my-pi saw image data we never sent (a blob reference?)"
                seen.add(data)
    assert len(seen) >= len(sent) // 2 and len(seen) > 5


# -- sessions oh-my-pi writes ---------------------------------------------------------


def omp_ops(seed: int, sent: set[str]) -> list[dict]:
    rng = random.Random(1000 + seed)
    ops: list[dict] = [{"op": "user", "text": "start"}, {"op": "assistant", "text": "ok"}]
    count = 2  # entries made so far (targets are taken modulo it)
    for step in range(rng.randint(12, 25)):
        kind = rng.choice(
            [
                "turn",
                "turn",
                "image",
                "label",
                "name",
                "branch",
                "summary",
                "compaction",
                "custom",
                "settings",
                "reopen",
            ]
        )
        if kind in ("turn", "image"):
            op: dict = {"op": "user", "text": f"ask {step}"}
            if kind == "image":
                op["image"] = image(rng)
                sent.add(op["image"])
            calls = [f"c{seed}_{step}_{n}" for n in range(rng.randint(0, 2))]
            ops += [op, {"op": "assistant", "text": f"answer {step}", "calls": calls}]
            count += 2
            for call in calls:
                result = {"op": "toolResult", "callId": call, "text": f"out {call}"}
                if rng.random() < 0.5:
                    result["image"] = image(rng, 1100)
                    sent.add(result["image"])
                ops.append(result)
                count += 1
        elif kind == "label":
            ops.append({"op": "label", "target": rng.randrange(count), "label": rng.choice(["a", "b"])})
            count += 1
        elif kind == "name":
            ops.append({"op": "name", "name": rng.choice(["First title", "Second  title", "Titre é"])})
        elif kind == "branch":
            ops.append({"op": "branch", "target": rng.randrange(count)})
        elif kind == "summary":
            ops.append({"op": "branchSummary", "target": rng.randrange(count), "summary": f"elsewhere {step}"})
            count += 1
        elif kind == "compaction":
            ops.append({"op": "compaction", "firstKept": rng.randrange(count), "summary": f"sum {step}"})
            count += 1
        elif kind == "custom":
            op = {"op": "custom", "text": f"note {step}"}
            detail = rng.choice(["absent", None, {"k": step}])
            if detail != "absent":
                op["details"] = detail
            if rng.random() < 0.5:
                op["attribution"] = rng.choice(["user", "agent"])
            if rng.random() < 0.5:
                op["image"] = image(rng)
                sent.add(op["image"])
            ops.append(op)
            count += 1
        elif kind == "settings":
            ops += [{"op": "thinking", "level": "high"}, {"op": "model", "model": "openai/gpt-z"}]
            count += 2
        else:
            ops.append({"op": "reopen"})
    return ops


@pytest.fixture(scope="module")
def theirs_in_sidecar(home):
    """Sessions oh-my-pi wrote; read by oh-my-pi, then by us; appended to by us; read by oh-my-pi again."""
    root = home / ".omp" / "agent" / "sessions"
    sent: set[str] = set()
    specs = [
        {"cwd": str(home), "dir": str(root / f"--omp-{seed}--"), "ops": omp_ops(seed, sent)} for seed in THEIR_SEEDS
    ]
    written = run_omp(home, {"write": specs})["written"]
    for item in written:
        assert "error" not in item, item.get("error")
    first = run_omp(home, {"describe": [{"path": w["path"], "leaves": w["ids"]} for w in written]})
    return root, sent, written, {r["path"]: r for r in first["results"]}


def test_files_oh_my_pi_writes_open_in_the_sidecar_with_its_context(theirs_in_sidecar):
    root, sent, written, theirs = theirs_in_sidecar
    svc = SessionService(root)
    titled = 0
    for item in written:
        path = item["path"]
        assert Path(path).read_bytes()[:15] == b'{"type":"title"'
        opened = svc.open(wire.OpenParams(path=path))
        assert opened.titleFault is None and opened.parseErrors == 0
        session = svc.session(opened.sessionId)
        view = {
            "entries": plain(svc.get_entries(wire.GetEntriesParams(sessionId=opened.sessionId)).entries),
            "leafId": opened.leafId,
            "labels": dict(session.tree.labels),
            "name": session.name,
            "contexts": {},
        }
        for key in ["@leaf", *item["ids"]]:
            params = {} if key == "@leaf" else {"leafId": key}
            agent = svc.build_context(wire.BuildContextParams(sessionId=opened.sessionId, format="agent", **params))
            llm = svc.build_context(wire.BuildContextParams(sessionId=opened.sessionId, format="llm", **params))
            view["contexts"][key] = {
                "messages": plain(agent.messages),
                "llm": plain(llm.messages),
                "thinkingLevel": agent.thinkingLevel,
                "models": agent.models,
            }
        assert_same(path, view, theirs[path])
        assert view["name"] == item["name"]
        titled += item["name"] is not None
        for context in view["contexts"].values():
            assert all(data in sent for data in images_in(context))
    svc.close_all()
    assert titled >= 2
    listed = {s.path: s for s in svc.list(wire.ListParams(all=True, limit=100)).sessions}
    for item in written:
        assert listed[item["path"]].name == listed[item["path"]].title == item["name"]


def test_after_we_append_to_their_files_oh_my_pi_sees_our_entries_and_name(theirs_in_sidecar, home):
    root, _, written, _ = theirs_in_sidecar
    svc = SessionService(root)
    ours: dict[str, tuple[list[str], str]] = {}
    for index, item in enumerate(written):
        sid = svc.open(wire.OpenParams(path=item["path"])).sessionId
        appended = svc.append(
            wire.AppendParams(
                sessionId=sid,
                entries=[
                    {
                        "type": "message",
                        "message": {
                            "role": "user",
                            "content": [{"type": "text", "text": "from the sidecar"}],
                            "timestamp": 5,
                        },
                    },
                    {"type": "message", "message": _assistant("sidecar reply", [])},
                ],
            )
        )
        label = svc.set_label(wire.SetLabelParams(sessionId=sid, entryId=appended.entries[0].id, label="ours"))
        name = f"Renamed by the sidecar {index}"
        named = svc.set_name(wire.SetNameParams(sessionId=sid, name=name))
        assert named.name == named.title == name
        listed = {s.sessionId: s for s in svc.list(wire.ListParams(all=True, limit=1000)).sessions}
        assert listed[sid].name == listed[sid].title == name
        ours[item["path"]] = ([e.id for e in appended.entries] + [label.entryId, named.entryId], name)
    svc.close_all()
    again = run_omp(home, {"describe": [{"path": p, "leaves": []} for p in ours]})
    for result in again["results"]:
        assert result["ok"], result.get("error")
        ids, name = ours[result["path"]]
        assert [e["id"] for e in result["entries"]][-4:] == ids
        assert result["name"] == name
        assert result["labels"][ids[0]] == "ours"
        assert result["contexts"]["@leaf"]["messages"][-1]["content"][0]["text"] == "sidecar reply"
        assert len(Path(result["path"]).read_bytes().split(b"\n", 1)[0]) + 1 == SLOT_BYTES


# -- deleting a session: its backups go with it -----------------------------------------------


def test_a_deleted_session_does_not_come_back_in_oh_my_pis_listing_from_its_backups(home):
    """oh-my-pi's listing (session-listing.ts, scanSessionDir -> recoverOrphanedBackups; 18.2.3 and 18.3.4)
    renames the newest ``<file>.jsonl.<anything>.bak`` back to the primary when the primary is missing, and
    18.3.4's FileSessionStorage.deleteSessionWithArtifacts removes those backups when a session is deleted.
    Our delete moves the file to the trash with every ``<file>.*`` beside it (its migration, doctor and
    blob-reference backups, oh-my-pi's EPERM-rewrite backups): oh-my-pi's own listing of the folder, run
    after the delete, must not bring the session back."""
    root = home / ".omp" / "agent" / "sessions"
    svc = SessionService(root)
    cwd = str(home / "project-deleted")
    kept = svc.create(wire.CreateParams(cwd=cwd)).sessionId
    gone = svc.create(wire.CreateParams(cwd=cwd)).sessionId
    for sid in (kept, gone):
        svc.append(
            wire.AppendParams(
                sessionId=sid,
                entries=[
                    {"type": "message", "message": {"role": "user", "content": f"hello {sid}", "timestamp": 1}},
                    {"type": "message", "message": _assistant("ok", [])},
                ],
            )
        )
    svc.close_all()
    gone_path = Path(svc.open(wire.OpenParams(sessionId=gone)).path)
    svc.close_all()
    folder = gone_path.parent
    backups = [folder / f"{gone_path.name}.{suffix}.bak" for suffix in ("1234567890123", "v1", "blobrefs", "doctor")]
    for backup in backups:
        backup.write_bytes(gone_path.read_bytes())
    before = run_omp(home, {"list": [{"cwd": cwd, "dir": str(folder)}]})["listed"][0]
    assert sorted(s["id"] for s in before) == sorted([kept, gone])
    svc.delete(wire.DeleteParams(sessionId=gone))
    assert not gone_path.exists() and not [b for b in backups if b.exists()]
    after = run_omp(home, {"list": [{"cwd": cwd, "dir": str(folder)}]})["listed"][0]
    assert [s["id"] for s in after] == [kept]
    assert not gone_path.exists(), "oh-my-pi restored the deleted session from a backup"


# -- Anthropic-native compactions: 18.2.3's code, and where 18.3 moved ----------------------------


def test_a_native_anthropic_compaction_builds_as_oh_my_pi_builds_it(home):
    """oh-my-pi 18.2.3's buildSessionContext on a compaction holding ``preserveData.anthropicCompaction``
    (session-context.ts; getAnthropicCompactionPayload in pi-agent-core compaction/anthropic.ts): the summary
    message carries the payload, the kept tail follows. 18.2.3 stamps that message with the first kept
    entry's time less 1 ms; 18.3.4 keeps the compaction's time there and puts that moment in
    ``historyRewriteAt`` (tests/context/test_omp_183_shapes.py): ours is 18.3's, so the time 18.2.3 gives
    the message is our historyRewriteAt, and everything else is equal."""
    from session_builders import entry, header, message, user, write_session

    root = home / ".omp" / "agent" / "sessions"
    native = {
        "anthropicCompaction": {
            "provider": "anthropic",
            "content": "Native summary.",
            "encryptedContent": "x1",
            "filesText": "<files/>",
            "model": "claude-opus-4-5",
            "usedTokens": 60000,
            "signature": "sig",
        }
    }
    path = write_session(
        root / "--native--" / "2025-01-01T00-00-00-000Z_native.jsonl",
        header("native", cwd=str(home)),
        [
            message("u1", None, user("first", 10), 10),
            message("a1", "u1", _assistant("one", []), 20),
            message("u2", "a1", user("second", 30), 30),
            message("a2", "u2", _assistant("two", []), 40),
            entry(
                "compaction",
                "c1",
                "a2",
                50,
                summary="Native summary.",
                firstKeptEntryId="u2",
                tokensBefore=60000,
                preserveData=native,
            ),
            message("u3", "c1", user("third", 60), 60),
        ],
    )
    svc = SessionService(root)
    sid = svc.open(wire.OpenParams(path=str(path))).sessionId
    ours = plain(svc.build_context(wire.BuildContextParams(sessionId=sid, format="agent")).messages)
    ours_llm = plain(svc.build_context(wire.BuildContextParams(sessionId=sid, format="llm")).messages)
    svc.close_all()
    theirs = run_omp(home, {"describe": [{"path": str(path), "leaves": []}]})["results"][0]
    assert theirs["ok"], theirs.get("error")
    context = theirs["contexts"]["@leaf"]
    summary, their_summary = ours[0], context["messages"][0]
    assert their_summary["providerPayload"] == summary["providerPayload"]
    assert their_summary["timestamp"] == summary["historyRewriteAt"]  # 18.2.3's stamp is 18.3's historyRewriteAt
    rewrite_at = summary.pop("historyRewriteAt")
    assert {**summary, "timestamp": rewrite_at} == their_summary
    assert ours[1:] == context["messages"][1:]
    their_llm = context["llm"]
    assert their_llm[0]["historyRewriteAt"] == ours_llm[0]["historyRewriteAt"] == rewrite_at
    assert {**ours_llm[0], "timestamp": rewrite_at} == their_llm[0]
    assert ours_llm[1:] == their_llm[1:]
