"""Builders for session entries and files, shared by the store, format, context and parity tests.

Every builder returns plain dicts in pi's shapes; ``write_session`` lays them
out as pi does (compact JSON, one line each, header first).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from sidecar import wire
from sidecar.config import Settings, apply_overrides
from sidecar.service import SessionService

T0 = "2025-01-01T00:00:00.000Z"


def stamp(second: int) -> str:
    """An ISO timestamp ``second`` seconds after T0 (minutes and hours roll over)."""
    return f"2025-01-01T{second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}.000Z"


def header(session_id: str = "sess-1", version: int | None = 3, cwd: str = "/work/proj", **extra: Any) -> dict:
    obj: dict[str, Any] = {"type": "session"}
    if version is not None:
        obj["version"] = version
    obj.update({"id": session_id, "timestamp": T0, "cwd": cwd, **extra})
    return obj


def user(text: str = "hello", timestamp: int = 1) -> dict:
    return {"role": "user", "content": text, "timestamp": timestamp}


def assistant(text: str = "hi", provider: str = "anthropic", model: str = "claude-test", **extra: Any) -> dict:
    message = {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "anthropic-messages",
        "provider": provider,
        "model": model,
        "usage": {
            "input": 10,
            "output": 5,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 15,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        },
        "stopReason": "stop",
        "timestamp": 2,
    }
    message.update(extra)
    return message


def tool_call_assistant(call_id: str = "call-1", name: str = "read", path: str = "a.py") -> dict:
    message = assistant("")
    message["content"] = [{"type": "toolCall", "id": call_id, "name": name, "arguments": {"path": path}}]
    message["stopReason"] = "toolUse"
    return message


def tool_result(call_id: str = "call-1", text: str = "file body", name: str = "read") -> dict:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [{"type": "text", "text": text}],
        "isError": False,
        "timestamp": 3,
    }


def bash_execution(command: str = "ls", output: str = "a\nb", exit_code: Any = 0, **extra: Any) -> dict:
    message = {
        "role": "bashExecution",
        "command": command,
        "output": output,
        "exitCode": exit_code,
        "cancelled": False,
        "truncated": False,
        "timestamp": 4,
    }
    message.update(extra)
    return message


def entry(kind: str, entry_id: str, parent_id: str | None, second: int = 0, **fields: Any) -> dict:
    return {"type": kind, "id": entry_id, "parentId": parent_id, "timestamp": stamp(second), **fields}


def message(entry_id: str, parent_id: str | None, body: dict, second: int = 0) -> dict:
    return entry("message", entry_id, parent_id, second, message=body)


def line(obj: Any) -> str:
    """One line as JSON.stringify writes it (a lone surrogate becomes its escape)."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    return re.sub("[\ud800-\udfff]", lambda m: f"\\u{ord(m.group(0)):04x}", text)


def write_session(path: Path, head: dict, entries: list[dict | str]) -> Path:
    """A session file: the header, then each entry (a str is written as the raw line)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [line(head)] + [e if isinstance(e, str) else line(e) for e in entries]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def read_lines(path: Path) -> list[dict]:
    return [json.loads(raw) for raw in path.read_text(encoding="utf-8").split("\n") if raw.strip()]


def service(root: Path, **store: Any) -> SessionService:
    settings = apply_overrides(Settings(), {"store": store}, "test") if store else Settings()
    return SessionService(root, settings)


def new_session(svc: SessionService, cwd: str = "/work/proj", **params: Any) -> str:
    return svc.create(wire.CreateParams(cwd=cwd, **params)).sessionId


def append(svc: SessionService, session_id: str, *objs: dict, **params: Any) -> list[str]:
    result = svc.append(wire.AppendParams(sessionId=session_id, entries=list(objs), **params))
    return [e.id for e in result.entries]


def append_as_another_agent(svc: SessionService, session_id: str, obj: dict) -> str:
    """Put ``obj`` in a session as a newer agent writing its file would (session/append refuses an
    entry type pi does not define): its line added to the file below the leaf, the session opened
    again. The session must have its file. Returns the entry's id."""
    import os
    import uuid
    from unittest import mock

    session = svc.session(session_id)
    svc.flush(wire.FlushParams(sessionId=session_id))
    entry_id = uuid.uuid4().hex[:8]
    full = {
        "type": obj["type"],
        "id": entry_id,
        "parentId": session.leaf_id,
        "timestamp": T0,
        **{key: value for key, value in obj.items() if key != "type"},
    }
    if os.environ.get("SIDECAR_TEST_STORE") == "postgres":
        # A database session has no file to add a line to: the row goes in as a newer sidecar that
        # knows the type would append it (this one's shape check left out for the call).
        with mock.patch("sidecar.store.appending.validate_batch", lambda *args, **kwargs: None):
            svc.append(wire.AppendParams(sessionId=session_id, entries=[full]))
        return entry_id
    path = Path(session.path)
    with path.open("a", encoding="utf-8") as file:
        file.write(line(full) + "\n")
    svc.close(wire.CloseParams(sessionId=session_id))
    svc.open(wire.OpenParams(path=str(path)))
    return entry_id


def msg(body: dict) -> dict:
    """An entry to append (no id: the store assigns it)."""
    return {"type": "message", "message": body}


def context(svc: SessionService, session_id: str, fmt: str = "agent", **params: Any) -> wire.BuildContextResult:
    return svc.build_context(wire.BuildContextParams(sessionId=session_id, format=fmt, **params))


# -- a session whose path holds labels, a name, a custom entry and a compaction (issue 23) --


def turn(svc: SessionService, session_id: str, number: int) -> list[str]:
    return append(
        svc,
        session_id,
        msg(user(f"question {number}")),
        msg(tool_call_assistant(f"call{number}", path=f"src/m{number}.py")),
        msg(tool_result(f"call{number}", f"body of m{number}")),
        msg(assistant(f"answer {number}")),
    )


def labelled_session(svc: SessionService) -> tuple[str, dict[str, str]]:
    """The issue's session: labels before and after a compaction, a name, a custom entry."""
    session_id = svc.create(wire.CreateParams(cwd="/work/proj")).sessionId
    ids: dict[str, str] = {}
    ids["answer0"] = turn(svc, session_id, 0)[-1]
    ids["label0"] = svc.set_label(
        wire.SetLabelParams(sessionId=session_id, entryId=ids["answer0"], label="first")
    ).entryId
    ids["q1"] = turn(svc, session_id, 1)[0]
    ids["label_q1"] = svc.set_label(wire.SetLabelParams(sessionId=session_id, entryId=ids["q1"], label="asked")).entryId
    ids["q2"] = turn(svc, session_id, 2)[0]
    ids["name"] = svc.set_name(wire.SetNameParams(sessionId=session_id, name="labels and forks")).entryId
    ids["custom"] = append(svc, session_id, {"type": "custom", "customType": "ext-state", "data": {"n": 1}})[0]
    # Kept region starts at a label entry: after the fork it must start at the entry after it.
    ids["compaction"] = append(
        svc,
        session_id,
        {"type": "compaction", "summary": "work so far", "firstKeptEntryId": ids["label_q1"], "tokensBefore": 1234},
    )[0]
    ids["answer3"] = turn(svc, session_id, 3)[-1]
    ids["label3"] = svc.set_label(
        wire.SetLabelParams(sessionId=session_id, entryId=ids["answer3"], label="late")
    ).entryId
    turn4 = turn(svc, session_id, 4)
    ids["q4"], ids["last"] = turn4[0], turn4[-1]
    return session_id, ids


def adopt_files(svc: SessionService) -> None:
    """Session files a test wrote below the root become the store's sessions.

    The file store reads them where they are; the PostgreSQL store (scripts/test.sh's pass with
    SIDECAR_TEST_STORE=postgres) takes them in as ``session-sidecar migrate`` does, keeping their bytes.
    """
    database = getattr(svc.store, "db", None)
    if database is not None:
        from sidecar.store.postgres.transfer import import_root

        import_root(database, svc.store.root)


def stored_at(svc: SessionService, path: Path) -> Path:
    """Where the store keeps what a test wrote at ``path`` below the root: that file on the file store,
    its ``pg:`` location on PostgreSQL (tests/conftest.py reads those from the database)."""
    if getattr(svc.store, "db", None) is None:
        return path
    return Path("pg:" + path.relative_to(svc.store.root).as_posix())
