"""Reading a Codex rollout's lines: each decoded once for what it is (its head), the UI copies of
response items counted as skipped without going further, a tool output's text kept as it came, a
damaged line reported with its number and skipped; the mapping (codex.py) reads the rest."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import msgspec

from ..store import MAX_CHARS
from .common import SKIPPED, Tally, source_lines, stood_in
from .made import Assistant

OUTPUT_ITEMS = {"function_call_output", "custom_tool_call_output", "local_shell_call_output", "tool_search_output"}
UI_EVENTS = {
    "item_completed",
    "item_started",
    "user_message",
    "agent_message",
    "agent_reasoning",
    "agent_reasoning_raw_content",
    "agent_reasoning_section_break",
    "exec_command_begin",
    "exec_command_end",
    "exec_command_output_delta",
    "patch_apply_begin",
    "patch_apply_end",
    "token_count",
    "task_started",
    "task_complete",
    "turn_started",
    "turn_complete",
    "context_compacted",
    "turn_aborted",
    "web_search_begin",
    "web_search_end",
    "mcp_tool_call_begin",
    "mcp_tool_call_end",
    "view_image_tool_call",
    "collab_agent_spawn_begin",
    "collab_agent_spawn_end",
    "thread_settings_applied",
    "entered_review_mode",
    "exited_review_mode",
    "turn_diff",
    "plan_update",
    "background_event",
    "stream_error",
    "error",
    "warning",
    "session_configured",
    "shutdown_complete",
}
RESPONSE_ENDS = {"token_usage_record", "token_count", "turn_context", "task_started", "task_complete"}
# Why each kind of record was counted as it was (the compiled mapping counts with these too).
REASONS = {
    "origin": "the session header's origin",
    "turn_model": "the model of the turn",
    "ui_copy": "a UI event repeating response items",
    "kept": "kept as a custom entry (not part of the model's context)",
    "context": "injected context: a custom_message",
    "instructions": "instructions to the model: kept",
}
BOOKKEEPING = {"token_usage_record": "token accounting; usage totals are not part of the conversation"}


# (gc=False: a Struct a line is read into holds nothing that refers back to it; decoded JSON is a tree)
class Line(msgspec.Struct, gc=False):
    """A rollout line with its payload left undecoded until it is needed."""

    type: Any = None
    timestamp: Any = None
    payload: msgspec.Raw = msgspec.Raw(b"null")


class Kind(msgspec.Struct, gc=False):
    type: Any = None


class PayloadHead(msgspec.Struct, gc=False):
    """What a payload is, the type of an event's item, a tool output's JSON text (kept as it came), and
    the fields of a response item the mapping reads (codex.py maps the common ones from this alone:
    no second decoding of the line). Lists stay JSON text until read: an event's fields of those
    names are never built, and no shape of theirs fails this decoding."""

    type: Any = None
    item: Kind | None = None
    call_id: Any = None
    output: msgspec.Raw = msgspec.Raw(b"null")
    role: Any = None
    id: Any = None
    name: Any = None
    arguments: Any = None
    input: Any = ""
    encrypted_content: Any = None
    content: msgspec.Raw = msgspec.Raw(b"null")
    summary: msgspec.Raw = msgspec.Raw(b"null")


class Head(msgspec.Struct, gc=False):
    """A line read once for what it is: a UI copy is counted, a tool output mapped, from this alone."""

    type: Any = None
    timestamp: Any = None
    payload: PayloadHead | None = None


class Model(msgspec.Struct, gc=False):
    model: Any = None


class ModelLine(msgspec.Struct, gc=False):
    payload: Model


class ItemLine(msgspec.Struct, gc=False):
    payload: dict[str, Any]


line_decoder = msgspec.json.Decoder(Line)
head_decoder = msgspec.json.Decoder(Head)
model_decoder = msgspec.json.Decoder(Model)
model_line_decoder = msgspec.json.Decoder(ModelLine)
item_line_decoder = msgspec.json.Decoder(ItemLine)
# Line kinds read_known takes from the head alone (with an object payload whose type is a string).
KNOWN_KINDS = {"response_item", "turn_context"}
decoder = msgspec.json.Decoder()
# UI events whose payload nothing here needs: counted as skipped without being decoded.
NOT_READ = UI_EVENTS - {"thread_settings_applied"}


class RolloutReader(Protocol):
    """What read_lines needs of the mapping reading along (codex.py's reader): the model response
    being filled, which a UI or bookkeeping line ends, and a subagent's spawn to note."""

    open: Assistant | None

    def _note_spawn(self, item: dict[str, Any]) -> None: ...


OUTPUT, KNOWN = "output", "known"  # what read_lines gives instead of a Line when the head says all


def read_lines(
    path: Path, tally: Tally, reader: RolloutReader
) -> Iterator[tuple[int, memoryview, Line | str, Head | None]]:
    """(number, JSON text, line, head) of the rollout's lines, each decoded once for what it is (``head``):
    the UI copies (most of a rollout's bytes) and the bookkeeping lines are counted here without being built
    (ending the model response being read, as they do); a tool output whose
    text is one string comes as OUTPUT, the kinds ``read_known`` takes as KNOWN, instead of a ``Line``
    (their head says what they are); any other line with its payload left undecoded until read."""
    skipped: dict[str, int] = {}  # UI events by kind, counted into the tally at the end (one count per kind)
    kept_out: dict[str, int] = {}  # bookkeeping lines by kind, the same way
    for number, raw in source_lines(path):
        retried = False  # (read again once, its lone surrogates stood in, when msgspec refused it)
        while True:
            try:
                try:
                    head: Head | None = head_decoder.decode(raw)
                except msgspec.ValidationError:
                    head = None  # a payload (or an event's item) of another shape: read whole below
                payload = head.payload if head is not None else None
                if payload is not None:
                    kind = payload.type
                    if type(kind) is str:
                        if head.type == "event_msg" and kind in NOT_READ:  # type: ignore[union-attr]  # payload is not None here, so head is not None
                            if kind in RESPONSE_ENDS:
                                reader.open = None
                            if (
                                kind == "item_completed"
                                and payload.item is not None
                                and payload.item.type == "CollabAgentToolCall"
                            ):
                                reader._note_spawn(decoder.decode(raw)["payload"]["item"])
                            skipped[kind] = skipped.get(kind, 0) + 1
                            break
                        if head.type == "response_item" and kind in OUTPUT_ITEMS and is_text(payload.output):  # type: ignore[union-attr]  # payload is not None here, so head is not None
                            yield number, raw, OUTPUT, head
                            break
                    if head.type in BOOKKEEPING:  # type: ignore[union-attr]  # payload is not None here, so head is not None
                        reader.open = None  # (it ends a model response)
                        kept_out[head.type] = kept_out.get(head.type, 0) + 1  # type: ignore[union-attr]  # payload is not None here, so head is not None
                        break
                    if head.type in KNOWN_KINDS and (type(kind) is str or head.type != "response_item"):  # type: ignore[union-attr]  # payload is not None here, so head is not None
                        yield number, raw, KNOWN, head
                        break
                line = line_decoder.decode(raw)
            except msgspec.DecodeError as error:
                # (nothing was done with a line msgspec refused: read again from the start, stood in)
                again = None if retried else stood_in(raw)
                if again is None:
                    tally.damage(number, f"not JSON: {error}")
                    break
                raw, retried = again, True
                continue
            yield number, raw, line, head
            break
    for kind, times in skipped.items():
        tally.count(f"event_msg/{kind}", SKIPPED, REASONS["ui_copy"], times)
    for kind, times in kept_out.items():
        tally.count(kind, SKIPPED, BOOKKEEPING[kind], times)


def is_text(raw: msgspec.Raw) -> bool:
    """A JSON string short enough to keep whole (the store cuts longer ones, so it needs them decoded)."""
    return memoryview(raw)[:1] == b'"' and len(raw) <= MAX_CHARS
