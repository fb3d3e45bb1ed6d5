"""FileWatch sees writes made through a descriptor opened under another name (a sidecar's own files).

writer.py creates a session file by writing a temp file and hard-linking it
into place, then appends through the temp name's descriptor: the kernel
reports those writes to the folder under the removed temp name, so a folder
watch alone never saw another sidecar's appends to a file it created.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from sidecar.store.files.filewatch import FileWatch

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="inotify is Linux's")


def _wait_for(watch: FileWatch, path: Path) -> set[Path]:
    seen: set[Path] = set()
    for _ in range(50):
        seen |= watch.read()
        if path in seen:
            break
        time.sleep(0.01)
    return seen


def test_appends_through_a_linked_temp_descriptor_are_seen(tmp_path: Path) -> None:
    folder = tmp_path / "--w--"
    folder.mkdir()
    path = folder / "s.jsonl"
    tmp = folder / ".s.jsonl.new-1"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.write(fd, b'{"type":"session"}\n')
    os.link(tmp, path)
    tmp.unlink()
    watch = FileWatch(tmp_path)
    assert watch.enabled
    try:
        assert watch.add(path)
        watch.read()
        os.write(fd, b'{"type":"message"}\n')
        assert path in _wait_for(watch, path)
        # A file renamed over it is watched in its turn.
        other = folder / ".s.jsonl.rewrite"
        other.write_bytes(b'{"type":"session"}\n')
        os.replace(other, path)
        assert path in _wait_for(watch, path)
        with open(path, "ab") as out:
            out.write(b'{"type":"message"}\n')
        assert path in _wait_for(watch, path)
        watch.remove(path)
        os.write(fd, b"more\n")
        time.sleep(0.05)
        assert path not in watch.read()
    finally:
        os.close(fd)
        watch.close()
