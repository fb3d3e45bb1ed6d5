"""``SidecarSessionStore``: the Claude Agent SDK's ``SessionStore`` kept in a sidecar.

Each key (``project_key``, ``session_id``, ``subpath?``) is a transcript of one sidecar session,
through the sidecar's foreign methods (PROTOCOL.md, Foreign sessions):

- ``append``: ``session/appendForeign`` of the batch; the sidecar keeps each line verbatim, skips
  a line whose ``uuid`` it holds, and maps the lines into the session as ``session/import`` maps a
  Claude Code transcript (so the session lists, builds its context, exports and forks as any other);
  for a main transcript the SDK's session summary, folded here with the SDK's own
  ``fold_session_summary``, goes with it as the session's ``state``;
- ``load``: ``session/loadForeign``: the lines as appended (deep-equal), or None;
- ``list_sessions``, ``list_session_summaries``: ``session/listForeign`` (``mtime`` is when the
  sidecar kept the session's last line, the one clock both answer from);
- ``delete``: ``session/deleteForeign`` (the session goes to the sidecar's trash; a subpath's lines
  are marked gone, nothing is erased);
- ``list_subkeys``: the subpaths ``session/loadForeign`` names.

The protocol is structural: the SDK is not imported to use the store.
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Any, Final, cast

from ...client import SidecarClient

if TYPE_CHECKING:
    from claude_agent_sdk.types import (
        SessionKey,
        SessionListSubkeysKey,
        SessionStoreEntry,
        SessionStoreListEntry,
        SessionSummaryEntry,
    )

FORMAT: Final = "claude-code"  # (Final: its type is the literal the foreign methods take)


class SidecarSessionStore:
    """The Claude Agent SDK's sessions kept as sessions of a sidecar.

    ``root``: a sessions root to spawn a sidecar on (``command`` as for ``SidecarClient.spawn``),
    else the sidecar's default root; ``client``: an already connected client to use instead (it is
    not closed with the store).
    """

    def __init__(
        self,
        root: str | os.PathLike[str] | None = None,
        *,
        client: SidecarClient | None = None,
        command: str | list[str] | None = None,
    ) -> None:
        if client is not None and root is not None:
            raise ValueError("give root (a sidecar to spawn) or client (one already connected), not both")
        self.root = root
        self.command = command
        self._client = client
        self._owns_client = False
        self._spawning = asyncio.Lock()
        # The summary of each main transcript as last folded (the SDK folds each batch into the last).
        self._summaries: dict[tuple[str, str], dict[str, Any]] = {}
        self._key_locks: dict[tuple[str, str], asyncio.Lock] = {}

    async def _ready(self) -> SidecarClient:
        if self._client is None:
            async with self._spawning:
                if self._client is None:
                    self._client = await SidecarClient.spawn(command=self.command, root=self.root)
                    self._owns_client = True
        return self._client

    async def close(self) -> None:
        """Close the sidecar if this store spawned it."""
        client, self._client = self._client, None
        if client is not None and self._owns_client:
            await client.close()
        self._owns_client = False

    async def __aenter__(self) -> SidecarSessionStore:
        await self._ready()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def _lock(self, project_key: str, session_id: str) -> asyncio.Lock:
        key = (project_key, session_id)
        lock = self._key_locks.get(key)
        if lock is None:
            lock = self._key_locks[key] = asyncio.Lock()
        return lock

    # -- the SessionStore protocol ---------------------------------------------------------------

    async def append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
        if not entries:
            return
        client = await self._ready()
        project, session, subpath = key["project_key"], key["session_id"], key.get("subpath")
        lines = cast("list[dict[str, Any]]", entries)
        if subpath is not None:
            await client.append_foreign(FORMAT, project, session, lines, subpath=subpath)
            return
        async with self._lock(project, session):  # the fold reads the summary the last append left
            state = await self._folded(client, key, lines)
            await client.append_foreign(FORMAT, project, session, lines, state=state)
            if state is not None:
                self._summaries[(project, session)] = state

    async def _folded(
        self, client: SidecarClient, key: SessionKey, lines: list[dict[str, Any]]
    ) -> dict[str, Any] | None:
        """The session's summary with this batch folded in (None without the SDK)."""
        try:
            from claude_agent_sdk import fold_session_summary
        except ImportError:
            return None
        project, session = key["project_key"], key["session_id"]
        previous = self._summaries.get((project, session))
        if previous is None:
            loaded = await client.load_foreign(FORMAT, project, session)
            if loaded.get("state") is not None:
                previous = loaded["state"]
        prev = None if previous is None else {"session_id": session, "mtime": 0, "data": previous.get("data", {})}
        folded = fold_session_summary(cast("Any", prev), key, cast("Any", lines))
        return {"data": folded["data"]}

    async def load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        client = await self._ready()
        loaded = await client.load_foreign(FORMAT, key["project_key"], key["session_id"], subpath=key.get("subpath"))
        return cast("list[SessionStoreEntry] | None", loaded["lines"])

    async def list_sessions(self, project_key: str) -> list[SessionStoreListEntry]:
        client = await self._ready()
        listed = await client.list_foreign(FORMAT, project_key)
        return [{"session_id": s["foreignSessionId"], "mtime": s["mtime"]} for s in listed["sessions"]]

    async def list_session_summaries(self, project_key: str) -> list[SessionSummaryEntry]:
        client = await self._ready()
        listed = await client.list_foreign(FORMAT, project_key)
        return [
            {"session_id": s["foreignSessionId"], "mtime": s["mtime"], "data": (s.get("state") or {}).get("data", {})}
            for s in listed["sessions"]
            if s.get("state") is not None
        ]

    async def delete(self, key: SessionKey) -> None:
        client = await self._ready()
        project, session, subpath = key["project_key"], key["session_id"], key.get("subpath")
        await client.delete_foreign(FORMAT, project, session, subpath=subpath)
        if subpath is None:
            self._summaries.pop((project, session), None)

    async def list_subkeys(self, key: SessionListSubkeysKey) -> list[str]:
        client = await self._ready()
        loaded = await client.load_foreign(FORMAT, key["project_key"], key["session_id"])
        return list(loaded.get("subpaths") or [])
