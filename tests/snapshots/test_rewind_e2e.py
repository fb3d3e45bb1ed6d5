"""session/snapshot, /diff, /rewind through a real sidecar subprocess, on real git repositories and plain folders."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from .sidecar_process import ASSISTANT, USER, Sidecar


def state(folder: Path, skip_git: bool = True) -> dict[str, Any]:
    """Every file, symlink and its permission bits below ``folder`` (the project's own .git left out)."""
    found: dict[str, Any] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        if skip_git and ".git" in dirnames:
            dirnames.remove(".git")
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, folder)
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                found[rel] = ("link", os.readlink(path))
            else:
                found[rel] = ("file", hashlib.sha256(Path(path).read_bytes()).hexdigest(), stat.S_IMODE(st.st_mode))
    return found


def git_dir_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for dirpath, _, filenames in sorted(os.walk(folder / ".git")):
        for name in sorted(filenames):
            path = Path(dirpath, name)
            digest.update(str(path).encode() + path.read_bytes())
    return digest.hexdigest()


@pytest.fixture(params=["git", "plain"])
def project(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "main.py").write_text("print('v1')\n")
    (folder / "README.md").write_text("# project\n")
    (folder / ".gitignore").write_text("*.log\nbuild/\n")
    (folder / "app.log").write_text("ignored log\n")
    (folder / "build").mkdir()
    (folder / "build" / "out.o").write_bytes(b"\x7fELF ignored")
    (folder / "data.bin").write_bytes(bytes(range(256)) * 40)
    (folder / "run.sh").write_text("#!/bin/sh\necho run\n")
    os.chmod(folder / "run.sh", 0o755)
    (folder / "secret.txt").write_text("private\n")
    os.chmod(folder / "secret.txt", 0o600)
    os.symlink("src/main.py", folder / "main-link")
    if request.param == "git":
        env = {
            **os.environ,
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@t",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@t",
        }
        subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
        subprocess.run(["git", "add", "-A"], cwd=folder, check=True)
        subprocess.run(["git", "commit", "-qm", "first"], cwd=folder, check=True, env=env)
    return folder


def test_edit_snapshot_branch_rewind_and_undo(sidecar: Sidecar, project: Path):
    is_git = (project / ".git").exists()
    git_before = git_dir_digest(project) if is_git else None
    sid = sidecar.call("session/create", cwd=str(project))["sessionId"]
    first_user = sidecar.append(sid, USER)
    s1 = sidecar.call("session/snapshot", sessionId=sid)
    before = state(project)
    # The agent's turn: edit, add a binary, delete, rename, flip the executable bit, retarget a symlink.
    (project / "src" / "main.py").write_text("print('v2')\n")
    (project / "new.bin").write_bytes(os.urandom(5000))
    (project / "README.md").unlink()
    os.rename(project / "data.bin", project / "src" / "moved.bin")
    os.chmod(project / "run.sh", 0o644)
    (project / "main-link").unlink()
    os.symlink("README.md", project / "main-link")
    (project / "src" / "deep" / "er").mkdir(parents=True)
    (project / "src" / "deep" / "er" / "x.txt").write_text("deep\n")
    (project / "other.log").write_text("ignored, never touched\n")
    sidecar.append(sid, ASSISTANT)
    sidecar.call("session/setLabel", sessionId=sid, entryId=first_user, label="the start")
    sidecar.call("session/setName", sessionId=sid, name="rewind test")
    s2 = sidecar.call("session/snapshot", sessionId=sid)
    assert s2["changedFiles"] == 8  # a rename counts as a removal and an addition
    after = state(project)

    diff = sidecar.call("session/diff", sessionId=sid, **{"from": s1["entryId"]}, to=s2["entryId"], patch=True)
    changes = {f["path"]: f for f in diff["files"]}
    assert changes["src/moved.bin"]["change"] == "renamed" and changes["src/moved.bin"]["oldPath"] == "data.bin"
    assert changes["README.md"]["change"] == "removed"
    assert changes["new.bin"]["binary"] is True
    assert changes["src/main.py"] == {"path": "src/main.py", "change": "modified", "additions": 1, "deletions": 1}
    assert "-print('v1')\n+print('v2')" in diff["patch"]
    assert not any(p.endswith(".log") or p.startswith("build/") for p in changes)

    dry = sidecar.call("session/rewind", sessionId=sid, entryId=first_user, files=True, dryRun=True)
    assert state(project) == after
    assert dry["dryRun"] and dry["restored"] == ["main-link", "run.sh", "src/main.py"]
    assert dry["created"] == ["README.md", "data.bin"]
    assert dry["removed"] == ["new.bin", "src/deep/er/x.txt", "src/moved.bin"]

    rewound = sidecar.call("session/rewind", sessionId=sid, entryId=first_user, files=True)
    assert rewound["leafId"] == first_user and rewound["snapshotEntryId"] == s1["entryId"]
    assert {k: rewound[k] for k in ("restored", "created", "removed")} == {
        k: dry[k] for k in ("restored", "created", "removed")
    }
    now = state(project)
    assert now == {**before, "other.log": now["other.log"]}
    assert now["secret.txt"][2] == 0o600 and now["run.sh"][2] & 0o111
    assert not (project / "src" / "deep").exists()
    assert (project / "other.log").read_text() == "ignored, never touched\n"
    context = sidecar.call("session/buildContext", sessionId=sid)
    assert [m["role"] for m in context["messages"]] == ["user"]

    undone = sidecar.call("session/rewind", sessionId=sid, entryId=rewound["undoEntryId"], files=True)
    assert state(project) == after
    assert sorted(undone["restored"] + undone["created"] + undone["removed"]) == sorted(
        dry["restored"] + dry["created"] + dry["removed"]
    )
    assert undone["leafId"] == rewound["undoEntryId"]
    assert [m["role"] for m in sidecar.call("session/buildContext", sessionId=sid)["messages"]] == ["user", "assistant"]
    if is_git:
        assert git_dir_digest(project) == git_before, "the project's own .git was touched"
    tree = sidecar.call("session/getTree", sessionId=sid)
    ids = {n["id"] for n in tree["nodes"]}
    assert all(n["parentId"] is None or n["parentId"] in ids for n in tree["nodes"])
    assert {n["label"] for n in tree["nodes"] if n.get("label")} == {"the start"}
    snapshots = sidecar.call("session/getEntries", sessionId=sid)["entries"]
    assert sum(e.get("customType") == "session-sidecar/snapshot" for e in snapshots) == 4


def test_rewind_without_files_moves_only_the_leaf(sidecar: Sidecar, project: Path):
    sid = sidecar.call("session/create", cwd=str(project))["sessionId"]
    first = sidecar.append(sid, USER)
    sidecar.call("session/snapshot", sessionId=sid)
    (project / "README.md").write_text("changed\n")
    sidecar.append(sid, ASSISTANT)
    result = sidecar.call("session/rewind", sessionId=sid, entryId=first)
    assert result == {"leafId": first}
    assert (project / "README.md").read_text() == "changed\n"


def test_a_file_changed_behind_the_agents_back_stops_the_rewind(sidecar: Sidecar, project: Path):
    sid = sidecar.call("session/create", cwd=str(project))["sessionId"]
    first = sidecar.append(sid, USER)
    sidecar.call("session/snapshot", sessionId=sid)
    (project / "src" / "main.py").write_text("print('agent')\n")
    sidecar.append(sid, ASSISTANT)
    sidecar.call("session/snapshot", sessionId=sid)
    (project / "src" / "main.py").write_text("print('the user, by hand')\n")
    (project / "notes.txt").write_text("the user's own new file, which the rewind would remove\n")
    (project / "app.log").write_text("an ignored file changed: not the rewind's business\n")
    error = sidecar.error("session/rewind", sessionId=sid, entryId=first, files=True)
    assert error["code"] == -33040 and error["data"]["kind"] == "worktreeChanged"
    assert error["data"]["paths"] == ["notes.txt", "src/main.py"]
    assert "force" in error["message"]
    assert (project / "src" / "main.py").read_text() == "print('the user, by hand')\n"
    leaf = sidecar.call("session/getTree", sessionId=sid)["leafId"]
    assert leaf != first

    forced = sidecar.call("session/rewind", sessionId=sid, entryId=first, files=True, force=True)
    assert (project / "src" / "main.py").read_text() == "print('v1')\n"
    assert "notes.txt" in forced["removed"]  # captured in the undo snapshot, so it can come back
    sidecar.call("session/rewind", sessionId=sid, entryId=forced["undoEntryId"], files=True)
    assert (project / "src" / "main.py").read_text() == "print('the user, by hand')\n"
    assert (project / "notes.txt").exists()


def test_files_over_the_cap_are_named_not_captured_and_never_overwritten(sidecar: Sidecar, project: Path):
    sid = sidecar.call("session/create", cwd=str(project))["sessionId"]
    first = sidecar.append(sid, USER)
    (project / "big.dat").write_bytes(b"a" * 3000)
    s1 = sidecar.call("session/snapshot", sessionId=sid, maxFileBytes=2048)
    assert s1["notCaptured"] == [
        {"path": "big.dat", "size": 3000, "reason": "tooLarge"},
        {"path": "data.bin", "size": 10240, "reason": "tooLarge"},
    ]
    entry = sidecar.call("session/getEntries", sessionId=sid, ids=[s1["entryId"]])["entries"][0]
    assert entry["data"]["notCaptured"][0] == {"path": "big.dat", "size": 3000}
    (project / "big.dat").write_bytes(b"b" * 3000)
    (project / "small.txt").write_bytes(b"small")
    sidecar.append(sid, ASSISTANT)
    sidecar.call("session/snapshot", sessionId=sid, maxFileBytes=2048)
    result = sidecar.call("session/rewind", sessionId=sid, entryId=first, files=True)
    assert (project / "big.dat").read_bytes() == b"b" * 3000
    assert {"path": "big.dat", "reason": "not captured in the snapshot (too large)"} in result["skipped"]
    assert result["removed"] == ["small.txt"]


def test_symlinks_are_never_followed_out_of_the_folder(sidecar: Sidecar, project: Path, tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.txt").write_text("outside, must stay\n")
    os.symlink(str(outside / "victim.txt"), project / "points-out")
    sid = sidecar.call("session/create", cwd=str(project))["sessionId"]
    first = sidecar.append(sid, USER)
    (project / "sub").mkdir()
    (project / "sub" / "victim.txt").write_text("inside v1\n")
    sidecar.call("session/snapshot", sessionId=sid)
    # The agent rewrites the symlink's target path inside, then the folder becomes a symlink leading out.
    (project / "sub" / "victim.txt").write_text("inside v2\n")
    sidecar.append(sid, ASSISTANT)
    sidecar.call("session/snapshot", sessionId=sid)
    (project / "sub" / "victim.txt").unlink()
    (project / "sub").rmdir()
    os.symlink(str(outside), project / "sub")
    # A captured symlink in the way is removed (the link itself, kept in the undo snapshot), never followed.
    result = sidecar.call("session/rewind", sessionId=sid, entryId=first, files=True, force=True)
    assert (outside / "victim.txt").read_text() == "outside, must stay\n"
    assert sorted(os.listdir(outside)) == ["victim.txt"]
    assert os.readlink(project / "points-out") == str(outside / "victim.txt")
    assert result["removed"] == ["sub"] and result["created"] == ["sub/victim.txt"]
    assert not (project / "sub").is_symlink() and (project / "sub" / "victim.txt").read_text() == "inside v1\n"


def test_an_uncaptured_symlink_where_a_folder_was_blocks_the_files_below_it(
    sidecar: Sidecar, project: Path, tmp_path: Path
):
    outside = tmp_path / "outside"
    outside.mkdir()
    sid = sidecar.call("session/create", cwd=str(project))["sessionId"]
    first = sidecar.append(sid, USER)
    (project / "sub").mkdir()
    (project / "sub" / "victim.txt").write_text("inside v1\n")
    sidecar.call("session/snapshot", sessionId=sid)
    # The agent removes the folder and ignores the name; then someone puts a symlink leading out there.
    (project / "sub" / "victim.txt").unlink()
    (project / "sub").rmdir()
    (project / ".gitignore").write_text("*.log\nbuild/\n/sub\n")
    sidecar.append(sid, ASSISTANT)
    sidecar.call("session/snapshot", sessionId=sid)
    os.symlink(str(outside), project / "sub")
    result = sidecar.call("session/rewind", sessionId=sid, entryId=first, files=True)
    assert os.listdir(outside) == []
    assert [s["path"] for s in result["skipped"]] == ["sub/victim.txt"]
    assert "not followed" in result["skipped"][0]["reason"]
    assert result["restored"] == [".gitignore"] and "created" not in result


def test_contents_round_trip_whatever_gitattributes_say(sidecar: Sidecar, project: Path):
    (project / ".gitattributes").write_text("* text eol=lf\n*.txt filter=nosuch ident\n")
    (project / "crlf.txt").write_bytes(b"line one\r\nline two\r\n$Id$\r\n")
    sid = sidecar.call("session/create", cwd=str(project))["sessionId"]
    first = sidecar.append(sid, USER)
    sidecar.call("session/snapshot", sessionId=sid)
    (project / "crlf.txt").write_bytes(b"changed\n")
    sidecar.append(sid, ASSISTANT)
    sidecar.call("session/snapshot", sessionId=sid)
    sidecar.call("session/rewind", sessionId=sid, entryId=first, files=True)
    assert (project / "crlf.txt").read_bytes() == b"line one\r\nline two\r\n$Id$\r\n"


def test_a_snapshot_of_another_folder_is_not_restored_here(sidecar: Sidecar, project: Path, tmp_path: Path):
    sid = sidecar.call("session/create", cwd=str(project))["sessionId"]
    first = sidecar.append(sid, USER)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "f.txt").write_text("x")
    sidecar.call("session/snapshot", sessionId=sid, cwd=str(elsewhere))
    error = sidecar.error("session/rewind", sessionId=sid, entryId=first, files=True)
    assert error["data"]["kind"] == "pathOutsideCwd"
    assert (project / "README.md").exists()
    missing = sidecar.error("session/rewind", sessionId=sid, entryId=sidecar.append(sid, USER), files=True, dryRun=True)
    assert missing["data"]["kind"] == "pathOutsideCwd"


def test_no_snapshot_before_the_entry_is_a_clear_error(sidecar: Sidecar, project: Path):
    sid = sidecar.call("session/create", cwd=str(project))["sessionId"]
    first = sidecar.append(sid, USER)
    sidecar.call("session/snapshot", sessionId=sid)
    later = sidecar.append(sid, ASSISTANT)
    assert sidecar.call("session/rewind", sessionId=sid, entryId=later, files=True, dryRun=True)["snapshotEntryId"]
    sidecar.call("session/branch", sessionId=sid, entryId=None)
    before_any = sidecar.append(sid, USER)
    error = sidecar.error("session/rewind", sessionId=sid, entryId=before_any, files=True)
    assert error["code"] == -33041 and error["data"]["entryId"] == before_any and first
    root_only = sidecar.call("session/create", cwd=str(project))["sessionId"]
    lone = sidecar.append(root_only, USER)
    error = sidecar.error("session/rewind", sessionId=root_only, entryId=lone, files=True)
    assert error["code"] == -33041 and error["data"]["kind"] == "noSnapshot"
    error = sidecar.error("session/diff", sessionId=root_only, **{"from": lone}, to="worktree")
    assert error["code"] == -33041


def test_diff_against_the_worktree_and_paths_only_snapshots(sidecar: Sidecar, project: Path):
    sid = sidecar.call("session/create", cwd=str(project))["sessionId"]
    first = sidecar.append(sid, USER)
    sidecar.call("session/snapshot", sessionId=sid)
    (project / "README.md").write_text("# changed\n")
    (project / "src" / "main.py").write_text("print('v2')\n")
    diff = sidecar.call("session/diff", sessionId=sid, **{"from": first}, to="worktree")
    assert [f["path"] for f in diff["files"]] == ["README.md", "src/main.py"]
    # Only README.md looked at: src/main.py stays as in the previous snapshot.
    second = sidecar.call("session/snapshot", sessionId=sid, paths=["README.md"])
    assert second["changedFiles"] == 1
    diff = sidecar.call("session/diff", sessionId=sid, **{"from": second["entryId"]}, to="worktree")
    assert [f["path"] for f in diff["files"]] == ["src/main.py"]


def test_a_fork_carries_its_snapshots(sidecar: Sidecar, project: Path):
    sid = sidecar.call("session/create", cwd=str(project))["sessionId"]
    first = sidecar.append(sid, USER)
    sidecar.call("session/snapshot", sessionId=sid)
    sidecar.call("session/setLabel", sessionId=sid, entryId=first, label="start")
    (project / "README.md").write_text("# v2\n")
    answer = sidecar.append(sid, ASSISTANT)
    sidecar.call("session/snapshot", sessionId=sid)
    assert answer
    fork = sidecar.call("session/fork", sessionId=sid)["sessionId"]  # from the leaf: the last snapshot entry
    sidecar.call("session/close", sessionId=sid)
    result = sidecar.call("session/rewind", sessionId=fork, entryId=first, files=True)
    assert result["restored"] == ["README.md"]
    assert (project / "README.md").read_text() == "# project\n"
    tree = sidecar.call("session/getTree", sessionId=fork)
    ids = {n["id"] for n in tree["nodes"]}
    assert all(n["parentId"] is None or n["parentId"] in ids for n in tree["nodes"])
    assert any(n["label"] == "start" for n in tree["nodes"])


def test_snapshots_survive_a_restart_and_git_gc(sessions_root: Path, project: Path):
    server = Sidecar(sessions_root)
    sid = server.call("session/create", cwd=str(project))["sessionId"]
    first = server.append(sid, USER)
    server.call("session/snapshot", sessionId=sid)
    (project / "README.md").write_text("# v2\n")
    server.append(sid, ASSISTANT)
    server.call("session/snapshot", sessionId=sid)
    server.stop()
    repos = list((sessions_root / ".snapshots").glob("*.git"))
    assert len(repos) == 1
    subprocess.run(["git", "--git-dir", str(repos[0]), "gc", "-q", "--prune=now"], check=True)
    # As a git killed with its sidecar leaves it: the index's lock file.
    (repos[0] / "indexes" / f"{sid}.lock").write_bytes(b"")
    server = Sidecar(sessions_root)
    try:
        server.call("session/rewind", sessionId=sid, entryId=first, files=True)
        assert (project / "README.md").read_text() == "# project\n"
        assert server.call("session/snapshot", sessionId=sid)["changedFiles"] == 0
    finally:
        server.stop()


def test_a_nested_git_repository_is_left_out_and_left_alone(sidecar: Sidecar, project: Path):
    sid = sidecar.call("session/create", cwd=str(project))["sessionId"]
    first = sidecar.append(sid, USER)
    sidecar.call("session/snapshot", sessionId=sid)
    # The agent runs `git init` in a subfolder (no commit yet: git itself could not add it as a link).
    (project / "vendor").mkdir()
    subprocess.run(["git", "init", "-q"], cwd=project / "vendor", check=True)
    (project / "vendor" / "lib.c").write_text("int x;\n")
    (project / "README.md").write_text("# with vendor\n")
    sidecar.append(sid, ASSISTANT)
    taken = sidecar.call("session/snapshot", sessionId=sid)
    assert taken["notCaptured"] == [{"path": "vendor", "size": 0, "reason": "nestedRepository"}]
    result = sidecar.call("session/rewind", sessionId=sid, entryId=first, files=True)
    assert result["restored"] == ["README.md"] and "removed" not in result
    assert (project / "vendor" / "lib.c").read_text() == "int x;\n"
