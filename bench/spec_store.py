"""The spec-format store against pi's on the same conversation: open, append, list, convert.

    .venv/bin/python bench/spec_store.py [--mb 50] [--sessions 1000]

A seeded linear conversation (user turns, assistants with tool calls, tool
results with big outputs, a compaction every ~4,000 records) is written as a
spec session (<ULID>/session.jsonl) and as the same session in pi's format.
Figures: open + buildContext of each (best of 3, in this process), append of
(user, assistant) pairs per second under fsync "never" and "assistant",
session/list over many spec sessions, and pi -> spec conversion throughput.
The data goes to a temporary folder and is removed.
"""

from __future__ import annotations

import argparse
import random
import shutil
import tempfile
import time
from pathlib import Path

from sidecar import wire
from sidecar.config import Settings, StoreSettings
from sidecar.context.build import build_context
from sidecar.format.jsonl import Entry
from sidecar.service import SessionService
from sidecar.store.base import FsyncPolicy
from sidecar.store.files.layout import Layout
from sidecar.store.files.session import FileSession as Session
from sidecar.store.spec.codec import EntryBuilder
from sidecar.store.spec.layout import SpecLayout, new_ulid
from sidecar.store.spec.metadata import new_metadata
from sidecar.store.spec.records import CompactionRecord, MessageRecord, TextBlock, ToolCallBlock, encode_record
from sidecar.store.spec.session import SpecSession

WORDS = "the a session tree leaf branch file line context model token tool result read edit write bash test".split()


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def records(megabytes: int, seed: int = 14) -> list:
    rng, out, size, seq = random.Random(seed), [], 0, 0
    stamp = lambda: f"2025-02-11T{(seq // 3600) % 24:02d}:{(seq // 60) % 60:02d}:{seq % 60:02d}.000Z"  # noqa: E731
    while size < megabytes * 1_000_000:
        seq += 1
        if seq % 4000 == 0:
            record = CompactionRecord(
                seq=seq,
                firstKeptSeq=seq - 40,
                summary=_text(rng, 400),
                tokensBefore=90000,
                readFiles=["src/a.ts"],
                modifiedFiles=["src/b.ts"],
                timestamp=stamp(),
            )
        elif seq % 4 == 1:
            record = MessageRecord(seq=seq, role="user", content=[TextBlock(text=_text(rng, 40))], timestamp=stamp())
        elif seq % 4 == 2:
            record = MessageRecord(
                seq=seq,
                role="assistant",
                content=[
                    TextBlock(text=_text(rng, 30)),
                    ToolCallBlock(id=f"c{seq}", name="bash", arguments={"command": _text(rng, 6)}),
                ],
                timestamp=stamp(),
            )
        elif seq % 4 == 3:
            record = MessageRecord(
                seq=seq,
                role="toolResult",
                content=[TextBlock(text=_text(rng, rng.randrange(200, 1200)))],
                toolCallId=f"c{seq - 1}",
                isError=False,
                timestamp=stamp(),
            )
        else:
            record = MessageRecord(
                seq=seq, role="assistant", content=[TextBlock(text=_text(rng, 60))], timestamp=stamp()
            )
        out.append(record)
        size += len(encode_record(record)) + 1
    return out


def best(fn, runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=50)
    parser.add_argument("--sessions", type=int, default=1000)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="spec-bench-"))
    try:
        made = records(args.mb)
        sid = new_ulid()
        folder = SpecLayout(work / "spec").folder(sid)
        folder.parent.mkdir(parents=True)
        SpecSession.create(folder, new_metadata(sid, "2025-02-11T00:00:00.000Z"), FsyncPolicy.NEVER).close()
        (folder / "session.jsonl").write_bytes(b"".join(encode_record(r) + b"\n" for r in made))
        builder = EntryBuilder()
        pi_path = Layout(work / "pi").new_session_path("/bench", "2025-02-11T00:00:00.000Z", sid)
        Session.copied(
            pi_path, sid, "/bench", FsyncPolicy.NEVER, [Entry.from_obj(builder.add(r)) for r in made]
        ).close()
        spec_mb, pi_mb = (folder / "session.jsonl").stat().st_size / 1e6, pi_path.stat().st_size / 1e6
        print(f"conversation: {len(made)} records; spec file {spec_mb:.1f} MB, pi file {pi_mb:.1f} MB")

        def open_spec() -> None:
            session, _ = SpecSession.load(folder, FsyncPolicy.NEVER, read_only=True)
            build_context(session.tree.path(session.leaf_id))
            session.close()

        def open_pi() -> None:
            session, _ = Session.load(pi_path, FsyncPolicy.NEVER, read_only=True)
            build_context(session.tree.path(session.leaf_id))
            session.close()

        spec_open, pi_open = best(open_spec), best(open_pi)
        print(
            f"open + buildContext: spec {spec_open * 1000:.0f} ms, pi {pi_open * 1000:.0f} ms "
            f"(spec/pi {spec_open / pi_open:.2f}x)"
        )

        for policy in ("never", "assistant"):
            for name, make in (
                ("spec", lambda root: SessionService(root, Settings(store=StoreSettings(fsync=policy, format="spec")))),
                ("pi", lambda root: SessionService(root, Settings(store=StoreSettings(fsync=policy)))),
            ):
                root = work / f"append-{name}-{policy}"
                root.mkdir()
                service = make(root)
                created = service.create(wire.CreateParams(cwd="/bench"))
                pair = [
                    {
                        "type": "message",
                        "message": {"role": "user", "content": [{"type": "text", "text": "question " * 20}]},
                    },
                    {
                        "type": "message",
                        "message": {"role": "assistant", "content": [{"type": "text", "text": "answer " * 40}]},
                    },
                ]
                count = 300
                started = time.perf_counter()
                for _ in range(count):
                    service.append(wire.AppendParams(sessionId=created.sessionId, entries=pair))
                elapsed = time.perf_counter() - started
                service.close_all()
                print(
                    f"append (user, assistant), fsync {policy}: {name} {count / elapsed:.0f} pairs/s "
                    f"({elapsed / count * 1e6:.0f} us each)"
                )

        many = work / "many"
        service = SessionService(many, Settings(store=StoreSettings(fsync="never", format="spec")))
        for index in range(args.sessions):
            created = service.create(wire.CreateParams(cwd="/bench"))
            service.append(
                wire.AppendParams(
                    sessionId=created.sessionId,
                    entries=[
                        {
                            "type": "message",
                            "timestamp": f"2025-01-01T00:00:{index % 60:02d}.{index % 1000:03d}Z",
                            "message": {"role": "user", "content": "hello"},
                        }
                    ],
                )
            )
        service.close_all()
        listing = best(lambda: service.list(wire.ListParams(limit=50)))
        print(f"session/list over {args.sessions} spec sessions (metadata.json each): {listing * 1000:.0f} ms")

        pi_service = SessionService(work / "pi", Settings(store=StoreSettings(allowExternalPaths=True)))
        target = work / "converted"
        started = time.perf_counter()
        pi_service.convert(wire.ConvertParams(to="spec", targetRoot=str(target), path=str(pi_path)))
        elapsed = time.perf_counter() - started
        pi_service.close_all()
        print(f"convert pi -> spec: {pi_mb / elapsed:.0f} MB/s ({elapsed * 1000:.0f} ms for {pi_mb:.1f} MB)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
