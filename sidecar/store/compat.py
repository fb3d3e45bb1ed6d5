"""Which tool a session file must stay readable by: pi or oh-my-pi.

pi and oh-my-pi write the same v3 entries but differ where a file is read
back: oh-my-pi keeps images in a blob store next to its sessions folder and
a session's title in a fixed-width first line; pi knows neither (a blob
reference reaches its model as image data, and a title line makes its loader
see no header). So every sessions root has a compatibility, and what we write
there follows that tool:

* ``pi``: images stay inline in the line; names are ``session_info`` entries.
* ``omp``: images go to ``<agent folder>/blobs/<sha256>`` (the agent folder
  being the root's parent, as ``~/.omp/agent`` is ``~/.omp/agent/sessions``'s);
  names go to the title slot line and a ``title_change`` entry.

Unset, a root follows the tool whose folder it is (``.omp/agent/sessions`` or
``.pi/agent/sessions``); any other root (our own default) is ``pi``: oh-my-pi
opens pi's files, pi does not open oh-my-pi's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

Compat = Literal["pi", "omp"]
COMPATS: tuple[Compat, ...] = ("pi", "omp")
DEFAULT: Compat = "pi"

_TOOL_FOLDERS: dict[tuple[str, str, str], Compat] = {
    (".omp", "agent", "sessions"): "omp",
    (".pi", "agent", "sessions"): "pi",
}


def tool_of_folder(path: Path) -> Compat | None:
    """The tool whose sessions folder ``path`` is or lies in, if any."""
    parts = Path(path).parts
    for end in range(len(parts), 2, -1):
        tool = _TOOL_FOLDERS.get(tuple(parts[end - 3 : end]))  # type: ignore[arg-type]  # a tuple of path parts is a key of the folder table
        if tool is not None:
            return tool
    return None


def root_compat(root: Path, configured: str | None) -> Compat:
    """The compatibility of a sessions root: the setting, else its tool's, else pi's."""
    if configured is not None:
        return configured  # type: ignore[return-value]  # config.py checks store.compat is "pi" or "omp"
    return tool_of_folder(root) or DEFAULT


def session_compat(path: Path, root: Path, root_rules: Compat) -> Compat:
    """A session file's: its root's when it lies below the root, else its own folder's tool, else the root's."""
    try:
        Path(path).relative_to(root)
        return root_rules
    except ValueError:
        return tool_of_folder(path) or root_rules


def omp_blob_folder(root: Path) -> Path:
    """Where oh-my-pi reads blobs for sessions in ``root``: its agent folder's ``blobs/``."""
    return Path(root).parent / "blobs"


def listed_name(compat: Compat, titled: bool | int | None, info_name: str | None, title: str | None) -> str | None:
    """``name_of`` from what a listing keeps of a file: whether it starts with a title line, its last
    ``session_info`` name (pi's) and its title (the title line's, else the header's: oh-my-pi's)."""
    if compat == "omp" or titled:
        return title or None
    return info_name
