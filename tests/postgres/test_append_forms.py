"""An append goes in by one of three statements by its size (postgres/lines.py): one line with
plain values, 2-15 lines with arrays, 16 and more by COPY after the fenced update. Each keeps
the same guarantees: the lines and their search texts land together, in order, and a writer
that lost its lease writes nothing of any of them."""

from __future__ import annotations

import json
import time

import pytest
from postgres.test_writer import db, message, new_writer, take  # noqa: F401  (db is a fixture)

from sidecar.errors import SessionLocked
from sidecar.store.postgres.db import Database
from sidecar.store.postgres.lease import open_stored
from sidecar.store.postgres.lines import COPY_FROM


def batch(prefix: str, parent: str, count: int, ts: int) -> list[bytes]:
    out, before = [], parent
    for n in range(count):
        entry_id = f"{prefix}{n}"
        out.append(message(entry_id, before, "assistant" if n % 2 else "user", f"Größe {prefix} {n}", ts + n))
        before = entry_id
    return out


def stored_ids(db: Database, session_id: str) -> list[str]:
    return [json.loads(line)["id"] for line in open_stored(db, session_id, None, 30).data.splitlines()]


def texts(db: Database, session_id: str) -> list[tuple[int, str, str]]:
    return db.read(lambda conn: conn.execute(
        "SELECT seq, text, folded FROM sidecar_texts WHERE session_id = %s ORDER BY seq", (session_id,)).fetchall())


@pytest.mark.parametrize("count", [1, 2, COPY_FROM - 1, COPY_FROM, 40])
def test_each_form_writes_lines_and_texts_together(db: Database, count: int) -> None:  # noqa: F811
    writer = new_writer(db, "f", "host-a")
    writer.append(batch("x", "u1", count, 2000), durable=True)
    # An entry without a text (a model change) takes the one-line form with no text row.
    change = json.dumps({"type": "model_change", "id": "mc", "parentId": f"x{count - 1}",
                         "timestamp": "2026-01-01T00:00:02.000Z", "provider": "p", "modelId": "m"}).encode()
    writer.append([change], durable=True)
    assert stored_ids(db, "f") == ["f", "u1"] + [f"x{n}" for n in range(count)] + ["mc"]
    found = texts(db, "f")
    assert [seq for seq, _, _ in found] == list(range(1, count + 2))  # u1's, then one per message
    assert found[-1][1:] == (f"Größe x {count - 1}", f"grösse x {count - 1}")
    assert writer.line_count == count + 3


@pytest.mark.parametrize("count", [1, 3, COPY_FROM + 4])
def test_a_writer_that_lost_its_lease_writes_nothing_in_any_form(db: Database, count: int) -> None:  # noqa: F811
    a = new_writer(db, "g", "host-a", lease=0.2)
    time.sleep(0.3)
    b = take(db, "g", "host-b")
    b.append(batch("b", "u1", 2, 3000), durable=True)
    before = texts(db, "g")
    with pytest.raises(SessionLocked, match="no longer held by this sidecar"):
        a.append(batch("a", "u1", count, 4000), durable=True)
    assert stored_ids(db, "g") == ["g", "u1", "b0", "b1"]
    assert texts(db, "g") == before
    b.append(batch("c", "b1", count, 5000), durable=True)  # the owner goes on where it was
    assert stored_ids(db, "g")[-count:] == [f"c{n}" for n in range(count)]
