"""parse_lines (a session's lines one by one, as the PostgreSQL store reads its rows) reads every
file as parse_file reads the same bytes: items, offsets, errors, torn tail, title line, refusals.

The files are test_fast_parse's (branches, labels, names, custom entries, compactions,
odd heads, damaged, blank and torn lines), with every kind of start a file can have
and bytes a line can hold: CR, non-UTF-8 bytes, control bytes, blob references.
"""

from __future__ import annotations

import random

import pytest
from session_builders import header, line, message, user
from test_fast_parse import _answers, _described, _lines

from sidecar.format.jsonl import NotASession, parse_file
from sidecar.format.linelist import LineParser, parse_lines
from sidecar.format.titleslot import slot_line


def _split(data: bytes) -> tuple[list[bytes], bytes]:
    pieces = data.split(b"\n")
    return pieces[:-1], pieces[-1]


def _read_both(data: bytes) -> tuple[object, object]:
    """What each parse makes of ``data``: its description and answers, or the refusal's message."""
    results = []
    for parse in (lambda: parse_file(data), lambda: parse_lines(*_split(data))):
        try:
            parsed = parse()
        except NotASession as exc:
            results.append(("refused", str(exc)))
            continue
        results.append((_described(parsed), parsed.title_slot, parsed.title_fault, _answers(parsed)))
    return results[0], results[1]


HEAD = line(header()).encode()
SLOT = slot_line("A title", "2026-01-01T00:00:00.000Z", "user").rstrip(b"\n")
STARTS = {
    "header": [],
    "title line": [SLOT],
    "title line, blank, damage": [SLOT, b"", b"  ", b"{not json"],
    "damage before the header": [b"[1]", b"\xff\xfe junk"],
    "blank lines": [b"", b"\r", b" \t"],
    "CR at the header's end": None,  # the header line ends in CR
}


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("start", list(STARTS))
@pytest.mark.parametrize("ending", ["whole", "torn", "no newline", "blank tail"])
def test_the_lines_read_as_the_file_they_make(seed, start, ending):
    rows = _lines(random.Random(seed))
    before = STARTS[start]
    if before is None:
        rows[0] = rows[0] + b"\r"
    else:
        rows[:0] = before
    rows += [
        line(message("cr", None, user("a line ending in CR"))).encode() + b"\r",
        b'{"type":"message","id":"raw","parentId":null,"message":{"role":"user","content":"\x01\x02\x7f"}}',
        b'{"type":"custom","id":"nb","parentId":null,"data":"\xff\xfe not UTF-8"}',
        line(message("blob", None, user('see "blob:sha256:' + "a" * 64 + '"'))).encode(),
        line(message("last", None, user("the end"))).encode(),
    ]
    data = b"\n".join(rows) + b"\n"
    if ending == "torn":
        data += b'{"type":"message","id":"torn","parentId":null,"message":{"role":"us'
    elif ending == "no newline":
        data = data[:-1]
    elif ending == "blank tail":
        data += b"  "
    from_file, from_lines = _read_both(data)
    assert from_file[0] != "refused"
    assert from_lines == from_file
    described = from_file[0]
    assert described[2] > 0  # damaged lines are among them
    assert any(isinstance(item, tuple) and item[7] for item in described[6])  # and a blob reference
    if ending in ("torn", "blank tail"):
        assert described[3] is not None
    if ending == "no newline":
        assert described[4] is True
    if start.startswith("title line"):
        assert from_file[1] is not None and from_file[1].title == "A title"


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\n",
        HEAD,  # the header is the unterminated tail
        SLOT + b"\n" + HEAD,
        HEAD + b"\n",
        SLOT + b"\n",  # a title line and nothing else
        SLOT,
        b"\xef\xbb\xbf" + HEAD + b"\n",  # a byte order mark
        b"{not json\n[2]\n",  # no header at all
        line(message("m", None, user("hi"))).encode() + b"\n" + HEAD + b"\n",  # the first entry is not a header
        b"  \n" + HEAD + b"\n" + b"{torn",
        b"\n" + SLOT + b"\n" + HEAD + b"\n",  # a title line not first is an entry, not a header
    ],
)
def test_short_and_refused_files_read_alike(data):
    from_file, from_lines = _read_both(data)
    assert from_lines == from_file


def test_each_entry_holds_its_rows_bytes_and_no_file_is_made():
    rows = [HEAD] + [line(message(f"m{n}", None, user(f"u{n}"))).encode() for n in range(5)]
    parsed = parse_lines(rows, b"")
    assert [entry.line for entry in parsed.items] == rows[1:]
    assert all(entry.line is row for entry, row in zip(parsed.items, rows[1:]))


def _fed(data: bytes, size: int):
    lines, tail = _split(data)
    parser = LineParser()
    for at in range(0, len(lines), size):
        parser.feed(lines[at : at + size])
    try:
        parsed = parser.finish(tail)
    except NotASession as exc:
        return ("refused", str(exc))
    return (_described(parsed), parsed.title_slot, parsed.title_fault, _answers(parsed))


@pytest.mark.parametrize("size", [1, 2, 3, 7, 1000])
@pytest.mark.parametrize("start", list(STARTS))
def test_lines_fed_a_chunk_at_a_time_read_as_the_file(size, start):
    """The store feeds the rows as they arrive: chunk boundaries anywhere (before, at and after the
    header, the title line alone in the first chunk) change nothing."""
    rows = _lines(random.Random(size))
    before = STARTS[start]
    if before is None:
        rows[0] = rows[0] + b"\r"
    else:
        rows[:0] = before
    data = b"\n".join(rows) + b"\n" + b'{"type":"message","id":"torn"'
    from_file, _ = _read_both(data)
    assert _fed(data, size) == from_file


@pytest.mark.parametrize("size", [1, 2])
@pytest.mark.parametrize(
    "data",
    [
        b"{not json\n[2]\n" + HEAD,  # the header only in the tail
        b"{not json\n[2]\n",
        line(message("m", None, user("hi"))).encode() + b"\n" + HEAD + b"\n" + HEAD + b"\n",
        b"\n" + SLOT + b"\n" + HEAD + b"\n",
    ],
)
def test_short_and_refused_files_fed_a_line_at_a_time_read_alike(size, data):
    from_file, _ = _read_both(data)
    assert _fed(data, size) == from_file
