"""Terminal breadcrumbs: which session each terminal used last, for a resume scoped to the terminal.

oh-my-pi keeps, per terminal, a two-line file: the cwd, then the session file.
``session/continueRecent`` with a ``terminalId`` prefers that session over the
newest of the cwd, so two terminals in one project each resume their own
conversation. Breadcrumbs live in ``<root>/.terminals/<terminalId>``; one whose
session file is not below the root, or is gone, is ignored.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ...errors import InvalidParams
from ..ids import inside
from .writer import DIR_MODE, FILE_MODE

TERMINALS_DIR = ".terminals"
# Locations that are places of a store without files rather than paths (PROTOCOL.md, "PostgreSQL store").
PLACE_PREFIXES = ("pg:",)
# A terminal id names a file: no separators, no leading dot, bounded.
_TERMINAL_ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._:+-]{0,127}$")


def check_terminal_id(terminal_id: str) -> str:
    if not _TERMINAL_ID.match(terminal_id) or ".." in terminal_id:
        raise InvalidParams(
            "terminalId must be 1-128 letters, digits, '_', '.', ':', '+' or '-' (no path separators, "
            f"not starting with '.'), not {terminal_id!r}; derive it from the terminal's tty or session variable",
            field="terminalId",
        )
    return terminal_id


class Breadcrumbs:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.folder = root / TERMINALS_DIR

    def remember(self, terminal_id: str, cwd: str, session_file: Path | str) -> None:
        """Point the terminal at ``session_file``, the session's location in its store (a file below the root,
        or a place such as ``pg:<folder>/<file>``), atomically; a failure only loses the hint."""
        target = self.folder / check_terminal_id(terminal_id)
        tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
        try:
            self.folder.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
            with open(fd, "w", encoding="utf-8") as out:
                out.write(f"{_one_line(cwd)}\n{_one_line(str(session_file))}\n")
            os.replace(tmp, target)
        except OSError:
            tmp.unlink(missing_ok=True)

    def recall(self, terminal_id: str, cwd: str) -> str | None:
        """The session the terminal used last in ``cwd``: its file, if still there below the root, or the place a
        store without files gave (the store resolves that one, or falls back to the newest of the cwd)."""
        try:
            lines = (self.folder / check_terminal_id(terminal_id)).read_text(encoding="utf-8").split("\n")
        except (OSError, UnicodeDecodeError):
            return None
        if len(lines) < 2 or lines[0] != _one_line(cwd) or not lines[1]:
            return None
        if lines[1].startswith(PLACE_PREFIXES):
            return lines[1]
        path = Path(lines[1])
        if not path.is_absolute() or not inside(self.root, path) or not path.is_file():
            return None
        return str(path)


def _one_line(text: str) -> str:
    return text.replace("\n", " ").replace("\r", " ")
