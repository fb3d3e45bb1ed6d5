"""Export speed of a 20,000-entry session, and how soon its page is usable in Chromium.

    python bench/export.py            # bench/data/large.jsonl (bench/load.py's generator), made if missing
    python bench/export.py --repeat 3
    python bench/export.py --cores python,compiled   # each core's figures, side by side in one run


Prints seconds per format with redaction on (cold: every entry looked at; warm: the same open
session exported again) and off (goal: under 3 s; the CPU time beside the wall time tells what a
busy machine added), what redaction adds to each (goal: <= 25%, on CPU time), the page against the Markdown of the same tree (goal: <= 1.5x), the load average, the page's size,
and its first contentful paint in headless Chromium (goal: under 2 s), measured by the
page's own performance timing. The whole tree is in the page; the path is rendered in chunks.
With the compiled core installed, both cores are measured (sidecar/corepath: redaction's line gate
is the compiled core's there), the pure-Python one first, and what redaction adds is printed for each.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent))
sys.path.insert(0, str(ROOT.parent / "tests"))
sys.path.insert(0, str(ROOT))

from load import DATA, generate  # noqa: E402

from sidecar import corepath  # noqa: E402
from sidecar.export import export_session  # noqa: E402
from sidecar.export.redact.verdicts import forget  # noqa: E402
from sidecar.store.base import FsyncPolicy  # noqa: E402
from sidecar.store.files.session import FileSession as Session  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-browser", action="store_true", help="skip the Chromium first-paint measurement")
    parser.add_argument(
        "--cores", default="", help="the cores to measure, comma-separated (default: python, and compiled if installed)"
    )
    args = parser.parse_args()
    cores = [core for core in args.cores.split(",") if core] or ["python"]
    if not args.cores:
        try:
            corepath.choose("compiled")
            cores.append("compiled")
        except corepath.CoreMissing:
            print("the compiled core is not installed (bash scripts/core.sh): the Python core alone")
    if not DATA.exists():
        print(f"generating {DATA} ...", file=sys.stderr)
        generate(DATA)
    started = time.perf_counter()
    session, _ = Session.load(DATA, FsyncPolicy.NEVER, read_only=True)
    print(
        f"session: {session.entry_count} entries, {DATA.stat().st_size / 1e6:.1f} MB, loaded in {time.perf_counter() - started:.2f} s"
    )
    page = None
    cpu_of: dict[tuple[str, str, str], float] = {}
    for core in cores:
        corepath.choose(core)
        page = _measure(session, core, args.repeat, cpu_of) or page
    session.close()
    for core in cores:
        for fmt in ("markdown", "markdown-tree", "json", "html"):
            off = cpu_of[(core, fmt, "off")]
            cold, warm = cpu_of[(core, fmt, "cold")], cpu_of[(core, fmt, "warm")]
            print(
                f"{core:8s} redaction adds {100 * (cold - off) / off:5.1f}% cold, {100 * (warm - off) / off:5.1f}% warm to {fmt:13s} "
                f"(CPU {cold:.2f} s, {warm:.2f} s vs {off:.2f} s; goal <= 25%)"
            )
    for core in cores:
        for mode in ("cold", "warm", "off"):
            ratio = cpu_of[(core, "html", mode)] / cpu_of[(core, "markdown-tree", mode)]
            print(f"{core:8s} html / markdown of the same tree, redact={mode}: {ratio:.2f}x CPU (goal <= 1.5x)")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    if args.no_browser or page is None:
        return 0
    return _first_paint(page, args.repeat)


def _measure(session: Session, core: str, repeat: int, cpu_of: dict[tuple[str, str, str], float]) -> str | None:
    """Each format's export times on ``core``, into ``cpu_of``; the page of the cold html export."""
    page = None
    # "cold": redaction looks at every entry (what an export of a session just opened costs: the
    # command line's, the first of a sidecar's); "warm": the same open session exported again, its
    # entries found clean by the export before passed over (sidecar/export/redact/verdicts.py).
    for fmt in ("markdown", "markdown-tree", "json", "html"):
        for mode in ("cold", "warm", "off"):
            times, cpu = [], []
            forget(session)
            if mode == "warm":
                export_session(session, fmt.split("-")[0], whole_tree=fmt != "markdown", redact=True)
            for _ in range(repeat):
                if mode == "cold":
                    forget(session)
                started, started_cpu = time.perf_counter(), time.process_time()
                exported = export_session(
                    session, fmt.split("-")[0], whole_tree=fmt != "markdown", redact=mode != "off"
                )
                times.append(time.perf_counter() - started)
                cpu.append(time.process_time() - started_cpu)
            scope = "path" if fmt == "markdown" else "tree"
            print(
                f"{core:8s} {fmt:13s} {scope:4s} redact={'off ' if mode == 'off' else mode}  median {statistics.median(times):.2f} s  "
                f"(min {min(times):.2f}, CPU {statistics.median(cpu):.2f})  {len(exported.data) / 1e6:6.1f} MB  {exported.entries} entries"
                + (f"  {exported.redaction.total} redacted" if mode != "off" else "")
            )
            cpu_of[(core, fmt, mode)] = statistics.median(cpu)
            if fmt == "html" and mode == "cold":
                page = exported.text
    return page


def _first_paint(page: str, repeat: int) -> int:
    import importlib.util

    spec = importlib.util.spec_from_file_location("chromium", ROOT.parent / "tests" / "export" / "chromium.py")
    chromium = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(chromium)
    Chromium, executable = chromium.Chromium, chromium.executable

    if executable() is None:
        print("first paint: no chromium on PATH (scripts/test.sh installs it); skipped")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "large.html"
        target.write_text(page)
        for attempt in range(repeat):
            with Chromium() as browser:
                browser.open(target.as_uri())
                paint = browser.evaluate(
                    "Object.fromEntries(performance.getEntriesByType('paint').map(p => [p.name, p.startTime]))"
                )
                loaded = browser.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd")
                ready = browser.evaluate("performance.getEntriesByName('session-view-ready')[0].startTime")
                shown = browser.evaluate("document.querySelectorAll('#main .entry').length")
                errors = browser.errors()
            print(
                f"page run {attempt + 1}: first contentful paint {paint.get('first-contentful-paint', -1) / 1000:.2f} s, "
                f"script done (usable) {ready / 1000:.2f} s, load event {loaded / 1000:.2f} s, {shown} entries rendered of the path, console errors: {len(errors)}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
