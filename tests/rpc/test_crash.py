"""SIGKILL at random moments: during bursts of appends, big writes, a migration, a fork, a compaction.

Each trial spawns a real sidecar (forked from a zygote that has the package
imported: see zygote.py), first checks what the previous kill left through it
(every file parses, every acknowledged entry is there, parents resolve, no
glued lines; then the session opens and takes one more append), then starts
an operation and SIGKILLs the process after a random delay.

Why every acknowledged entry must survive, whatever the fsync policy: an
append is acknowledged only after its ``write`` returned, and SIGKILL ends
the process, not the kernel, so written bytes stay in the page cache and
reach the file. fsync only matters when the machine itself stops (power
loss, kernel panic), where unsynced page-cache data is lost; that cannot be
produced from a test, so here the stronger property is asserted: nothing
acknowledged is ever lost, and the bytes before a trial are a prefix of the
bytes after it (appends never touch what is already there).

``SIDECAR_CRASH_TRIALS`` sets the number of kills (default 200).
"""

from __future__ import annotations

import os
import random
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from conftest import PI_FIXTURES

from sidecar.format.jsonl import Entry, parse_file

from .crash_harness import Child, Zygote
from .harness import assistant, tool_result, user

TRIALS = int(os.environ.get("SIDECAR_CRASH_TRIALS", "200"))
SCENARIOS = ["burst", "burst", "big", "migrate", "burst", "fork", "burst", "compact"]


@dataclass
class Tracked:
    session_id: str
    path: Path
    acked: set[str] = field(default_factory=set)
    big: bool = False  # holds a pi fixture: used for forks and compactions
    age: int = 0


@dataclass
class Stats:
    trials: int = 0
    kills_mid_operation: int = 0
    entries_verified: int = 0
    torn_tails: int = 0
    migrations_done: int = 0
    migrations_interrupted: int = 0
    forks_acked: int = 0
    compactions_acked: int = 0
    by_scenario: dict[str, int] = field(default_factory=dict)


class CrashRun:
    def __init__(self, root: Path, zygote: Zygote, rng: random.Random) -> None:
        self.root = root
        self.zygote = zygote
        self.rng = rng
        self.sessions: dict[str, Tracked] = {}
        self.stats = Stats()
        self.counter = 0
        self.before: dict[Path, bytes] = {}
        # Seconds after sending within which a migration or a compaction is killed (see adapt).
        self.windows = {"migrate": 0.1, "compact": 0.2}

    # -- checks ------------------------------------------------------------------------

    def session_files(self) -> list[Path]:
        return sorted(p for p in self.root.rglob("*.jsonl") if p.is_file())

    def check_file(self, path: Path, acked: set[str]) -> bool:
        data = path.read_bytes()
        parsed = parse_file(data)  # raises if the file does not open
        ids: set[str] = set()
        for item in parsed.items:
            assert isinstance(item, Entry), f"{path}: a damaged line in the middle: {item[:80]!r}"
            if item.id is None:
                continue
            assert item.id not in ids, f"{path}: entry {item.id} twice"
            assert item.parent_id is None or item.parent_id in ids, (
                f"{path}: {item.id}'s parent {item.parent_id} missing"
            )
            ids.add(item.id)
        torn = parsed.torn_tail_at is not None
        assert parsed.parse_errors == (1 if torn else 0), f"{path}: {parsed.parse_errors} damaged lines"
        if torn:
            self.stats.torn_tails += 1
        missing = acked - ids
        assert not missing, f"{path}: acknowledged entries lost: {sorted(missing)[:5]}"
        self.stats.entries_verified += len(acked)
        return torn

    def check_all(self, child: Child) -> None:
        """Every file parses, nothing acknowledged is lost; then each tracked session opens and takes an append."""
        known = {t.path: t for t in self.sessions.values()}
        # The listing (an index that a kill may have interrupted too) agrees with the files.
        listed = child.call("session/list", {"all": True, "limit": 1000})
        assert listed["nextCursor"] is None
        assert sorted(Path(info["path"]) for info in listed["sessions"]) == self.session_files()
        torn = [
            path
            for path in self.session_files()
            if self.check_file(path, known[path].acked if path in known else set())
        ]
        for tracked in list(self.sessions.values()):
            opened = child.call("session/open", {"sessionId": tracked.session_id})
            tracked.path = Path(opened["path"])
            result = child.call(
                "session/append",
                {"sessionId": tracked.session_id, "entries": [user("after the crash"), assistant("still here")]},
            )
            tracked.acked.update(e["id"] for e in result["entries"])
            tracked.age += 1
        for path in torn:  # the append set the torn line aside and wrote after the last whole line
            assert parse_file(path.read_bytes()).torn_tail_at is None
            assert path.with_name(path.name + ".torn").stat().st_size > 0
        # Retire old sessions so the root stays small: their last append was checked above.
        for tracked in list(self.sessions.values()):
            if tracked.age > (len(SCENARIOS) if tracked.big else 6):
                child.call("session/close", {"sessionId": tracked.session_id})
                for extra in tracked.path.parent.glob(tracked.path.name + "*"):
                    extra.unlink()
                del self.sessions[tracked.session_id]
        self.before = {p: p.read_bytes() for p in self.session_files()}

    def check_prefixes(self, except_paths: set[Path] = frozenset()) -> None:  # type: ignore[assignment]
        """Bytes on disk before the operation are a prefix of the bytes after it."""
        for path, old in self.before.items():
            if path in except_paths:
                continue
            new = path.read_bytes()
            assert new[: len(old)] == old, f"{path}: bytes before the crash were changed"

    # -- operations --------------------------------------------------------------------

    def new_session(self, child: Child) -> Tracked:
        self.counter += 1
        sid = f"crash-{self.counter}"
        child.call("session/create", {"cwd": f"/work/p{self.counter % 3}", "sessionId": sid})
        result = child.call("session/append", {"sessionId": sid, "entries": [user("start"), assistant("ok")]})
        path = Path(child.call("session/open", {"sessionId": sid})["path"])
        tracked = Tracked(sid, path, {e["id"] for e in result["entries"]})
        self.sessions[sid] = tracked
        return tracked

    def adapt(self, scenario: str, finished: bool) -> None:
        """Widen a kill window after an interrupted run, narrow it after a finished one: the kills
        keep landing on both sides of the operation's end, on a fast machine or a slow one."""
        self.windows[scenario] *= 0.7 if finished else 1.5

    def kill_after(self, child: Child, delay: float, requests: list[int]) -> None:
        time.sleep(delay)
        child.kill()
        for answer in child.responses.values():  # whatever was answered before the kill answered well
            assert "error" not in answer, answer
        if any(child.acknowledged(r) is None for r in requests):
            self.stats.kills_mid_operation += 1

    def burst(self, child: Child) -> None:
        small = [t for t in self.sessions.values() if not t.big]
        while len(small) < 3:
            small.append(self.new_session(child))
        self.before = {p: p.read_bytes() for p in self.session_files()}
        targets = self.rng.sample(small, 3)
        plan: list[tuple[Tracked, list[dict[str, Any]]]] = []
        for n in range(80):
            entries = [user(f"u{n}")] + [assistant(f"a{n}.{i}") for i in range(self.rng.randrange(0, 3))]
            plan.append((targets[n % len(targets)], entries))
        sent: list[tuple[Tracked, int]] = []

        def sender() -> None:
            for tracked, entries in plan:
                sent.append(
                    (tracked, child.send("session/append", {"sessionId": tracked.session_id, "entries": entries}))
                )

        thread = threading.Thread(target=sender)
        thread.start()
        self.kill_after(child, self.rng.uniform(0.0, 0.06), [])
        thread.join()
        done = 0
        for tracked, msg_id in sent:
            result = child.acknowledged(msg_id)
            if result is not None:
                done += 1
                tracked.acked.update(e["id"] for e in result["entries"])
        if done < len(plan):
            self.stats.kills_mid_operation += 1
        self.check_prefixes()

    def big_write(self, child: Child) -> None:
        """Kill while a batch of megabytes is being written, to leave a torn last line.

        Several megabytes go out in one ``write``; the test polls the file's size
        and kills as soon as it starts to grow.
        """
        tracked = self.rng.choice([t for t in self.sessions.values() if not t.big] or [self.new_session(child)])

        def batch(n: int) -> dict[str, Any]:
            # Strings over 500,000 characters are cut when stored (PROTOCOL, size rules): many just under that.
            results = [
                tool_result(f"c{n}.{i}", chr(97 + i % 26) * self.rng.randrange(300_000, 490_000))
                for i in range(self.rng.randrange(8, 20))
            ]
            entries = [user(f"big {n}"), *results, assistant(f"done {n}")]
            return {"sessionId": tracked.session_id, "entries": entries}

        result = child.call("session/append", batch(1))
        tracked.acked.update(e["id"] for e in result["entries"])
        self.before = {p: p.read_bytes() for p in self.session_files()}
        size = len(self.before[tracked.path])
        msg_id = child.send("session/append", batch(2))
        # Watch the file: the kill comes a random few hundred microseconds after its write began
        # (or, one time in four, at a random moment before it).
        deadline = time.monotonic() + 10
        if self.rng.random() < 0.25:
            delay = self.rng.uniform(0.0, 0.05)
        else:
            while os.stat(tracked.path).st_size == size and child.acknowledged(msg_id) is None:
                assert time.monotonic() < deadline, "the big batch was never written"
            delay = self.rng.uniform(0.0, 0.0005)
        self.kill_after(child, delay, [msg_id])
        result = child.acknowledged(msg_id)
        if result is not None:
            tracked.acked.update(e["id"] for e in result["entries"])
        self.check_prefixes()

    def migrate(self, child: Child) -> None:
        fixture = self.rng.choice(sorted(PI_FIXTURES.glob("*.jsonl")))
        self.counter += 1
        # A session id of its own, so the same fixture can be in the root twice.
        header, rest = fixture.read_bytes().split(b"\n", 1)
        sid = f"{self.counter:08d}-0000-4000-8000-000000000000"
        original = re.sub(rb'"id":"[^"]*"', f'"id":"{sid}"'.encode(), header, count=1) + b"\n" + rest
        folder = self.root / f"--migrate-{self.counter}--"
        folder.mkdir()
        path = folder / f"2025-01-01T00-00-00-000Z_{sid}.jsonl"
        path.write_bytes(original)
        self.before = {p: p.read_bytes() for p in self.session_files() if p != path}
        msg_id = child.send("session/open", {"path": str(path)})
        self.kill_after(child, self.rng.uniform(0.0, self.windows["migrate"]), [msg_id])
        self.check_prefixes()
        result = child.acknowledged(msg_id)
        self.adapt("migrate", finished=result is not None)
        now = path.read_bytes()
        if now == original:
            assert result is None, "an acknowledged migration left the v1 file in place"
            self.stats.migrations_interrupted += 1
        else:
            parsed = parse_file(now)
            assert parsed.header.obj().get("version") == 3 and parsed.torn_tail_at is None
            assert all(isinstance(item, Entry) for item in parsed.items)
            self.stats.migrations_done += 1
        for bak in folder.glob("*.bak"):
            assert bak.read_bytes() == original, f"{bak} differs from the original file"
        assert parse_file(now).header.id == sid
        self.sessions[sid] = Tracked(sid, path, big=True)

    def _big_session(self, child: Child) -> Tracked | None:
        big = [t for t in self.sessions.values() if t.big]
        return self.rng.choice(big) if big else None

    def fork(self, child: Child) -> None:
        source = self._big_session(child)
        assert source is not None, "no session holding a pi fixture to fork"
        # One fork timed first (it runs to the end), so the killed one is cut at a moment that fits this machine.
        started = time.monotonic()
        calibration = child.call("session/fork", {"sessionId": source.session_id})
        took = time.monotonic() - started
        self.check_file(Path(calibration["path"]), set())
        self.sessions[calibration["sessionId"]] = Tracked(
            calibration["sessionId"], Path(calibration["path"]), big=True, age=len(SCENARIOS)
        )
        files_before = set(self.session_files())
        self.before = {p: p.read_bytes() for p in files_before}
        msg_id = child.send("session/fork", {"sessionId": source.session_id})
        self.kill_after(child, self.rng.uniform(0.0, 1.5) * took, [msg_id])
        self.check_prefixes()
        result = child.acknowledged(msg_id)
        new_files = set(self.session_files()) - files_before
        if result is not None:
            self.stats.forks_acked += 1
            assert Path(result["path"]) in new_files
            forked = parse_file(Path(result["path"]).read_bytes())
            assert forked.torn_tail_at is None and forked.parse_errors == 0
        for path in new_files:  # a fork the kill interrupted must still open (it may lack its tail)
            self.check_file(path, set())
            sid = parse_file(path.read_bytes()).header.id
            self.sessions[sid] = Tracked(sid, path, big=True, age=len(SCENARIOS) - 1)  # type: ignore[arg-type]

    def compact(self, child: Child) -> None:
        target = self._big_session(child)
        assert target is not None, "no session holding a pi fixture to compact"
        self.before = {p: p.read_bytes() for p in self.session_files()}
        msg_id = child.send("session/compact", {"sessionId": target.session_id, "provider": "offline"})
        self.kill_after(child, self.rng.uniform(0.0, self.windows["compact"]), [msg_id])
        self.check_prefixes()
        result = child.acknowledged(msg_id)
        self.adapt("compact", finished=result is not None)
        if result is not None:
            self.stats.compactions_acked += 1
            target.acked.add(result["entryId"])

    # -- the run -----------------------------------------------------------------------

    def trial(self, index: int) -> None:
        fsync = "always" if index % 4 == 3 else "assistant"
        child = self.zygote.spawn()
        try:
            child.initialize(self.root, store={"fsync": fsync})
            self.check_all(child)
            scenario = SCENARIOS[index % len(SCENARIOS)]
            self.stats.by_scenario[scenario] = self.stats.by_scenario.get(scenario, 0) + 1
            if scenario == "big":
                self.big_write(child)
            else:
                getattr(self, scenario)(child)
        finally:
            child.kill()
        self.stats.trials += 1


@pytest.fixture(scope="module")
def zygote():
    server = Zygote()
    yield server
    server.close()


def test_sigkill_at_random_moments_loses_nothing_acknowledged(tmp_path: Path, zygote: Zygote):
    assert PI_FIXTURES.is_dir(), PI_FIXTURES
    root = tmp_path / "sessions"
    root.mkdir()
    run = CrashRun(root, zygote, random.Random(int(os.environ.get("SIDECAR_CRASH_SEED", "20261121"))))
    started = time.monotonic()
    for index in range(TRIALS):
        run.trial(index)
    # The last kill's aftermath, checked through one more sidecar.
    child = zygote.spawn()
    try:
        child.initialize(root)
        run.check_all(child)
    finally:
        child.kill()
    stats = run.stats
    print(f"\ncrash trials: {stats} in {time.monotonic() - started:.1f}s")
    assert stats.trials == TRIALS
    # The kills landed where they were meant to: some mid-operation, some migrations both ways.
    assert stats.kills_mid_operation >= TRIALS // 4
    if TRIALS >= 100:
        assert stats.migrations_interrupted and stats.migrations_done and stats.forks_acked and stats.compactions_acked
        assert stats.torn_tails
