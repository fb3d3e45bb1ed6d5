"""Confined writes: no path a manifest could name leads outside the folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sidecar.errors import PathOutsideCwd
from sidecar.snapshots.confined import Blocked, check_relative, confined


@pytest.mark.parametrize(
    "path",
    ["../escape", "/etc/passwd", "a/../../b", "", "a//b", "./a", ".git/config", "x/.GIT/hooks/pre-commit", "a\0b"],
)
def test_paths_that_are_not_plain_relative_paths_are_refused(path: str):
    with pytest.raises(PathOutsideCwd):
        check_relative(path)


def test_writes_never_go_through_a_symlinked_folder(tmp_path: Path):
    inside, outside = tmp_path / "inside", tmp_path / "outside"
    inside.mkdir()
    outside.mkdir()
    os.symlink(outside, inside / "link")
    os.symlink(outside / "file", inside / "file-link")
    with confined(str(inside)) as here:
        with pytest.raises(Blocked):
            here.write("link/new.txt", b"x", "100644")
        with pytest.raises(Blocked):
            here.write("link/deeper/new.txt", b"x", "100644")
        (outside / "anything").write_text("outside")
        with pytest.raises(Blocked):
            here.remove("link/anything")
        (outside / "anything").unlink()
        # Writing over a symlink replaces the link itself; the file it names is not created.
        here.write("file-link", b"content", "100644")
        assert here.lstat("link/new.txt") is None
    assert os.listdir(outside) == []
    assert not (inside / "file-link").is_symlink() and (inside / "file-link").read_bytes() == b"content"


def test_a_write_is_a_rename_and_keeps_permission_bits_but_the_execute_bit(tmp_path: Path):
    (tmp_path / "private").write_text("old")
    os.chmod(tmp_path / "private", 0o600)
    inode = os.stat(tmp_path / "private").st_ino
    with confined(str(tmp_path)) as here:
        here.write("private", b"new", "100755")
        here.write("sub/dir/tool", b"#!/bin/sh\n", "100755")
        here.write("sub/link", b"../private", "120000")
    assert os.stat(tmp_path / "private").st_mode & 0o777 == 0o700
    assert os.stat(tmp_path / "private").st_ino != inode
    assert os.access(tmp_path / "sub" / "dir" / "tool", os.X_OK)
    assert os.readlink(tmp_path / "sub" / "link") == "../private"
    assert [p for p in os.listdir(tmp_path) if "sidecar-rewind" in p] == []
