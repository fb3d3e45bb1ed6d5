"""oh-my-pi's context rules, where they differ from pi's (context/build.py, context/llm.py).

A session in oh-my-pi's folder (or any session, when a client asks for
``rules: "omp"``) gets the context oh-my-pi 18.x builds from the same entries:

* assistant turns that failed with nothing in them (``stopReason`` "error",
  no text, thinking or tool call) and ``retryRecovery`` turns are left out;
* a ``toolCall`` block whose result is not on the path is dropped from its
  turn (the turn's signed thinking loses its signature, redacted thinking
  goes; a turn left empty goes), where pi sends the call as it is;
* aborted and errored assistant turns are left out, with the tool results
  that answer their calls;
* a ``reset_boundary`` entry after the latest compaction starts the context
  after it;
* custom messages of the types ``prewalk-plan`` and ``vibe-mode-context``
  stay out; the others (18.3's hidden notices ``session-agent-notice``,
  ``eval-prelude-notice``, ``eval-state-context`` and ``anthropic-usage-wrap-up``
  among them) go to the model; ``details`` and ``attribution`` as the file holds
  them: a ``details`` of null stays null, an absent one absent; an
  ``attribution`` present is "user" or, whatever else it holds, "agent";
* a compaction carrying Anthropic's native summary (``preserveData.anthropicCompaction``)
  gives its summary message that ``providerPayload`` and a ``historyRewriteAt``
  just before the first entry it keeps (that entry's time minus 1 ms; the
  message's ``timestamp`` stays the compaction's, as 18.3 has it); when it keeps
  no entry by id (``firstKeptEntryId`` "", 18.3's native compactions) the
  entries after its ``providerReplayThroughEntryId`` are the kept tail.

And in the conversion for the model (``convertToLlm``):

* a custom message goes as a ``developer`` message (pi: ``user``); one with
  images is split in a ``developer`` message with its text and a ``user``
  message with the images; a ``skill-prompt`` the user invoked goes as ``user``;
* compaction and branch summaries are wrapped in oh-my-pi's own words (below:
  the wording is part of the compatibility contract, as pi's is in llm.py),
  as ``user`` messages with ``attribution: "agent"`` and ``historyRewriteAt``;
* user, developer and tool-result messages carry an ``attribution`` ("user"
  for the user's, "agent" otherwise) unless they hold one already;
* a tool result marked ``prunedAt`` sends its text joined in its first text block.

Not modelled (entries no sidecar client writes; oh-my-pi's context differs
there): context notes, OpenAI remote compaction payloads, snapcompact frame
archives, context rollovers, steering prompts, interrupted-thinking markers.
18.2.3 stamps a native compaction's summary message itself with the time just
before its kept tail; we follow 18.3, which keeps the compaction's time there.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..format.jsonl import Entry
from .build import SessionContext, _head_model_ref, _js_text, branch_summary_message, js_time, kept_from
from .build import build_context as build_pi_context
from .llm import bash_execution_text

COMPACTION_WRAPPER = "Prior model work/tool state available.\nMUST build on prior work; NEVER duplicate prior work.\n\n<summary>\n{summary}\n</summary>"
HANDOFF_WRAPPER = (
    "Context replaced. The <handoff> below is a handoff document a prior instance of you wrote from the full "
    "conversation. It is your own working memory, not user input.\n"
    "- First person inside it refers to you (the prior instance).\n"
    '- "Next Steps" is your own resumed plan; re-check it against the latest user message before acting.\n'
    "- The handoff already exists and is complete: NEVER write another handoff document unless the user "
    "explicitly asks.\n"
    "MUST build on prior work; NEVER duplicate prior work.\n\n<handoff>\n{summary}\n</handoff>"
)
BRANCH_WRAPPER = "Branch-return summary:\n\n<summary>\n{summary}\n</summary>"

_HIDDEN_CUSTOM_TYPES = ("prewalk-plan", "vibe-mode-context")
_SETTING_TYPES = frozenset({"thinking_level_change", "model_change", "ttsr_injection", "mode_change"})
_SKILL_PROMPT = "skill-prompt"


def build_context(path: list[Entry], ids_unique: bool = False) -> SessionContext:
    """oh-my-pi's context of a root -> leaf path (settings as pi's, messages by oh-my-pi's rules);
    ``ids_unique`` as for pi's (build.py)."""
    ctx = _settings(path)
    compaction_index = max((i for i, e in enumerate(path) if e.type == "compaction"), default=-1)
    reset_index = max((i for i, e in enumerate(path) if e.type == "reset_boundary"), default=-1)
    if reset_index >= 0 and reset_index > compaction_index:
        _emit(ctx, path[reset_index + 1 :])
    elif compaction_index >= 0:
        compaction = path[compaction_index]
        obj = compaction.obj()
        native = anthropic_payload(obj.get("preserveData"))
        kept = kept_from(path, obj.get("firstKeptEntryId"), compaction_index, ids_unique)
        if native is not None and kept == compaction_index:
            kept = _after_replay_snapshot(path, obj, compaction_index)
        message = compaction_summary_message(obj)
        if native is not None:
            message["providerPayload"] = native
            retained = (
                path[kept]
                if kept < compaction_index
                else path[compaction_index + 1]
                if compaction_index + 1 < len(path)
                else None
            )
            retained_at = js_time(retained.obj().get("timestamp")) if retained is not None else None
            if retained_at is not None:
                message["historyRewriteAt"] = retained_at - 1
        ctx.messages.append(message)
        ctx.entry_ids.append(compaction.id)  # type: ignore[arg-type]  # an entry on a path has an id (Entry.id is Optional for the header)
        _emit(ctx, path[kept:compaction_index])
        ctx.after_compaction = len(ctx.messages)
        _emit(ctx, path[compaction_index + 1 :])
    else:
        _emit(ctx, path)
    _strip_dangling_tool_calls(ctx)
    _drop_failed_turns(ctx)
    return ctx


def _settings(path: list[Entry]) -> SessionContext:
    """The thinking level, models, mode and injected rules along the path, as pi's walk
    (build.py) finds them, but without decoding a message: only the settings entries
    and the heads of assistant messages are read."""
    ctx = SessionContext()
    explicit_default = False
    rules: dict[str, None] = {}
    for entry in path:
        kind = entry.type
        if kind == "message":
            if entry.role() == "assistant":
                head = entry.message_head()
                ctx.model = _head_model_ref(head)
                if not explicit_default:
                    ctx.models["default"] = f"{_js_text(head.provider)}/{_js_text(head.model)}"
        elif kind in _SETTING_TYPES:
            single = build_pi_context([entry])  # one settings entry: pi's own reading of it
            if kind == "thinking_level_change":
                ctx.thinking_level = single.thinking_level
            elif kind == "model_change":
                if single.model is not None:
                    ctx.model = single.model
                for role, model in single.models.items():
                    ctx.models[role] = model
                    explicit_default = explicit_default or role == "default"
            elif kind == "ttsr_injection":
                rules.update((r, None) for r in single.injected_rules)
            else:
                ctx.mode, ctx.mode_data = single.mode, single.mode_data
    ctx.injected_rules = list(rules)
    return ctx


def anthropic_payload(preserve: object) -> dict[str, object] | None:
    """What oh-my-pi replays of a compaction Anthropic's server summarized (its ``providerPayload``), or None.

    As oh-my-pi's ``getAnthropicCompactionPayload`` (pi-agent-core, compaction/anthropic.ts) reads
    ``preserveData.anthropicCompaction``: a non-empty ``provider`` and ``content``; ``encryptedContent``
    and ``filesText`` when non-empty strings."""
    candidate = preserve.get("anthropicCompaction") if isinstance(preserve, dict) else None
    if not isinstance(candidate, dict):
        return None
    provider, content = candidate.get("provider"), candidate.get("content")
    if not (isinstance(provider, str) and provider and isinstance(content, str) and content):
        return None
    payload: dict[str, object] = {"type": "anthropicCompaction", "provider": provider, "content": content}
    for key in ("encryptedContent", "filesText"):
        value = candidate.get(key)
        if isinstance(value, str) and value:
            payload[key] = value
    return payload


def _after_replay_snapshot(path: list[Entry], obj: dict[str, object], compaction_index: int) -> int:
    """Where the kept tail of a native compaction that names no kept entry starts: after the entry its
    ``providerReplayThroughEntryId`` names (18.3's ``buildSessionContext``); the compaction's index
    (nothing kept) when ``firstKeptEntryId`` is not "" or that entry is not before it."""
    through = obj.get("providerReplayThroughEntryId")
    if obj.get("firstKeptEntryId") != "" or not isinstance(through, str) or not through:
        return compaction_index
    snapshot = next((i for i, e in enumerate(path) if e.id == through), -1)
    return snapshot + 1 if 0 <= snapshot and snapshot + 1 < compaction_index else compaction_index


def compaction_summary_message(obj: dict[str, object]) -> dict[str, object]:
    message: dict[str, object] = {"role": "compactionSummary", "summary": obj.get("summary")}
    for key in ("shortSummary", "tokensBefore", "tokensAfter", "method", "warning"):
        if obj.get(key) is not None or (key == "tokensBefore" and key in obj):
            message[key] = obj.get(key)
    message["timestamp"] = js_time(obj.get("timestamp"))
    return message


def _custom_message(obj: dict[str, object]) -> dict[str, object] | None:
    content = obj.get("content")
    if not isinstance(content, (str, list)):
        return None
    custom_type = obj.get("customType")
    message: dict[str, object] = {
        "role": "custom",
        "customType": custom_type if isinstance(custom_type, str) and custom_type else "custom-message",
        "content": content,
        "display": obj.get("display") if isinstance(obj.get("display"), bool) else False,
    }
    if "details" in obj:  # (a null stays null: oh-my-pi's message carries what the entry holds)
        message["details"] = obj["details"]
    if "attribution" in obj:  # (absent stays absent; null, or any other value, is the agent's)
        message["attribution"] = "user" if obj["attribution"] == "user" else "agent"
    message["timestamp"] = js_time(obj.get("timestamp"))
    return message


def _message_of(entry: Entry) -> dict[str, object] | None:
    if entry.type == "message":
        message = entry.obj().get("message")
        if not isinstance(message, dict):
            return None
        if message.get("role") == "assistant" and (message.get("retryRecovery") or _empty_error_turn(message)):
            return None
        return message
    if entry.type == "custom_message":
        obj = entry.obj()
        if obj.get("customType") in _HIDDEN_CUSTOM_TYPES:
            return None
        return _custom_message(obj)
    if entry.type == "branch_summary":
        obj = entry.obj()
        return branch_summary_message(obj) if obj.get("summary") else None
    return None


def _emit(ctx: SessionContext, entries: Iterable[Entry]) -> None:
    for entry in entries:
        message = _message_of(entry)
        if message is not None:
            ctx.messages.append(message)
            ctx.entry_ids.append(entry.id)  # type: ignore[arg-type]  # an entry on a path has an id (Entry.id is Optional for the header)


def _empty_error_turn(message: Mapping[str, Any]) -> bool:
    if message.get("stopReason") != "error":
        return False
    for block in message.get("content") or []:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text" and str(block.get("text", "")).strip():
            return False
        if kind == "thinking" and (
            str(block.get("thinking", "")).strip() or str(block.get("thinkingSignature") or "").strip()
        ):
            return False
        if kind == "redactedThinking" and str(block.get("data", "")).strip():
            return False
        if kind not in ("text", "thinking", "redactedThinking", "fallback"):
            return False  # a tool call, or a block of a kind not known: content
    return True


def _strip_dangling_tool_calls(ctx: SessionContext) -> None:
    answered = {m.get("toolCallId") for m in ctx.messages if m.get("role") == "toolResult"}
    for index in range(len(ctx.messages) - 1, -1, -1):
        message = ctx.messages[index]
        content = message.get("content")
        if message.get("role") != "assistant" or not isinstance(content, list):
            continue
        dangling = [
            b for b in content if isinstance(b, dict) and b.get("type") == "toolCall" and b.get("id") not in answered
        ]
        if not dangling:
            continue
        kept = []
        for block in content:
            if block in dangling or (isinstance(block, dict) and block.get("type") == "redactedThinking"):
                continue
            if isinstance(block, dict) and block.get("type") == "thinking" and block.get("thinkingSignature"):
                block = {k: v for k, v in block.items() if k != "thinkingSignature"}
            kept.append(block)
        if kept:
            ctx.messages[index] = {**message, "content": kept}
        else:
            del ctx.messages[index]
            del ctx.entry_ids[index]
            _shift_compaction_mark(ctx, index)


def _drop_failed_turns(ctx: SessionContext) -> None:
    index = len(ctx.messages) - 1
    while index >= 0:
        message: Mapping[str, Any] = ctx.messages[index]  # (read as pi reads it: a content of blocks)
        if message.get("role") == "assistant" and message.get("stopReason") in ("aborted", "error"):
            calls = {
                b.get("id") for b in message.get("content") or [] if isinstance(b, dict) and b.get("type") == "toolCall"
            }
            del ctx.messages[index]
            del ctx.entry_ids[index]
            _shift_compaction_mark(ctx, index)
            if calls:
                for later in range(len(ctx.messages) - 1, index - 1, -1):
                    candidate = ctx.messages[later]
                    if candidate.get("role") == "toolResult" and candidate.get("toolCallId") in calls:
                        del ctx.messages[later]
                        del ctx.entry_ids[later]
                        _shift_compaction_mark(ctx, later)
        index = min(index - 1, len(ctx.messages) - 1)


def _shift_compaction_mark(ctx: SessionContext, removed: int) -> None:
    if removed < ctx.after_compaction:
        ctx.after_compaction -= 1


# -- convertToLlm ----------------------------------------------------------------


def to_llm_messages(message: dict[str, object]) -> list[dict[str, object]]:
    """What one AgentMessage becomes for the model under oh-my-pi's rules (zero, one or two messages)."""
    role = message.get("role")
    timestamp = message.get("timestamp")
    if role == "user":
        return [{**message, "attribution": message.get("attribution") or "user"}]
    if role == "developer":
        return [{**message, "attribution": message.get("attribution") or "agent"}]
    if role == "assistant":
        return [message]
    if role == "toolResult":
        return [{**message, "content": _pruned_content(message), "attribution": message.get("attribution") or "agent"}]
    if role == "bashExecution":
        if message.get("excludeFromContext"):
            return []
        text = bash_execution_text({**message, "truncated": False})
        images: Any = message.get("images") or []  # (spread as JS spreads it)
        return [
            {
                "role": "user",
                "content": [{"type": "text", "text": text}, *images],
                "attribution": "user",
                "timestamp": timestamp,
            }
        ]
    if role in ("custom", "hookMessage"):
        return _custom_to_llm(message)
    if role == "branchSummary":
        text = BRANCH_WRAPPER.format(summary=message.get("summary"))
        return [_agent_user([{"type": "text", "text": text}], timestamp)]
    if role == "compactionSummary":
        wrapper = HANDOFF_WRAPPER if message.get("method") == "handoff" else COMPACTION_WRAPPER
        out = _agent_user(
            [{"type": "text", "text": wrapper.format(summary=message.get("summary"))}],
            timestamp,
            message.get("historyRewriteAt"),
        )
        if message.get("providerPayload") is not None:
            out["providerPayload"] = message["providerPayload"]
        return [out]
    return []


def _agent_user(content: list[dict[str, object]], timestamp: object, rewrite_at: object = None) -> dict[str, object]:
    return {
        "role": "user",
        "content": content,
        "attribution": "agent",
        "historyRewriteAt": timestamp if rewrite_at is None else rewrite_at,
        "timestamp": timestamp,
    }


def _custom_to_llm(message: dict[str, object]) -> list[dict[str, object]]:
    content = message.get("content")
    if not isinstance(content, (str, list)):
        return []
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    attribution = message.get("attribution")
    timestamp = message.get("timestamp")

    def shaped(role: str, body: Sequence[object]) -> dict[str, object]:
        out: dict[str, object] = {"role": role, "content": body}
        if attribution is not None:
            out["attribution"] = attribution
        out["timestamp"] = timestamp
        return out

    if message.get("role") == "custom" and message.get("customType") == _SKILL_PROMPT and attribution == "user":
        return [shaped("user", blocks)]
    images = (
        [b for b in blocks if isinstance(b, dict) and b.get("type") == "image"] if isinstance(content, list) else []
    )
    if images:
        texts = [b for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
        out = [shaped("developer", texts)] if texts else []
        note = {"type": "text", "text": f"Images attached to {message.get('customType')}."}
        return out + [shaped("user", [note, *images])]
    return [shaped("developer", blocks)]


def _pruned_content(message: dict[str, object]) -> object:
    content = message.get("content")
    if message.get("prunedAt") is None or not isinstance(content, list):
        return content
    texts = [b for b in content if isinstance(b, dict) and b.get("type") == "text"]
    text = "".join(str(b.get("text", "")) for b in texts) or "[Output truncated]"
    first = next((i for i, b in enumerate(content) if isinstance(b, dict) and b.get("type") == "text"), -1)
    if first < 0:
        return [{"type": "text", "text": text}, *content]
    return [
        b if not (isinstance(b, dict) and b.get("type") == "text") else {"type": "text", "text": text}
        for i, b in enumerate(content)
        if not (isinstance(b, dict) and b.get("type") == "text") or i == first
    ]


def convert_to_llm(messages: list[dict[str, object]]) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for message in messages:
        out.extend(to_llm_messages(message))
    return out


def prefix_unchanged(messages: Sequence[Mapping[str, Any]], base: int) -> bool:
    """Whether the first ``base`` messages are what the context ended with when it held only them.

    Under these rules a tool call is left out until its result is on the path,
    so a turn whose result came after ``base`` was sent without that call then.
    """
    answered = {m.get("toolCallId") for m in messages[:base] if m.get("role") == "toolResult"}
    for message in messages[:base]:
        if message.get("role") == "assistant":
            for block in message.get("content") or []:
                if isinstance(block, dict) and block.get("type") == "toolCall" and block.get("id") not in answered:
                    return False
    return True
