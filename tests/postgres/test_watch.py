"""A watched PostgreSQL session is told of another host's appends by notices, never by the file timer.

Its ``path`` is a ``pg:`` place with no file, so inotify cannot watch it; before, such a session fell into
``rpc/watching.py``'s 50 ms poll and the timer ran for as long as it was watched, with nothing to poll.
"""

from __future__ import annotations

from pathlib import Path

from session_builders import new_session, service

from sidecar import wire


def test_a_watched_session_is_not_polled_and_another_hosts_append_still_reaches_it(tmp_path: Path, pg_url: str) -> None:
    writer_host = service(tmp_path / "a", databaseUrl=pg_url)
    reader_host = service(tmp_path / "b", databaseUrl=pg_url)
    try:
        session_id = new_session(writer_host)
        writer_host.append(
            wire.AppendParams(
                sessionId=session_id,
                entries=[{"type": "message", "message": {"role": "user", "content": "first", "timestamp": 1}}],
            )
        )
        reader_host.open(wire.OpenParams(sessionId=session_id, readOnly=True, watch=True))
        assert session_id in reader_host.watches
        assert reader_host.watches.polled() == []

        sent: list[tuple[str, object]] = []
        reader_host.notify = lambda method, params: sent.append((method, params))
        writer_host.append(
            wire.AppendParams(
                sessionId=session_id,
                entries=[{"type": "message", "message": {"role": "user", "content": "second", "timestamp": 2}}],
            )
        )
        # What a notice makes the rpc layer do (rpc/watching.py): follow in the session's turn.
        reader_host.follow(session_id)
        appended = [params for method, params in sent if method == "session/didAppend"]
        assert len(appended) == 1
        assert [e["message"]["content"] for e in appended[0].entries] == ["second"]  # type: ignore[attr-defined]
        assert reader_host.watches.polled() == []
    finally:
        writer_host.close_all()
        reader_host.close_all()
