"""session/list carries each session's reported token usage, from the index and from the files alike."""

from __future__ import annotations

import shutil

import pytest
from session_builders import append, assistant, msg, new_session, service, user

from sidecar import wire
from sidecar.store.index.sqlite import INDEX_DIR, IndexUnavailable


def listed(svc):
    return {s.sessionId: s.tokens for s in svc.list(wire.ListParams(all=True, limit=1000)).sessions}


@pytest.fixture
def svc(sessions_root):
    svc = service(sessions_root)
    costly = new_session(svc, sessionId="costly")
    append(svc, costly, msg(user("one")), msg(assistant("a", usage={"totalTokens": 1200})))
    append(
        svc,
        costly,
        msg(user("two")),
        msg(assistant("b", usage={"input": 300, "output": 40, "cacheRead": 2000, "cacheWrite": 7})),
    )
    # An aborted reply's usage does not count.
    append(svc, costly, msg(user("three")), msg(assistant("c", usage={"totalTokens": 999}, stopReason="aborted")))
    quiet = new_session(svc, sessionId="quiet")
    append(svc, quiet, msg(user("no reply yet")), msg(assistant("d", usage={})))
    return svc


EXPECTED = {
    "costly": wire.SessionTokens(total=1200 + 2347, last=2347),
    "quiet": wire.SessionTokens(total=0, last=0),
}


def test_each_listed_session_carries_its_reported_tokens(svc):
    """Every store: the listing's own fields (the index's rows, or PostgreSQL's session rows), also for another service."""
    assert listed(svc) == EXPECTED
    other = service(svc.store.layout.root)
    assert listed(other) == EXPECTED
    svc.append(wire.AppendParams(sessionId="quiet", entries=[msg(assistant("e", usage={"totalTokens": 50}))]))
    assert listed(other)["quiet"] == wire.SessionTokens(total=50, last=50)


def test_tokens_come_from_the_index(svc):
    assert listed(svc) == EXPECTED
    svc.store.catalog.index.close()
    shutil.rmtree(svc.store.layout.root / INDEX_DIR)
    assert listed(service(svc.store.layout.root)) == EXPECTED  # and from a rebuilt one


def test_tokens_come_from_the_files_when_the_index_is_unavailable(svc, monkeypatch):
    def unavailable(*args, **kwargs):
        raise IndexUnavailable("locked")

    monkeypatch.setattr(svc.store.catalog.index, "sync", unavailable)
    assert listed(svc) == EXPECTED
