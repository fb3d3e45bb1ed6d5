"""Parsing a session whose lines arrive one by one (the PostgreSQL store's rows), without joining them.

``parse_lines(lines, tail)`` gives exactly what ``parse_file`` gives for the
file those lines make (each line and its newline, then ``tail``, the bytes
after the last newline): the same header, items, offsets, errors, torn tail and
title line. What it saves is the file: a 50 MB session's rows were joined into
one buffer and the parse then cut each line out of it again (two copies of the
whole transcript). Here each entry holds the row's own bytes.

The lines up to the header (oh-my-pi's title line, damage before the header, the
header itself) are few and go through ``parse_file`` itself, so what that part
means is decided in one place. The lines after it take the same two paths as
the file parse: the strict envelope first, ``parse_line``'s general path when
that refuses the line. A session whose header is not among its whole lines (it
is in the tail, or there is none) is joined and handed to ``parse_file``.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from .entry import BLOB_MARK, Entry
from .jsonl import NotASession, ParsedFile, _strict_envelope_decoder, _types, parse_file, parse_line
from .lineread import share_head
from .titleslot import looks_like_slot


def parse_lines(lines: Sequence[bytes], tail: bytes) -> ParsedFile:
    """``parse_file(b"".join(line + b"\\n" for line in lines) + tail)``, each entry holding its line's bytes."""
    parser = LineParser()
    parser.feed(lines)
    return parser.finish(tail)


class LineParser:
    """``parse_lines`` a part at a time: ``feed`` the lines as they arrive (the PostgreSQL store
    parses each chunk of rows while the server sends the next), then ``finish`` with the tail.

    Nothing is raised before ``finish``: a file that is not a session is refused there, so a
    caller reading rows in a transaction finishes it first.
    """

    __slots__ = ("_before", "_checked", "_parsed", "_refused", "_offset", "_errors")

    def __init__(self) -> None:
        self._before: list[bytes] = []  # the lines so far while no header is among them
        self._checked = 0  # how many of them are known not to be the header
        self._parsed: ParsedFile | None = None
        self._refused: NotASession | None = None
        self._offset = 0  # where the next line starts in the file
        self._errors = 0

    @classmethod
    def after_header(cls, base: int) -> LineParser:
        """A parser of the lines that follow a header already read, the first of them at offset ``base``
        (a read-only holder catching up). ``finish(b"")`` gives what ``parse_tail`` gives for those
        lines joined, with no header as it has none, except ``size``: here where the file ends after them."""
        parser = cls()
        parser._parsed = ParsedFile(header=None)  # type: ignore[arg-type]  # rows of a store with no header line; the header is set when its row comes
        parser._offset = base
        return parser

    def feed(self, lines: Sequence[bytes]) -> None:
        """The next whole lines of the file, in order (each without its newline)."""
        if self._parsed is None:
            if self._refused is not None:
                return
            before = self._before
            before.extend(lines)
            header_at = _header_index(before, self._checked)
            if header_at is None:
                self._checked = len(before)
                return
            head = _joined(before[: header_at + 1], b"")
            try:
                self._parsed = parse_file(head)  # the title line, what precedes the header, the header
            except NotASession as exc:
                self._refused = exc
                return
            finally:
                self._before = []
            self._offset = len(head)
            self._errors = self._parsed.parse_errors
            lines = before[header_at + 1 :]
        self._add(lines, False)

    def finish(self, tail: bytes) -> ParsedFile:
        """The parsed file, ``tail`` read as its unterminated last line; ``NotASession`` when it is none."""
        if self._refused is not None:
            raise self._refused
        parsed = self._parsed
        if parsed is None:  # the header is in the tail, or there is none: the file parse says which
            return parse_file(_joined(self._before, tail))
        if tail:
            self._add((tail,), True)
        parsed.parse_errors = self._errors
        parsed.size = self._offset - 1 if tail else self._offset  # the tail has no newline
        return parsed

    def _add(self, lines: Sequence[bytes], unterminated: bool) -> None:
        """Lines after the header: the file parse's fast path, its general path when that refuses one."""
        parsed = self._parsed
        assert parsed is not None
        append = parsed.items.append
        strict = _strict_envelope_decoder.decode
        types, share = _types, share_head
        mark = BLOB_MARK
        offset, errors = self._offset, self._errors
        for line in lines:
            length = len(line)
            try:
                env = strict(line)
            except msgspec.MsgspecError:
                env = None
            if env is not None:
                head = env.message
                if head is not None:
                    head = share(head)
                kind = env.type
                append(
                    Entry(
                        types.get(kind, kind) if kind else "",
                        env.id,
                        env.parentId,
                        env.timestamp,
                        line,
                        head,
                        offset,
                        length,
                        None,
                        mark in line,
                    )
                )
                if unterminated:
                    parsed.needs_newline = True
            else:
                blank = line[:1] != b"{" and not line.strip()
                entry = None if blank else parse_line(line)
                if entry is None:
                    errors += 1
                    if unterminated:  # a line torn by a crash: reported, and cut before the next append
                        parsed.torn_tail_at = offset
                    elif not blank:
                        append(line)  # kept as it is, written back unchanged
                else:
                    entry.offset, entry.length, entry.has_blobs = offset, length, mark in line
                    append(entry)
                    if unterminated:
                        parsed.needs_newline = True
            offset += length + 1
        self._offset, self._errors = offset, errors


def _header_index(lines: Sequence[bytes], start: int = 0) -> int | None:
    """The index of the first whole line the file parse would take for the header (looking from
    ``start``: the lines before it are known not to be), or None."""
    for index in range(start, len(lines)):
        line = lines[index]
        if line[:1] != b"{" and not line.strip():
            continue
        if index == 0 and looks_like_slot(line):
            continue
        if parse_line(line) is not None:
            return index
    return None


def _joined(lines: Sequence[bytes], tail: bytes) -> bytes:
    parts = list(lines)
    parts.append(tail)
    return b"\n".join(parts)
