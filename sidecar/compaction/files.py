"""Which files the agent read and changed, from its tool calls, cumulative over compactions.

Each compaction stores the lists in ``details`` and appends them to its
summary, so the next model knows which files it has already seen and touched
even after every message mentioning them has been summarized away.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

# Tool name -> what a call with a ``path`` argument does to that path. Besides
# pi's own tools, the names other agents use (and older pi sessions) count too.
_READ_TOOLS = frozenset({"read", "ls", "read_file", "list_directory", "view"})
_MODIFY_TOOLS = frozenset({"write", "edit", "write_file", "edit_file", "multi_edit", "create_file"})
_PATH_KEYS = ("path", "file_path", "filePath")
MODIFY_TOOLS = _MODIFY_TOOLS


# The key the pi extension (clients/pi-extension) adds to the details it hands pi.
# pi marks every compaction an extension supplies ``fromHook``, and hook details are
# in a format we cannot know; these we wrote ourselves, so they are read like ours.
OWN_DETAILS_MARK = "session-sidecar"


def details_are_ours(entry: Mapping[str, Any]) -> bool:
    """Whether a compaction or branch summary's ``details`` are in the sidecar's format.

    They are when the sidecar (or pi itself, whose file lists we share) wrote the
    entry, or when an extension wrote it with the details we returned (our mark).
    """
    details = entry.get("details")
    if isinstance(details, dict) and isinstance(details.get(OWN_DETAILS_MARK), dict):
        return True
    return not entry.get("fromHook") and not entry.get("fromExtension")


@dataclass(slots=True)
class FileOps:
    read: set[str] = field(default_factory=set)
    modified: set[str] = field(default_factory=set)

    def add_details(self, details: object) -> None:
        """Fold in the lists a previous compaction or branch summary recorded."""
        if not isinstance(details, dict):
            return
        for key, target in (("readFiles", self.read), ("modifiedFiles", self.modified)):
            values = details.get(key)
            if isinstance(values, list):
                target.update(v for v in values if isinstance(v, str) and v)

    def add_message(self, message: dict[str, object]) -> None:
        for name, arguments in tool_calls(message):
            path = _path_argument(arguments)
            if path is None:
                continue
            if name in _READ_TOOLS:
                self.read.add(path)
            elif name in _MODIFY_TOOLS:
                self.modified.add(path)

    def add_messages(self, messages: Iterable[dict[str, object]]) -> None:
        for message in messages:
            self.add_message(message)

    def lists(self) -> tuple[list[str], list[str]]:
        """(read only, modified), sorted; a file both read and modified is listed as modified."""
        return sorted(self.read - self.modified), sorted(self.modified)


def tool_calls(message: Mapping[str, Any]) -> list[tuple[str, dict[str, object]]]:
    """(name, arguments) of each tool call in an assistant message."""
    if message.get("role") != "assistant" or not isinstance(message.get("content"), list):
        return []
    calls = []
    for block in message["content"]:
        if isinstance(block, dict) and block.get("type") == "toolCall" and isinstance(block.get("name"), str):
            arguments = block.get("arguments")
            calls.append((block["name"], arguments if isinstance(arguments, dict) else {}))
    return calls


def _path_argument(arguments: dict[str, object]) -> str | None:
    for key in _PATH_KEYS:
        value = arguments.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def format_file_lists(read_files: list[str], modified_files: list[str]) -> str:
    """The blocks appended to a summary ("" when both lists are empty)."""
    blocks = []
    if read_files:
        blocks.append("<read-files>\n" + "\n".join(read_files) + "\n</read-files>")
    if modified_files:
        blocks.append("<modified-files>\n" + "\n".join(modified_files) + "\n</modified-files>")
    return "\n\n" + "\n\n".join(blocks) if blocks else ""
