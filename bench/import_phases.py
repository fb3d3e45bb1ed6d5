"""Where a 50 MB import's time goes, step by step, against the floors no mapping can go below.

    python bench/import_phases.py              # both sources of bench/imports.py (generate them with it first)
    python bench/import_phases.py --repeat 7

For the Codex rollout and the Claude Code transcript of bench/imports.py, the median CPU
time (and wall time) of each step of an import as importers/run.py and the file store run
it, each step timed alone, in one process, rounds interleaved:

  read       the source mapped and cut into lines (importers/common.source_lines)
  decode     every line decoded into a Struct of no fields: what any reading of the source costs
  map        the importer: read, decode and map to pi entries (most made as their lines at once,
             importers/common.Builder.made; the rest dicts)
  entries    the entries as the store keeps them (store/encoded.stored_entries: the dicts encoded,
             a made line cut or its images moved only where it must be)
  file       the session built from them and its file written in one go (Session.copied, owned)
  write      only the kernel's part of that: the file's bytes written to a fresh file (and fsync'd)
  least      the least any mapping does per entry, over as many entries as the import made: an
             8-hex id (a sha1), the source time read, the line joined, the Entry made

"map" holds "read" and "decode"; "file" holds "write". The last row, "floor", is read + decode +
least + file: what an import costs before it maps a single field, to set beside twice the open
of the 50 MB pi file (bench/imports.py) that issue 14 asks an import to stay under. The sum map + entries + file is about
what bench/imports.py measures to the answer. The load average is printed before and after:
on a loaded machine the CPU times are the figures to compare.
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT.parent))

import imports  # noqa: E402  (the sources' paths)
import msgspec  # noqa: E402


class _Nothing(msgspec.Struct):
    pass


def _timed(step: Callable[[], Any]) -> tuple[float, float, Any]:
    start, start_cpu = time.perf_counter(), time.process_time()
    result = step()
    return time.perf_counter() - start, time.process_time() - start_cpu, result


def phases(tool: str, source: Path, repeat: int) -> dict[str, tuple[float, float]]:
    from sidecar.importers import claude_code, codex
    from sidecar.importers.common import source_lines
    from sidecar.store.base import FsyncPolicy
    from sidecar.store.encoded import stored_entries
    from sidecar.store.files.session import FileSession as Session

    importer = codex.import_rollout if tool == "codex" else claude_code.import_transcript
    nothing = msgspec.json.Decoder(_Nothing)
    rows: dict[str, list[tuple[float, float]]] = {}

    def note(name: str, wall: float, cpu: float) -> None:
        rows.setdefault(name, []).append((wall, cpu))

    for _ in range(repeat):
        gc.disable()  # as importers/run.py runs an import
        try:
            wall, cpu, lines = _timed(lambda: [line for _, line in source_lines(source)])
            note("read", wall, cpu)
            wall, cpu, _ = _timed(lambda: [nothing.decode(line) for line in lines])
            note("decode", wall, cpu)
            lines = []  # (freed before the map: the figures are of one phase at a time)
            wall, cpu, imported = _timed(lambda: importer(source))
            note("map", wall, cpu)
            wall, cpu, entries = _timed(lambda: stored_entries(imported.entries, None))
            note("entries", wall, cpu)
            stamps = [entry.timestamp for entry in entries]
            wall, cpu, _ = _timed(lambda: least_mapping(stamps))
            note("least", wall, cpu)
            folder = Path(tempfile.mkdtemp(prefix="bench-phases-"))
            try:
                wall, cpu, session = _timed(
                    lambda: Session.copied(
                        folder / "session.jsonl",
                        "0199aaaa-bbbb-7ccc-8ddd-eeeeffff0009",
                        "/work/bench",
                        FsyncPolicy.ASSISTANT,
                        entries,
                        timestamp=imported.timestamp,
                        owned=True,
                    )
                )
                note("file", wall, cpu)
                session.close()
                data = (folder / "session.jsonl").read_bytes()

                def write() -> None:
                    fd = os.open(folder / "copy.jsonl", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o600)
                    try:
                        os.write(fd, data)
                        os.fsync(fd)
                    finally:
                        os.close(fd)

                wall, cpu, _ = _timed(write)
                note("write", wall, cpu)
            finally:
                shutil.rmtree(folder, ignore_errors=True)
            imported = entries = session = None  # (freed before the next round)
        finally:
            gc.enable()
    return {
        name: (statistics.median(w for w, _ in got), statistics.median(c for _, c in got)) for name, got in rows.items()
    }


def least_mapping(stamps: list[Any]) -> list[Any]:
    """One entry per source time in ``stamps``, made with no more work than any importer does for it."""
    from sidecar.format.entry import BLOB_MARK, Entry
    from sidecar.importers.common import ms_of_iso, short_id

    encode = msgspec.json.Encoder().encode
    taken: set[str] = set()
    made, parent = [], None
    for index, stamp in enumerate(stamps):
        entry_id = short_id(f"source-record:{index}", taken)
        ms = ms_of_iso(stamp, 0)
        line = b"".join(
            (
                b'{"type":"message","id":',
                encode(entry_id),
                b',"parentId":',
                b"null" if parent is None else encode(parent),
                b',"timestamp":',
                encode(stamp),
                b',"message":{"role":"user","content":"","timestamp":',
                encode(ms),
                b"}}",
            )
        )
        made.append(Entry("message", entry_id, parent, stamp, line, None, has_blobs=BLOB_MARK in line))
        parent = entry_id
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    sources = {"codex": imports.CODEX, "claude-code": imports.CLAUDE}
    missing = [str(path) for path in sources.values() if not path.exists()]
    if missing:
        sys.exit(f"missing {', '.join(missing)}: run python bench/imports.py once to generate them")
    load_before = os.getloadavg()
    results = {tool: phases(tool, path, args.repeat) for tool, path in sources.items()}
    load_after = os.getloadavg()
    print(
        f"load average (1 min) {load_before[0]:.1f} before, {load_after[0]:.1f} after, on {os.cpu_count()} CPUs; "
        f"medians of {args.repeat} rounds"
    )
    print(f"{'step':<10}" + "".join(f" {tool + ' CPU s':>17} {'wall s':>8}" for tool in results))
    for step in ("read", "decode", "map", "entries", "file", "write", "least"):
        print(f"{step:<10}" + "".join(f" {got[step][1]:>17.4f} {got[step][0]:>8.4f}" for got in results.values()))
    floor = ("read", "decode", "least", "file")
    print(
        f"{'floor':<10}"
        + "".join(
            f" {sum(got[s][1] for s in floor):>17.4f} {sum(got[s][0] for s in floor):>8.4f}" for got in results.values()
        )
    )


if __name__ == "__main__":
    main()
