"""PROTOCOL.md's method table is the contract the wire types implement: checked both ways.

Statically, each row's params against the msgspec Struct of its method (``sidecar/wire``, from which
schema.json is generated): the same fields, required where the row says so, and every default the row
states equal to the Struct's (a default the Struct has must be stated). Then against a real sidecar
subprocess: every method called with only its required params answers a result of its result type or
an error the Errors table documents, never -32602 (the params the docs call enough were not) or -32603.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest

from sidecar import wire
from sidecar.operations.results import DEFAULT_LIST_LIMIT
from sidecar.rpc.lifecycle import LIVE_METHODS
from sidecar.snapshots.engine import DEFAULT_MAX_FILE_BYTES

from .harness import REPO_ROOT, RawServer, assistant, user

PROTOCOL = REPO_ROOT / "protocol" / "PROTOCOL.md"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\??")


def section(title: str) -> str:
    text = PROTOCOL.read_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end]


def cells(line: str) -> list[str]:
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


class Param(msgspec.Struct):
    name: str
    optional: bool  # written `name?`
    default: Any = msgspec.UNSET  # from "(default X", when stated
    one_of: bool = False  # in "`a?` or `b?`: exactly one" (or "at least one")
    pair_open: bool = False  # followed by "or": not the last of such a group
    after_or: bool = False  # preceded by "or": not the first of such a group

    @property
    def first_of_group(self) -> bool:
        return self.one_of and self.pair_open and not self.after_or


def params_of(cell: str) -> list[Param]:
    """The params a row's cell names: backticked names outside parentheses, braces and brackets."""
    found: list[Param] = []
    depth, index = 0, 0
    while index < len(cell):
        char = cell[index]
        if char in "({[":
            depth += 1
        elif char in ")}]":
            depth -= 1
        elif char == "`" and depth == 0:
            end = cell.index("`", index + 1)
            token = cell[index + 1 : end]
            index = end + 1
            if _NAME.fullmatch(token):
                rest = cell[index:]
                stated = re.match(r"\s*\(default (`[^`]+`|[^\s;:),]+)", rest)
                default = json.loads(stated.group(1).strip("`")) if stated is not None else msgspec.UNSET
                pairs_next = re.match(r"\s*(\([^)]*\)\s*)?or `", rest) is not None
                after_or = bool(found) and found[-1].pair_open
                found.append(
                    Param(token.rstrip("?"), token.endswith("?"), default, pairs_next or after_or, pairs_next, after_or)
                )
            continue
        index += 1
    return found


def method_table() -> dict[str, list[Param]]:
    rows: dict[str, list[Param]] = {}
    for line in section("Methods").splitlines():
        if not line.startswith("| `"):
            continue
        first, params = cells(line)[:2]
        names = re.findall(r"`([a-z]+/[A-Za-z]+)`", first)
        if not names:
            continue
        for method in names:
            rows[method] = params_of(params)
    return rows


def documented_codes() -> set[int]:
    """The codes the Errors table lists (a row "-33020..-33025" stands for each code between)."""
    codes: set[int] = set()
    for line in section("Errors").splitlines():
        if line.startswith("| -3"):
            bounds = sorted(int(number) for number in re.findall(r"-\d+", cells(line)[0]))
            codes.update(range(bounds[0], bounds[-1] + 1))
    return codes


def struct_fields(params_type: type) -> dict[str, msgspec.inspect.Field]:
    info = msgspec.inspect.type_info(params_type)
    return {field.encode_name: field for field in info.fields if field.name != "workDoneToken"}  # type: ignore[union-attr]


TABLE = method_table()


def test_the_table_names_every_method_and_only_those():
    assert set(TABLE) == set(wire.METHODS), set(TABLE) ^ set(wire.METHODS)
    assert set(LIVE_METHODS) <= set(TABLE)


@pytest.mark.parametrize("method", sorted(wire.METHODS))
def test_each_rows_params_are_the_wire_types_with_their_defaults(method: str):
    fields = struct_fields(wire.METHODS[method][0])
    documented = {param.name: param for param in TABLE[method]}
    assert set(documented) == set(fields), (
        f"{method}: only in the doc {set(documented) - set(fields)}, only in the type {set(fields) - set(documented)}"
    )
    for name, param in documented.items():
        field = fields[name]
        has_value_default = not field.required and field.default not in (None, msgspec.UNSET, msgspec.NODEFAULT)
        if param.optional:
            assert not field.required, f"{method}.{name} is written `{name}?` but the type requires it"
            assert not has_value_default, f"{method}.{name} defaults to {field.default!r}: write (default ...)"
            assert param.default is msgspec.UNSET, f"{method}.{name}: `{name}?` with a stated default"
        elif param.default is not msgspec.UNSET:
            assert (
                not field.required and field.default == param.default and type(field.default) is type(param.default)
            ), f"{method}.{name}: the doc says default {param.default!r}, the type {field.default!r}"
        else:
            assert field.required, f"{method}.{name}: the doc says required, the type defaults to {field.default!r}"


def test_defaults_the_service_falls_back_to_are_the_wire_types():
    # A null the types accept means the same default (session/list limit, session/snapshot maxFileBytes).
    assert struct_fields(wire.ListParams)["limit"].default == DEFAULT_LIST_LIMIT
    assert struct_fields(wire.SnapshotParams)["maxFileBytes"].default == DEFAULT_MAX_FILE_BYTES


def test_the_parser_reads_the_notation():
    parsed = params_of(
        '`a`, `b?` (absent: x), `c` (default `"agent"`; or `"llm"`), `d?` {`e`,`f`}, '
        '`g?` or `h?`: exactly one (`i` is ignored), `j` (default 50; 1-1000), `k?` ("9") or `l?` or `m?`: at least one'
    )
    assert [(p.name, p.optional, p.default, p.one_of) for p in parsed] == [
        ("a", False, msgspec.UNSET, False),
        ("b", True, msgspec.UNSET, False),
        ("c", False, "agent", False),
        ("d", True, msgspec.UNSET, False),
        ("g", True, msgspec.UNSET, True),
        ("h", True, msgspec.UNSET, True),
        ("j", False, 50, False),
        ("k", True, msgspec.UNSET, True),
        ("l", True, msgspec.UNSET, True),
        ("m", True, msgspec.UNSET, True),
    ]
    assert [p.name for p in parsed if p.first_of_group] == ["g", "k"]
    assert {-32602, -33020, -33025, -33001} <= documented_codes()


def required_value(method: str, name: str, session_id: str, entry_id: str, scratch: Path) -> Any:
    """A value for a required param: the session and entry made for the call, else a plain one."""
    if (method, name) == ("session/convert", "to"):
        return "spec"
    if method.endswith("Foreign") and name == "format":
        return "claude-code"
    return {
        "sessionId": session_id,
        "entryId": entry_id,
        "cwd": str(scratch / "project"),
        "entries": [user("one more")],
        "label": "checked",
        "name": "checked",
        "prompt": "a prompt",
        "query": "prompt",
        "from": entry_id,
        "to": "worktree",
        "tool": "codex",
        "paths": [str(scratch / "no-such-rollout")],
        "format": "markdown",
        "targetRoot": str(scratch / "converted"),
        "olderThan": "90d",
        "projectKey": "a-project",
        "foreignSessionId": "a-foreign-session",
        "lines": [{"type": "user", "uuid": "u1", "message": {"role": "user", "content": "hi"}}],
    }[name]


async def test_every_method_answers_when_called_with_only_its_required_params(tmp_path: Path):
    documented = documented_codes()
    root = tmp_path / "sessions"
    project = tmp_path / "project"  # a real folder: session/snapshot reads it
    project.mkdir()
    (project / "main.py").write_text("print('hello')\n")
    server = await RawServer.start()
    try:
        answer = await server.initialize(root)
        assert "result" in answer, answer
        for number, method in enumerate(sorted(TABLE)):
            session_id = f"doc-{number}"
            created = await server.request("session/create", {"cwd": str(project), "sessionId": session_id})
            assert "result" in created, created
            appended = await server.request(
                "session/append", {"sessionId": session_id, "entries": [user("hello"), assistant("hi")]}
            )
            entry_id = appended["result"]["entries"][0]["id"]
            params = {}
            for param in TABLE[method]:
                if param.first_of_group or (not param.optional and param.default is msgspec.UNSET):
                    params[param.name] = required_value(method, param.name, session_id, entry_id, tmp_path)
            answer = await server.request(method, params)
            if "error" in answer:
                code = answer["error"]["code"]
                assert code not in (-32602, -32603), f"{method} {params}: {answer['error']}"
                assert code in documented, f"{method}: {code} is not in the Errors table: {answer['error']}"
            else:
                msgspec.convert(answer["result"], wire.METHODS[method][1])  # the shape the schema gives
    finally:
        await server.stop()
