"""Blob collection racing appends that name an existing blob, on the real cluster (postgres/erasing.py).

Each round stores one blob past its grace hour that nothing refers to yet, then one sidecar appends a
message naming it while another collects blobs, released together. Whatever the order, an acknowledged
append's blob is still there, and an append that lost the race is refused (blobMissing) with nothing
written: no line of the session ever names a blob that is gone. The session is given a few thousand lines
first, so the collection's reference scan takes long enough for the two to overlap.
"""

from __future__ import annotations

import hashlib
import os
import random
import threading
import time
from pathlib import Path

from session_builders import append, msg, new_session, service, user

from sidecar import wire
from sidecar.errors import BlobMissing
from sidecar.format.jsonl import BLOB_PREFIX

ROUNDS = 120


def image(digest: str) -> dict:
    return msg(
        {
            "role": "user",
            "content": [{"type": "image", "data": BLOB_PREFIX + digest, "mimeType": "image/png"}],
            "timestamp": 1,
        }
    )


def test_collection_racing_appends_that_name_blobs_leaves_no_dangling_reference(tmp_path: Path, pg_url: str) -> None:
    writing = service(tmp_path / "writer", databaseUrl=pg_url)
    collecting = service(tmp_path / "collector", databaseUrl=pg_url)
    session_id = new_session(writing, cwd="/work/race")
    for batch in range(6):
        append(writing, session_id, *[msg(user(f"filler {batch}.{n} " + "words " * 40)) for n in range(500)])
    db = collecting.store.db
    acked: list[tuple[str, str]] = []
    refused: list[str] = []
    collected: set[str] = set()
    for round_ in range(ROUNDS):
        data = round_.to_bytes(4, "big") + os.urandom(60)
        digest = hashlib.sha256(data).hexdigest()
        db.run(
            lambda conn: conn.execute(
                "INSERT INTO sidecar_blobs (digest, data, stored_ms) VALUES (%s, %s, 0)", (digest, data)
            ),
            "store a blob",
        )
        start = threading.Barrier(2)
        failures: list[BaseException] = []

        def appender() -> None:
            start.wait()
            try:
                acked.append((digest, append(writing, session_id, image(digest))[0]))
            except BlobMissing as exc:
                assert exc.data["digest"] == digest
                refused.append(digest)
            except BaseException as exc:  # noqa: BLE001 - reported below
                failures.append(exc)

        def collector() -> None:
            start.wait()
            time.sleep(random.random() * 0.0015)  # either may go first: both orders are checked
            try:
                collected.update(p.name for p in collecting.store.collect_blobs(False).files)
            except BaseException as exc:  # noqa: BLE001
                failures.append(exc)

        threads = [threading.Thread(target=appender), threading.Thread(target=collector)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert not failures, failures

    assert len(acked) + len(refused) == ROUNDS and acked
    present = {row[0] for row in db.read(lambda conn: conn.execute("SELECT digest FROM sidecar_blobs").fetchall())}
    assert all(digest in present for digest, _ in acked)
    assert not set(refused) & present and set(refused) <= collected
    # What the database holds: no line names a blob that is gone, and a refused append left no line.
    dangling = db.read(
        lambda conn: conn.execute(
            "SELECT count(*) FROM sidecar_lines l WHERE position(convert_to(%s, 'UTF8') IN l.line) > 0 AND NOT EXISTS "
            "(SELECT 1 FROM sidecar_blobs b WHERE position(convert_to(%s || b.digest, 'UTF8') IN l.line) > 0)",
            ('"' + BLOB_PREFIX, '"' + BLOB_PREFIX),
        ).fetchone()[0]
    )
    assert dangling == 0
    # The session reads back whole, with one image per acknowledged append and its data resolved.
    entries = writing.get_entries(wire.GetEntriesParams(sessionId=session_id)).entries
    images = [
        block
        for e in entries
        if e.get("type") == "message" and isinstance(e["message"].get("content"), list)
        for block in e["message"]["content"]
        if block.get("type") == "image"
    ]
    assert len(images) == len(acked) and not any(block["data"].startswith(BLOB_PREFIX) for block in images)
    print(f"\n{len(acked)} appends acknowledged, {len(refused)} refused (collected first), of {ROUNDS}")
    writing.close_all()
    collecting.close_all()


def test_an_append_naming_a_blob_the_database_lacks_is_refused_whole_and_a_fork_copies_it(
    tmp_path: Path, pg_url: str
) -> None:
    from session_builders import assistant

    svc = service(tmp_path / "host", databaseUrl=pg_url)
    session_id = new_session(svc, cwd="/work/refs")
    append(svc, session_id, msg(user("first")))
    before = svc.get_entries(wire.GetEntriesParams(sessionId=session_id)).entries
    gone = hashlib.sha256(b"never stored").hexdigest()
    try:
        append(svc, session_id, msg(assistant("a reply")), image(gone))
        raise AssertionError("an append naming a missing blob was written")
    except BlobMissing as exc:
        assert exc.data["digest"] == gone and "blob:sha256:" + gone in exc.message
    assert svc.get_entries(wire.GetEntriesParams(sessionId=session_id)).entries == before  # not even the reply
    # A blob that is there: written, and the session goes on from the first entry's branch as before.
    data = b"an image kept apart"
    stored = svc.store.blobs.put(data)
    appended = append(svc, session_id, image(stored))
    assert [e["id"] for e in svc.get_entries(wire.GetEntriesParams(sessionId=session_id)).entries][-1] == appended[0]
    # A session migrated with a reference to a blob never brought in (oh-my-pi's blob folder) forks as on files.
    root = tmp_path / "seed"
    folder = root / "--work-refs--"
    folder.mkdir(parents=True)
    (folder / "2026-01-01T00-00-00-000Z_seeded.jsonl").write_text(
        '{"type":"session","version":3,"id":"seeded","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work/refs"}\n'
        '{"type":"message","id":"m1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user",'
        f'"content":[{{"type":"image","data":"{BLOB_PREFIX}{gone}","mimeType":"image/png"}}],"timestamp":1}}}}\n'
    )
    from .test_transfer import run

    assert run("migrate", "--from", str(root), "--database-url", pg_url).returncode == 0
    forked = svc.fork(wire.ForkParams(sessionId="seeded")).sessionId
    copied = svc.get_entries(wire.GetEntriesParams(sessionId=forked)).entries
    assert copied[-1]["message"]["content"][0]["data"] == BLOB_PREFIX + gone  # the reference as it was
    svc.close_all()
