"""Every method, every string or number param, hostile values: each is answered as bad input or served, never
as the server's own failure (-32603) nor as JSON it cannot read (-32700: lone surrogates are valid JSON), and
the server goes on.

The params of each method are built from its wire Struct (msgspec's type info): required fields get a
plain value (the seeded session's id, an absolute cwd, one user message), then each string field in
turn, or list of strings, takes each of the values below. The sweep found NUL in a cwd or path, and
names longer than the file system holds, reaching the file system as internal errors, and a
``before`` past SQLite's 64 bits in ``history/list``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from msgspec import inspect

from sidecar.rpc.lifecycle import served_methods

from .harness import RawServer, assistant, user

# No value names a real place outside the test's folder: an export to a path writes that file, a
# convert into a targetRoot makes a folder there (an early version of this test wrote an export over
# /etc/passwd). Places outside the sessions root are made below tmp_path (``outside``).
HOSTILE = [
    "",
    " ",
    "\x00",
    "a\x00b",
    "..",
    "x/../..",
    "\\",
    "\n",
    "C:\\x",
    "-1",
    "null",
    "%s%n",
    "\u202e",
    "e\u0301",
    "x" * 100_000,
    "/" + "d" * 300,
    # Lone surrogates, as JavaScript's JSON.stringify writes a string cut inside an emoji ("\\ud83d"):
    # valid JSON, so never a parse error either.
    "cut \ud83d",
    "\udc00",
    "\ude00\ud83d",
    "/w/\ud83d",
]


NUMBERS = [-1, 0, 2**53 + 1, 2**63 - 1, 2**63, 2**64, -(2**63) - 1, 10**30, 1e308, -1e308, 0.5]


def outside(tmp_path: Path) -> list[str]:
    """An existing file, an existing folder and a missing nested path, all outside the sessions root."""
    (tmp_path / "outside-dir").mkdir()
    (tmp_path / "outside.txt").write_text("not the sidecar's")
    return [str(tmp_path / "outside.txt"), str(tmp_path / "outside-dir"), str(tmp_path / "no" / "such" / "x")]


# Methods that would erase or move away what the sweep stands on.
LEFT_OUT = {"session/delete", "session/emptyTrash", "session/prune", "session/archive", "session/gc"}
# Params where a hostile value is a legitimate, costly request: a snapshot of "/" captures the whole disk.
LEFT_OUT_FIELDS = {("session/snapshot", "cwd")}


def plain(kind: Any, name: str) -> Any:
    """A value of ``kind`` that fits (None when nothing plain does)."""
    if isinstance(kind, inspect.UnionType):
        for option in kind.types:
            if not isinstance(option, inspect.NoneType):
                return plain(option, name)
        return None
    if isinstance(kind, inspect.StrType):
        return {"sessionId": "keep", "cwd": "/w"}.get(name, "x")
    if isinstance(kind, inspect.BoolType):
        return False
    if isinstance(kind, (inspect.IntType, inspect.FloatType)):
        return 1
    if isinstance(kind, inspect.LiteralType):
        return kind.values[0]
    if isinstance(kind, inspect.ListType):
        if name == "entries":
            return [user("hi")]
        item = plain(kind.item_type, name)
        return [] if item is None else [item]
    if isinstance(kind, inspect.DictType):
        return {}
    if isinstance(kind, inspect.StructType):
        return required(kind.cls)
    return None


def required(struct: type) -> dict[str, Any]:
    return {f.encode_name: plain(f.type, f.encode_name) for f in inspect.type_info(struct).fields if f.required}


def number_fields(struct: type) -> list[str]:
    found = []
    for field in inspect.type_info(struct).fields:
        options = field.type.types if isinstance(field.type, inspect.UnionType) else (field.type,)
        if any(isinstance(o, (inspect.IntType, inspect.FloatType)) for o in options):
            found.append(field.encode_name)
    return found


def string_fields(struct: type) -> list[tuple[str, bool]]:
    """(name, holds a list of strings) of the fields a string can go in."""
    found = []
    for field in inspect.type_info(struct).fields:
        options = field.type.types if isinstance(field.type, inspect.UnionType) else (field.type,)
        if any(isinstance(o, inspect.StrType) for o in options):
            found.append((field.encode_name, False))
        elif any(isinstance(o, inspect.ListType) and isinstance(o.item_type, inspect.StrType) for o in options):
            found.append((field.encode_name, True))
    return found


async def test_hostile_strings_in_every_param_are_never_an_internal_error(
    raw: RawServer, sessions_root: Path, tmp_path: Path
):
    values = HOSTILE + outside(tmp_path)
    assert all(sessions_root not in Path(v).parents for v in values[-3:])
    await raw.request("session/create", {"cwd": "/w", "sessionId": "keep"})
    await raw.request("session/append", {"sessionId": "keep", "entries": [user("hi"), assistant("hello")]})
    internal, asked = [], 0
    for method, route in sorted(served_methods().items()):
        params_type = route.params
        if method in LEFT_OUT:
            continue
        base = required(params_type)
        for name, is_list in string_fields(params_type):
            if (method, name) in LEFT_OUT_FIELDS:
                continue
            for value in values:
                answer = await raw.request(method, {**base, name: [value] if is_list else value})
                asked += 1
                error = answer.get("error")
                if error is not None and error["code"] in (-32603, -32700):  # every value is valid JSON
                    internal.append((method, name, value[:20], error["message"][:200]))
        for name in number_fields(params_type):  # and numbers past what a field, SQLite or a float holds
            for number in NUMBERS:
                answer = await raw.request(method, {**base, name: number})
                asked += 1
                error = answer.get("error")
                if error is not None and error["code"] == -32603:
                    internal.append((method, name, number, error["message"][:200]))
    assert not internal, internal[:5]
    assert asked > 500  # the sweep reached the methods
    assert "result" in await raw.request("session/getTree", {"sessionId": "keep"})
