"""``session-sidecar demo``: a real sidecar, driven through the protocol, shown step by step.

It spawns ``session-sidecar serve`` as a subprocess and talks to it over
stdio exactly as an agent would, through the Python client package
(``session_sidecar_client``, clients/python): create a session, append a
conversation with tool calls, build the context, branch, fork, compact (when
the server offers it) and list.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from session_sidecar_client import RpcError, SidecarClient, SidecarError
from session_sidecar_client.protocol import (
    AssistantMessage,
    EntryInput,
    GetTreeResult,
    MessageEntry,
    TextContent,
    ToolCall,
    TreeNode,
    WorkDoneBegin,
    WorkDoneEnd,
    WorkDoneReport,
)


def _say(text: str = "") -> None:
    print(text, flush=True)


def _step(title: str) -> None:
    _say()
    _say(f"== {title}")


def _text_of(message: Mapping[str, object]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return " ".join(content.split())
    parts = []
    for block in content if isinstance(content, list) else []:
        if block.get("type") == "text":
            parts.append(" ".join(block["text"].split()))
        elif block.get("type") == "toolCall":
            parts.append(f"[calls {block['name']}({', '.join(f'{k}={v!r}' for k, v in block['arguments'].items())})]")
    return " ".join(parts)


def _user(text: str) -> MessageEntry:
    return {"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": text}]}}


def _assistant(*blocks: TextContent | ToolCall) -> MessageEntry:
    stop: Literal["toolUse", "stop"] = "toolUse" if any(b["type"] == "toolCall" for b in blocks) else "stop"
    message: AssistantMessage = {
        "role": "assistant",
        "content": [*blocks],
        "provider": "demo",
        "model": "demo-1",
        "stopReason": stop,
    }
    return {"type": "message", "message": message}


def _tool_call(call_id: str, name: str, **arguments: object) -> ToolCall:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}


def _tool_result(call_id: str, name: str, text: str) -> MessageEntry:
    return {
        "type": "message",
        "message": {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": name,
            "content": [{"type": "text", "text": text}],
            "isError": False,
        },
    }


# What the read returns: a file of a realistic size, so compaction has something to condense.
_PARSER_SOURCE = "def parse(text):\n    return text.split(',')[0]\n\n" + "\n".join(
    f'def helper_{n}(value):\n    """Normalize field {n} of a record."""\n    return value.strip().lower()\n'
    for n in range(40)
)

CONVERSATION: list[MessageEntry] = [
    _user("The parser test fails on empty input. Can you fix it?"),
    _assistant(
        {"type": "text", "text": "Let me look at the parser."}, _tool_call("call_1", "read", path="src/parser.py")
    ),
    _tool_result("call_1", "read", _PARSER_SOURCE),
    _assistant(_tool_call("call_2", "edit", path="src/parser.py", old="[0]", new="[0] if text else None")),
    _tool_result("call_2", "edit", "Applied 1 edit."),
    _assistant({"type": "text", "text": "Fixed: parse('') now returns None instead of ''."}),
]

_PYTEST_OUTPUT = "\n".join(
    [f"tests/test_parser.py::test_case_{n} PASSED" for n in range(1, 31)] + ["", "30 passed in 0.41s"]
)
SECOND_TURN: list[MessageEntry] = [
    _user("Thanks. Add a regression test for the empty input, and keep the public API unchanged."),
    _assistant(
        _tool_call(
            "call_3", "write", path="tests/test_parser.py", content="def test_empty():\n    assert parse('') is None\n"
        )
    ),
    _tool_result("call_3", "write", "Wrote tests/test_parser.py."),
    _assistant(_tool_call("call_4", "bash", command="pytest -q tests/test_parser.py")),
    _tool_result("call_4", "bash", _PYTEST_OUTPUT),
    _assistant({"type": "text", "text": "Added tests/test_parser.py::test_empty; all 30 parser tests pass."}),
]


def _print_tree(tree: GetTreeResult, entries: Mapping[str | None, Mapping[str, object]]) -> None:
    children: dict[str | None, list[TreeNode]] = {}
    for node in tree["nodes"]:
        children.setdefault(node["parentId"], []).append(node)
    leaf = tree["leafId"]

    def line(node: TreeNode) -> str:
        message = entries.get(node["id"], {}).get("message")
        what = node.get("role") or node["type"]
        text = _text_of(message)[:60] if isinstance(message, dict) else ""
        label = f"  [{node['label']}]" if node.get("label") else ""
        mark = "  <- leaf" if node["id"] == leaf else ""
        return f"{node['id']} {what:<10} {text}{label}{mark}"

    def walk(node: TreeNode, first: str, rest: str) -> None:
        # A chain stays in its column; a branch point opens one column per child.
        _say(first + line(node))
        kids = children.get(node["id"], [])
        if len(kids) == 1:
            walk(kids[0], rest, rest)
        for index, kid in enumerate(kids if len(kids) > 1 else []):
            last = index == len(kids) - 1
            walk(kid, rest + ("`- " if last else "+- "), rest + ("   " if last else "|  "))

    for root in children.get(None, []):
        walk(root, "  ", "  ")


async def run_demo(root: Path | None = None, config: Path | None = None, database_url: str | None = None) -> int:
    with tempfile.TemporaryDirectory(prefix="sidecar-demo-") as scratch:
        sessions_root = Path(root) if root else Path(scratch) / "sessions"
        args = ["--root", str(sessions_root)] + (["--config", str(config)] if config else [])
        if database_url:  # the same session, kept in PostgreSQL
            args += ["--database-url", database_url]
        try:
            # This interpreter's sidecar, so the demo works whether or not the venv's bin is on PATH.
            from .invocation import own_command

            command = own_command()
            async with SidecarClient.spawn(args, command=command, client_name="session-sidecar demo") as client:
                await _drive(client, sessions_root)
                _step("shutdown")
            _say(f"sidecar exited with code {client.returncode}")
        except RpcError as error:
            _say(f"\nerror {error.code} ({error.kind}): {error.message}")
            return 1
        except SidecarError as error:
            _say(f"\nerror: {error}")
            return 1
    return 0


async def _drive(client: SidecarClient, sessions_root: Path) -> None:
    assert client.process is not None and client.initialize_result is not None
    _step(f"initialize (a real sidecar, pid {client.process.pid}, serving {sessions_root})")
    info = client.initialize_result
    caps = info["capabilities"]
    _say(f"{info['serverInfo']['name']} {info['serverInfo']['version']}, protocol {info['protocolVersion']}")
    _say(f"methods: {', '.join(m.removeprefix('session/') for m in caps['methods'])}")
    _say(f"framings: {', '.join(caps['framings'])}; providers: {', '.join(caps['providers']) or '(none)'}")

    _step("session/create")
    created = await client.create(str(Path.cwd()), name="fix the parser")
    session_id = created["sessionId"]
    _say(f"session {session_id}\nfile    {created['path']} (written once the first user or assistant message arrives)")

    _step("session/append: a conversation with two tool calls")
    appended = await client.append(session_id, [*CONVERSATION])
    ids = [e["id"] for e in appended["entries"]]
    for entry, spec in zip(appended["entries"], CONVERSATION):
        _say(
            f"  {entry['id']} <- {entry['parentId'] or 'root':<8} {spec['message']['role']:<10} {_text_of(spec['message'])[:60]}"
        )
    _say(f"leaf {appended['leafId']}, ~{appended['contextTokens']} tokens in context")

    _step("session/buildContext (format llm: what the model would be sent)")
    context = await client.build_context(session_id, format="llm")
    for message in context["messages"]:
        _say(f"  {message['role']:<10} {_text_of(message)[:70]}")

    _step("session/setLabel, then session/branch back to the first answer and try again")
    await client.set_label(session_id, ids[1], "first look")
    await client.branch(session_id, ids[1])
    retry: list[EntryInput] = [
        _tool_result("call_1", "read", "def parse(text):\n    return text.split(',')[0]\n"),
        _assistant({"type": "text", "text": "Alternative: raise ValueError on empty input instead."}),
    ]
    branch = await client.append(session_id, retry)
    tree = await client.get_tree(session_id)
    entries = await client.get_entries(session_id)
    _print_tree(tree, {e["id"]: e for e in entries["entries"]})

    _step("session/fork: the alternative branch becomes a session of its own")
    fork = await client.fork(session_id, entry_id=branch["leafId"])
    _say(f"forked session {fork['sessionId']}\nfile          {fork['path']}")

    _step("session/append: a second request on the first branch")
    await client.branch(session_id, ids[-1])
    second = await client.append(session_id, [*SECOND_TURN])
    _say(f"leaf {second['leafId']}, ~{second['contextTokens']} tokens in context")

    _step("session/compact on the offline summarizer (keepRecentTokens 300: keep about the latest turn)")

    def show(value: WorkDoneBegin | WorkDoneReport | WorkDoneEnd) -> None:
        if value.get("kind") == "report" and value.get("message"):
            _say(f"  .. {value['message']}")

    try:
        compacted = await client.compact(session_id, keep_recent_tokens=300, on_progress=show)
    except RpcError as error:
        _say(f"  not compacted: {error.code} {error.kind}: {error.message}")
    else:
        _say(
            f"  {compacted['tokensBefore']} -> {compacted['tokensAfter']} tokens in {compacted['durationMs']} ms, "
            f"kept from {compacted['firstKeptEntryId']}, files {compacted['details']}"
        )
        _say("  summary:")
        for line in compacted["summary"].splitlines():
            _say(f"    {line}")
        after = await client.build_context(session_id, format="llm")
        _say("  the context now:")
        for message in after["messages"]:
            _say(f"    {message['role']:<10} {_text_of(message)[:90]}")

    _step("session/list")
    listing = await client.list(all=True)
    for listed in listing["sessions"]:
        forked_from = listed.get("parentSession")
        parent = f" (fork of {forked_from[:8]})" if forked_from else ""
        _say(
            f"  {listed['sessionId']}  {listed['messageCount']} messages  "
            f"{listed.get('name') or listed['firstMessage'][:40]!r}{parent}"
        )


if __name__ == "__main__":
    sys.exit(asyncio.run(run_demo()))
