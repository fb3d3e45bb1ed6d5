"""The generated corpus through a real sidecar: every rule's positive forms (tests/export/secrets_corpus.py:
provider shapes, key blocks whole and cut, values under secret-sounding names in every syntax and
alphabet, headers) in every place an entry holds text, and in the compaction and branch summaries
the offline summarizer writes from them, exported to each format by session/export and by the
command line: nothing leaks, and no line without a secret changes. The ordinary side: a few
thousand lines of this repository's code, prose and diffs, and log lines, through the same places
and summaries: not one line changes."""

from __future__ import annotations

import difflib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from snapshots.sidecar_process import Sidecar

from .conftest import export
from .secrets_corpus import (
    ENTRY_PLACES,
    Planted,
    corpus,
    holds_secret,
    leaks,
    ordinary_texts,
    place_entries,
    secret_pieces,
)

REPO = Path(__file__).resolve().parents[2]
FORMATS = ("json", "markdown", "html")


def _fill(sidecar: Sidecar, sid: str, placed: list[tuple[str, list[dict[str, Any]]]]) -> None:
    """Append each place's entries; then an offline compaction and an offline branch summary of
    what is there; then the entries that are summaries themselves (their details' file lists)."""
    first = None
    late = []
    for place, entries in placed:
        if place in ("compaction-details", "branch-summary"):
            late.append((place, entries))
            continue
        for start in range(0, len(entries), 60):
            last = sidecar.append(sid, *entries[start : start + 60])
            first = first or last
    sidecar.call("session/compact", sessionId=sid, provider="offline", keepRecentTokens=2000)
    sidecar.call("session/branch", sessionId=sid, entryId=first, summarize=True, provider="offline")
    for place, entries in late:
        for entry in entries:
            entry = dict(entry)
            if place == "compaction-details":
                entry["firstKeptEntryId"] = first
            else:
                entry["fromId"] = first
            sidecar.append(sid, entry)


def _page_data(page: str) -> Any:
    start = page.index('<script id="session-data" type="application/json">') + len(
        '<script id="session-data" type="application/json">'
    )
    return json.loads(page[start : page.index("</script>", start)].replace("<\\/", "</"))


def _document(fmt: str, text: str) -> Any:
    return json.loads(text) if fmt == "json" else _page_data(text)


def _strings(a: Any, b: Any, out: list[tuple[str, str]]) -> None:
    """Pairs of strings at the same place of two documents of the same shape."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if isinstance(x, str):
            out.append((x, y if isinstance(y, str) else json.dumps(y)))
        elif isinstance(x, dict) and isinstance(y, dict):
            stack.extend((x[k], y.get(k)) for k in x)
        elif isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
            stack.extend(zip(x, y))


def changed_lines(plain: str, redacted: str, pieces: set[str]) -> list[str]:
    """Lines of ``plain`` that ``redacted`` does not keep byte for byte and that hold no planted secret."""
    if plain == redacted:
        return []
    old, new = plain.split("\n"), redacted.split("\n")
    changed = []
    for tag, i1, i2, _, _ in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag != "equal":
            changed.extend(line for line in old[i1:i2] if not (pieces and holds_secret(line, pieces)))
    return changed


def changed_in_documents(plain_doc: Any, redacted_doc: Any, pieces: set[str]) -> list[str]:
    pairs: list[tuple[str, str]] = []
    _strings(plain_doc["entries"], redacted_doc["entries"], pairs)
    out = []
    for plain, redacted in pairs:
        out.extend(changed_lines(plain, redacted, pieces))
    return out


@pytest.fixture
def planted_session(sidecar: Sidecar, tmp_path: Path) -> tuple[str, list[Planted]]:
    planted, placed = corpus()
    sid = sidecar.call("session/create", cwd=str(tmp_path))["sessionId"]
    sidecar.call("session/setName", sessionId=sid, name=f"deploy with {planted[0].text}")
    _fill(sidecar, sid, placed)
    return sid, planted


def test_no_planted_form_leaks_from_any_place_or_format(
    sidecar: Sidecar, planted_session, sessions_root: Path, tmp_path: Path
):
    sid, planted = planted_session
    assert len(planted) >= 1800 and len({s.kind for s in planted}) >= 300
    exported = {fmt: export(sidecar, sid, format=fmt, all=True) for fmt in FORMATS}
    plain = {fmt: export(sidecar, sid, format=fmt, all=True, redact=False)["text"] for fmt in FORMATS}
    # The check would see a leak: unredacted, every planted secret is in the JSON document.
    assert len(leaks([("", s) for s in planted], plain["json"])) == len(planted)
    doc = json.loads(plain["json"])
    summaries = "\n".join(
        e.get("summary", "")
        for e in doc["entries"]
        if e["kind"] in ("compaction", "branch_summary")
        and "details" in (e.get("extra") or {})
        and "carryOver" in e["extra"]["details"]
    )
    in_summaries = leaks([("", s) for s in planted], summaries)
    # The offline summaries quote requests, commands, failed calls, pending calls (JSON escaped in
    # their arguments) and key blocks flattened onto one line: hundreds of the planted forms.
    assert len(in_summaries) >= 150 and any(
        s.kind.startswith("cut-private-key") or "PRIVATE KEY" in s.text for s in in_summaries
    )
    for fmt in FORMATS:
        text = exported[fmt]["text"]
        leaked = leaks([("", s) for s in planted], text)
        assert [(s.kind, s.text[:60]) for s in leaked] == [], fmt
        assert exported[fmt]["bytes"] == len(text.encode())
    report = exported["json"]["redaction"]
    assert report["total"] >= len(planted) and not any(s.core[:12] in json.dumps(report) for s in planted)
    # No line without a secret changes, in any string of the document (and of the page's data).
    pieces = secret_pieces(planted)
    for fmt in ("json", "html"):
        collateral = changed_in_documents(_document(fmt, plain[fmt]), _document(fmt, exported[fmt]["text"]), pieces)
        assert collateral == [], (fmt, len(collateral), collateral[:5])

    # The command line: the page written to a file, and Markdown on standard output.
    sidecar.stop()
    page = tmp_path / "page.html"
    root = ["--root", str(sessions_root)]
    for args, target in ((["-f", "html", "--all", "-o", str(page)], None), (["-f", "markdown", "--all"], "stdout")):
        done = subprocess.run(
            [sys.executable, "-m", "sidecar", "export", sid, *args, *root], capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        written = done.stdout if target == "stdout" else page.read_text()
        assert [s.kind for s in leaks([("", s) for s in planted], written)] == []
        assert [s.kind for s in leaks([("", s) for s in planted], done.stderr)] == []


def test_ordinary_text_is_kept_byte_for_byte_everywhere(sidecar: Sidecar, tmp_path: Path):
    texts = ordinary_texts(REPO)
    assert sum(text.count("\n") + 1 for text in texts) >= 3000
    # Each text stands where a planted secret stood: the same places, the same summaries.
    carriers = [Planted("ordinary", text, "") for text in texts]
    placed = []
    for index, place in enumerate(ENTRY_PLACES):
        placed.append((place, place_entries(place, carriers[index :: len(ENTRY_PLACES)], group=1)))
    sid = sidecar.call("session/create", cwd=str(tmp_path))["sessionId"]
    _fill(sidecar, sid, placed)
    for fmt in FORMATS:
        redacted = export(sidecar, sid, format=fmt, all=True)
        plain = export(sidecar, sid, format=fmt, all=True, redact=False)["text"]
        if fmt == "markdown":
            changed = changed_lines(plain, redacted["text"], set())
        else:
            changed = changed_in_documents(_document(fmt, plain), _document(fmt, redacted["text"]), set())
        print(f"{fmt}: {len(changed)} ordinary lines changed; redaction report {redacted['redaction']}")
        assert changed == [], (fmt, changed[:10])
        assert redacted["redaction"].get("total", 0) == 0
