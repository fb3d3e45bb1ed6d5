"""The listing index's folder scan (one lstat per file, relative to the folder's descriptor) and the first list
of a new sidecar on an indexed root: it must see every change made while no sidecar ran."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from session_builders import assistant, header, message, service, user, write_session
from test_listing_index import as_tuples, from_files, listed

from sidecar.store.files.layout import encode_cwd
from sidecar.store.index.scan import scan_folder

FOLDERS = 10  # more than the 8 folders from which a list scans its first folder alone, then the rest


def _session(root: Path, cwd: str, session_id: str, text: str) -> Path:
    return write_session(
        root / encode_cwd(cwd) / f"2025-01-01T00-00-00-000Z_{session_id}.jsonl",
        header(session_id, cwd=cwd),
        [message("a", None, user(text), 1), message("b", "a", assistant("ok"), 2)],
    )


def _dead_pid() -> int:
    """The id of a process that has exited (and been reaped)."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, check=True)
    return int(done.stdout)


def test_a_folder_scan_gives_each_regular_session_file_its_lstat_and_removes_a_dead_writers_leftover(tmp_path):
    folder = tmp_path / "--work--"
    kept = _session(tmp_path, "/work", "kept", "hello")
    (folder / "notes.txt").write_text("not a session")
    (folder / "dir.jsonl").mkdir()  # a folder named like a session: not a file
    (folder / "link.jsonl").symlink_to(kept)  # lstat: a link is not a regular file, whatever it points at
    leftover = folder / f".x.jsonl.tmp-{_dead_pid()}"
    leftover.write_text("half a create")
    os.utime(leftover, (1_000_000_000, 1_000_000_000))  # long untouched: not a write in progress
    st = os.lstat(kept)
    assert scan_folder(folder) == {str(kept): (st.st_size, st.st_mtime_ns)}
    assert not leftover.exists()
    assert scan_folder(tmp_path / "missing") == {}


def test_a_new_sidecars_first_list_and_query_see_what_changed_while_no_sidecar_ran(sessions_root):
    paths = [
        _session(sessions_root, f"/work/p{n}", f"s{n}-{k}", f"first words {n}") for n in range(FOLDERS) for k in (0, 1)
    ]
    first = service(sessions_root)
    assert len(listed(first)) == 2 * FOLDERS
    first.store.catalog.index.close()
    # With no sidecar running: an append in the folder scanned first and in a later one, a file gone, one new.
    scanned_first = min(paths, key=lambda path: str(path.parent))
    for path in (scanned_first, paths[-1]):
        with open(path, "a") as out:
            out.write(json.dumps(message("c", "b", user("appended meanwhile", timestamp=1_900_000_000_000))) + "\n")
    paths[5].unlink()
    _session(sessions_root, "/work/p3", "new", "dropped in meanwhile")
    second = service(sessions_root)
    try:
        found = listed(second, query="meanwhile")
        assert {s.sessionId for s in found} == {scanned_first.stem.split("_")[1], paths[-1].stem.split("_")[1], "new"}
        assert all("meanwhile" in (s.snippet or "") for s in found)
        assert as_tuples(listed(second)) == from_files(sessions_root)
    finally:
        second.store.catalog.index.close()
