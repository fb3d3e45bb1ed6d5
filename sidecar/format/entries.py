"""The check of appended entries against the shapes pi reads (the version and known types: version.py).

The shapes themselves are the contract's (``sidecar.wire.entries``): what pi and
oh-my-pi write and read. An appended entry is checked against them, so that one
pi would misread is refused, not stored. They are never used to read or
re-encode a line from disk: a Struct drops fields it does not know, and a
newer agent's fields must survive every rewrite byte-for-byte (see
``sidecar.format.jsonl.Line``); files open as they are, unknown entries kept.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Annotated, Union, get_args

import msgspec

from ..wire import entries as shapes


class SessionHeader(msgspec.Struct, tag="session", tag_field="type", omit_defaults=True):
    """First line of every session file."""

    id: str
    timestamp: str
    cwd: str = ""
    version: int | None = None
    parentSession: str | None = None
    title: str | None = None


# ---------------------------------------------------------------- checking appended entries
#
# The shapes are the contract's (sidecar.wire.entries). Checking an append is
# one msgspec conversion of the batch into them; only a refusal walks the
# entry, to name the field and the shape pi expects.

# A field that takes no value: a trap for a field pi would not read where an
# agent might put it (OpenAI's ``tool_calls`` beside an assistant's content).
_Refused = Annotated[str, msgspec.Meta(pattern="(?!)")]

# Fields refused wherever they appear on a message, and why.
_TRAPS = {
    "tool_calls": (
        "pi does not read OpenAI-style tool_calls: put each tool call in the assistant message's content as "
        '{"type": "toolCall", "id": string, "name": string, "arguments": object}, and answer it with a '
        '{"role": "toolResult", "toolCallId": <that id>, ...} message'
    ),
}


class _CheckedAssistant(shapes.AssistantMessage, tag="assistant"):
    tool_calls: _Refused | msgspec.UnsetType = msgspec.UNSET


class _CheckedOmpAssistant(shapes.OmpAssistantMessage, tag="assistant"):
    tool_calls: _Refused | msgspec.UnsetType = msgspec.UNSET


def _swap(union: object, swaps: dict[object, object]) -> object:
    return Union[tuple(swaps.get(kind, kind) for kind in get_args(union))]


_CheckedMessage = _swap(shapes.EntryMessage, {shapes.AssistantMessage: _CheckedAssistant})
_CheckedOmpMessage = _swap(shapes.OmpEntryMessage, {shapes.OmpAssistantMessage: _CheckedOmpAssistant})


class _CheckedMessageEntry(shapes.MessageEntry, tag="message"):
    message: _CheckedMessage  # type: ignore[valid-type]  # a union built at import time (_swap): mypy cannot read it as a type


class _CheckedOmpMessageEntry(shapes.OmpMessageEntry, tag="message"):
    message: _CheckedOmpMessage  # type: ignore[valid-type]  # a union built at import time (_swap): mypy cannot read it as a type


_CheckedEntry = _swap(shapes.SessionEntry, {shapes.MessageEntry: _CheckedMessageEntry})
_CheckedOmpEntry = _swap(shapes.OmpSessionEntry, {shapes.OmpMessageEntry: _CheckedOmpMessageEntry})


class _PiBatch(msgspec.Struct):
    """A batch of entries to check in one call (a Struct: msgspec keeps its
    type information on the class, where a bare Union is looked up again on
    every call, ~20 us)."""

    entries: list[_CheckedEntry]  # type: ignore[valid-type]  # a union built at import time (_swap): mypy cannot read it as a type


class _OmpBatch(msgspec.Struct):
    entries: list[_CheckedOmpEntry]  # type: ignore[valid-type]  # a union built at import time (_swap): mypy cannot read it as a type


_OMP_ONLY_TAGS = frozenset(kind.__struct_config__.tag for kind in shapes.OMP_ONLY_ENTRIES)
_BATCHES: dict[str, type[msgspec.Struct]] = {"pi": _PiBatch, "omp": _OmpBatch}
# What the error shows as the shape expected (the contract's types, without the traps).
_SHOWN_UNIONS: dict[str, object] = {"pi": shapes.SessionEntry, "omp": shapes.OmpSessionEntry}


class ShapeRefused(Exception):
    """An entry does not fit pi's shapes: ``field`` (from the entry, e.g. ``message.toolCallId``),
    what is wrong (``reason``) and the shape pi expects there (``expected``)."""

    def __init__(self, field: str, reason: str, expected: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field, self.reason, self.expected = field, reason, expected


class InvalidAt(Exception):
    """Entry ``index`` of a batch does not fit pi's shapes: ``error`` says where and how."""

    def __init__(self, index: int, error: ShapeRefused) -> None:
        super().__init__(index, error)
        self.index, self.error = index, error


def validate_entry(obj: dict[str, object], compat: str = "pi") -> None:
    """Raise ``ShapeRefused`` when ``obj`` is not an entry pi (under oh-my-pi's compatibility,
    oh-my-pi) reads as meant: an unknown entry type, message role or content block, a
    required field missing or mistyped, OpenAI's ``tool_calls``. Extra fields are kept."""
    try:
        validate_entries([obj], compat)
    except InvalidAt as failed:
        raise failed.error from None


def validate_entries(objs: list[dict[str, object]], compat: str = "pi") -> None:
    """``validate_entry`` for each of ``objs``, in one msgspec pass.

    When one is refused, raises ``InvalidAt``: the first refused entry's index and why.
    """
    if not objs:
        return
    try:
        msgspec.convert({"entries": objs}, _BATCHES.get(compat, _PiBatch))
    except msgspec.ValidationError as exc:
        index, refused = _explain(str(exc), objs, _SHOWN_UNIONS.get(compat, shapes.SessionEntry), compat)
        raise InvalidAt(index, refused) from exc


# ---------------------------------------------------------------- explaining a refusal (error path only)

_AT = re.compile(r"^(?P<what>.*) - at `\$\.entries\[(?P<index>\d+)\](?P<path>[^`]*)`$", re.S)
_STEP = re.compile(r"\.([A-Za-z_$][\w$]*)|\[(\d+)\]")
_MISSING = re.compile(r"^Object missing required field `(?P<field>[^`]+)`$")
_INVALID = re.compile(r"^Invalid value (?P<value>.*)$")


def _explain(text: str, objs: Sequence[object], union: object, compat: str) -> tuple[int, ShapeRefused]:
    """The entry index, field and expected shape a msgspec error of a batch conversion names."""
    match = _AT.match(text)
    if match is None:  # (msgspec always names the path; should it not, the batch is named whole)
        return 0, ShapeRefused("", text, "")
    index = int(match["index"])
    steps: list[str | int] = [name if name else int(item) for name, item in _STEP.findall(match["path"])]
    what = match["what"]
    missing = _MISSING.match(what)
    if missing:
        steps.append(missing["field"])
    field = _field(steps)
    value, kind, parent_kind = _walk(objs[index], steps, msgspec.inspect.type_info(union))
    last = steps[-1] if steps else None
    if last in _TRAPS:
        return index, ShapeRefused(field, _TRAPS[last], shapes.shape_line(shapes.ToolCall))
    invalid = _INVALID.match(what)
    if invalid and last in ("type", "role") and isinstance(parent_kind, msgspec.inspect.UnionType):
        return index, _unknown_tag(field, len(steps) == 1, value, parent_kind, compat)
    if missing:
        return index, ShapeRefused(field, f"{missing['field']} is required", _shape_of(parent_kind))
    # The shape of what is there when it is an object or a choice of them, else of the object holding it.
    shown = kind if _objects(kind) else parent_kind
    return index, ShapeRefused(field, what[0].lower() + what[1:], _shape_of(shown))


def _unknown_tag(
    field: str, is_entry: bool, value: object, union: msgspec.inspect.UnionType, compat: str
) -> ShapeRefused:
    known = [
        member.cls.__struct_config__.tag for member in union.types if isinstance(member, msgspec.inspect.StructType)
    ]
    listed = ", ".join(str(tag) for tag in known)
    if is_entry:
        whose = "pi" if compat == "pi" else "pi or oh-my-pi"
        if compat == "pi" and value in _OMP_ONLY_TAGS:
            return ShapeRefused(
                field,
                f"entry type {value!r} is oh-my-pi's, which pi does not read; a session is taken to hold oh-my-pi's "
                'entries under oh-my-pi\'s compatibility (store.compat "omp", or a root in ~/.omp/agent/sessions)',
                shapes.shape_line(
                    next(kind for kind in shapes.OMP_ONLY_ENTRIES if kind.__struct_config__.tag == value)
                ),
            )
        return ShapeRefused(
            field,
            f"entry type {value!r} is not one {whose} reads ({listed}); keep your agent's own data in a custom entry, "
            "which stays out of the model's context (or a custom_message entry to put it in)",
            shapes.shape_line(shapes.CustomEntry),
        )
    if field.endswith(".role"):
        if value == "tool":
            return ShapeRefused(
                field,
                'a tool\'s result is a message of role "toolResult" (pi reads no role "tool")',
                shapes.shape_line(shapes.ToolResultMessage),
            )
        if value in ("compactionSummary", "branchSummary"):
            entry = shapes.CompactionEntry if value == "compactionSummary" else shapes.BranchSummaryEntry
            return ShapeRefused(
                field,
                f"a {value} is what a {entry.__struct_config__.tag} entry becomes in a context, "
                "not a message to append: append that entry (or call session/compact)",
                shapes.shape_line(entry),
            )
        return ShapeRefused(field, f"message role {value!r} is not one pi reads ({listed})", _shape_of(union))
    return ShapeRefused(
        field,
        f"content block type {value!r} is not one pi reads here ({listed})",
        "; ".join(
            shapes.shape_line(member.cls) for member in union.types if isinstance(member, msgspec.inspect.StructType)
        ),
    )


def _field(steps: list[str | int]) -> str:
    return "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in steps).lstrip(".")


def _walk(value: object, steps: list[str | int], kind: object) -> tuple[object, object, object]:
    """Follow ``steps`` through ``value`` and its type: the value at the end (None when absent), its
    type (None when it could not be told) and the type holding it (a Struct, or a union of them)."""
    parent = kind
    for at, step in enumerate(steps):
        kind = _pick(kind, value)
        parent = kind
        if isinstance(step, int):
            value = value[step] if isinstance(value, list) and step < len(value) else None
            kind = kind.item_type if isinstance(kind, msgspec.inspect.ListType) else None
        else:
            value = value.get(step) if isinstance(value, dict) else None
            if isinstance(kind, msgspec.inspect.StructType):
                tag_field = kind.cls.__struct_config__.tag_field
                fields = {field.encode_name: field.type for field in kind.fields}
                kind = fields.get(step) if step != tag_field else None
            else:
                kind = None
        if kind is None and at < len(steps) - 1:
            return value, None, parent
    return value, kind, parent


def _pick(kind: object, value: object) -> object:
    """The member of a union ``value`` is meant as (by its tag, or list for a list); else ``kind``."""
    if not isinstance(kind, msgspec.inspect.UnionType):
        return kind
    for member in kind.types:
        if isinstance(member, msgspec.inspect.StructType) and isinstance(value, dict):
            config = member.cls.__struct_config__
            if config.tag_field is not None and value.get(config.tag_field) == config.tag:
                return member
        if isinstance(member, msgspec.inspect.ListType) and isinstance(value, list):
            return member
    return kind


def _objects(kind: object) -> bool:
    """Whether ``kind`` is an object type, or a choice among which are some."""
    inspect = msgspec.inspect
    if isinstance(kind, inspect.UnionType):
        return any(isinstance(member, inspect.StructType) for member in kind.types)
    return isinstance(kind, inspect.StructType)


def _shape_of(kind: object) -> str:
    if isinstance(kind, msgspec.inspect.StructType):
        return shapes.shape_line(kind.cls)
    if isinstance(kind, msgspec.inspect.UnionType):
        members = [member.cls for member in kind.types if isinstance(member, msgspec.inspect.StructType)]
        shown = "; ".join(shapes.shape_line(cls) for cls in members[:4])
        return shown + (" ... (PROTOCOL.md, Entry shapes, has the others)" if len(members) > 4 else "")
    return shapes.type_name(kind) if kind is not None else ""


def _prime_type_info() -> None:
    """Build msgspec's type information of the types converted above, once, on the importing thread.

    msgspec builds a Struct type's information on its first conversion and
    publishes it before it is complete; threads converting the same type for
    the first time at once could read it half-built (a segfault seen with
    eight sessions appended to at once). Built here, it is complete before
    any worker thread exists.
    """
    for value, kind in (({"entries": []}, _PiBatch), ({"entries": []}, _OmpBatch)):
        try:
            msgspec.convert(value, kind)
        except msgspec.ValidationError:
            pass  # the information is built before the value is checked


_prime_type_info()
