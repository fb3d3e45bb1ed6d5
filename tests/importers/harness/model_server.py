"""A scripted model server on loopback, speaking each CLI's real streaming wire format.

Codex talks the Responses API (``POST .../responses``, SSE ``response.*`` events),
Claude Code the Messages API (``POST .../v1/messages``, SSE ``message_start`` ...),
opencode chat completions (``POST .../chat/completions``, SSE ``chat.completion.chunk``).

The reply is chosen from the conversation the CLI sends, not from a counter, so
side requests a CLI makes (titles, quota probes) never shift the script:

- the last user turn is a tool result -> a closing text naming the tool output;
- the prompt holds ``[[TOOL]]`` -> thinking, a line of text and a shell tool call;
- the prompt holds ``[[AGENT]]`` -> a subagent call (Claude's ``Agent``/``Task``,
  opencode's ``task``, Codex's ``spawn_agent``) whose prompt says ``[[SUB]]``;
- the prompt holds ``[[SUB]]`` (a subagent's own request) -> a shell call, then text;
- the prompt holds ``[[PATCH]]`` -> Codex's freeform ``apply_patch`` (elsewhere a shell call);
- a summarisation request (the CLIs' compaction prompts) -> a summary;
- anything else -> thinking and a one-line text echoing the prompt's marker.

Each request is appended to ``requests.jsonl`` in the log folder for debugging.
Run: ``python model_server.py LOGDIR`` prints the port on stdout.
"""

from __future__ import annotations

import json
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

SHELL_COMMAND = "echo imported-by-sidecar > note.txt && cat note.txt"
SUB_COMMAND = "echo from-the-subagent"
PATCH_COMMAND = "echo patched > patched.txt"
SUMMARY = "Summary of the work so far: note.txt was created and holds imported-by-sidecar; a subagent ran."
SUMMARY_ASKS = (
    r"create a detailed summary|CHECKPOINT COMPACTION|handoff summary|summary of (our|the) conversation"
    r"|continuing (our|the) conversation|summarize the conversation|Do not mention the summary process"
)
PATCH = "*** Begin Patch\n*** Add File: patched.txt\n+patched by codex\n*** End Patch\n"


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict):
                for key in ("text", "content", "output"):
                    if isinstance(block.get(key), (str, list)):
                        parts.append(_text_of(block[key]))
                        break
        return "\n".join(parts)
    return ""


class Turn:
    """What the request says, reduced to what chooses the reply."""

    def __init__(self, prompt: str, after_tool: bool, tool_output: str, tools: list[str], everything: str) -> None:
        self.prompt, self.after_tool, self.tool_output, self.tools, self.everything = (
            prompt,
            after_tool,
            tool_output,
            tools,
            everything,
        )
        self.big = False


def plan(turn: Turn, model: str) -> list[tuple]:
    """The reply as neutral blocks: ("thinking", text) ("text", text) ("tool", name, args|str)."""
    marker = re.findall(r"\[\[([A-Z0-9]+)\]\]", turn.prompt)
    label = marker[-1] if marker else "PLAIN"
    summarising = re.search(SUMMARY_ASKS, turn.prompt, re.I)
    if turn.after_tool:
        return [("text", f"Finished ({model}): the tool said {turn.tool_output.strip()[:80]!r}.")]
    if summarising and label not in ("TOOL", "AGENT", "SUB", "PATCH"):
        return [("text", f"<summary>\n{SUMMARY}\n</summary>" if "<summary>" in turn.everything else SUMMARY)]
    shell = _shell_tool(turn.tools)
    if label == "SUB":
        return [("text", "Subagent here, running one command."), ("tool", *shell(SUB_COMMAND))]
    if label == "AGENT":
        agent = _agent_tool(turn.tools)
        if agent:
            return [
                ("thinking", "This is a job for a subagent."),
                ("text", "Delegating to a subagent."),
                ("tool", *agent),
            ]
        return [("text", "No subagent tool offered."), ("tool", *shell(SUB_COMMAND))]
    if label == "PATCH" and "apply_patch" in turn.tools:
        return [("thinking", "A patch adds the file."), ("tool", "apply_patch", PATCH)]
    if label == "PATCH":
        return [
            ("thinking", "No patch tool offered: a shell command instead."),
            ("text", "Writing the file with the shell."),
            ("tool", *shell(PATCH_COMMAND)),
        ]
    if label == "TOOL":
        return [
            ("thinking", "I should run a shell command to create the note."),
            ("text", "Creating the note now."),
            ("tool", *shell(SHELL_COMMAND)),
        ]
    return [("thinking", f"Answering the {label.lower()} prompt."), ("text", f"Reply to {label} from {model}.")]


def _shell_tool(tools: list[str]):
    def call(command: str) -> tuple[str, Any]:
        if "Bash" in tools:
            return "Bash", {"command": command, "description": "Run a command"}
        if "exec_command" in tools:
            return "exec_command", {"cmd": command}
        if "shell" in tools:
            return "shell", {"command": ["bash", "-lc", command]}
        if "bash" in tools:
            return "bash", {"command": command, "description": "Run a command"}
        return (tools[0] if tools else "bash"), {"command": command}

    return call


def _agent_tool(tools: list[str]) -> tuple[str, Any] | None:
    prompt = "[[SUB]] Run one command and report."
    for name in ("Agent", "Task"):
        if name in tools:
            return name, {"description": "Run a subtask", "prompt": prompt, "subagent_type": "general-purpose"}
    if "task" in tools:
        return "task", {"description": "Run a subtask", "prompt": prompt, "subagent_type": "general"}
    if "spawn_agent" in tools:
        return "spawn_agent", {"message": prompt}
    return None


# ---- request readers --------------------------------------------------------------------------


def read_anthropic(body: dict) -> Turn:
    # Claude Code sends reminders as role "system" messages between turns: the turn is the last user one.
    messages = [m for m in body.get("messages") or [] if m.get("role") != "system"]
    tools = [t.get("name", "") for t in body.get("tools") or []]
    last = messages[-1] if messages else {"content": ""}
    content = last.get("content")
    after_tool = isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )
    output = ""
    if after_tool:
        output = "\n".join(_text_of(b.get("content")) for b in content if b.get("type") == "tool_result")
    prompt = _text_of(content)
    everything = json.dumps(body.get("system", "")) + json.dumps(messages[-1:])
    return Turn(prompt, after_tool, output, tools, everything)


def read_responses(body: dict) -> Turn:
    items = body.get("input") or []
    tools = []
    for tool in body.get("tools") or []:  # Codex groups some tools in namespaces (multi_agent_v1.spawn_agent)
        tools += (
            [t.get("name", "") for t in tool.get("tools") or []]
            if tool.get("type") == "namespace"
            else [tool.get("name", "")]
        )
    last = items[-1] if items else {}
    after_tool = last.get("type") in ("function_call_output", "custom_tool_call_output")
    output = _text_of(last.get("output")) if after_tool else ""
    prompt = ""
    for item in reversed(items):
        if item.get("type") == "message" and item.get("role") == "user":
            prompt = _text_of(item.get("content"))
            break
    turn = Turn(prompt, after_tool, output, tools, json.dumps(items[-1:]))
    turn.big = "[[BIG]]" in prompt and not after_tool
    return turn


def read_chat(body: dict) -> Turn:
    messages = body.get("messages") or []
    tools = [t.get("function", {}).get("name", "") for t in body.get("tools") or []]
    last = messages[-1] if messages else {}
    after_tool = last.get("role") == "tool"
    output = _text_of(last.get("content")) if after_tool else ""
    prompt = ""
    for message in reversed(messages):
        if message.get("role") == "user":
            prompt = _text_of(message.get("content"))
            break
    turn = Turn(prompt, after_tool, output, tools, json.dumps(messages[-1:]))
    turn.big = "[[BIG]]" in prompt and not after_tool
    return turn


# ---- stream writers ---------------------------------------------------------------------------


class Counter:
    def __init__(self) -> None:
        self.n = 0
        self.lock = threading.Lock()

    def next(self) -> int:
        with self.lock:
            self.n += 1
            return self.n


IDS = Counter()


def anthropic_events(blocks: list[tuple], model: str) -> list[tuple[str, dict]]:
    n = IDS.next()
    events = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": f"msg_{n:024d}",
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": 120,
                        "output_tokens": 1,
                        "cache_creation_input_tokens": 0,
                        "cache_read_input_tokens": 0,
                    },
                },
            },
        )
    ]
    stop = "end_turn"
    for index, block in enumerate(blocks):
        kind = block[0]
        if kind == "thinking":
            events += [
                (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {"type": "thinking", "thinking": "", "signature": ""},
                    },
                ),
                (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "thinking_delta", "thinking": block[1]},
                    },
                ),
                (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "signature_delta", "signature": f"sig{n}"},
                    },
                ),
            ]
        elif kind == "text":
            half = len(block[1]) // 2
            events += [
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
                )
            ]
            for piece in (block[1][:half], block[1][half:]):
                events.append(
                    (
                        "content_block_delta",
                        {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}},
                    )
                )
        else:
            stop = "tool_use"
            events += [
                (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {
                            "type": "tool_use",
                            "id": f"toolu_{n:04d}{index:020d}",
                            "name": block[1],
                            "input": {},
                        },
                    },
                ),
                (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": json.dumps(block[2])},
                    },
                ),
            ]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events += [
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 40},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return events


def anthropic_message(blocks: list[tuple], model: str) -> dict:
    content = []
    for block in blocks:
        if block[0] == "text":
            content.append({"type": "text", "text": block[1]})
    return {
        "id": f"msg_{IDS.next():024d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content or [{"type": "text", "text": "ok"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


MULTI_AGENT = ("spawn_agent", "wait_agent", "send_input", "close_agent", "resume_agent")


def responses_events(blocks: list[tuple], model: str, used: int = 300) -> list[tuple[str, dict]]:
    n = IDS.next()
    rid = f"resp_{n:020d}"
    events = [("response.created", {"type": "response.created", "response": {"id": rid, "model": model}})]
    for index, block in enumerate(blocks):
        kind = block[0]
        if kind == "thinking":
            item = {
                "type": "reasoning",
                "id": f"rs_{n}_{index}",
                "summary": [{"type": "summary_text", "text": block[1]}],
                "content": None,
                "encrypted_content": None,
            }
        elif kind == "text":
            item = {
                "type": "message",
                "role": "assistant",
                "id": f"msg_{n}_{index}",
                "status": "completed",
                "content": [{"type": "output_text", "text": block[1], "annotations": []}],
            }
        elif isinstance(block[2], str):
            item = {
                "type": "custom_tool_call",
                "id": f"ctc_{n}_{index}",
                "call_id": f"call_{n}_{index}",
                "name": block[1],
                "input": block[2],
                "status": "completed",
            }
        else:
            item = {
                "type": "function_call",
                "id": f"fc_{n}_{index}",
                "call_id": f"call_{n}_{index}",
                "name": block[1],
                "arguments": json.dumps(block[2]),
                "status": "completed",
            }
            if block[1] in MULTI_AGENT:
                item["namespace"] = "multi_agent_v1"
        events.append(
            (
                "response.output_item.added",
                {
                    "type": "response.output_item.added",
                    "output_index": index,
                    "item": {**item, "status": "in_progress"},
                },
            )
        )
        if kind == "text":
            events.append(
                (
                    "response.output_text.delta",
                    {
                        "type": "response.output_text.delta",
                        "item_id": item["id"],
                        "output_index": index,
                        "content_index": 0,
                        "delta": block[1],
                    },
                )
            )
        events.append(
            ("response.output_item.done", {"type": "response.output_item.done", "output_index": index, "item": item})
        )
    events.append(
        (
            "response.completed",
            {
                "type": "response.completed",
                "response": {
                    "id": rid,
                    "model": model,
                    "status": "completed",
                    "usage": {
                        "input_tokens": used,
                        "input_tokens_details": {"cached_tokens": 0},
                        "output_tokens": 40,
                        "output_tokens_details": {"reasoning_tokens": 10},
                        "total_tokens": used + 40,
                    },
                },
            },
        )
    )
    return events


def chat_chunks(blocks: list[tuple], model: str, used: int = 200) -> list[dict]:
    n = IDS.next()
    cid = f"chatcmpl-{n}"

    def chunk(delta: dict, finish: str | None = None) -> dict:
        return {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": 1700000000 + n,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    chunks = [chunk({"role": "assistant", "content": ""})]
    finish = "stop"
    tool_index = 0
    for block in blocks:
        if block[0] == "thinking":
            chunks.append(chunk({"reasoning_content": block[1]}))
        elif block[0] == "text":
            chunks.append(chunk({"content": block[1]}))
        else:
            finish = "tool_calls"
            args = block[2] if isinstance(block[2], str) else json.dumps(block[2])
            chunks.append(
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": tool_index,
                                "id": f"call_{n}_{tool_index}",
                                "type": "function",
                                "function": {"name": block[1], "arguments": ""},
                            }
                        ]
                    }
                )
            )
            chunks.append(chunk({"tool_calls": [{"index": tool_index, "function": {"arguments": args}}]}))
            tool_index += 1
    chunks.append(chunk({}, finish))
    chunks.append(
        {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": 1700000000 + n,
            "model": model,
            "choices": [],
            "usage": {"prompt_tokens": used, "completion_tokens": 30, "total_tokens": used + 30},
        }
    )
    return chunks


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    log_dir: Path = Path(".")
    lock = threading.Lock()

    def log_message(self, *_args: Any) -> None:  # quiet
        pass

    def _log(self, entry: dict) -> None:
        with self.lock, (self.log_dir / "requests.jsonl").open("a") as out:
            out.write(json.dumps(entry) + "\n")

    def do_GET(self) -> None:  # model lists and health probes
        self._log({"method": "GET", "path": self.path})
        body = json.dumps({"object": "list", "data": [], "models": []}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.headers.get("Content-Encoding") == "zstd" or raw[:4] == b"\x28\xb5\x2f\xfd":
            try:
                import zstandard  # type: ignore[import-not-found]

                raw = zstandard.ZstdDecompressor().decompress(raw, max_output_size=64 << 20)
            except ImportError:
                pass
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        path = self.path.split("?")[0]
        model = str(body.get("model") or "scripted")
        self._log({"method": "POST", "path": self.path, "body": body})
        if path.endswith("/count_tokens"):
            return self._json({"input_tokens": 1000})
        if path.endswith("/messages"):
            blocks = plan(read_anthropic(body), model)
            if not body.get("stream"):
                return self._json(anthropic_message(blocks, model))
            return self._sse([(e, d) for e, d in anthropic_events(blocks, model)])
        if path.endswith("/responses") or path.endswith("/responses/compact"):
            turn = read_responses(body)  # a [[BIG]] turn reports a context past Codex's auto-compact limit
            return self._sse(responses_events(plan(turn, model), model, 90000 if turn.big else 300))
        if path.endswith("/chat/completions"):
            turn = read_chat(body)  # a [[BIG]] turn reports a context past the model's limit: opencode compacts
            blocks = plan(turn, model)
            if not body.get("stream"):
                text = " ".join(b[1] for b in blocks if b[0] == "text") or "ok"
                return self._json(
                    {
                        "id": "chatcmpl-x",
                        "object": "chat.completion",
                        "model": model,
                        "choices": [
                            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
                        ],
                        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
                    }
                )
            return self._sse([(None, c) for c in chat_chunks(blocks, model, 90000 if turn.big else 200)], done=True)
        self._json({"ok": True})

    def _json(self, obj: dict) -> None:
        data = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _sse(self, events: list[tuple[str | None, dict]], done: bool = False) -> None:
        parts = []
        for name, data in events:
            head = f"event: {name}\n" if name else ""
            parts.append(f"{head}data: {json.dumps(data)}\n\n")
        if done:
            parts.append("data: [DONE]\n\n")
        payload = "".join(parts).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def serve(log_dir: Path) -> ThreadingHTTPServer:
    log_dir.mkdir(parents=True, exist_ok=True)
    Handler.log_dir = log_dir
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


if __name__ == "__main__":
    srv = serve(Path(sys.argv[1] if len(sys.argv) > 1 else "."))
    print(srv.server_address[1], flush=True)
    threading.Event().wait()
