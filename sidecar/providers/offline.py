"""A summarizer without a model: what a fresh machine with no API key runs.

It fills the same sections a model is asked for, from facts it can read off
the conversation: the user's requests and constraints verbatim (within a
budget), the files changed and commands run, errors with their messages, the
state of the last turn, and next steps from the agent's latest words. On a
repeated compaction it parses the previous summary and carries every item
forward, moving finished work to Done, as the update prompt asks of a model.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Mapping
from typing import Any

from ..format.constraints import constraint_sentences
from ..format.text import content_text, cut_text, format_tool_call, one_line
from .base import RetryCallback, SummaryRequest, SummaryResponse, TextCallback

_DECISION = re.compile(
    r"\b(decided|decide|instead of|because|chose|choose|going with|i'll use|we'll use|the fix is|the cause is|"
    r"root cause|switched to|rather than)\b",
    re.IGNORECASE,
)
_NEXT = re.compile(
    r"\b(next|then|remaining|still need|todo|to do|afterwards|follow-up|will now|need to)\b", re.IGNORECASE
)
_LIST_ITEM = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+(.*\S)")
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
_MODIFY_VERBS = {
    "write": "Wrote",
    "write_file": "Wrote",
    "create_file": "Created",
    "edit": "Edited",
    "edit_file": "Edited",
    "multi_edit": "Edited",
}
_SHELL_TOOLS = frozenset({"bash", "shell", "run", "exec", "terminal"})


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_SPLIT.split(text) if len(s.strip()) > 3]


def _add(items: list[str], item: str) -> None:
    if item and item not in items:
        items.append(item)


class _Facts:
    """What the conversation shows, in order."""

    def __init__(self, messages: list[dict[str, object]]) -> None:
        self.requests: list[str] = []
        self.constraints: list[str] = []
        self.done: list[str] = []
        self.commands: list[str] = []
        self.errors: list[str] = []
        self.decisions: list[str] = []
        self.notes: list[str] = []
        self.last_assistant_text = ""
        self.pending_calls: list[str] = []
        self.last_result_error: str | None = None
        self.ended_with_request = False
        calls: dict[str, tuple[str, dict[str, object]]] = {}
        edits: dict[str, tuple[str, int]] = {}
        for message in messages:
            role = message.get("role")
            if role == "user":
                text = content_text(message.get("content")).strip()
                if text:
                    self.requests.append(text)
                    for sentence in constraint_sentences(text):
                        _add(self.constraints, one_line(sentence, 300))
                    self.ended_with_request = True
            elif role == "assistant":
                self._assistant(message, calls, edits)
            elif role == "toolResult":
                self._tool_result(message, calls)
            elif role == "bashExecution":
                command = one_line(str(message.get("command", "")), 160)
                code = message.get("exitCode")
                if code not in (None, 0):
                    _add(
                        self.errors,
                        f"`{command}` exited with {code}: {one_line(str(message.get('output') or ''), 300)}",
                    )
                else:
                    _add(self.commands, f"`{command}` (run by the user)")
            elif role in ("branchSummary", "compactionSummary") and message.get("summary"):
                self.notes.append("Notes carried from another branch: " + one_line(str(message["summary"]), 600))
        for path, (verb, count) in edits.items():
            self.done.append(f"{verb} `{path}`" + (f" ({count} changes)" if count > 1 else ""))
        self.pending_calls = [format_tool_call(name, args) for name, args in calls.values()]

    def _assistant(
        self,
        message: Mapping[str, Any],
        calls: dict[str, tuple[str, dict[str, object]]],
        edits: dict[str, tuple[str, int]],
    ) -> None:
        texts = []
        for block in message.get("content") or []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif block.get("type") == "toolCall":
                name = str(block.get("name"))
                args = given if isinstance(given := block.get("arguments"), dict) else {}
                calls[str(block.get("id"))] = (name, args)
                path = args.get("path") or args.get("file_path")
                if name in _MODIFY_VERBS and isinstance(path, str):
                    _, count = edits.pop(path, ("", 0))
                    edits[path] = (_MODIFY_VERBS[name], count + 1)
        text = "\n".join(texts).strip()
        if message.get("stopReason") == "error" and message.get("errorMessage"):
            _add(self.errors, "The model request failed: " + one_line(str(message["errorMessage"]), 300))
        if text:
            self.last_assistant_text = text
            self.ended_with_request = False
            for sentence in _sentences(text):
                if _DECISION.search(sentence):
                    _add(self.decisions, one_line(sentence, 300))

    def _tool_result(self, message: Mapping[str, Any], calls: dict[str, tuple[str, dict[str, object]]]) -> None:
        name, args = calls.pop(str(message.get("toolCallId")), (str(message.get("toolName") or "tool"), {}))
        call = one_line(format_tool_call(name, args), 160)
        if message.get("isError"):
            error = f"`{call}` failed: {one_line(content_text(message.get('content')), 400)}"
            _add(self.errors, error)
            self.last_result_error = error
            return
        self.last_result_error = None
        if name in _SHELL_TOOLS:
            _add(self.commands, f"`{one_line(str(args.get('command', call)), 160)}`")


def _parse_sections(summary: str) -> dict[str, list[str]]:
    """A summary in our layout as section -> items (list markers and "(none)" removed)."""
    sections: dict[str, list[str]] = {}
    current = None
    for raw in summary.splitlines():
        line = raw.strip()
        if line.startswith("#"):
            current = line.lstrip("#").strip()
            sections.setdefault(current, [])
            continue
        if current is None or not line or line == "---":
            continue
        item = re.sub(r"^(?:\d+[.)]|[-*•])\s+", "", line)
        item = re.sub(r"^\[[ xX]\]\s*", "", item).strip()
        if item and item.lower() not in ("(none)", "none"):
            sections[current].append(item)
    return sections


def _bullets(items: list[str], limit: int, marker: str = "- ", keep: str = "last") -> str:
    if not items:
        return "- (none)" if marker == "- " else f"{marker}(none)"
    chosen = items[-limit:] if keep == "last" else items[:limit]
    omitted = len(items) - len(chosen)
    lines = [f"{marker}{item}" for item in chosen]
    if omitted:
        note = f"- ({omitted} earlier items omitted)" if keep == "last" else f"- ({omitted} more omitted)"
        lines.insert(0, note) if keep == "last" else lines.append(note)
    return "\n".join(lines)


def _next_steps(facts: _Facts) -> list[str]:
    steps: list[str] = []
    if facts.ended_with_request and facts.requests:
        steps.append("Act on the user's latest request: " + one_line(facts.requests[-1], 300))
    if facts.last_result_error:
        steps.append("Resolve the last error: " + facts.last_result_error)
    for line in facts.last_assistant_text.splitlines():
        match = _LIST_ITEM.match(line)
        if match:
            _add(steps, one_line(match.group(1), 300))
    if len(steps) < 2:
        for sentence in _sentences(facts.last_assistant_text):
            if _NEXT.search(sentence):
                _add(steps, one_line(sentence, 300))
    if not steps and facts.requests:
        if facts.pending_calls:
            steps.append("Continue the work on: " + one_line(facts.requests[-1], 300))
        else:  # the last request was answered and nothing says what comes next
            steps.append("Wait for the user's next request; the last one was answered")
    return steps[:8]


def summarize_offline(request: SummaryRequest) -> str:
    facts = _Facts(request.messages)
    if request.purpose == "turnPrefix":
        return _turn_prefix(facts)
    previous = _parse_sections(request.previous_summary or "")
    goals: list[str] = list(previous.get("Goal", [])) + previous.get("Original Request", [])
    for index, text in enumerate(facts.requests):
        if request.user_messages_carried:
            _add(goals, one_line(text, 160))
        else:
            _add(goals, cut_text(text.strip(), 1200 if index == 0 and not goals else 500))
    constraints = list(previous.get("Constraints & Preferences", []))
    for item in facts.constraints:
        _add(constraints, item)
    done = previous.get("Done", []) + previous.get("In Progress", []) + previous.get("Early Progress", [])
    for item in facts.done + [f"Ran {c}" for c in facts.commands[-8:]]:
        _add(done, item)
    in_progress = []
    if facts.requests and (facts.ended_with_request or facts.pending_calls or facts.last_result_error):
        in_progress.append(one_line(facts.requests[-1], 400))
    elif facts.requests:
        # The assistant answered in text after its last tool call, with nothing
        # failing or outstanding: the request was answered.
        _add(done, f"Answered: {one_line(facts.requests[-1], 300)} -> {one_line(facts.last_assistant_text, 300)}")
    in_progress += [f"Waiting for the result of {one_line(c, 200)}" for c in facts.pending_calls]
    blocked = [facts.last_result_error] if facts.last_result_error else []
    decisions = list(previous.get("Key Decisions", []))
    for item in facts.decisions:
        _add(decisions, item)
    next_steps = _next_steps(facts) or previous.get("Next Steps", [])
    # The last words of an earlier summary are stale once a newer one exists: only the newest stays.
    stale = ("The assistant's last words:", "Last words before the kept part:")
    critical = [c for c in previous.get("Critical Context", []) if not c.startswith(stale)]
    critical += previous.get("Context for the Rest of the Turn", [])
    critical += [f"Earlier blocker: {b}" for b in previous.get("Blocked", [])]
    # With the carry-over beside it (unresolved errors in exact text), errors are not listed twice.
    errors = [] if request.user_messages_carried else [f"Error: {e}" for e in facts.errors[-10:]]
    for item in errors + facts.notes:
        _add(critical, item)
    if facts.last_assistant_text:
        critical.append("The assistant's last words: " + one_line(facts.last_assistant_text, 600))
    if request.custom_instructions:
        critical.append("Requested emphasis: " + one_line(request.custom_instructions, 300))
    text = "\n\n".join(
        [
            "## Goal\n" + _bullets(goals, 12, keep="first"),
            "## Constraints & Preferences\n" + _bullets(constraints, 20),
            "## Progress\n### Done\n"
            + _bullets(done, 30, "- [x] ")
            + "\n\n### In Progress\n"
            + _bullets(in_progress, 6, "- [ ] ")
            + "\n\n### Blocked\n"
            + _bullets(blocked, 3),
            "## Key Decisions\n" + _bullets(decisions, 12),
            "## Next Steps\n" + "\n".join(f"{n}. {s}" for n, s in enumerate(next_steps, 1))
            if next_steps
            else "## Next Steps\n1. (none recorded)",
            "## Critical Context\n" + _bullets(critical, 25),
        ]
    )
    return cut_text(text, max(2000, request.max_tokens * 4))


def _turn_prefix(facts: _Facts) -> str:
    request = cut_text(facts.requests[0], 1200) if facts.requests else "(the turn began before the condensed part)"
    early = facts.done + [f"Ran {c}" for c in facts.commands[-6:]] + facts.decisions[-4:]
    context = [f"Constraint: {c}" for c in facts.constraints[-6:]] + [f"Error: {e}" for e in facts.errors[-5:]]
    if facts.last_assistant_text:
        context.append("Last words before the kept part: " + one_line(facts.last_assistant_text, 400))
    return (
        f"## Original Request\n{request}\n\n## Early Progress\n{_bullets(early, 15)}\n\n"
        f"## Context for the Rest of the Turn\n{_bullets(context, 8)}"
    )


class OfflineProvider:
    name = "offline"

    def model_for(self, requested: str | None) -> str:
        return "offline"

    async def summarize(
        self, request: SummaryRequest, on_text: TextCallback, on_retry: RetryCallback | None = None
    ) -> SummaryResponse:
        text = summarize_offline(request)
        # Stream it in pieces, as a model would, so progress and cancellation behave the same.
        for start in range(0, len(text), 512):
            on_text(text[start : start + 512])
            await asyncio.sleep(0)
        return SummaryResponse(
            text=text, model="offline", output_tokens=math.ceil(len(text) / 4), stop_reason="end_turn"
        )
