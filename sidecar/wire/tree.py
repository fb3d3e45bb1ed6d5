"""The tree: branch, getTree, getEntries, labels and names."""

from __future__ import annotations

from typing import Any

from .base import _Params, _Result, _SessionRef
from .context import ExternalChange


class BranchParams(_Params):
    sessionId: str
    entryId: str | None
    # Write a ``branch_summary`` of the branch being left (from the common
    # ancestor to the old leaf) below ``entryId``, as pi's tree navigation does.
    summarize: bool = False
    customInstructions: str | None = None
    provider: str | None = None
    model: str | None = None


class BranchResult(_Result):
    leafId: str | None
    # The branch_summary entry written when ``summarize`` was set and the old branch had content.
    summaryEntryId: str | None = None


class GetTreeParams(_SessionRef):
    pass


class TreeNode(_Result):
    """One entry of the tree. The tree is sent flat, in file order: a linear
    session is as deep as it is long, and nested JSON that deep breaks parsers
    (serde_json stops at 128 levels). ``parentId`` is null for a root, and for
    an entry whose parent is missing or in a cycle (damaged files)."""

    id: str
    parentId: str | None
    type: str
    timestamp: str | None
    role: str | None = None
    label: str | None = None


class GetTreeResult(_Result):
    nodes: list[TreeNode]
    leafId: str | None
    # Set when the file had changed behind the sidecar's back (folded in before this answer).
    external: ExternalChange | None = None


class GetEntriesParams(_Params):
    sessionId: str
    ids: list[str] | None = None


class GetEntriesResult(_Result):
    entries: list[dict[str, Any]]


class SetLabelParams(_Params):
    sessionId: str
    entryId: str
    label: str | None


class SetLabelResult(_Result):
    entryId: str
    leafId: str | None


class SetNameParams(_Params):
    sessionId: str
    name: str


class SetNameResult(_Result):
    entryId: str
    # The session's name as the tool of its compatibility reads it (pi: its last session_info;
    # oh-my-pi: its title line, else the header's title), as session/list and session/open answer it.
    name: str | None
    # The same (ACP's SessionInfo.title).
    title: str | None = None
