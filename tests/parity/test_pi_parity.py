"""Parity with pi's real, published code: the same file gives the same entries and the same context.

One node process (tests/parity/pi_context.mjs, over the pinned npm package
@mariozechner/pi-coding-agent) reads every file of the batch: the two real pi
fixtures after our migration, hand-built v3 files covering every entry type,
and random trees written by our store. Without node, or when ``npm ci`` fails,
these tests fail: they never skip.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from conftest import PI_FIXTURES
from handbuilt import CASES
from hypothesis import HealthCheck, Phase, given, settings
from random_sessions import operations, play, start
from session_builders import labelled_session, service, write_session
from snapshot_case import rewound_session

from sidecar import wire

PARITY_DIR = Path(__file__).resolve().parent
PI_PACKAGE = "@mariozechner/pi-coding-agent"
PI_VERSION = json.loads((PARITY_DIR / "package.json").read_text())["dependencies"][PI_PACKAGE]
FIXTURES = ["before-compaction.jsonl", "large-session.jsonl"]
RANDOM_TREES = 25


def ensure_pi_installed() -> str:
    node = shutil.which("node")
    assert node, "node is not on PATH: the pi parity test needs node >= 20.6"
    if not (PARITY_DIR / "node_modules" / PI_PACKAGE / "package.json").is_file():
        npm = shutil.which("npm")
        assert npm, "npm is not on PATH: cannot install pi for the parity test"
        done = subprocess.run(
            [npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund"],
            cwd=PARITY_DIR,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert done.returncode == 0, f"npm ci failed in {PARITY_DIR}:\n{done.stdout}\n{done.stderr}"
    return node


def run_pi(node: str, files: list[dict]) -> tuple[str, dict[str, dict]]:
    done = subprocess.run(
        [node, "pi_context.mjs"],
        cwd=PARITY_DIR,
        input=json.dumps({"files": files}),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    return answer["version"], {r["path"]: r for r in answer["results"]}


def plain(value):
    """Our result as pi's JSON would show it."""
    return json.loads(json.dumps(value))


def our_view(root: Path, path: Path, leaves: list[str]) -> dict:
    """What our service says about a file: entries, leaf, labels, name, contexts in both formats."""
    svc = service(root, allowExternalPaths=True)
    opened = svc.open(wire.OpenParams(path=str(path)))
    session = svc.session(opened.sessionId)
    contexts = {}
    for key in ["@leaf", *leaves]:
        params = {} if key == "@leaf" else {"leafId": key}
        agent = svc.build_context(wire.BuildContextParams(sessionId=opened.sessionId, format="agent", **params))
        llm = svc.build_context(wire.BuildContextParams(sessionId=opened.sessionId, format="llm", **params))
        contexts[key] = {
            "messages": plain(agent.messages),
            "llm": plain(llm.messages),
            "thinkingLevel": agent.thinkingLevel,
            "model": plain(agent.model),
        }
    svc.close(wire.CloseParams(sessionId=opened.sessionId))
    svc.close_all()  # (on PostgreSQL its connections: a module's fixture reads a hundred files this way)
    assert opened.title == opened.name, "session/open answers one name, in name and in ACP's title"
    return {
        "entries": [json.loads(e.raw) for e in session.tree.entries],
        "lines": [e.raw for e in session.tree.entries],
        "leafId": opened.leafId,
        "labels": dict(session.tree.labels),
        "name": opened.name,  # what session/open answers (pi's getSessionName must agree)
        "has_empty_name": any(
            e.type == "session_info" and not (e.obj().get("name") or "").strip() for e in session.tree.entries
        ),
        "contexts": contexts,
    }


def collect_random_trees(root: Path) -> tuple[list[Path], list[tuple[Path, int, str]]]:
    """Random trees written by our store, and the files forked from them: (fork file, tree index, entry)."""
    paths: list[Path] = []
    forks: list[tuple[Path, int, str]] = []

    # Fixed seeds (derandomize): the same trees and forks every run.
    @settings(
        max_examples=RANDOM_TREES,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
        derandomize=True,
    )
    @given(steps=operations())
    def build(steps):
        svc = service(root)
        session_id = start(svc)
        points: dict[str, str] = {}
        play(svc, session_id, steps, points)
        for fork_id, at in points.items():
            fork = svc.session(fork_id)
            if fork.persisted:
                forks.append((fork.path, len(paths), at))
        paths.append(svc.session(session_id).path)
        svc.close_all()

    build()
    return paths, forks


@pytest.fixture(scope="session")
def parity():
    """Every case, read by us and by pi (one node run); case name -> (ours, pi's, pi's file bytes)."""
    node = ensure_pi_installed()
    work = Path(tempfile.mkdtemp(prefix="pi-parity-"))
    ours_root, pi_dir = work / "ours", work / "pi"
    pi_dir.mkdir(parents=True)
    cases: dict[str, tuple[Path, list[str], dict]] = {}

    def add(name: str, our_file: Path, leaves: list[str]) -> None:
        view = our_view(ours_root, our_file, leaves)
        pi_copy = pi_dir / f"{name}.jsonl"
        shutil.copyfile(our_file, pi_copy)  # pi reads the file exactly as we left it
        cases[name] = (pi_copy, leaves, view)

    for fixture in FIXTURES:
        source = PI_FIXTURES / fixture
        assert source.is_file(), f"pi fixture missing: {source}"
        ours = work / "fixtures" / fixture
        ours.parent.mkdir(exist_ok=True)
        shutil.copyfile(source, ours)
        ids = [json.loads(line).get("id") for line in ours.read_text(encoding="utf-8").split("\n")[1:-1]]
        add(f"fixture:{fixture}", ours, [])  # migrated by our open
        view = cases[f"fixture:{fixture}"][2]
        entry_ids = [e["id"] for e in view["entries"]]
        sample = entry_ids[:: max(1, len(entry_ids) // 4)][1:]
        assert ids.count(None) == len(ids)  # v1: no ids before our migration
        del cases[f"fixture:{fixture}"]
        add(f"fixture:{fixture}", ours, sample)
    for name, (head, build) in CASES.items():
        objs = build()
        path = write_session(work / "handbuilt" / f"{name}.jsonl", head, objs)
        add(f"handbuilt:{name}", path, [o["id"] for o in objs])
    snapshot_file, snapshot_ids = rewound_session(work)
    add("snapshots:rewound", snapshot_file, snapshot_ids)
    trees, forks = collect_random_trees(ours_root)
    for index, path in enumerate(trees):
        ids = [json.loads(line)["id"] for line in path.read_text(encoding="utf-8").split("\n")[1:-1]]
        add(f"random:{index}", path, ids)
    for number, (path, tree, at) in enumerate(forks):
        add(f"fork:{number}:random:{tree}:{at}", path, [])
    # The issue's session (labels before and after a compaction, a name, a custom entry), forked at every
    # user or assistant message: each fork crosses the label entries before its entry.
    svc = service(ours_root)
    source_id, _ = labelled_session(svc)
    source = svc.session(source_id)
    source_ids = [e.id for e in source.tree.entries]
    forked_at = {}
    for entry in source.tree.entries:
        if entry.type == "message" and entry.role() in ("user", "assistant"):
            forked_at[svc.fork(wire.ForkParams(sessionId=source_id, entryId=entry.id)).sessionId] = entry.id
    fork_paths = {fork_id: svc.session(fork_id).path for fork_id in forked_at if svc.session(fork_id).persisted}
    source_path = source.path
    svc.close_all()
    add("labelled:0", source_path, source_ids)
    for number, (fork_id, path) in enumerate(fork_paths.items()):
        add(f"fork:{number}:labelled:0:{forked_at[fork_id]}", path, [])

    before = {name: case[0].read_bytes() for name, case in cases.items()}
    version, answers = run_pi(node, [{"path": str(case[0]), "leaves": case[1]} for case in cases.values()])
    results = {
        name: (case[2], answers[str(case[0])], before[name] == case[0].read_bytes()) for name, case in cases.items()
    }
    yield version, results
    shutil.rmtree(work)


def assert_same(name: str, ours: dict, pi: dict, compare_lines: bool) -> None:
    assert pi["ok"], f"{name}: pi failed to read our file:\n{pi.get('error')}"
    assert ours["entries"] == pi["entries"], f"{name}: entries differ"
    if compare_lines:  # byte for byte as JSON.stringify writes them
        assert [raw.decode("utf-8") for raw in ours["lines"]] == pi["lines"], f"{name}: line bytes differ"
    assert ours["leafId"] == pi["leafId"]
    assert ours["labels"] == pi["labels"]
    if not ours["has_empty_name"]:  # pi ignores an empty name; ours clears (our rule)
        assert ours["name"] == pi["name"]
    assert set(ours["contexts"]) == set(pi["contexts"])
    for leaf, mine in ours["contexts"].items():
        theirs = pi["contexts"][leaf]
        where = f"{name} at leaf {leaf}"
        assert mine["messages"] == theirs["messages"], f"{where}: agent messages differ"
        assert mine["llm"] == theirs["llm"], f"{where}: convertToLlm output differs"
        assert mine["thinkingLevel"] == theirs["thinkingLevel"], where
        assert mine["model"] == theirs["model"], where


def test_pi_is_pinned_to_one_exact_version(parity):
    version, _ = parity
    assert version == PI_VERSION and all(part.isdigit() for part in PI_VERSION.split("."))
    lock = json.loads((PARITY_DIR / "package-lock.json").read_text())
    assert lock["packages"][f"node_modules/{PI_PACKAGE}"]["version"] == PI_VERSION


@pytest.mark.parametrize("fixture", FIXTURES)
def test_pi_fixtures_after_our_migration_match_pi(parity, fixture):
    ours, pi, unchanged = parity[1][f"fixture:{fixture}"]
    assert unchanged, "pi rewrote the file we migrated: it did not see it as current"
    assert len(ours["contexts"]) >= 4
    assert_same(fixture, ours, pi, compare_lines=False)


@pytest.mark.parametrize("case", sorted(CASES))
def test_hand_built_files_match_pi(parity, case):
    ours, pi, unchanged = parity[1][f"handbuilt:{case}"]
    assert unchanged
    assert_same(case, ours, pi, compare_lines=False)


def test_random_trees_written_by_our_store_open_in_pi_and_match(parity):
    randoms = {name: value for name, value in parity[1].items() if name.startswith("random:")}
    assert len(randoms) == RANDOM_TREES
    for name, (ours, pi, unchanged) in randoms.items():
        assert unchanged, f"{name}: pi rewrote our file"
        assert_same(name, ours, pi, compare_lines=True)


def test_forks_written_by_our_store_open_in_pi_connected_with_the_source_context(parity):
    """Forks of random trees (labels on the path included) read in pi as the source reads at the fork entry."""
    results = parity[1]
    forks = {name: value for name, value in results.items() if name.startswith("fork:")}
    assert len(forks) >= 10, f"too few persisted forks drawn: {len(forks)}"
    across_labels = 0
    for name, (ours, pi, unchanged) in forks.items():
        assert unchanged, f"{name}: pi rewrote our file"
        assert_same(name, ours, pi, compare_lines=True)
        _, _, kind, tree, at = name.split(":")
        source_ours, source_pi, _ = results[f"{kind}:{tree}"]
        ids = {e["id"] for e in pi["entries"]}
        assert all(e["parentId"] is None or e["parentId"] in ids for e in pi["entries"]), f"{name}: dangling parent"
        source_path = _pi_path(source_pi["entries"], at)
        across_labels += any(e["type"] == "label" for e in source_path)
        # pi's own reading of the fork equals pi's reading of the source at the fork entry.
        theirs_at = source_pi["contexts"][at]
        assert pi["contexts"]["@leaf"]["messages"] == theirs_at["messages"], f"{name}: pi sees another history"
        assert pi["contexts"]["@leaf"]["llm"] == theirs_at["llm"], name
    assert across_labels >= 10, f"too few forks across a label entry: {across_labels}"


def test_snapshot_entries_and_a_rewind_read_the_same_in_pi(parity):
    """pi keeps our snapshot entries (custom) out of the context, and follows the branch a rewind started."""
    ours, pi, unchanged = parity[1]["snapshots:rewound"]
    assert unchanged
    assert_same("snapshots:rewound", ours, pi, compare_lines=True)
    assert sum(e.get("customType") == "session-sidecar/snapshot" for e in pi["entries"]) == 4
    texts = [
        m["content"] if isinstance(m["content"], str) else m["content"][0]["text"]
        for m in pi["contexts"]["@leaf"]["messages"]
    ]
    assert texts == ["edit a.txt", "on the new branch"]


def _pi_path(entries: list[dict], leaf: str) -> list[dict]:
    by_id = {e["id"]: e for e in entries}
    path, current = [], by_id.get(leaf)
    while current is not None:
        path.append(current)
        current = by_id.get(current.get("parentId"))
    return path[::-1]
