"""The carry-over: what a compaction keeps whatever the summarizer writes.

The summary's prose comes from a model (or the offline summarizer); the
carry-over comes from us, read off the summarized messages and merged with
the previous compaction's carry-over, so no summarizer can drop it and no
chain of compactions can wear it away. It holds:

- the user's messages verbatim, newest first within ``user_tokens``; older
  ones leave only their constraint sentences in a digest;
- the last user request, verbatim;
- the last tool calls and commands with their outcome, so they are not run again;
- the tool errors no later call resolved, with their exact text;
- a done / in progress / remaining list of the user's requests (or the
  agent's own todo list, when it keeps one), updated at every compaction.

It is stored as data in the compaction entry's ``details.carryOver`` (pi
reads only ``readFiles`` / ``modifiedFiles`` there) and rendered into the
summary text in a ``<carry-over>`` block, which the next compaction strips
before showing the previous summary to a model and rebuilds from the data.

When the whole exceeds ``max_tokens``, parts give way in this order:
older tool calls, the oldest done items, the oldest verbatim messages (into
the digest), the oldest unresolved errors, the oldest digest lines. The last
request, the work in progress and the remaining work never give way.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..format.constraints import constraint_sentences
from ..format.text import content_text, cut_text, format_tool_call, one_line
from .files import MODIFY_TOOLS

USER_TOKENS = 6_000  # verbatim user messages, newest first (codex keeps ~20,000, but keeps no recent messages besides)
MAX_TOKENS = 10_000  # the whole rendered block
# A compaction must shrink the context: the block takes at most this share of the tokens it
# replaces (the verbatim messages at most USER_SHARE of the block), never less than MIN_TOKENS.
SPAN_SHARE = 0.4
USER_SHARE = 0.6
MIN_TOKENS = 500
LAST_REQUEST_MAX_CHARS = 6_000
ERROR_MAX_CHARS = 1_500
DIGEST_LINE_MAX_CHARS = 300
CALL_MAX_CHARS = 240
OUTCOME_MAX_CHARS = 160
LAST_CALLS = 6


def budgets(summarized_tokens: int, user_tokens: int = USER_TOKENS, max_tokens: int = MAX_TOKENS) -> tuple[int, int]:
    """(verbatim user messages, whole block) for a compaction replacing ``summarized_tokens``."""
    block = min(max_tokens, max(MIN_TOKENS, int(summarized_tokens * SPAN_SHARE)))
    return min(user_tokens, int(block * USER_SHARE)), block


MAX_ERRORS = 12
MAX_TASK_ITEMS = 40
MAX_REMAINING = 12
TASK_MAX_CHARS = 120
_SHELL_TOOLS = frozenset({"bash", "shell", "run", "exec", "terminal"})
_TODO_TOOLS = frozenset({"todowrite", "todo_write", "todo", "update_todos", "manage_todo_list", "write_todos"})


def _tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def _strings(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


@dataclass(slots=True)
class CallRecord:
    call: str
    outcome: str
    error: bool = False

    def line(self) -> str:
        return f"- `{self.call}` -> {'error' if self.error else 'ok'}: {self.outcome}"


@dataclass(slots=True)
class OpenError:
    key: str  # what a later successful call must match to resolve it
    call: str
    text: str

    def block(self) -> str:
        return f"- `{self.call}` failed:\n```text\n{self.text}\n```"


@dataclass(slots=True)
class CarryOver:
    user_messages: list[str] = field(default_factory=list)  # oldest first
    digest: list[str] = field(default_factory=list)  # oldest first
    digested_messages: int = 0
    last_request: str | None = None
    last_calls: list[CallRecord] = field(default_factory=list)
    errors: list[OpenError] = field(default_factory=list)
    done: list[str] = field(default_factory=list)
    in_progress: list[str] = field(default_factory=list)
    remaining: list[str] = field(default_factory=list)
    # What gave way to the budget, cumulative: part -> items.
    dropped: dict[str, int] = field(default_factory=dict)

    # -- storage in details.carryOver --------------------------------------------

    def to_obj(self) -> dict[str, object]:
        return {
            "version": 1,
            "userMessages": self.user_messages,
            "digest": self.digest,
            "digestedMessages": self.digested_messages,
            "lastRequest": self.last_request,
            "lastCalls": [{"call": c.call, "outcome": c.outcome, "error": c.error} for c in self.last_calls],
            "errors": [{"key": e.key, "call": e.call, "text": e.text} for e in self.errors],
            "tasks": {"done": self.done, "inProgress": self.in_progress, "remaining": self.remaining},
            "dropped": self.dropped,
        }

    @classmethod
    def from_obj(cls, obj: object) -> CarryOver | None:
        """A stored carry-over, read leniently (a hand-edited file loses only what is malformed)."""
        if not isinstance(obj, dict):
            return None
        tasks = found if isinstance(found := obj.get("tasks"), dict) else {}
        calls = [
            CallRecord(str(c.get("call", "")), str(c.get("outcome", "")), bool(c.get("error")))
            for c in obj.get("lastCalls") or []
            if isinstance(c, dict)
        ]
        errors = [
            OpenError(str(e.get("key", "")), str(e.get("call", "")), str(e.get("text", "")))
            for e in obj.get("errors") or []
            if isinstance(e, dict)
        ]
        dropped = found if isinstance(found := obj.get("dropped"), dict) else {}
        digested = obj.get("digestedMessages")
        return cls(
            user_messages=_strings(obj.get("userMessages")),
            digest=_strings(obj.get("digest")),
            digested_messages=digested if isinstance(digested, int) and digested >= 0 else 0,
            last_request=obj["lastRequest"] if isinstance(obj.get("lastRequest"), str) else None,
            last_calls=calls,
            errors=errors,
            done=_strings(tasks.get("done")),
            in_progress=_strings(tasks.get("inProgress")),
            remaining=_strings(tasks.get("remaining")),
            dropped={k: v for k, v in dropped.items() if isinstance(k, str) and isinstance(v, int)},
        )

    # -- rendering -----------------------------------------------------------------

    def render(self) -> str:
        """The ``<carry-over>`` block appended to the summary ("" when there is nothing to carry)."""
        parts: list[str] = []
        # The last request is the newest verbatim message, most of the time: said once, then.
        last_is_listed = (
            bool(self.user_messages) and cut_text(self.user_messages[-1], LAST_REQUEST_MAX_CHARS) == self.last_request
        )
        if self.last_request and not last_is_listed:
            parts.append("## Last user request\n" + self.last_request)
        if self.user_messages:
            older = f"; {self.digested_messages} older ones are digested below" if self.digested_messages else ""
            last = "; the last one is the last user request" if last_is_listed else ""
            parts.append(
                f"## User messages (verbatim, oldest first{older}{last})\n"
                + "\n\n".join(f"[user] {m}" for m in self.user_messages)
            )
        if self.digest:
            dropped = self.dropped.get("digest", 0)
            note = f" ({dropped} oldest lines dropped)" if dropped else ""
            parts.append(
                f"## Constraints from older user messages (digest){note}\n" + "\n".join(f"- {d}" for d in self.digest)
            )
        if self.last_calls:
            parts.append(
                "## Last tool calls (already run; do not run them again without a reason)\n"
                + "\n".join(c.line() for c in self.last_calls)
            )
        if self.errors:
            parts.append("## Unresolved errors (exact text)\n" + "\n".join(e.block() for e in self.errors))
        if self.done or self.in_progress or self.remaining:
            earlier = self.dropped.get("done", 0)
            done = ([f"- [x] ({earlier} earlier items done)"] if earlier else []) + [f"- [x] {d}" for d in self.done]
            parts.append(
                "## Tasks\n### Done\n"
                + ("\n".join(done) or "- (none)")
                + "\n### In progress\n"
                + ("\n".join(f"- [ ] {t}" for t in self.in_progress) or "- (none)")
                + "\n### Remaining\n"
                + ("\n".join(f"- [ ] {t}" for t in self.remaining) or "- (none)")
            )
        if not parts:
            return ""
        # A closing tag quoted inside (a user pasting a summary) must not end the block early:
        # the next compaction strips the block up to its first closing tag.
        body = "\n\n".join(parts).replace("</carry-over>", "<\\/carry-over>")
        return (
            "\n\n<carry-over>\nKept verbatim by the session layer through every compaction.\n\n"
            + body
            + "\n</carry-over>"
        )

    def tokens(self) -> int:
        return _tokens(self.render())

    # -- budget ----------------------------------------------------------------------

    def _digest_oldest_message(self) -> None:
        message = self.user_messages.pop(0)
        self.digested_messages += 1
        for sentence in constraint_sentences(message):
            line = one_line(sentence, DIGEST_LINE_MAX_CHARS)
            if line not in self.digest:
                self.digest.append(line)

    def _drop(self, part: str, count: int = 1) -> None:
        self.dropped[part] = self.dropped.get(part, 0) + count

    def fit(self, user_tokens: int = USER_TOKENS, max_tokens: int = MAX_TOKENS) -> CarryOver:
        """Bound the carry-over in place (see the module's docstring for the order); returns self."""
        verbatim = sum(_tokens(m) + 2 for m in self.user_messages)
        while self.user_messages and verbatim > user_tokens:
            verbatim -= _tokens(self.user_messages[0]) + 2
            self._digest_oldest_message()
        # Each step removes one item of the first part that still has one to give.
        while self.tokens() > max_tokens:
            if len(self.last_calls) > 1:
                self.last_calls.pop(0)
                self._drop("lastCalls")
            elif self.done:
                self.done.pop(0)
                self._drop("done")
            elif self.user_messages:
                self._digest_oldest_message()
            elif len(self.errors) > 1:
                self.errors.pop(0)
                self._drop("errors")
            elif self.digest:
                self.digest.pop(0)
                self._drop("digest")
            else:
                break  # what is left (last request, work in progress, remaining) never gives way
        return self


# -- reading the summarized messages ------------------------------------------------------


def _primary_argument(arguments: dict[str, object]) -> str:
    for key in ("command", "cmd", "path", "file_path", "filePath", "pattern", "query", "url"):
        value = arguments.get(key)
        if isinstance(value, str) and value:
            return " ".join(value.split())
    return format_tool_call("", arguments)


def call_key(name: str, arguments: dict[str, object]) -> str:
    """What a later success must match to resolve an error: a file's edits resolve each other."""
    argument = _primary_argument(arguments)
    if name in MODIFY_TOOLS:
        return f"modify:{argument}"
    return f"{name}:{argument}"


def _todo_items(arguments: dict[str, object]) -> tuple[list[str], list[str], list[str]] | None:
    """(done, in progress, pending) of a todo tool's full list, or None when it is not one."""
    todos = arguments.get("todos") or arguments.get("items") or arguments.get("todoList")
    if not isinstance(todos, list):
        return None
    done: list[str] = []
    doing: list[str] = []
    pending: list[str] = []
    for item in todos:
        if not isinstance(item, dict):
            continue
        text = item.get("content") or item.get("title") or item.get("text") or item.get("description")
        if not isinstance(text, str) or not text.strip():
            continue
        status = str(item.get("status") or item.get("state") or "pending").lower().replace("-", "_").replace(" ", "_")
        line = one_line(text, TASK_MAX_CHARS)
        (done if status in ("completed", "done", "complete") else doing if status == "in_progress" else pending).append(
            line
        )
    return done, doing, pending


_LIST_ITEM_PREFIXES = ("- ", "* ", "• ")


def _next_steps(text: str) -> list[str]:
    """The list items of the agent's closing words that follow a "next"-like heading or stand alone."""
    steps = []
    for raw in text.splitlines():
        line = raw.strip()
        body = None
        if line[:1].isdigit() and line.lstrip("0123456789")[:2] in (". ", ") "):
            body = line.lstrip("0123456789")[2:]
        elif line.startswith(_LIST_ITEM_PREFIXES):
            body = line[2:]
        if body and body.strip():
            steps.append(one_line(body, TASK_MAX_CHARS))
    return steps[:MAX_REMAINING]


@dataclass(slots=True)
class _Turn:
    request: str
    concluded: bool = False


def build_carry_over(previous: CarryOver | None, messages: Iterable[dict[str, object]]) -> CarryOver:
    """The previous carry-over merged with what ``messages`` (the summarized span, oldest first) show."""
    carry = CarryOver() if previous is None else CarryOver.from_obj(previous.to_obj())  # a copy
    assert carry is not None
    calls: dict[str, tuple[str, dict[str, object]]] = {}
    turns: list[_Turn] = []
    # Work in progress at the previous compaction continues into this span until concluded.
    carried = [_Turn(t) for t in carry.in_progress]
    carry.in_progress = []
    todo: tuple[list[str], list[str], list[str]] | None = None
    last_assistant_text = ""
    failing_turn = False

    def current() -> list[_Turn]:
        return turns[-1:] if turns else carried

    for message in messages:
        role = message.get("role")
        if role == "user":
            text = content_text(message.get("content")).strip()
            if not text:
                continue
            carry.user_messages.append(text)
            carry.last_request = cut_text(text, LAST_REQUEST_MAX_CHARS)
            if turns or carried:
                for turn in current():
                    turn.concluded = turn.concluded or not failing_turn  # the user moved on
            turns.append(_Turn(one_line(text, TASK_MAX_CHARS)))
            failing_turn = False
        elif role == "assistant":
            content = found if isinstance(found := message.get("content"), list) else []
            texts = [
                b["text"]
                for b in content
                if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
            ]
            has_calls = False
            for block in content:
                if isinstance(block, dict) and block.get("type") == "toolCall":
                    has_calls = True
                    name = str(block.get("name"))
                    arguments = given if isinstance(given := block.get("arguments"), dict) else {}
                    calls[str(block.get("id"))] = (name, arguments)
                    if name.lower() in _TODO_TOOLS:
                        todo = _todo_items(arguments) or todo
            text = "\n".join(texts).strip()
            if text:
                last_assistant_text = text
            if text and not has_calls and message.get("stopReason") not in ("error", "aborted", "toolUse"):
                for turn in current():
                    turn.concluded = not failing_turn
        elif role == "toolResult":
            name, arguments = calls.pop(str(message.get("toolCallId")), (str(message.get("toolName") or "tool"), {}))
            _record_call(carry, name, arguments, content_text(message.get("content")), bool(message.get("isError")))
            failing_turn = bool(message.get("isError"))
        elif role == "bashExecution":
            command = str(message.get("command", ""))
            code = message.get("exitCode")
            failed = code not in (None, 0) or bool(message.get("cancelled"))
            output = str(message.get("output") or "")
            if failed:
                output = f"exit code {code}\n{output}" if code not in (None, 0) else output
            _record_call(carry, "bash", {"command": command}, output, failed, by_user=True)
    # Calls still waiting for a result at the end of the span.
    for name, arguments in calls.values():
        carry.last_calls.append(
            CallRecord(one_line(format_tool_call(name, arguments), CALL_MAX_CHARS), "no result in the summarized part")
        )
    carry.last_calls = carry.last_calls[-LAST_CALLS:]
    for turn in carried + turns:
        (carry.done if turn.concluded else carry.in_progress).append(turn.request)
    steps = _next_steps(last_assistant_text)
    if steps:
        carry.remaining = steps
    if todo is not None:  # the agent's own list says it best
        done, doing, pending = todo
        carry.done += [d for d in done if d not in carry.done]
        carry.in_progress = [t for t in carry.in_progress if t not in done] + [
            d for d in doing if d not in carry.in_progress
        ]
        carry.remaining = pending[:MAX_REMAINING]
    carry.remaining = [r for r in carry.remaining if r not in carry.done]
    if len(carry.done) > MAX_TASK_ITEMS:
        carry._drop("done", len(carry.done) - MAX_TASK_ITEMS)
        carry.done = carry.done[-MAX_TASK_ITEMS:]
    if len(carry.errors) > MAX_ERRORS:
        carry._drop("errors", len(carry.errors) - MAX_ERRORS)
        carry.errors = carry.errors[-MAX_ERRORS:]
    return carry


def _record_call(
    carry: CarryOver, name: str, arguments: dict[str, object], output: str, failed: bool, by_user: bool = False
) -> None:
    call = one_line(format_tool_call(name, arguments), CALL_MAX_CHARS)
    key = call_key(name, arguments)
    if failed:
        text = cut_text(output.strip() or "(no output)", ERROR_MAX_CHARS)
        carry.errors = [e for e in carry.errors if not (e.key == key and e.text == text)]
        carry.errors.append(OpenError(key, call + (" (run by the user)" if by_user else ""), text))
        outcome = one_line(output, OUTCOME_MAX_CHARS) or "(no output)"
    else:
        carry.errors = [e for e in carry.errors if e.key != key]  # the same call succeeded since
        lines = [line for line in output.strip().splitlines() if line.strip()]
        outcome = one_line(lines[-1], OUTCOME_MAX_CHARS) if lines else "(no output)"
        if len(lines) > 1:
            outcome = f"{outcome} ({len(lines)} lines of output)"
    carry.last_calls.append(CallRecord(call + (" (run by the user)" if by_user else ""), outcome, failed))
