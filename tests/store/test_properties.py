"""Property tests: random histories survive a reopen unchanged, and buildContext equals a plain walk."""

from __future__ import annotations

import json
import shutil
import tempfile
from datetime import datetime
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from random_sessions import operations, play, start
from session_builders import service

from sidecar import wire
from sidecar.context.build import build_context

PROPERTY_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def epoch_ms(iso: str) -> int:
    return round(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


def reference_context(records: list[dict], leaf: str | None) -> dict:
    """buildContext written out plainly from the rules, over decoded records."""
    if leaf is None:
        return {"messages": [], "thinkingLevel": "off", "model": None}
    by_id = {r["id"]: r for r in records}
    path, node = [], by_id[leaf]
    while node is not None:
        path.append(node)
        node = by_id.get(node["parentId"]) if node["parentId"] else None
    path.reverse()

    level, model, last_compaction = "off", None, None
    for position, record in enumerate(path):
        if record["type"] == "thinking_level_change":
            level = record["thinkingLevel"]
        elif record["type"] == "model_change":
            model = {"provider": record["provider"], "modelId": record["modelId"]}
        elif record["type"] == "message" and record["message"]["role"] == "assistant":
            model = {"provider": record["message"]["provider"], "modelId": record["message"]["model"]}
        elif record["type"] == "compaction":
            last_compaction = position

    def to_message(record):
        if record["type"] == "message":
            return [record["message"]]
        if record["type"] == "custom_message":
            m = {
                "role": "custom",
                "customType": record["customType"],
                "content": record["content"],
                "display": record["display"],
            }
            if "details" in record:
                m["details"] = record["details"]
            return [{**m, "timestamp": epoch_ms(record["timestamp"])}]
        if record["type"] == "branch_summary" and record["summary"]:
            return [
                {
                    "role": "branchSummary",
                    "summary": record["summary"],
                    "fromId": record["fromId"],
                    "timestamp": epoch_ms(record["timestamp"]),
                }
            ]
        return []

    if last_compaction is None:
        chosen = path
        messages = []
    else:
        comp = path[last_compaction]
        before = path[:last_compaction]
        kept_ids = [r["id"] for r in before]
        kept = before[kept_ids.index(comp["firstKeptEntryId"]) :] if comp["firstKeptEntryId"] in kept_ids else []
        chosen = kept + path[last_compaction + 1 :]
        messages = [
            {
                "role": "compactionSummary",
                "summary": comp["summary"],
                "tokensBefore": comp["tokensBefore"],
                "timestamp": epoch_ms(comp["timestamp"]),
            }
        ]
    for record in chosen:
        messages += to_message(record)
    return {"messages": messages, "thinkingLevel": level, "model": model}


def state_of(session) -> dict:
    return {
        "entries": [e.raw for e in session.tree.entries],
        "labels": dict(session.tree.labels),
        "name": session.tree.name,
        "header": session.header.raw,
    }


@PROPERTY_SETTINGS
@given(steps=operations())
def test_random_histories_reopen_to_the_same_state(steps):
    root = Path(tempfile.mkdtemp(prefix="prop-reopen-"))
    services = []  # closed after each example: on PostgreSQL each holds connections of its own
    try:
        svc = service(root)
        services.append(svc)
        sid = start(svc)
        forks = play(svc, sid, steps)
        for session_id in [sid, *forks]:
            session = svc.session(session_id)
            if not session.persisted:
                assert not session.path.exists()
                continue
            before = state_of(session)
            last_id = session.tree.entries[-1].id
            fresh = service(root)  # svc still holds the session: read it without the lock
            services.append(fresh)
            opened = fresh.open(wire.OpenParams(sessionId=session_id, readOnly=True))
            assert opened.parseErrors == 0 and opened.migratedFrom is None
            assert state_of(fresh.session(session_id)) == before
            # The leaf is not stored: on open it is the last entry in file order.
            assert opened.leafId == last_id
    finally:
        for made in services:
            made.close_all()
        shutil.rmtree(root)


@PROPERTY_SETTINGS
@given(steps=operations())
def test_build_context_equals_a_plain_walk_at_every_leaf(steps):
    root = Path(tempfile.mkdtemp(prefix="prop-context-"))
    svc = None  # closed after each example: on PostgreSQL it holds connections of its own
    try:
        svc = service(root)
        sid = start(svc)
        play(svc, sid, steps)
        session = svc.session(sid)
        records = [e.obj() for e in session.tree.entries]
        for leaf in [None, *[r["id"] for r in records]]:
            ours = build_context(session.path_to(leaf))
            expected = reference_context(records, leaf)
            assert ours.messages == expected["messages"]
            assert ours.thinking_level == expected["thinkingLevel"]
            assert ours.model == expected["model"]
        # And the service answers the same at its leaf, through a JSON round trip.
        result = svc.build_context(wire.BuildContextParams(sessionId=sid))
        assert result.messages == reference_context(records, session.leaf_id)["messages"]
        json.dumps(result.messages)  # plain data only
    finally:
        if svc is not None:
            svc.close_all()
        shutil.rmtree(root)
