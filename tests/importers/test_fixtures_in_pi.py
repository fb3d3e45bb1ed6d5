"""The committed harness output (fixtures/*.tar.xz, from harness/regenerate.py) imported, then opened by pi 1.5.2.

pi's own SessionManager reads every imported file (tests/parity/pi15, pinned, Node 22),
including the subagent branches and the compaction, and builds the context at the
leaf and at every entry: pi must read it without error and build the same context
as the sidecar does, message for message.
"""

from __future__ import annotations

import json

import pytest
from store_mode import ON_POSTGRES, pi_file

from .importing import call, run_pi15, unpack

# The sessions are imported once, by the module's fixture: on PostgreSQL into one schema for the module.
ONE_STORE_PER_MODULE = True


TOOLS = {"claude-code": "claude-code", "codex": "codex", "opencode": "opencode"}


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("root")
    out = {}
    for name, tool in TOOLS.items():
        folder = unpack(name, tmp_path_factory.mktemp(name))
        run = json.loads((folder / "run.json").read_text())
        source = folder / run["path"]

        async def job(client, tool=tool, source=source):
            result = await client.request("session/import", {"tool": tool, "paths": [str(source)]})
            (session,) = result["sessions"]
            sid = session["sessionId"]
            await client.request("session/open", {"sessionId": sid})
            entries = (await client.request("session/getEntries", {"sessionId": sid}))["entries"]
            contexts = {"@leaf": await client.request("session/buildContext", {"sessionId": sid})}
            for entry in entries:
                contexts[entry["id"]] = await client.request(
                    "session/buildContext", {"sessionId": sid, "leafId": entry["id"]}
                )
            return {"session": session, "entries": entries, "contexts": contexts, "run": run}

        out[name] = call(root, job)
    return out


@pytest.fixture(scope="module")
def pi_reads(imported, tmp_path_factory) -> dict:
    """pi's reading of each imported session, by the session's ``path`` (on PostgreSQL a place: pi is given
    the file export-root writes for it)."""
    assert all(got["session"]["path"].startswith("pg:") == ON_POSTGRES for got in imported.values())
    scratch = tmp_path_factory.mktemp("exported") / "root"
    given = {got["session"]["path"]: pi_file(got["session"]["path"], scratch) for got in imported.values()}
    request = {
        "read": [
            {"path": str(given[got["session"]["path"]]), "leaves": [e["id"] for e in got["entries"]]}
            for got in imported.values()
        ]
    }
    answer = run_pi15(request)
    assert answer["version"] == "1.5.2"
    by_path = {r["path"]: r for r in answer["results"]}
    return {location: by_path[str(path)] for location, path in given.items()}


@pytest.mark.parametrize("name", list(TOOLS))
def test_pi_1_5_2_opens_the_imported_session(imported, pi_reads, name):
    got = imported[name]
    theirs = pi_reads[got["session"]["path"]]
    assert theirs["ok"], theirs.get("error")
    assert [e["id"] for e in theirs["entries"]] == [e["id"] for e in got["entries"]]
    assert theirs["leafId"] == got["contexts"]["@leaf"]["leafId"]
    assert theirs["header"]["importedFrom"]["tool"] == TOOLS[name]
    assert any(e["type"] == "compaction" for e in theirs["entries"])


@pytest.mark.parametrize("name", list(TOOLS))
def test_pi_builds_the_same_context_at_every_entry(imported, pi_reads, name):
    got = imported[name]
    theirs = pi_reads[got["session"]["path"]]["contexts"]
    assert set(theirs) == set(got["contexts"])
    for leaf, ours in got["contexts"].items():
        assert ours["messages"] == theirs[leaf]["messages"], leaf
    leaf = got["contexts"]["@leaf"]["messages"]
    assert leaf[0]["role"] == "compactionSummary" and leaf[-1]["role"] == "assistant"


@pytest.mark.parametrize("name", list(TOOLS))
def test_the_fixture_holds_what_the_issue_lists(imported, name):
    counts = {c["kind"] for c in imported[name]["session"]["counts"]}
    expected = {
        "claude-code": {
            "attachment",
            "api-request-blob",
            "tools-used",
            "last-prompt",
            "cost-state",
            "mode",
            "queue-operation",
            "system/compact_boundary",
            "subagent transcript",
        },
        "codex": {
            "event_msg/item_completed",
            "world_state",
            "token_usage_record",
            "event_msg/thread_settings_applied",
            "compacted",
            "response_item/function_call",
            "subagent rollout",
        },
        "opencode": {
            "part/tool",
            "part/reasoning",
            "part/step-start",
            "part/step-finish",
            "part/compaction",
            "session (subagent)",
            "event/message.part.updated.1",
        },
    }[name]
    assert expected <= counts, expected - counts
