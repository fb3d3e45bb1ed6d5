"""A shadow git repository per project: where snapshot contents live.

Why git (measured, see bench/snapshots.py and the PR notes): its index is a
stat cache (size, mtime, inode, ...), so an incremental snapshot reads only
changed files; its trees are content-addressed per folder, so a snapshot after
a small edit adds a few objects, not a manifest as large as the tree; it reads
``.gitignore`` files exactly as the user's own git does; and it compresses.

The repository is bare, below the sessions root (``.snapshots/<key>.git``),
and never touches the project's own ``.git``. Each session has its own index
in it (``indexes/<sessionId>``), which always describes the tree the sidecar
last knew the folder to be in: the last snapshot, or what a rewind wrote.
Nothing references the trees but session entries, so the repository's
configuration turns garbage collection off: nothing here is ever pruned.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import threading
from pathlib import Path

from ..errors import SnapshotFailed

SNAPSHOT_DIR = ".snapshots"
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

# Contents round-trip byte for byte: no end-of-line conversion, no clean/smudge
# filters, no re-encoding, whatever the project's .gitattributes say.
_ATTRIBUTES = "* -text -ident -filter !eol !working-tree-encoding\n"
_CONFIG = {
    "core.compression": "1",
    "core.untrackedCache": "true",
    "core.fileMode": "true",
    "core.symlinks": "true",
    "core.autocrlf": "false",
    "core.fsmonitor": "false",
    "core.excludesFile": "/dev/null",
    "core.bigFileThreshold": "512m",
    "gc.auto": "0",
    "gc.pruneExpire": "never",
    "index.version": "4",
}


_INIT_LOCK = threading.Lock()


def repo_key(cwd: Path) -> str:
    return hashlib.sha256(os.fsencode(cwd)).hexdigest()[:24]


class ShadowRepo:
    def __init__(self, root: Path, cwd: Path) -> None:
        self.root = root
        self.cwd = cwd
        self.name = f"{SNAPSHOT_DIR}/{repo_key(cwd)}.git"
        self.git_dir = root / self.name
        self._env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
            "GIT_DIR": str(self.git_dir),
            "GIT_WORK_TREE": str(cwd),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": "/dev/null",
            "GIT_OPTIONAL_LOCKS": "0",
            "GIT_TERMINAL_PROMPT": "0",
            "LC_ALL": "C",
        }

    @classmethod
    def named(cls, root: Path, name: str, cwd: Path) -> ShadowRepo:
        """The repository a snapshot record names (it may have been taken of another folder)."""
        repo = cls(root, cwd)
        repo.name = name
        repo.git_dir = root / name
        repo._env["GIT_DIR"] = str(repo.git_dir)
        return repo

    def index_path(self, session_id: str) -> Path:
        return self.git_dir / "indexes" / session_id

    def ensure(self) -> None:
        if (self.git_dir / "sidecar-ready").exists():
            return
        with _INIT_LOCK:  # two sessions on one folder, snapshotted side by side, make it once
            if not (self.git_dir / "sidecar-ready").exists():
                self._init()

    def clear_stale_lock(self, index: Path) -> None:
        """Drop ``<index>.lock`` left by a git killed with its sidecar. Only the caller writes this index:
        calls on a session run one at a time here, and another sidecar cannot hold the session."""
        index.with_name(index.name + ".lock").unlink(missing_ok=True)

    def _init(self) -> None:
        if shutil.which("git") is None:
            raise SnapshotFailed("snapshots need git on PATH; install git")
        self.git_dir.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        env = {k: v for k, v in self._env.items() if k not in ("GIT_DIR", "GIT_WORK_TREE")}
        self._check(
            subprocess.run(["git", "init", "-q", "--bare", str(self.git_dir)], env=env, capture_output=True), "init"
        )
        for key, value in _CONFIG.items():
            self.git("config", key, value)
        (self.git_dir / "info").mkdir(exist_ok=True)
        (self.git_dir / "info" / "attributes").write_text(_ATTRIBUTES)
        (self.git_dir / "indexes").mkdir(exist_ok=True)
        (self.git_dir / "sidecar-ready").write_text(f"{self.cwd}\n")

    def git(
        self, *args: str, index: Path | None = None, input: bytes | None = None, ok: tuple[int, ...] = (0,)
    ) -> bytes:
        env = self._env if index is None else {**self._env, "GIT_INDEX_FILE": str(index)}
        done = subprocess.run(["git", *args], env=env, input=input, capture_output=True, cwd=self.cwd)
        if done.returncode not in ok:
            self._check(done, args[0])
        return done.stdout

    @staticmethod
    def _check(done: subprocess.CompletedProcess[bytes], what: str) -> None:
        if done.returncode != 0:
            message = done.stderr.decode(errors="replace").strip().splitlines()
            raise SnapshotFailed(f"git {what} failed: {message[-1] if message else done.returncode}", gitCommand=what)

    # -- capture ---------------------------------------------------------------

    def capture(self, index: Path, paths: list[str] | None, max_bytes: int) -> tuple[str, list[tuple[str, int]]]:
        """Bring ``index`` up to the folder (only ``paths`` when given) and write its tree.

        Returns the tree id and what was left out: (path, size) of files over the cap, (path, -1) of
        folders that are git repositories of their own. Only files
        git's stat check finds new or changed are looked at, and only those
        read; a file over ``max_bytes`` is never read, and leaves the index.
        """
        scope = [b":(literal)" + os.fsencode(p) for p in paths] if paths else [b"."]
        # (git 2.39's ls-files takes no --pathspec-from-file: the pathspecs go on the command line.)
        candidates = self.git(
            "ls-files",
            "-z",
            "--others",
            "--modified",
            "--exclude-standard",
            "--",
            *map(os.fsdecode, scope),
            index=index,
        )
        too_big: list[tuple[str, int]] = []
        nested: list[str] = []
        for raw in set(candidates.split(b"\0")):
            if not raw:
                continue
            if raw.endswith(b"/"):
                # A folder with its own .git: git would record it as a submodule link (or fail, before
                # its first commit). Its files are the other repository's business: left out, and named.
                nested.append(os.fsdecode(raw[:-1]))
                continue
            try:
                st = os.lstat(os.path.join(os.fsencode(self.cwd), raw))
            except OSError:
                continue
            if st.st_size > max_bytes and not os.path.islink(os.path.join(os.fsencode(self.cwd), raw)):
                too_big.append((os.fsdecode(raw), st.st_size))
        excluded = [b":(exclude,literal)" + os.fsencode(p) for p, _ in too_big]
        excluded += [b":(exclude,literal)" + os.fsencode(p) for p in nested]
        if too_big:
            self.git(
                "rm",
                "-q",
                "--cached",
                "--ignore-unmatch",
                "--pathspec-from-file=-",
                "--pathspec-file-nul",
                index=index,
                input=b"\0".join(b":(literal)" + os.fsencode(p) for p, _ in too_big),
            )
        if paths:
            # A path that is neither in the folder nor in the index is nothing to record (git would refuse it).
            known = set(self.git("ls-files", "-z", "--", *map(os.fsdecode, scope), index=index).split(b"\0"))
            scope = [
                s
                for s, p in zip(scope, paths)
                if os.path.lexists(self.cwd / p)
                or os.fsencode(p) in known
                or any(k.startswith(os.fsencode(p.rstrip("/")) + b"/") for k in known)
            ]
        if scope:
            self.git(
                "add",
                "-A",
                "--pathspec-from-file=-",
                "--pathspec-file-nul",
                index=index,
                input=b"\0".join(scope + excluded),
            )
        tree = self.git("write-tree", index=index).strip().decode()
        self.keep(tree)
        return tree, sorted(too_big) + [(p, -1) for p in sorted(nested)]

    def keep(self, tree: str) -> None:
        """A ref naming the tree, so that even an explicit ``git gc --prune=now`` keeps it and all below it.

        Written as a loose ref file directly: spawning ``git update-ref`` would cost a process per snapshot.
        """
        ref = self.git_dir / "refs" / "snapshots" / tree
        if ref.exists():
            return
        ref.parent.mkdir(parents=True, exist_ok=True)
        tmp = ref.with_name(f".{tree}.{os.getpid()}.tmp")
        tmp.write_text(tree + "\n")
        os.replace(tmp, ref)

    def index_tree(self, index: Path) -> str:
        return self.git("write-tree", index=index).strip().decode()

    # -- reading -----------------------------------------------------------------

    def list_tree(self, tree: str) -> dict[str, tuple[str, str]]:
        """path -> (mode, blob id), every file of the tree."""
        out = self.git("ls-tree", "-r", "-z", "--full-tree", tree)
        files: dict[str, tuple[str, str]] = {}
        for record in out.split(b"\0"):
            if not record:
                continue
            meta, _, path = record.partition(b"\t")
            mode, _kind, oid = meta.decode().split(" ")
            files[os.fsdecode(path)] = (mode, oid)
        return files

    def count_files(self, tree: str) -> int:
        return len(self.git("ls-tree", "-r", "-z", "--name-only", "--full-tree", tree).split(b"\0")) - 1

    def read_blobs(self, oids: list[str]) -> dict[str, bytes]:
        if not oids:
            return {}
        out = self.git("cat-file", "--batch", input="".join(f"{o}\n" for o in oids).encode())
        blobs: dict[str, bytes] = {}
        at = 0
        while at < len(out):
            end = out.index(b"\n", at)
            header = out[at:end].decode().split(" ")
            if len(header) < 3:
                raise SnapshotFailed(f"the snapshot store has no object {header[0]}; was {self.git_dir} removed?")
            size = int(header[2])
            blobs[header[0]] = out[end + 1 : end + 1 + size]
            at = end + 1 + size + 1
        return blobs

    def changed(self, old: str, new: str, renames: bool = False) -> list[tuple[str, str, str | None]]:
        """(status letter, path, old path for a rename) of every file that differs between two trees."""
        args = ["diff-tree", "-r", "-z", "--no-commit-id", "--name-status"]
        if renames:
            args.append("-M")
        parts = self.git(*args, old, new).split(b"\0")
        changes: list[tuple[str, str, str | None]] = []
        at = 0
        while at < len(parts) and parts[at]:
            status = parts[at].decode()
            if status[0] in "RC":
                changes.append((status[0], os.fsdecode(parts[at + 2]), os.fsdecode(parts[at + 1])))
                at += 3
            else:
                changes.append((status[0], os.fsdecode(parts[at + 1]), None))
                at += 2
        return changes

    def raw_changes(self, old: str, new: str) -> list[tuple[str, str, str, str]]:
        """(status letter, path, new mode, new blob id) of every file that differs; no rename pairing."""
        parts = self.git("diff-tree", "-r", "-z", "--no-commit-id", "--no-renames", "--raw", old, new).split(b"\0")
        changes: list[tuple[str, str, str, str]] = []
        for at in range(0, len(parts) - 1, 2):
            meta = parts[at].decode().lstrip(":").split(" ")
            if len(meta) < 5:
                break
            changes.append((meta[4][0], os.fsdecode(parts[at + 1]), meta[1], meta[3]))
        return changes

    def numstat(self, old: str, new: str) -> dict[str, tuple[int | None, int | None]]:
        out = self.git("diff-tree", "-r", "-z", "-M", "--no-commit-id", "--numstat", old, new)
        stats: dict[str, tuple[int | None, int | None]] = {}
        parts = out.split(b"\0")
        at = 0
        while at < len(parts) and parts[at]:
            added, removed, path = parts[at].decode(errors="surrogateescape").split("\t", 2)
            if path == "":  # a rename: the two paths follow
                path = os.fsdecode(parts[at + 2])
                at += 3
            else:
                at += 1
            stats[path] = (None, None) if added == "-" else (int(added), int(removed))
        return stats

    def patch(self, old: str, new: str, context: int) -> str:
        out = self.git("diff-tree", "-r", "-p", "-M", "--no-commit-id", "--no-color", f"-U{context}", old, new)
        return out.decode(errors="replace")

    def update_index(self, index: Path, entries: list[tuple[str, str, str]]) -> None:
        """Set (mode, oid, path) entries in the index (mode "0": remove), then stat what was written."""
        if not entries:
            return
        lines = b"".join(
            (f"{mode} {oid or '0' * 40}\t" if mode != "0" else f"0 {'0' * 40}\t").encode() + os.fsencode(path) + b"\0"
            for mode, oid, path in entries
        )
        self.git("update-index", "-z", "--index-info", index=index, input=lines)
        self.git("update-index", "-q", "--refresh", index=index, ok=(0, 1))
