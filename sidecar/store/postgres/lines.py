"""The statements that write a session's lines: one fenced append, or a whole session by COPY.

An append is one statement (its own transaction, one round trip): it updates
the session row only where owner, fence and line count are still what the
writer holds, and inserts the lines and their search texts only when that
update happened (see writer.py). The one-line form, by far the most common
(one message per ``session/append``), takes plain values; a batch of any
larger size takes arrays that arrays.py packs in PostgreSQL's binary format.
That beat a fenced UPDATE and two COPYs in one transaction (seven round
trips) at 20, 100 and 1,000 lines a batch: bench/postgres.py, 100 a call,
~1.3x the entries/s and half the client CPU (a whole session, created or
imported, still goes in by COPY).

A search text goes in twice: as written (the snippet is cut from it) and
casefolded by Python (``folded``, what a query is matched against, under the
trigram index), so both stores match alike.
"""

from __future__ import annotations

import psycopg

from .arrays import bytea_array, int8_array, int8_range, text_array
from .rows import fold_text

# The session row as an append leaves it: lease extended, listing fields folded, line count moved on.
_FENCED_UPDATE = """
    UPDATE sidecar_sessions SET
        line_count = line_count + %(n)s,
        tail = ''::bytea,
        name = %(name)s, name_folded = %(name_folded)s,
        first_message = %(first_message)s, message_count = %(message_count)s,
        last_activity = %(last_activity)s, modified_ms = %(modified_ms)s,
        tokens_total = %(tokens_total)s, tokens_last = %(tokens_last)s,
        lease_expires = now() + %(lease)s * interval '1 second'
    WHERE id = %(id)s AND lease_owner = %(owner)s AND lease_fence = %(fence)s AND line_count = %(at)s
"""

APPEND_ONE = f"""
WITH ok AS ({_FENCED_UPDATE} RETURNING id
), added AS (
    INSERT INTO sidecar_lines (session_id, seq, entry_id, line)
    SELECT ok.id, %(at)s, %(entry_id)s, %(line)s FROM ok
    RETURNING 1
), searched AS (
    INSERT INTO sidecar_texts (session_id, seq, text, folded)
    SELECT ok.id, %(at)s, %(text)s::text, %(folded)s::text FROM ok WHERE %(text)s::text IS NOT NULL
)
SELECT count(*) FROM added
"""

APPEND_FEW = f"""
WITH ok AS ({_FENCED_UPDATE} RETURNING id
), added AS (
    INSERT INTO sidecar_lines (session_id, seq, entry_id, line)
    SELECT ok.id, v.seq, v.entry_id, v.line
    FROM ok, unnest(%(seqs)s::bigint[], %(ids)s::text[], %(lines)s::bytea[]) AS v (seq, entry_id, line)
    RETURNING 1
), searched AS (
    INSERT INTO sidecar_texts (session_id, seq, text, folded)
    SELECT ok.id, t.seq, t.text, t.folded
    FROM ok, unnest(%(text_seqs)s::bigint[], %(texts)s::text[], %(foldeds)s::text[]) AS t (seq, text, folded)
)
SELECT count(*) FROM added
"""


def line_params(at: int, lines: list[bytes], ids: list[str | None], texts: list[tuple[int, str]]) -> dict[str, object]:
    """The lines' part of an append's parameters, for APPEND_ONE or APPEND_FEW (by the batch's size)."""
    if len(lines) == 1:
        text = texts[0][1] if texts else None
        return {"entry_id": ids[0], "line": lines[0], "text": text, "folded": fold_text(text)}
    return {
        "seqs": int8_range(at, at + len(lines)),
        "ids": text_array(ids),
        "lines": bytea_array(lines),
        "text_seqs": int8_array([seq for seq, _ in texts]),
        "texts": text_array([text for _, text in texts]),
        "foldeds": text_array([fold_text(text) for _, text in texts]),
    }


def insert_lines(
    conn: psycopg.Connection,
    session_id: str,
    first_seq: int,
    lines: list[bytes],
    ids: list[str | None],
    texts: list[tuple[int, str]],
) -> None:
    """Lines and their search texts, by COPY (the fastest way in, for a whole session)."""
    with conn.cursor() as cur:
        with cur.copy("COPY sidecar_lines (session_id, seq, entry_id, line) FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types(["text", "int8", "text", "bytea"])
            for offset, (line, entry_id) in enumerate(zip(lines, ids)):
                copy.write_row((session_id, first_seq + offset, entry_id, line))
        if texts:
            with cur.copy("COPY sidecar_texts (session_id, seq, text, folded) FROM STDIN (FORMAT BINARY)") as copy:
                copy.set_types(["text", "int8", "text", "text"])
                for seq, text in texts:
                    copy.write_row((session_id, seq, text, fold_text(text)))
