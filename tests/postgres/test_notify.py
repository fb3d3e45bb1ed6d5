"""store/postgres/notify.py on its own: how notices are folded, and a notifier whose connection is
killed sends what it was told once it is back (a real cluster; a plain psycopg connection listens)."""

from __future__ import annotations

import time

import psycopg

from sidecar.store.postgres.db import Database, check_url
from sidecar.store.postgres.notify import Notice, Notifier, _fold, channel_of


def test_appends_of_a_session_fold_into_the_last_leaf_moves_and_closes_keep_their_place() -> None:
    a1, a2, a3 = Notice("s", "append", 3), Notice("s", "append", 5), Notice("s", "append", 6)
    other = Notice("t", "append", 9)
    leaf, close = Notice("s", "leaf", 5, "e5"), Notice("s", "close", 6)
    assert _fold([a1, other, a2, leaf, a3, close]) == [a2, other, leaf, a3, close]
    assert _fold([a1, a2, a3]) == [a3]


def test_payloads_are_small_pointers_and_bad_ones_are_ignored() -> None:
    leaf = Notice("0193-abc", "leaf", 12, "e12")
    assert Notice.parse(leaf.payload()) == leaf
    assert Notice.parse(Notice("x", "append", 4).payload()) == Notice("x", "append", 4)
    # A leaf id too long for NOTIFY's 8000 bytes: the notice still says "read from here".
    huge = Notice("x", "leaf", 4, "e" * 9000)
    assert Notice.parse(huge.payload()) == Notice("x", "append", 4)
    for bad in ("", "{}", "[1]", '{"s": 1, "k": "append", "n": 2}', '{"s": "x", "k": "drop", "n": 2}'):
        assert Notice.parse(bad) is None
    assert len(channel_of("a" * 64)) <= 63


def _heard(conn: psycopg.Connection, count: int, timeout: float = 20.0) -> list[Notice]:
    found: list[Notice] = []
    deadline = time.monotonic() + timeout
    while len(found) < count and time.monotonic() < deadline:
        for note in conn.notifies(timeout=0.2):
            parsed = Notice.parse(note.payload)
            assert parsed is not None
            found.append(parsed)
    return found


def test_a_notifier_whose_connection_was_killed_sends_again_once_it_is_back(pg_url: str) -> None:
    notifier = Notifier(Database(check_url(pg_url), 5.0, "session-sidecar-notify"))
    with psycopg.connect(pg_url, autocommit=True) as listener, psycopg.connect(pg_url, autocommit=True) as admin:
        listener.execute(f'LISTEN "{channel_of("s1")}"')
        notifier.tell(Notice("s1", "append", 1))
        assert notifier.drain(20)
        assert _heard(listener, 1) == [Notice("s1", "append", 1)]
        killed = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE application_name = 'session-sidecar-notify' AND datname = current_database()"
        ).fetchall()
        assert killed == [(True,)]
        notifier.tell(Notice("s1", "leaf", 1, "e1"))
        notifier.tell(Notice("s1", "append", 2))
        assert notifier.drain(20), "the notices were not sent after the connection was killed"
        assert _heard(listener, 2) == [Notice("s1", "leaf", 1, "e1"), Notice("s1", "append", 2)]
