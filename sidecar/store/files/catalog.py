"""What ``session/list`` answers for the file store: the listing index beside the files, kept up to date by
our own writes, and the files themselves when another sidecar holds the index."""

from __future__ import annotations

import builtins
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from ...format.jsonl import Entry
from ...work import Work
from ..base import Cursor, HeldUpkeep, Listed, ListPage, ListQuery, key_cursor
from ..compat import Compat, listed_name
from ..index.inmemory import listed_in_memory
from ..index.listing import (
    Summary,
    SummaryCache,
    decode_cursor,
    encode_cursor,
    encode_cursor_of,
    is_stub,
    matches,
    sort_key,
)
from ..index.schema import Row
from ..index.sqlite import IndexUnavailable, ListingIndex
from .layout import ARCHIVE_DIR, Layout

if TYPE_CHECKING:  # (a listing reads rows and held sessions; it never makes a session handle)
    from ..session import Session

_UNKNOWN = "(area not looked up yet)"  # (told by identity: no area is this very string)
# A batch written to a file, waiting to be folded into the listing index.
Upkeep = HeldUpkeep  # (path, area, the appended entries)


def listed(found: Summary | Row, archived: bool, compat: Compat, snippet: str | None = None) -> Listed:
    """One listed session, from a file summary or an index row (they share these fields); its one name
    (``name`` and ``title``) the one the tool of ``compat`` reads (titles.py)."""
    name = listed_name(compat, found.titled, found.name, found.title)
    return Listed(
        session_id=found.session_id,
        location=found.path,
        cwd=found.cwd,
        created=found.created,
        modified_ms=found.modified_ms,
        message_count=found.message_count,
        first_message=found.first_message,
        tokens_total=found.tokens_total or 0,
        tokens_last=found.tokens_last or 0,
        name=name,
        title=name,
        parent_session=found.parent_session,
        archived=archived,
        snippet=snippet,
    )


class Catalog:
    def __init__(self, layout: Layout, compat: Compat) -> None:
        self.layout = layout
        self.compat: Compat = compat
        self.index = ListingIndex(self.layout.root)
        self._summaries = SummaryCache()
        # The listed area of each file appended to (see appended).
        self._areas: dict[Path, str | None] = {}
        # Index upkeep held until an answer is out (upkeep_held), per thread.
        self._upkeep = threading.local()

    def stub(self, path: Path) -> bool:
        """Whether the file is a session oh-my-pi's picker and continueRecent pass over (listing.py's is_stub)."""
        summary = self._summaries.get(path)
        return summary is not None and is_stub(
            summary.assistant_turns, summary.title, summary.first_message, summary.last_role
        )

    # -- upkeep ---------------------------------------------------------------------

    def area_of(self, path: Path) -> str | None:
        """The listed area a file is in ("" live, "archive"), None for the trash or outside the root."""
        try:
            parts = path.relative_to(self.layout.root).parts
        except ValueError:
            return None
        if len(parts) == 2 and not parts[0].startswith("."):
            return ""
        if len(parts) == 3 and parts[0] == ARCHIVE_DIR:
            return "archive"
        return None

    def appended(self, session: Session, entries: list[Entry]) -> None:
        """A batch reached the file: fold it into the index row in the same step."""
        # An open session's file does not move (archive, delete and restore close it first).
        area = self._areas.get(session.path, _UNKNOWN)
        if area is _UNKNOWN:
            area = self._areas[session.path] = self.area_of(session.path)
        if area is None:
            return
        held = getattr(self._upkeep, "held", None)
        if held is not None:
            held.append((session.path, area, entries))
        else:
            self.index.appended(session.path, area, entries)

    def upkeep_held(self, held: list[Upkeep]) -> _HoldUpkeep:
        """Within this block, the listing-index upkeep of this thread's appends goes into ``held``,
        for the caller to run with ``run_upkeep`` once its answers are out.

        The index is a cache of the files (a failure there never fails a write), so an
        answer need not wait for it. The rpc layer runs what it held before it hands any
        other call a turn, so no call can see the index behind a write it follows.
        """
        return _HoldUpkeep(self._upkeep, held)

    def run_upkeep(self, held: list[Upkeep]) -> None:
        """Fold held appends into the index: one step per file for a run of appends to it."""
        jobs = held[:]
        held.clear()
        folds: list[tuple[Path, str, list[Entry]]] = []  # (folded in one transaction while each is of another file)
        start = 0
        while start < len(jobs):
            path, area, _ = jobs[start]
            end = start + 1
            while end < len(jobs) and (jobs[end][0] is path or jobs[end][0] == path):  # (the same Path object, mostly)
                end += 1
            if end == start + 1:  # (a lone batch: its list as it is)
                entries = jobs[start][2]
            else:
                entries = [entry for _, _, batch in jobs[start:end] for entry in batch]
            if any(path == other for other, _, _ in folds):
                self.index.appended_to(folds)
                folds = []
            folds.append((path, area, entries))
            start = end
        if folds:
            self.index.appended_to(folds)

    def refresh(self, path: Path) -> None:
        area = self.area_of(path)
        if area is not None:
            self.index.refresh(path, area)

    def moved(self, source: Path, target: Path | None) -> None:
        """A file moved (to ``target``; None: out of the listing, or read it again where it is now)."""
        area = self.area_of(target) if target is not None else None
        self.index.moved(source, target if area is not None else None, area)

    def reindex(self) -> int:
        """Rebuild the listing index from every listed file; returns the sessions indexed."""
        folders = [(folder, "") for folder in self.layout.project_dirs()]
        folders += [(folder, "archive") for folder in self.layout.project_dirs(self.layout.root / ARCHIVE_DIR)]
        return self.index.rebuild(folders)

    # -- list -------------------------------------------------------------------------

    def decode_cursor(self, cursor: str) -> Cursor | None:
        return decode_cursor(cursor)

    def list(self, query: ListQuery, work: Work, held: list[Session]) -> ListPage:
        areas: list[tuple[str | None, bool]] = [(None, False)]
        if query.include_archived:
            areas.append((ARCHIVE_DIR, True))
        try:
            page = self._list_indexed(query, areas, work)
        except IndexUnavailable:
            page = self._list_files(query, areas, work)
        if query.after is None:  # in-memory sessions lead the first page (they have no file to sort by)
            page.sessions[:0] = listed_in_memory(query, held)
        return page

    def _list_files(self, query: ListQuery, areas: builtins.list[tuple[str | None, bool]], work: Work) -> ListPage:
        """The listing read from the files themselves (the index is locked by another sidecar)."""
        files: list[tuple[Path, bool]] = []
        for area, archived in areas:
            base = self.layout.root if area is None else self.layout.root / area
            folders = (
                [base / self.layout.cwd_dir(query.cwd).name]
                if query.cwd is not None and not query.all
                else self.layout.project_dirs(base)
            )
            for folder in folders:
                files.extend((path, archived) for path in self.layout.session_files(folder))
        found = []
        for index, (path, archived) in enumerate(files):
            # Reading summaries writes nothing: stopping between files is always safe.
            work.check_cancelled()
            work.report(f"{index} of {len(files)} sessions read", index * 100 // len(files))
            summary = self._summaries.get(path)
            if summary is None:
                continue
            if query.query and not matches(summary, query.query):
                continue
            if self.compat == "omp" and is_stub(
                summary.assistant_turns, summary.title, summary.first_message, summary.last_role
            ):
                continue  # oh-my-pi's picker passes over it (listing.py)
            found.append((summary, archived))
        found.sort(key=lambda item: sort_key(item[0]))
        after = key_cursor(query.after)
        if after is not None:
            found = [item for item in found if sort_key(item[0]) > after]
        page = found[: query.limit]
        next_cursor = encode_cursor(page[-1][0]) if len(found) > query.limit else None
        return ListPage([listed(s, archived, self.compat) for s, archived in page], next_cursor)

    def _list_indexed(self, query: ListQuery, areas: builtins.list[tuple[str | None, bool]], work: Work) -> ListPage:
        scopes: list[tuple[Path, str]] = []
        prune: list[tuple[Path, str]] = []
        for area, _ in areas:
            base = self.layout.root if area is None else self.layout.root / area
            name = "" if area is None else "archive"
            if query.cwd is not None and not query.all:
                scopes.append((base / self.layout.cwd_dir(query.cwd).name, name))
            else:
                scopes.extend((folder, name) for folder in self.layout.project_dirs(base))
                prune.append((base, name))

        def check(index: int, total: int) -> None:
            # Reading files writes only the index, in one transaction: stopping rolls it back.
            work.check_cancelled()
            work.report(f"{index} of {total} sessions read", index * 100 // max(total, 1))

        self.index.sync(scopes, prune, check)
        rows = self.index.page(
            ["" if area is None else "archive" for area, _ in areas],
            None if query.cwd is None or query.all else [folder for folder, _ in scopes],
            key_cursor(query.after),
            query.query or None,
            query.limit + 1,
            skip_stubs=self.compat == "omp",
        )
        page = rows[: query.limit]
        next_cursor = None
        if len(rows) > query.limit:
            last = page[-1]
            next_cursor = encode_cursor_of(last.modified_ms, last.path)
        return ListPage([listed(r, r.area == "archive", self.compat, r.snippet) for r in page], next_cursor)


class _HoldUpkeep:
    """``Catalog.upkeep_held``'s block (a plain class: it runs once per inline call, where a
    generator-based context manager costs more than the rest of the bookkeeping)."""

    __slots__ = ("_local", "_held")

    def __init__(self, local: threading.local, held: list[Upkeep]) -> None:
        self._local, self._held = local, held

    def __enter__(self) -> None:
        self._local.held = self._held

    def __exit__(self, *_: object) -> None:
        self._local.held = None
