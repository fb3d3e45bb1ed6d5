"""The compiled core reads every file exactly as the pure-Python core does (issue 42).

Both cores parse the same bytes, in one process (``corepath.choose``): the pi
fixtures, files made here of every shape the suites meet (branches, tool
output full of escapes, non-ASCII and astral text, oh-my-pi's title line,
damaged, blank, indented and torn lines, CRLF endings, bytes that are not
UTF-8, lone surrogate escapes, a byte order mark), held in memory and mapped,
and lines hypothesis makes and breaks. The parsed files must be equal field by
field and serialize to the same bytes. Below the parse, the compiled scanner
alone (``scan_compiled``) is held to Python's on every stretch it accepts, and
must accept every stretch of a sound file (else the compiled core would be
compiled in name only).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from both_cores import needs_compiled_core
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_fast_parse import _described

from sidecar import corepath
from sidecar.format import jsonl
from sidecar.format.jsonl import NotASession, parse_file, parse_path, parse_tail
from sidecar.format.lineread import SharedHead
from sidecar.format.titleslot import slot_line

try:
    from sidecar.corepath.compiled import CompiledLineScanner
except ImportError:
    CompiledLineScanner = None  # type: ignore[assignment,misc]  # the module is absent in a pure-Python install

pytestmark = [needs_compiled_core, pytest.mark.usefixtures("core_restored")]

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "pi"


def _parsed_by(core: str, read: object) -> list:
    assert corepath.choose(core) == core
    try:
        return _described(read())  # type: ignore[operator]  # a callable parse of the test's bytes or path
    except NotASession as refused:
        return ["NotASession", str(refused)]


def _both_agree(read: object) -> list:
    python = _parsed_by("python", read)
    compiled = _parsed_by("compiled", read)
    assert compiled == python
    return python


# -- files of every shape -----------------------------------------------------------------------------------------


def _stamp(n: int) -> str:
    return f"2026-01-01T00:{n // 60 % 60:02d}:{n % 60:02d}.{n % 1000:03d}Z"


def _session(rng: random.Random, count: int, spice: bool = True) -> list[bytes]:
    """A pi session's lines: users, assistants with tool calls and thinking, tool results of many lines, model
    and thinking changes, labels, names, compactions, branches; text with quotes, backslashes, non-ASCII."""
    header = {"type": "session", "version": 3, "id": "sess-diff", "timestamp": _stamp(0), "cwd": "/w/p"}
    rows = [json.dumps(header, separators=(",", ":")).encode()]
    ids: list[str] = []
    parent: str | None = None
    spices = ['"', "\\", "\n", "\t", "é", "中文", "😀", "\u2028", "</x>", "\x07"] if spice else ["plain"]
    for n in range(1, count + 1):
        entry_id = f"{n:08x}"
        if ids and rng.random() < 0.05:
            parent = rng.choice(ids)
        text = " ".join(rng.choice(["read", "edit", "tree", *spices]) for _ in range(rng.randrange(1, 30)))
        pick = rng.randrange(10)
        base = {"id": entry_id, "parentId": parent, "timestamp": _stamp(n)}
        if pick == 0:
            obj = {"type": "message", **base, "message": {"role": "user", "content": text, "timestamp": n}}
        elif pick in (1, 2):
            obj = {
                "type": "message",
                **base,
                "message": {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": text},
                        {"type": "toolCall", "id": f"c{n}", "name": "bash", "arguments": {"command": text}},
                    ],
                    "provider": rng.choice(["anthropic", "openai", None]),
                    "model": rng.choice(["m-1", "m-2", "模型"]),
                    "usage": {"input": n, "output": 2.5, "cost": {"total": 1e-5}},
                    "stopReason": "toolUse",
                    "timestamp": n,
                },
            }
            if rng.random() < 0.2:
                del obj["message"]["provider"]  # type: ignore[attr-defined]  # a dict built just above
        elif pick in (3, 4):
            output = "\n".join(text for _ in range(rng.randrange(1, 40)))
            obj = {
                "type": "message",
                **base,
                "message": {"role": "toolResult", "toolCallId": f"c{n}", "content": [{"type": "text", "text": output}]},
            }
        elif pick == 5:
            obj = {"type": "model_change", **base, "provider": "openai", "modelId": "gpt"}
        elif pick == 6:
            obj = {"type": "thinking_level_change", **base, "thinkingLevel": "high"}
        elif pick == 7 and ids:
            obj = {"type": "label", **base, "targetId": rng.choice(ids), "label": text[:20]}
        elif pick == 8 and ids:
            obj = {
                "type": "compaction",
                **base,
                "summary": text,
                "firstKeptEntryId": rng.choice(ids),
                "tokensBefore": 9,
            }
        else:
            obj = {"type": "session_info", **base, "name": text[:30]}
        rows.append(json.dumps(obj, ensure_ascii=rng.random() < 0.3, separators=(",", ":")).encode())
        ids.append(entry_id)
        parent = entry_id
    return rows


_DAMAGE = [
    b"",
    b"   ",
    b"{not json",
    b"[1, 2]",
    b'"text"',
    b'{"type":"message","id":',
    b'{"type":"custom","id":"two"}{"type":"custom","id":"objects"}',
    b'{"type":"custom","id":"trailing"} ',
    b'  {"type":"custom","id":"indented"}',
    b"{}",
    b'{"type":"custom","id":"x\xffy"}',  # not UTF-8 in a kept field
    b'{"type":"custom","id":"q","data":"x\xffy"}',  # not UTF-8 in a skipped one
    b'{"type":"custom","id":"\\ud83d"}',  # a lone surrogate escape, kept
    b'{"type":"custom","id":"s","data":"cut \\ud83d here"}',  # and skipped
    b'{"type":"custom","id":"pair","data":"\\ud83d\\ude00"}',
    b'{"type":"custom","id":"dup","id":"dup2"}',
    b'{"\\u0074ype":"custom","id":"escaped-key"}',
    b'{"type":17,"id":"numeric-type"}',
    b'{"type":"message","id":"m","message":{"role":1}}',
    b'{"type":"message","id":"m2","message":"not an object"}',
    b'{"type":"message","id":"m3","message":null}',
    b'{"type":"custom","id":"deep","data":' + b"[" * 100 + b"]" * 100 + b"}",
    b'{"type":"custom","id":"tab","data":"a\tb"}',
    b'{"type":"custom","id":"num","data":01}',
    b'{"type":"custom","id":"big","data":1e99999}',
    b'{"type":"custom","id":"ws"  ,\t"data" :\r[ 1 , {"a" : null} ] }',
]


def _variants(rng: random.Random, rows: list[bytes]) -> Iterator[tuple[str, bytes]]:
    """The file of ``rows`` whole and in every broken shape."""
    yield "whole", b"\n".join(rows) + b"\n"
    yield "no newline at the end", b"\n".join(rows)
    yield "torn last line", b"\n".join(rows) + b"\n" + rows[-1][: len(rows[-1]) // 2]
    yield "CRLF endings", b"\r\n".join(rows) + b"\r\n"
    damaged = list(rows)
    for bad in _DAMAGE:
        damaged.insert(rng.randrange(1, len(damaged) + 1), bad)
    yield "damaged lines", b"\n".join(damaged) + b"\n"
    yield "title line", slot_line("A title", _stamp(1), "user") + b"\n" + b"\n".join(rows) + b"\n"
    yield "damage before the header", b"junk\n" + b"\n".join(rows) + b"\n"
    yield "byte order mark", b"\xef\xbb\xbf" + b"\n".join(rows) + b"\n"
    yield "header only", rows[0] + b"\n"
    yield "no header", b"\n".join(rows[1:]) + b"\n"
    yield "empty", b""


def _files() -> Iterator[tuple[str, bytes]]:
    for path in sorted(FIXTURES.glob("*.jsonl")):
        yield f"fixture {path.name}", path.read_bytes()
    for seed, count, spice in [(1, 60, True), (2, 400, True), (3, 300, False)]:
        rng = random.Random(seed)
        for name, data in _variants(rng, _session(rng, count, spice)):
            yield f"seed {seed} {name}", data


FILES = list(_files())


@pytest.mark.parametrize(("name", "data"), FILES, ids=[name for name, _ in FILES])
def test_both_cores_parse_every_file_alike(name: str, data: bytes, tmp_path: Path) -> None:
    held = _both_agree(lambda: parse_file(data))
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    read = _both_agree(lambda: parse_path(path))  # a file over MAP_THRESHOLD is mapped, its lines read back
    assert read[:2] == held[:2] and read[2:6] == held[2:6]
    if data.count(b"\n") > 2:
        cut = data.index(b"\n") + 1
        _both_agree(lambda: parse_tail(data[cut:], cut))
    if name.endswith(" whole") or name.startswith("fixture"):
        assert held[0] is not None and held[2] == 0  # sound files: every line an entry


def test_a_large_file_is_mapped_and_read_alike(tmp_path: Path) -> None:
    """Over MAP_THRESHOLD and over the 1 MB stretch: many stretches, each entry reading its line back from the file."""
    rng = random.Random(7)
    rows = _session(rng, 6000)
    data = b"\n".join(rows) + b"\n"
    assert len(data) > 2 * 1024 * 1024 > jsonl.MAP_THRESHOLD
    path = tmp_path / "big.jsonl"
    path.write_bytes(data)
    parsed = _both_agree(lambda: parse_path(path))
    assert len(parsed[6]) == 6000 and parsed[2] == 0


# -- the scanners themselves --------------------------------------------------------------------------------------


def _scanners() -> tuple[corepath.LineScanner, CompiledLineScanner]:
    compiled = corepath.scanner_of("compiled", SharedHead)
    assert isinstance(compiled, CompiledLineScanner)
    return corepath.scanner_of("python", SharedHead), compiled


def _compare_stretch(data: bytes, start: int, stop: int) -> bool:
    """Whether the compiled scan took ``data[start:stop]``; where it did, Python's took it and gave the same."""
    python, compiled = _scanners()
    alone = compiled.scan_compiled(data, start, stop)
    reference = python.scan(data, start, stop)
    if alone is not None:
        assert alone == reference
        assert [type(value) for value in alone.ids] == [type(value) for value in reference.ids]  # type: ignore[union-attr]  # equal to alone, so not None
    # The scanner the compiled core runs (refusals handed to Python) gives Python's answer whatever happens.
    assert compiled.scan(data, start, stop) == reference
    return alone is not None


def test_the_compiled_scan_takes_every_stretch_of_a_sound_file() -> None:
    rng = random.Random(11)
    for path in sorted(FIXTURES.glob("*.jsonl")):
        data = path.read_bytes()
        start = data.index(b"\n") + 1
        assert _compare_stretch(data, start, data.rindex(b"\n")), path.name
    data = b"\n".join(_session(rng, 500)) + b"\n"
    newlines = [at for at, byte in enumerate(data) if byte == 10]
    for _ in range(40):
        first, last = sorted(rng.sample(range(len(newlines)), 2))
        assert _compare_stretch(data, newlines[first] + 1, newlines[last])


@pytest.mark.parametrize("bad", _DAMAGE, ids=range(len(_DAMAGE)))
def test_a_stretch_with_an_odd_line_is_scanned_alike(bad: bytes) -> None:
    good = b'{"type":"custom","id":"g","parentId":null}'
    data = b"\n".join([good, bad, good]) + b"\n"
    _compare_stretch(data, 0, len(data) - 1)
    if bad.startswith(b"{") and bad.endswith(b"}"):
        _compare_stretch(bad + b"\n", 0, len(bad))


# -- lines hypothesis makes and breaks ----------------------------------------------------------------------------

_TEXT = st.text(
    alphabet=st.sampled_from(
        ['"', "\\", "\n", "\r", "\t", "/", "é", "中", "😀", "\u2028", "\x00", "\x1f", "a", "b", " "]
    ),
    max_size=12,
)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**20), 10**20) | st.floats(allow_nan=False) | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=8,
)
_FIELD = st.none() | _TEXT | st.integers(0, 9) | st.booleans()
_HEAD = (
    st.none()
    | _TEXT
    | st.fixed_dictionaries({}, optional={"role": _FIELD, "provider": _FIELD, "model": _FIELD, "content": _JSON})
)
_ENVELOPE = st.fixed_dictionaries(
    {},
    optional={
        "type": _FIELD,
        "id": _FIELD,
        "parentId": _FIELD,
        "timestamp": _FIELD,
        "message": _HEAD,
        "data": _JSON,
        "content": _JSON,
    },
)
_BYTES = st.sampled_from(
    [b'"', b"\\", b"\r", b"\xff", b"\xc3", b"\x00", b"{", b"}", b" ", b"u", b"\\ud83d", b",", b":"]
)


@st.composite
def _line(draw: st.DrawFn) -> bytes:
    obj = draw(_ENVELOPE)
    ascii_only = draw(st.booleans())
    separators = draw(st.sampled_from([(",", ":"), (", ", ": "), (" ,", " : ")]))
    raw = json.dumps(obj, ensure_ascii=ascii_only, separators=separators).encode("utf-8", "surrogatepass")
    for _ in range(draw(st.integers(0, 2))):  # break it: a byte put in, taken out or changed
        at = draw(st.integers(0, len(raw)))
        how = draw(st.sampled_from(["insert", "delete", "replace"]))
        piece = draw(_BYTES)
        if how == "insert":
            raw = raw[:at] + piece + raw[at:]
        elif how == "delete":
            raw = raw[:at] + raw[at + 1 :]
        else:
            raw = raw[:at] + piece + raw[at + 1 :]
    return raw.replace(b"\n", b"\\n")


_HEADER_LINE = b'{"type":"session","version":3,"id":"h","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}'


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(_line(), min_size=1, max_size=6), ending=st.sampled_from([b"\n", b"", b"\r\n"]))
def test_made_and_broken_lines_read_alike(lines: list[bytes], ending: bytes) -> None:
    stretch = b"\n".join(lines) + b"\n"
    _compare_stretch(stretch, 0, len(stretch) - 1)
    for line in lines:
        _compare_stretch(line + b"\n", 0, len(line))
    data = _HEADER_LINE + b"\n" + b"\n".join(lines) + ending
    _both_agree(lambda: parse_file(data))
