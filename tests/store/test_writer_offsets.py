"""Where an append's bytes went: told by the fstat after the write when the file grew by them alone,
by the descriptor's offset when another program's bytes came first."""

from __future__ import annotations

from pathlib import Path

from sidecar.store.base import FsyncPolicy
from sidecar.store.files.writer import SessionWriter

HEADER = b'{"type":"session"}\n'


def _writer(tmp_path: Path) -> tuple[SessionWriter, Path]:
    path = tmp_path / "s.jsonl"
    w = SessionWriter(path, FsyncPolicy.NEVER, exists=False)
    w.create(HEADER)
    return w, path


def test_an_append_alone_is_placed_by_its_fstat_which_is_kept(tmp_path):
    w, path = _writer(tmp_path)
    start = w.append([b'{"a":1}'], durable=False, expect_at=len(HEADER))
    assert start == len(HEADER) and w.last_start == len(HEADER)
    assert w.last_end == path.stat().st_size == len(HEADER) + 8
    assert w.last_stat is not None and w.last_stat.st_size == w.last_end  # kept for the follower
    w.close()


def test_bytes_of_another_program_before_ours_are_found_by_the_offset(tmp_path):
    w, path = _writer(tmp_path)
    w.append([b'{"a":1}'], durable=False, expect_at=len(HEADER))
    with open(path, "ab") as other:
        other.write(b'{"theirs":true}\n')
    known = len(HEADER) + 8  # what we believe: the other program's line is not known yet
    start = w.append([b'{"b":2}'], durable=False, expect_at=known)
    assert start == known + 16 and path.read_bytes()[start:] == b'{"b":2}\n'
    assert w.last_start == start and w.last_end == start + 8
    assert w.last_stat is None  # not ours alone: the follower takes its own look
    w.close()


def test_without_an_expected_size_the_offset_places_it(tmp_path):
    w, path = _writer(tmp_path)
    start = w.append([b'{"a":1}'], durable=False)
    assert start == len(HEADER) and w.last_stat is None
    w.close()
