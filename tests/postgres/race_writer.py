"""One writer of the lease race (test_race.py): takes the session's lease (waiting for it),
then appends batches of two entries, each child of the line before, printing
``ack <id> <id>`` after each commit; ``lost`` and exit 3 when its lease was taken.

    python -m tests.postgres.race_writer URL SESSION_ID OWNER LEASE_SECONDS
"""

from __future__ import annotations

import json
import sys
import time

from sidecar.errors import SessionLocked, StorageError
from sidecar.store.postgres.db import Database, check_url
from sidecar.store.postgres.writer import PgWriter, open_stored


def entry(entry_id: str, parent: str | None) -> bytes:
    return json.dumps(
        {
            "type": "custom",
            "id": entry_id,
            "parentId": parent,
            "timestamp": "2026-01-01T00:00:00.000Z",
            "customType": "race",
        },
        separators=(",", ":"),
    ).encode()


def main() -> int:
    url, session_id, owner, lease = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    db = Database(check_url(url), timeout=2.0)
    deadline = time.monotonic() + 20
    while True:
        try:
            stored = open_stored(db, session_id, owner, lease)
            break
        except (SessionLocked, StorageError):
            if time.monotonic() > deadline:
                return 2
            time.sleep(0.02)
    writer = PgWriter(db, session_id, stored.placement, owner, lease, stored=stored)
    tip = json.loads(stored.data.rstrip(b"\n").rsplit(b"\n", 1)[-1])
    last = None if tip.get("type") == "session" else tip.get("id")
    print("took", flush=True)
    n = 0
    while True:
        first, second = f"{owner}-{n}a", f"{owner}-{n}b"
        n += 1
        try:
            writer.append([entry(first, last), entry(second, first)], durable=True)
        except SessionLocked:
            print("lost", flush=True)
            return 3
        except StorageError:
            continue
        last = second
        print("ack", first, second, flush=True)
        time.sleep(0.005)


if __name__ == "__main__":
    sys.exit(main())
