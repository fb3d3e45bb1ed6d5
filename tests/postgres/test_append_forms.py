"""An append goes in by one of two statements by its size (postgres/lines.py): one line with
plain values, more with arrays packed in PostgreSQL's binary format (postgres/arrays.py). Each
keeps the same guarantees: the lines (byte for byte) and their search texts land together, in
order, and a writer that lost its lease writes nothing of either."""

from __future__ import annotations

import json
import time

import pytest

from postgres.test_writer import db, message, new_writer, take  # noqa: F401  (db is a fixture)
from sidecar.errors import SessionLocked
from sidecar.store.postgres.db import Database
from sidecar.store.postgres.lease import open_stored


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
    return db.read(
        lambda conn: conn.execute(
            "SELECT seq, text, folded FROM sidecar_texts WHERE session_id = %s ORDER BY seq", (session_id,)
        ).fetchall()
    )


@pytest.mark.parametrize("count", [1, 2, 15, 16, 40, 1000])
def test_each_form_writes_lines_and_texts_together(db: Database, count: int) -> None:  # noqa: F811
    writer = new_writer(db, "f", "host-a")
    writer.append(batch("x", "u1", count, 2000), durable=True)
    # An entry without a text (a model change) takes the one-line form with no text row.
    change = json.dumps(
        {
            "type": "model_change",
            "id": "mc",
            "parentId": f"x{count - 1}",
            "timestamp": "2026-01-01T00:00:02.000Z",
            "provider": "p",
            "modelId": "m",
        }
    ).encode()
    writer.append([change], durable=True)
    assert stored_ids(db, "f") == ["f", "u1"] + [f"x{n}" for n in range(count)] + ["mc"]
    found = texts(db, "f")
    assert [seq for seq, _, _ in found] == list(range(1, count + 2))  # u1's, then one per message
    assert found[-1][1:] == (f"Größe x {count - 1}", f"grösse x {count - 1}")
    assert writer.line_count == count + 3


@pytest.mark.parametrize("count", [1, 3, 120])
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


def test_a_batch_keeps_lines_without_an_id_or_a_text_and_bytes_that_are_not_utf8(db: Database) -> None:  # noqa: F811
    """NULL elements in the packed id array, an empty text array, and a line's exact bytes."""
    writer = new_writer(db, "h", "host-a")
    odd = [
        b'{"type":"custom","customType":"x","data":{"k":"\xc3\xa9"}}',  # no id: a NULL in the id array
        b"not json at all \xff\xfe",  # unparseable, not UTF-8: kept as it is
        json.dumps(
            {
                "type": "label",
                "id": "l1",
                "parentId": "u1",
                "timestamp": "2026-01-01T00:00:03.000Z",
                "targetId": "u1",
                "label": "Ä",
            },
            ensure_ascii=False,
        ).encode(),
    ]
    before = texts(db, "h")
    writer.append(odd, durable=True)  # none of them has a message text
    data = open_stored(db, "h", None, 30).data
    assert data.split(b"\n")[-4:-1] == odd and data.endswith(b"\n")
    assert texts(db, "h") == before
    ids = db.read(
        lambda conn: conn.execute(
            "SELECT entry_id FROM sidecar_lines WHERE session_id = %s ORDER BY seq", ("h",)
        ).fetchall()
    )
    assert [row[0] for row in ids][-3:] == [None, None, "l1"]
    writer.append(batch("y", "l1", 4, 6000), durable=True)
    assert [text for _, text, _ in texts(db, "h")][-4:] == [f"Größe y {n}" for n in range(4)]
    assert writer.line_count == len(data.split(b"\n")) - 1 + 4
