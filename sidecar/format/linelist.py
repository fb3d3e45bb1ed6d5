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

from .entry import BLOB_MARK, Entry, MessageHead
from .jsonl import _MAX_HEADS, ParsedFile, _heads, _strict_envelope_decoder, _types, parse_file, parse_line
from .titleslot import looks_like_slot


def parse_lines(lines: Sequence[bytes], tail: bytes) -> ParsedFile:
    """``parse_file(b"".join(line + b"\\n" for line in lines) + tail)``, each entry holding its line's bytes."""
    header_at = _header_index(lines)
    if header_at is None:
        return parse_file(_joined(lines, tail))
    head = _joined(lines[:header_at + 1], b"")
    parsed = parse_file(head)  # the title line, what precedes the header, the header
    items = parsed.items  # empty: the header is the head's last line
    append = items.append
    parse_errors = parsed.parse_errors
    strict = _strict_envelope_decoder.decode
    types, heads = _types, _heads
    mark = BLOB_MARK
    offset = len(head)
    last = len(lines) if tail else len(lines) - 1  # the tail, if any, is read as the file's unterminated last line
    for index in range(header_at + 1, last + 1):
        unterminated = index == len(lines)
        line = tail if unterminated else lines[index]
        length = len(line)
        try:
            env = strict(line)
        except msgspec.MsgspecError:
            env = None
        if env is not None:
            head_of = env.message
            if head_of is not None:  # shared as the file parse shares them (jsonl._parse_view)
                key = (head_of.role, head_of.provider, head_of.model)
                shared = heads.get(key)
                if shared is None:
                    shared = MessageHead(*key)
                    if len(heads) < _MAX_HEADS:
                        heads[key] = shared
                head_of = shared
            kind = env.type
            append(Entry(types.get(kind, kind) if kind else "", env.id, env.parentId, env.timestamp,
                         line, head_of, offset, length, None, mark in line))
        else:
            entry = None if line[:1] != b"{" and not line.strip() else parse_line(line)  # blank, or the general path
            if entry is None:
                parse_errors += 1
                if unterminated:  # a line torn by a crash: reported, and cut before the next append
                    parsed.torn_tail_at = offset
                elif line[:1] == b"{" or line.strip():
                    append(line)  # kept as it is, written back unchanged
                offset += length + 1
                continue
            entry.offset, entry.length, entry.has_blobs = offset, length, mark in line
            append(entry)
        if unterminated:
            parsed.needs_newline = True
        offset += length + 1
    parsed.parse_errors = parse_errors
    parsed.size = offset - 1 if tail else offset  # the tail has no newline
    return parsed


def _header_index(lines: Sequence[bytes]) -> int | None:
    """The index of the first whole line the file parse would take for the header, or None."""
    for index, line in enumerate(lines):
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
