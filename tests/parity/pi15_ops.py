"""Seeded operation lists for the pi parity test (1.5.2 and 1.6.0), and our side of playing them.

The same list drives pi 1.5.2's own SessionManager (pi15/pi_session.mjs) and
our service (``play``), so each seed gives one file written by each. Targets
are integers taken modulo the candidates when the op runs, on each side, so
every list is valid whatever ids the two writers draw.
"""

from __future__ import annotations

import random
import uuid
from typing import Any

from session_builders import assistant, bash_execution, tool_call_assistant, tool_result

from sidecar import wire
from sidecar.service import SessionService

# The characters that tend to break codecs (a lone surrogate as a cut emoji leaves one).
_SPICE = ['"', "\\", "\n", "é", "中", "😀", "\ud83d", "\u2028", "</summary>", "``` ", "secret"]


def _text(rng: random.Random) -> str:
    parts = [
        rng.choice(["abc", "xyz", " ", "q"]) if rng.random() < 0.6 else rng.choice(_SPICE)
        for _ in range(rng.randint(0, 4))
    ]
    return "".join(parts)


def _name(rng: random.Random) -> str:
    """A session name, with the line breaks and edge whitespace pi turns into spaces or trims."""
    return rng.choice(
        [
            "",
            "plan",
            "fix é",
            "名前 two",
            'a "quoted" name',
            " two\nlines ",
            "crlf\r\n\r\nname",
            "\u00a0nbsp\u3000",
            "\ufeffbom",
            "\n",
            "tab\tinside\u0085",
            "\u2028sep\u2029",
        ]
    )


def _system(rng: random.Random, n: int) -> dict[str, Any]:
    roll = rng.random()
    if roll < 0.2:
        return {"role": "system", "content": None, "timestamp": n}
    message: dict[str, Any] = {"role": "system", "content": f"prompt {n}: {_text(rng)}", "timestamp": n}
    if roll > 0.7:
        message["sections"] = {"rules": f"rule {n}", "gone": None} if roll > 0.85 else {"style": "terse"}
    if roll > 0.9:
        message["toolsAdded"] = [{"name": "read", "description": "read a file", "parameters": {"type": "object"}}]
    return message


def _message(rng: random.Random, n: int) -> dict[str, Any]:
    kind = rng.choice(
        [
            "user",
            "user",
            "user_blocks",
            "user_null",
            "assistant",
            "assistant",
            "assistant_null",
            "tool_call",
            "tool_result",
            "tool_result_null",
            "bash",
            "custom_role",
            "system",
        ]
    )
    text = _text(rng)
    if kind == "user":
        return {"role": "user", "content": text, "timestamp": n}
    if kind == "user_blocks":
        return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": n}
    if kind == "user_null":
        return {"role": "user", "content": None, "timestamp": n}
    if kind == "assistant":
        return assistant(text, provider=f"p{n % 3}", model=f"m{n % 5}", timestamp=n)
    if kind == "assistant_null":
        return {**assistant("", provider="p", model="m", timestamp=n), "content": None}
    if kind == "tool_call":
        return tool_call_assistant(f"call{n}")
    if kind == "tool_result":
        return tool_result(f"call{n}", text)
    if kind == "tool_result_null":
        return {**tool_result(f"call{n}", ""), "content": None}
    if kind == "bash":
        return bash_execution(text or "true", text, exit_code=n % 3, excludeFromContext=n % 4 == 0)
    if kind == "custom_role":
        return {"role": "custom", "customType": "legacy", "content": text, "display": True, "timestamp": n}
    return _system(rng, n)


# A small PNG's bytes in base64 (an image a read returns).
_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


def pi_1_6_messages(rng: random.Random, n: int) -> list[dict[str, Any]]:
    """Messages in the shapes pi 1.6.0 writes that 1.5 did not (its agent loop and read tool):

    * an aborted tool batch: the assistant's tool calls, each answered by an error
      ``toolResult`` "Operation aborted" with empty ``details`` (pi-agent-core 1.6.0's
      createErrorToolResult; the assistant turn itself may be an aborted one);
    * an assistant message carrying ``diagnostics`` (pi-ai 1.6.0's AssistantMessageDiagnostic:
      type, timestamp, error {name, message, stack?, code?}, details?);
    * a read of an image the model cannot see: text note, the image, and
      ``details.imageUnsupportedByModel`` naming the model (pi 1.6.0's read tool).
    """
    kind = rng.choice(["aborted_batch", "diagnostics", "unsupported_image"])
    if kind == "aborted_batch":
        calls = [f"abort{n}_{k}" for k in range(rng.randint(1, 3))]
        message = assistant(
            _text(rng), provider="p", model="m", timestamp=n, stopReason=rng.choice(["toolUse", "aborted"])
        )
        message["content"] += [
            {"type": "toolCall", "id": call, "name": rng.choice(["read", "bash"]), "arguments": {"path": f"f{k}.py"}}
            for k, call in enumerate(calls)
        ]
        if message["stopReason"] == "aborted":
            message["errorMessage"] = "Request was aborted"
        results = [
            {
                "role": "toolResult",
                "toolCallId": call,
                "toolName": block["name"],
                "content": [{"type": "text", "text": "Operation aborted"}],
                "details": {},
                "isError": True,
                "timestamp": n,
            }
            for call, block in zip(calls, message["content"][1:])
        ]
        return [message, *results]
    if kind == "diagnostics":
        diagnostic: dict[str, Any] = {
            "type": rng.choice(["provider_retry", "stream_error"]),
            "timestamp": n,
            "error": {"name": "Error", "message": f"socket hang up {_text(rng)}"},
        }
        if rng.random() < 0.5:
            diagnostic["error"]["code"] = rng.choice(["ECONNRESET", 529])
            diagnostic["details"] = {"attempt": n % 3 + 1, "retryable": True}
        message = assistant(_text(rng), provider="p", model="m", timestamp=n, diagnostics=[diagnostic])
        if rng.random() < 0.4:
            message.update(stopReason="error", errorMessage="socket hang up")
        return [message]
    call = f"img{n}"
    return [
        tool_call_assistant(call, "read", "shot.png"),
        {
            "role": "toolResult",
            "toolCallId": call,
            "toolName": "read",
            "content": [
                {"type": "text", "text": "Read image file [image/png]"},
                {"type": "image", "data": _PNG, "mimeType": "image/png"},
            ],
            "details": {"imageUnsupportedByModel": "m-text-only"},
            "isError": False,
            "timestamp": n,
        },
    ]


def operations(seed: int, count: int = 40) -> list[list[Any]]:
    """``count`` operations (JSON lists, pi_session.mjs's format) drawn from ``seed``."""
    rng = random.Random(seed)
    ops: list[list[Any]] = [
        ["message", _system(rng, 0)],
        ["message", {"role": "user", "content": "start", "timestamp": 1}],
    ]
    for n in range(2, count):
        roll = rng.random()
        pick = rng.randrange(10_000)
        if roll < 0.40:
            ops.append(["message", _message(rng, n)])
        elif roll < 0.44:
            ops.append(["thinking", rng.choice(["off", "low", "high"])])
        elif roll < 0.48:
            ops.append(["model", f"mp{n % 2}", f"mm{n % 4}"])
        elif roll < 0.51:
            ops.append(["usage", "compaction", "p", "m", {"input": n, "output": 1, "totalTokens": n + 1}])
        elif roll < 0.54:
            ops.append(["custom", "state", {"n": n, "text": _text(rng)}])
        elif roll < 0.59:
            content: Any = _text(rng) if rng.random() < 0.5 else [{"type": "text", "text": _text(rng)}]
            ops.append(["custom_message", "ext", content, rng.random() < 0.5, {"n": n}])
        elif roll < 0.62:
            ops.append(["session_info", _name(rng)])
        elif roll < 0.68:
            keep = None if rng.random() < 0.2 else pick
            ops.append(
                [
                    "compaction",
                    f"summary {n} {_text(rng)}",
                    keep,
                    n * 10,
                    f"system at {n}" if rng.random() < 0.5 else None,
                ]
            )
        elif roll < 0.72:
            ops.append(["label", pick, rng.choice([None, "", "mark", f"l{n}"])])
        elif roll < 0.77:
            ops.append(["branch", pick])
        elif roll < 0.79:
            ops.append(["reset"])
        elif roll < 0.82:
            ops.append(["branch_summary", None if rng.random() < 0.1 else pick, f"branch {n}"])
        elif roll < 0.88:
            ops += [["message", m] for m in pi_1_6_messages(rng, n)]
        elif roll < 0.93:
            replacement = rng.choice(
                [None, {"content": "[redacted]"}, {"content": [{"type": "text", "text": "[edited]"}]}]
            )
            ops.append(["context_edit", pick, replacement])
        else:
            ops.append(["fork", pick])
    return ops


_EDITABLE_ROLES = ("user", "assistant", "toolResult")


def _append(svc: SessionService, session_id: str, obj: dict[str, Any]) -> None:
    svc.append(wire.AppendParams(sessionId=session_id, entries=[obj]))


def play(svc: SessionService, session_id: str, ops: list[list[Any]]) -> list[wire.ForkResult]:
    """Run ``ops`` on our session as a client would; returns the forks made on the way."""
    forks: list[wire.ForkResult] = []
    for op in ops:
        session = svc.session(session_id)
        entries = list(session.tree.entries)
        ids = [e.id for e in entries]
        kind = op[0]
        if kind == "message":
            _append(svc, session_id, {"type": "message", "message": op[1]})
        elif kind == "thinking":
            _append(svc, session_id, {"type": "thinking_level_change", "thinkingLevel": op[1]})
        elif kind == "model":
            _append(svc, session_id, {"type": "model_change", "provider": op[1], "modelId": op[2]})
        elif kind == "usage":
            _append(
                svc, session_id, {"type": "usage", "kind": op[1], "provider": op[2], "model": op[3], "usage": op[4]}
            )
        elif kind == "custom":
            _append(svc, session_id, {"type": "custom", "customType": op[1], "data": op[2]})
        elif kind == "custom_message":
            _append(
                svc,
                session_id,
                {"type": "custom_message", "customType": op[1], "content": op[2], "display": op[3], "details": op[4]},
            )
        elif kind == "session_info":
            svc.set_name(wire.SetNameParams(sessionId=session_id, name=op[1]))
        elif kind == "compaction":
            own_id = uuid.uuid4().hex[:8]
            branch = [e.id for e in session.tree.path(session.leaf_id)]
            kept = own_id if op[2] is None or not branch else branch[op[2] % len(branch)]
            obj: dict[str, Any] = {
                "type": "compaction",
                "id": own_id,
                "summary": op[1],
                "firstKeptEntryId": kept,
                "tokensBefore": op[3],
            }
            if op[4] is not None:
                obj["systemMessage"] = {"role": "system", "content": op[4], "timestamp": 5}
            _append(svc, session_id, obj)
        elif kind == "label" and ids:
            svc.set_label(wire.SetLabelParams(sessionId=session_id, entryId=ids[op[1] % len(ids)], label=op[2]))
        elif kind == "branch" and ids:
            svc.branch(wire.BranchParams(sessionId=session_id, entryId=ids[op[1] % len(ids)]))
        elif kind == "reset":
            svc.branch(wire.BranchParams(sessionId=session_id, entryId=None))
        elif kind == "branch_summary":
            target = None if op[1] is None or not ids else ids[op[1] % len(ids)]
            svc.branch(wire.BranchParams(sessionId=session_id, entryId=target, summarize=True, provider="offline"))
        elif kind == "context_edit":
            targets = [
                e.id
                for e in session.tree.path(session.leaf_id)
                if e.type == "custom_message" or (e.type == "message" and e.role() in _EDITABLE_ROLES)
            ]
            if targets:
                _append(
                    svc,
                    session_id,
                    {"type": "context_edit", "targetId": targets[op[1] % len(targets)], "replacement": op[2]},
                )
        elif kind == "fork":
            users = [e for e in entries if e.type == "message" and e.role() == "user"]
            if users:
                target = users[op[1] % len(users)]
                forks.append(svc.fork(wire.ForkParams(sessionId=session_id, entryId=target.id)))
    return forks
