"""Two real pi v1 sessions (one with legacy compactions): migrate, back up, build the right context, reopen stably.

The fixtures live in tests/fixtures/pi (conftest.PI_FIXTURES); a missing fixture
fails these tests, it never skips them.
"""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import PI_FIXTURES
from session_builders import adopt_files, context, read_lines, service, stored_at

from sidecar import wire
from sidecar.context.llm import convert_to_llm
from sidecar.store.files.layout import encode_cwd

FIXTURES = ["before-compaction.jsonl", "large-session.jsonl"]


@pytest.fixture(params=FIXTURES)
def pi_file(request, sessions_root):
    source = PI_FIXTURES / request.param
    assert source.is_file(), f"pi fixture missing: {source} (the tests need tests/fixtures/pi)"
    original_lines = [json.loads(raw) for raw in source.read_text(encoding="utf-8").splitlines()]
    head = original_lines[0]
    target = sessions_root / encode_cwd(head["cwd"]) / f"2025-01-01T00-00-00-000Z_{head['id']}.jsonl"
    target.parent.mkdir(parents=True)
    shutil.copyfile(source, target)
    return source, target, original_lines


def expected_messages(original_lines: list[dict]) -> list[dict]:
    """An independent reading of a linear v1 file: the last compaction's summary,
    then the lines from its firstKeptEntryIndex (the header being line 0), then the rest."""
    compactions = [i for i, obj in enumerate(original_lines) if obj["type"] == "compaction"]

    def messages(objs):
        out = []
        for obj in objs:
            if obj["type"] == "message":
                body = obj["message"]
                out.append({**body, "role": "custom"} if body["role"] == "hookMessage" else body)
        return out

    if not compactions:
        return messages(original_lines[1:])
    last = compactions[-1]
    comp = original_lines[last]
    return (
        [{"role": "compactionSummary", "summary": comp["summary"], "tokensBefore": comp["tokensBefore"]}]
        + messages(original_lines[comp["firstKeptEntryIndex"] : last])
        + messages(original_lines[last + 1 :])
    )


def test_pi_fixture_opens_migrated_with_a_backup_and_the_right_context(pi_file, sessions_root):
    source, target, original_lines = pi_file
    assert original_lines[0].get("version") is None  # these are v1 files
    svc = service(sessions_root)
    adopt_files(svc)
    target = stored_at(svc, target)
    opened = svc.open(wire.OpenParams(sessionId=original_lines[0]["id"]))
    assert opened.migratedFrom == 1 and opened.parseErrors == 0
    assert opened.entryCount == len(original_lines) - 1
    backup = target.with_name(target.name + ".v1.bak")
    assert backup.read_bytes() == source.read_bytes()

    migrated = read_lines(target)
    assert migrated[0]["version"] == 3
    # Every entry keeps its fields; ids chain in file order.
    for before, after in zip(original_lines[1:], migrated[1:]):
        assert {k: v for k, v in after.items() if k not in ("id", "parentId", "firstKeptEntryId")} == {
            k: v for k, v in before.items() if k != "firstKeptEntryIndex"
        }
    assert [r["parentId"] for r in migrated[1:]] == [None] + [r["id"] for r in migrated[1:-1]]
    assert opened.leafId == migrated[-1]["id"]

    ctx = context(svc, opened.sessionId)
    expected = expected_messages(original_lines)
    assert len(ctx.messages) == len(expected)
    if expected[0]["role"] == "compactionSummary":
        summary = ctx.messages[0]
        assert summary["role"] == "compactionSummary" and summary["summary"] == expected[0]["summary"]
        assert summary["tokensBefore"] == expected[0]["tokensBefore"] and isinstance(summary["timestamp"], int)
        assert ctx.messages[1:] == expected[1:]
    else:
        assert ctx.messages == expected
    last_assistant = next(m for m in reversed(expected) if m["role"] == "assistant")
    assert ctx.model == {"provider": last_assistant["provider"], "modelId": last_assistant["model"]}
    levels = [o["thinkingLevel"] for o in original_lines if o["type"] == "thinking_level_change"]
    assert ctx.thinkingLevel == (levels[-1] if levels else "off")

    llm = context(svc, opened.sessionId, fmt="llm").messages
    assert llm == convert_to_llm(ctx.messages)
    assert {m["role"] for m in llm} <= {"user", "assistant", "toolResult"}


def test_pi_fixture_reopens_stably_without_a_second_migration(pi_file, sessions_root):
    _, written, original_lines = pi_file
    session_id = original_lines[0]["id"]
    first = service(sessions_root)
    adopt_files(first)
    target = stored_at(first, written)
    first.open(wire.OpenParams(sessionId=session_id))
    before_ctx = context(first, session_id).messages
    first.close(wire.CloseParams(sessionId=session_id))
    migrated = target.read_bytes()

    second = service(sessions_root)
    again = second.open(wire.OpenParams(sessionId=session_id))
    assert again.migratedFrom is None and again.parseErrors == 0
    assert target.read_bytes() == migrated
    assert context(second, session_id).messages == before_ctx
    assert target.with_name(target.name + ".v1.bak").exists()
    if target == written:  # the file store: the one backup is all that lies beside it
        assert sorted(p.name for p in target.parent.iterdir() if p.name != target.name) == [target.name + ".v1.bak"]


def test_the_legacy_compaction_fixture_really_has_compactions():
    # Guards the fixture itself: the context test above must exercise a compaction.
    lines = [json.loads(raw) for raw in (PI_FIXTURES / "before-compaction.jsonl").read_text().splitlines()]
    compactions = [obj for obj in lines if obj["type"] == "compaction"]
    assert len(compactions) == 2 and all(isinstance(c["firstKeptEntryIndex"], int) for c in compactions)
