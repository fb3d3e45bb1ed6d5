"""Which per-session queue a call waits in (rpc/dispatch.py queue_key)."""

from __future__ import annotations

from sidecar import wire
from sidecar.rpc.dispatch import queue_key


def test_calls_by_id_and_an_open_by_its_file_share_one_queue():
    sid = "01a1fef4-e698-760d-a3a8-c9d112518e76"
    path = f"/root/sessions/--work--/2026-11-21T16-33-45-112Z_{sid}.jsonl"
    assert queue_key(wire.AppendParams(sessionId=sid, entries=[])) == sid
    assert queue_key(wire.OpenParams(path=path)) == sid  # waits behind calls already queued on that session


def test_a_file_named_otherwise_gets_a_queue_of_its_own():
    assert queue_key(wire.OpenParams(path="/elsewhere/notes.jsonl")) == "path:/elsewhere/notes.jsonl"
    assert queue_key(wire.OpenParams(path="/x/2026_../evil.jsonl")) == "path:/x/2026_../evil.jsonl"
    assert queue_key(wire.ListParams()) is None
