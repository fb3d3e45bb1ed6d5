"""The listing fold of appended lines told their entries: a line whose envelope says enough is not decoded,
and the row comes out as if every line had been decoded and fed."""

from __future__ import annotations

import json

import pytest

from sidecar.format.jsonl import parse_line
from sidecar.store.index.listing import Accumulator, decode_line
from sidecar.store.index.read import _COUNTED, _IGNORED, listing_skip

LINES = [
    {
        "type": "message",
        "id": "a",
        "timestamp": "2026-01-02T03:04:05.006Z",
        "message": {"role": "user", "content": "hi"},
    },
    {
        "type": "message",
        "id": "b",
        "message": {
            "role": "assistant",
            "content": [{"type": "text", "text": "yo"}],
            "usage": {"totalTokens": 12},
            "stopReason": "stop",
            "timestamp": 7,
        },
    },
    {"type": "message", "id": "c", "message": {"role": "toolResult", "content": [{"type": "text", "text": "out"}]}},
    {"type": "message", "id": "d", "message": {"role": "bashExecution", "command": "ls", "output": "x"}},
    {"type": "message", "id": "e", "message": {"role": ["user"], "content": "a list role"}},
    {"type": "message", "id": "f", "message": {"content": "no role"}},
    {"type": "message", "id": "g", "message": None},
    {"type": "message", "id": "h", "message": "not an object"},
    {"type": "message", "id": "i"},
    {"type": "message", "id": 5, "message": {"role": "custom", "content": "odd id"}},
    {"type": "session_info", "id": "j", "name": "  named  "},
    {"type": "session_info", "id": "k", "name": 3},
    {"type": "label", "id": "l", "targetId": "a", "label": "x"},
    {"type": "custom", "id": "m", "customType": "t", "data": {"message": {"role": "user"}}},
    {"type": "custom_message", "id": "n", "customType": "t", "content": "shown", "display": True},
    {"type": "model_change", "id": "o", "provider": "p", "modelId": "m"},
    {"type": "compaction", "id": "p", "summary": "s", "firstKeptEntryId": "a", "tokensBefore": 1},
    {"type": 7, "id": "q", "message": {"role": "toolResult"}},
    {"id": "r", "message": {"role": "user", "content": "no type"}},
]


def state(acc: Accumulator) -> tuple:
    return acc.count, acc.first, acc.last_activity, acc.name, acc.tokens_total, acc.tokens_last


@pytest.mark.parametrize("obj", LINES, ids=[str(line.get("id")) for line in LINES])
def test_a_skipped_line_is_one_feed_would_ignore_or_only_count(obj):
    raw = json.dumps(obj).encode()
    entry = parse_line(raw)
    assert entry is not None
    fed = Accumulator(3, "first", 10, "name", 100, 20)
    line = decode_line(raw)
    text = fed.feed(line) if line is not None else None
    before = (3, "first", 10, "name", 100, 20)
    skip = listing_skip(entry)
    if skip == _IGNORED:
        assert text is None and state(fed) == before
    elif skip == _COUNTED:
        assert text is None and state(fed) == (4,) + before[1:]
    # Both kinds of skip occur, and so do lines that must be decoded.
    assert skip in (0, _IGNORED, _COUNTED)


def test_every_kind_of_skip_is_exercised():
    skips = {listing_skip(parse_line(json.dumps(obj).encode())) for obj in LINES}
    assert skips == {0, _IGNORED, _COUNTED}


def test_appends_of_every_kind_leave_the_row_a_rebuild_from_the_file_makes(sessions_root):
    """Folded with their entries (most lines not decoded), then rebuilt from the file: the same row and answers."""
    import sqlite3

    from session_builders import append, assistant, msg, new_session, service, tool_result, user

    from sidecar import wire
    from sidecar.store.index.sqlite import INDEX_DIR, INDEX_NAME

    svc = service(sessions_root)
    sid = new_session(svc)
    append(
        svc,
        sid,
        msg(user("find the parser")),
        msg(assistant("calling", usage={"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15})),
    )
    append(
        svc,
        sid,
        msg(tool_result("c1", "parser body")),
        {"type": "custom", "customType": "ext", "data": {"k": 1}},
        {"type": "model_change", "provider": "p", "modelId": "m"},
    )
    append(
        svc,
        sid,
        msg(
            {
                "role": "bashExecution",
                "command": "ls",
                "output": "a b",
                "exitCode": 0,
                "cancelled": False,
                "truncated": False,
                "timestamp": 99,
            }
        ),
    )
    svc.set_name(wire.SetNameParams(sessionId=sid, name="the parser hunt"))
    append(
        svc,
        sid,
        {"type": "custom_message", "customType": "ext", "content": "shown text", "display": True},
        msg(user("and the tests?")),
        msg(assistant("done", usage={"totalTokens": 40})),
    )
    leaf = svc.session(sid).leaf_id
    svc.set_label(wire.SetLabelParams(sessionId=sid, entryId=leaf, label="checkpoint"))

    columns = (
        "message_count, first_message, last_activity, name, tokens_total, tokens_last, modified_ms,"
        " size, meta, title, session_id"
    )

    def row() -> tuple:
        conn = sqlite3.connect(sessions_root / INDEX_DIR / INDEX_NAME)
        try:
            return conn.execute(f"SELECT {columns} FROM files WHERE session_id=?", (sid,)).fetchone()
        finally:
            conn.close()

    def answers() -> list:
        return [
            svc.list(wire.ListParams(all=True, limit=100, query=query)).sessions
            for query in (None, "parser body", "shown", "tests?", "hunt")
        ]

    folded, folded_answers = row(), answers()
    assert folded[0] == 6 and folded[3] == "the parser hunt" and folded[4:6] == (55, 40)
    assert svc.store.reindex() == 1
    assert row() == folded
    assert answers() == folded_answers


def _rows(index_path, sids) -> list:
    import sqlite3

    conn = sqlite3.connect(index_path)
    try:
        return [
            conn.execute(
                "SELECT message_count, first_message, last_activity, size FROM files WHERE session_id=?", (sid,)
            ).fetchone()
            for sid in sids
        ]
    finally:
        conn.close()


def test_folds_of_several_files_in_one_transaction_leave_the_rows_each_alone_leaves(sessions_root):
    """ListingIndex.appended_to: one commit for an upkeep's files, the rows a fold of each alone (or a
    rebuild) makes; when one file's fold fails, the others are still folded, each alone."""
    from session_builders import entry, header, line, user, write_session

    from sidecar.format.jsonl import parse_line
    from sidecar.store.index.sqlite import INDEX_DIR, INDEX_NAME, ListingIndex

    sids = [f"fold-{n}" for n in range(3)]
    folder = sessions_root / "--w--"
    paths = [
        write_session(
            folder / f"2025-01-01T00-00-00-000Z_{sid}.jsonl",
            header(sid, cwd="/w"),
            [entry("message", f"{sid}-0", None, 1, message=user(f"first of {sid}"))],
        )
        for sid in sids
    ]
    index = ListingIndex(sessions_root)
    index.rebuild([(folder, "")])

    def grow(path, sid, n):
        objs = [
            entry("message", f"{sid}-{k}", f"{sid}-{k - 1}", k + 1, message=user(f"{sid} says {k}", timestamp=k * 1000))
            for k in range(n, n + 2)
        ]
        with open(path, "a") as file:
            file.write("".join(line(obj) + "\n" for obj in objs))
        return [parse_line(line(obj).encode()) for obj in objs]

    commits: list[str] = []
    index._connection().set_trace_callback(lambda sql: commits.append(sql) if sql == "COMMIT" else None)
    index.appended_to([(path, "", grow(path, sid, 1)) for path, sid in zip(paths, sids)])
    assert len(commits) == 1
    folded = _rows(sessions_root / INDEX_DIR / INDEX_NAME, sids)
    assert [row[0] for row in folded] == [3, 3, 3] and [row[2] for row in folded] == [2000, 2000, 2000]

    # One file gone before its fold: the others' folds still land.
    jobs = [(path, "", grow(path, sid, 3)) for path, sid in zip(paths, sids)]
    paths[1].unlink()
    index.appended_to(jobs)
    after = _rows(sessions_root / INDEX_DIR / INDEX_NAME, sids)
    assert [after[0][0], after[2][0]] == [5, 5] and after[1] == folded[1]

    index.close()
    rebuilt = ListingIndex(sessions_root)
    rebuilt.rebuild([(folder, "")])
    assert [r for n, r in enumerate(_rows(sessions_root / INDEX_DIR / INDEX_NAME, sids)) if n != 1] == [
        after[0],
        after[2],
    ]
    rebuilt.close()
