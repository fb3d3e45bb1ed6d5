"""``SidecarSession``: the OpenAI Agents SDK's ``Session`` kept in a sidecar.

    from agents import Agent, Runner
    from session_sidecar_client.adapters.openai_agents import SidecarSession

    result = await Runner.run(agent, "hello", session=SidecarSession("conversation-1"))

It follows the SDK's ``Session`` protocol (``session_id``, ``get_items``, ``add_items``,
``pop_item``, ``clear_session``) and answers as the SDK's ``SQLiteSession`` does, and its
compaction hook (``run_compaction``, which the runner calls after a turn) runs the
sidecar's compaction. The SDK is not imported here: the protocol is structural.

How the session is kept (items.py has the item mapping):

- ``add_items``: one ``session/append`` of one entry per item, below the leaf;
- ``get_items``: the history is the session's context at its leaf (``session/buildContext``).
  It is read whole once and kept here, with the leaf it was read at, and grown by this
  object's own appends; each later read first asks the sidecar for the session's leaf
  (``session/open`` of the open session: it also folds in what another program appended)
  and reads the context again only when the leaf is not the one kept (another writer, a
  compaction). A leaf's context never changes (the entries from the root to a leaf are
  written once), so ``get_items(limit=10)`` costs one small call, not the session;
- ``pop_item``: the leaf moves back to the parent of the last item's entry; the item stays
  on a branch of the tree (nothing is erased). Moving the leaf is an appended ``custom``
  entry (customType ``openai-agents.leaf``) below that parent, since the leaf of a session
  reopened is its last entry. An item the last compaction kept (before the compaction entry)
  is popped by a ``context_edit`` leaving its message out of the context instead;
- ``clear_session``: the same marker as a new root: an empty branch;
- ``run_compaction``: ``session/compact`` (its progress to ``on_compaction_progress``); the
  history is then the summary (a user message, as pi words it for a model) and the items kept.

A ``session_id`` the sidecar refuses as a session id (it allows letters, digits and ``._-``,
up to 64) is kept under a derived one (``oa-`` and a hash of it): the same id finds the
same session in every process.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypedDict, cast

from ...client import EncodedJson, SidecarClient
from ...errors import RpcError
from ...protocol import (
    AppendResult,
    CompactResult,
    ContextEditEntry,
    CustomEntry,
    CustomMessageEntry,
    InvalidSessionIdError,
    MessageEntry,
    ProgressValue,
    SessionExistsError,
    SessionNotFoundError,
)
from .items import LEAF_TYPE, from_message, to_entries

try:  # (the sidecar's own dependency: where it is installed, a large batch is encoded ~10x faster than json does)
    import msgspec
except ImportError:  # pragma: no cover - the client itself needs nothing but the standard library
    _encode_batch: Callable[[object], bytes] | None = None
else:
    _encode_batch = msgspec.json.Encoder().encode

if TYPE_CHECKING:
    from agents.items import TResponseInputItem
    from agents.memory import OpenAIResponsesCompactionArgs, SessionSettings

logger = logging.getLogger("session_sidecar_client.adapters.openai_agents")

CompactionProgress = Callable[[ProgressValue], object]
CompactionDecision = Callable[[AppendResult], bool]


class CompactOptions(TypedDict, total=False):
    """What ``session/compact`` is asked with (keyword arguments of ``SidecarClient.compact``)."""

    provider: str
    model: str
    custom_instructions: str
    reserve_tokens: int
    keep_recent_tokens: int


class SidecarSession:
    """A conversation of the OpenAI Agents SDK kept as a session of a sidecar.

    ``root``: a sessions root to spawn a sidecar on (``command`` as for
    ``SidecarClient.spawn``); else the sidecar's default root; ``client``: an
    already connected client to use instead (it is not closed with the session).
    ``cwd``: the session header's working folder (default: this process's).
    ``session_settings``: the SDK's ``SessionSettings`` (its ``limit`` is
    ``get_items``'s default). ``compact_options``: keyword arguments of
    ``SidecarClient.compact`` (``provider``, ``model``, ``keep_recent_tokens``...);
    ``should_compact(append_result)`` decides whether the runner's compaction
    hook compacts after a turn (default: the sidecar's ``shouldCompact``);
    ``on_compaction_progress`` gets the compaction's ``$/progress`` values.
    """

    session_settings: SessionSettings | None = None

    def __init__(
        self,
        session_id: str,
        *,
        root: str | os.PathLike[str] | None = None,
        client: SidecarClient | None = None,
        command: str | list[str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        session_settings: SessionSettings | None = None,
        compact_options: CompactOptions | None = None,
        should_compact: CompactionDecision | None = None,
        on_compaction_progress: CompactionProgress | None = None,
    ) -> None:
        if client is not None and root is not None:
            raise ValueError("give root (a sidecar to spawn) or client (one already connected), not both")
        self.session_id = session_id
        self.session_settings = session_settings
        self.root = root
        self.command = command
        self.cwd = os.path.abspath(os.fspath(cwd) if cwd is not None else os.getcwd())
        self.compact_options: CompactOptions = {**compact_options} if compact_options else {}
        self.should_compact = should_compact
        self.on_compaction_progress = on_compaction_progress
        self.last_compaction: CompactResult | None = None
        self._client = client
        self._owns_client = False
        self._sidecar_id: str | None = None  # the id the sidecar keeps it under
        # The session's leaf as the last open (or create) of _open found it: a read that opened the
        # session just now needs no second session/open to learn its leaf.
        self._opened_leaf: str | None = None
        self._lock = asyncio.Lock()
        # The history at the leaf ``_leaf`` (when ``_known``): items, and the entry each came from.
        self._items: list[dict[str, Any]] = []
        self._entry_ids: list[str] = []
        self._leaf: str | None = None
        self._known = False
        self._compacted = False  # the history starts with a compaction's summary
        self._call_names: dict[str, str] = {}  # call_id -> tool name (a toolResult names its tool)
        self._parents: dict[str, str | None] = {}  # entry id -> parent id, from appends
        self._last_append: AppendResult | None = None

    # -- the Session protocol ------------------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The history, oldest first; with ``limit`` the newest ``limit`` items (as SQLiteSession answers)."""
        if limit is None and self.session_settings is not None:
            limit = self.session_settings.limit
        async with self._lock:
            await self._current()
            if limit is None or limit < 0:  # SQLite's LIMIT of a negative number is no limit
                chosen = self._items
            elif limit == 0:
                chosen = []
            else:
                chosen = self._items[-limit:]
            return cast("list[TResponseInputItem]", [_copy(item) for item in chosen])

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Append the items (one entry each, one ``session/append``)."""
        if not items:
            return
        async with self._lock:
            client, sid = await self._ready(writing=True)
            added = cast("list[dict[str, Any]]", items)
            entries, plain = to_entries(added, self._call_names)
            if len(added) <= _COPY_SLICE:  # (a turn's few: a task to copy them alongside costs more)
                copies = [_copy(item) for item in added]
                result = await client.append(sid, list(entries))
            else:
                # The copies the history keeps are made while the sidecar appends (most of the call's time
                # is its, and the client only waits meanwhile): the request goes out first, then the copying
                # in slices that let the event loop write the rest of the large request between them.
                appending = asyncio.ensure_future(_append(client, sid, entries, plain))
                try:
                    copies = await _copies(added, client.writer.drain)
                    result = await appending
                except BaseException:
                    _abandon(appending)
                    raise
            if self._grew(result):
                # The history is what it was and these items (each checked to come back as it went in).
                self._items += copies
                self._entry_ids += [entry["id"] for entry in result["entries"]]

    async def pop_item(self) -> TResponseInputItem | None:
        """Take the newest item off the history and return it (None when empty); it stays on a branch."""
        async with self._lock:
            await self._current()
            if not self._items:
                return None
            client, sid = await self._ready()
            item = self._items[-1]
            entry_id = self._entry_ids[-1]
            if self._compacted and entry_id == self._entry_ids[0]:
                await self._mark_leaf(None)  # only the summary was left
            elif self._compacted and not await self._after_compaction(entry_id):
                edit: ContextEditEntry = {"type": "context_edit", "targetId": entry_id, "replacement": None}
                if not self._grew(await client.append(sid, [edit])):
                    return cast("TResponseInputItem", item)
            else:
                await self._mark_leaf(await self._parent_of(entry_id))
            # The entry's items leave the history (one, unless another agent's message stood for several).
            while self._entry_ids and self._entry_ids[-1] == entry_id:
                self._entry_ids.pop()
                self._items.pop()
            return cast("TResponseInputItem", item)

    async def clear_session(self) -> None:
        """Start an empty branch: the history is empty, what was in it stays in the tree."""
        async with self._lock:
            await self._ready()
            await self._mark_leaf(None)
            self._items, self._entry_ids = [], []
            self._known = True  # whatever the session held, the history at a new root is empty

    # -- the compaction hook -----------------------------------------------------------

    async def run_compaction(self, args: OpenAIResponsesCompactionArgs | None = None) -> None:
        """The sidecar's compaction; the history becomes its summary and the items it kept.

        Called with no arguments (or ``force``), it compacts; called by the runner after a
        turn (a ``response_id``), it compacts when ``should_compact`` says so, and a
        compaction the sidecar refuses (nothing to gain, say) is logged, not raised.
        """
        automatic = args is not None and "response_id" in args and not args.get("force", False)
        async with self._lock:
            client, sid = await self._ready()
            if automatic:
                appended = self._last_append
                if appended is None:
                    return
                decide = self.should_compact
                if not (decide(appended) if decide is not None else appended.get("shouldCompact", False)):
                    return
            try:
                self.last_compaction = await client.compact(
                    sid, on_progress=self.on_compaction_progress, **self.compact_options
                )
            except RpcError as error:
                if not automatic:
                    raise
                logger.warning("compaction of %s refused: %s", self.session_id, error)
                return
            finally:
                self._known = False  # the history is now the summary and what it kept

    # -- opening and closing ------------------------------------------------------------

    async def close(self) -> None:
        """Close the session in the sidecar, and the sidecar if this session spawned it."""
        async with self._lock:
            client, self._sidecar_id, sid = self._client, None, self._sidecar_id
            self._known = False
            if client is None:
                return
            if sid is not None and not client.closed:
                await client.close_session(sid)
            if self._owns_client:
                self._client, self._owns_client = None, False
                await client.close()

    async def __aenter__(self) -> SidecarSession:
        await self._locked(self._ready)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def sidecar_session_id(self) -> str | None:
        """The id of the session in the sidecar (once opened): ``session_id``, or the one derived from it."""
        return self._sidecar_id

    async def _locked(self, call: Callable[[], Awaitable[object]]) -> None:
        async with self._lock:
            await call()

    async def _ready(self, *, writing: bool = False) -> tuple[SidecarClient, str]:
        """The client (spawned on first use) and the session's id in it (opened, or created empty).

        ``writing``: the caller is about to append, as a new session's first call does (the SDK's runner
        adds a run's first items before it reads them back): the create is then sent with the open."""
        if self._client is None:
            self._client = await SidecarClient.spawn(command=self.command, root=self.root)
            self._owns_client = True
        if self._sidecar_id is None:
            self._sidecar_id = await self._open(self._client, self.session_id, create_with_open=writing)
        return self._client, self._sidecar_id

    async def _open(self, client: SidecarClient, session_id: str, *, create_with_open: bool) -> str:
        """Open the session, or create it empty.

        ``create_with_open``: both requests are sent at once, so a new session costs one round trip, not
        two, and an existing one a refused create (sessionExists: nothing is written). The sidecar runs one
        session's requests in the order they were sent, so the open answers first and the create then
        finds the session or makes it. Otherwise the create waits for the open's sessionNotFound, and a
        read of a session that exists (a resume) sends nothing more than the open."""
        # (The create's task starts once this one yields: in the open's own request, which is written first.)
        creating = asyncio.ensure_future(client.create(self.cwd, session_id=session_id)) if create_with_open else None
        try:
            opened = await client.open(session_id=session_id)
        except InvalidSessionIdError:
            if creating is not None:
                with contextlib.suppress(RpcError):  # (refused the same way)
                    await creating
            derived = "oa-" + hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:40]
            return await self._open(client, derived, create_with_open=create_with_open)
        except SessionNotFoundError:
            try:
                await (client.create(self.cwd, session_id=session_id) if creating is None else creating)
            except SessionExistsError:  # (another program made it between the two: open what it made)
                return await self._open(client, session_id, create_with_open=False)
            self._opened_leaf = None  # (a new session's history is empty)
            return session_id
        except BaseException:
            if creating is not None:
                _abandon(creating)
            raise
        if creating is not None:
            with contextlib.suppress(RpcError):  # (sessionExists, as it must be: the open found it)
                await creating
        self._opened_leaf = opened["leafId"]
        return session_id

    # -- reading and moving the leaf ----------------------------------------------------

    async def _current(self) -> None:
        """Make the history kept here the session's at its leaf: read it again only when the leaf moved."""
        opening = self._sidecar_id is None
        client, sid = await self._ready()
        leaf = self._opened_leaf if opening else (await client.open(session_id=sid))["leafId"]
        if self._known and leaf == self._leaf:
            return
        context = await client.build_context(sid)
        messages, entry_ids = context["messages"], context["entryIds"]
        self._items, self._entry_ids = [], []
        self._compacted = bool(messages) and messages[0].get("role") == "compactionSummary"
        for message, entry_id in zip(messages, entry_ids):
            for item in from_message(cast("Mapping[str, Any]", message)):
                if item.get("type") == "function_call" and isinstance(item.get("call_id"), str):
                    self._call_names[item["call_id"]] = str(item.get("name", ""))
                self._items.append(item)
                self._entry_ids.append(entry_id)
        self._leaf = context["leafId"]
        self._known = True

    def _grew(self, result: AppendResult) -> bool:
        """Note an append below the leaf; whether the history kept here is still the session's (then the
        caller adds what the append added to it): it is when the append went below the leaf it was kept at
        and the sidecar changed nothing else (tool-result clearing, another program's lines)."""
        self._last_append = result
        for entry in result["entries"]:
            self._parents[entry["id"]] = entry["parentId"]
        entries = result["entries"]
        self._known = (
            self._known
            and bool(entries)
            and entries[0]["parentId"] == self._leaf
            and not result.get("clearedToolResults")
            and not result.get("external")
        )
        self._leaf = result["leafId"]
        return self._known

    async def _mark_leaf(self, parent_id: str | None) -> None:
        """Move the leaf to ``parent_id`` (None: before the first entry) so that a reopen finds it there too."""
        client, sid = await self._ready()
        marker: CustomEntry = {"type": "custom", "customType": LEAF_TYPE, "data": {"leafId": parent_id}}
        result = await client.append(sid, [marker], parent_id=parent_id)
        # The history at the marker is the one at its parent (a marker is in no context).
        self._leaf = parent_id
        self._grew(result)

    async def _parent_of(self, entry_id: str) -> str | None:
        if entry_id in self._parents:
            return self._parents[entry_id]
        client, sid = await self._ready()
        entries = (await client.get_entries(sid, ids=[entry_id]))["entries"]
        parent = entries[0].get("parentId") if entries else None
        return parent if isinstance(parent, str) else None

    async def _after_compaction(self, entry_id: str) -> bool:
        """Whether the entry came after the compaction entry the history starts from (else the compaction kept it)."""
        client, sid = await self._ready()
        order = {node["id"]: index for index, node in enumerate((await client.get_tree(sid))["nodes"])}
        return order.get(entry_id, -1) > order.get(self._entry_ids[0], -1)


# Items copied between two turns of the event loop while an append is in flight (a slice takes ~0.1 ms).
_COPY_SLICE = 128


async def _copies(items: list[dict[str, Any]], drained: Callable[[], Awaitable[None]]) -> list[dict[str, Any]]:
    """A copy of each item, the event loop given a turn before each slice; the first once the request is
    written (``drained``: the client's writer's drain): until then a slice would hold up each write of the
    large request to the pipe, and the sidecar, which cannot start before its last byte, with it."""
    copies: list[dict[str, Any]] = []
    await asyncio.sleep(0)  # (the request's own turn: it is encoded and its writing begins)
    try:
        await drained()
    except (ConnectionError, RuntimeError):
        pass  # (the sidecar went away: the append's own error says so, as it did before it was waited for)
    for start in range(0, len(items), _COPY_SLICE):
        if start:
            await asyncio.sleep(0)
        copies += [_copy(item) for item in items[start : start + _COPY_SLICE]]
    return copies


async def _append(
    client: SidecarClient, sid: str, entries: list[MessageEntry | CustomMessageEntry], plain: bool
) -> AppendResult:
    """``session/append`` of a large batch; its entries encoded by msgspec when they are all plain JSON
    (``plain_entry``: then its bytes are JSON's, value for value) and it is installed, else by the client."""
    if plain and _encode_batch is not None:
        try:
            encoded = EncodedJson(_encode_batch(entries))
        except (TypeError, ValueError, OverflowError):  # (a lone surrogate: the client writes it as JavaScript does)
            pass
        else:
            result: AppendResult = await client.request("session/append", {"sessionId": sid, "entries": encoded})
            return result
    return await client.append(sid, list(entries))


def _abandon(call: asyncio.Future[Any]) -> None:
    """A request given up on (the caller cancelled, or the copying failed): cancelled if still in flight
    (the client tells the sidecar), its outcome taken if it has one (so none is reported as unretrieved)."""
    if not call.done():
        call.cancel()
    elif not call.cancelled():
        call.exception()


def _copy(value: Any) -> Any:
    """A copy of a JSON value (each answer is the caller's own, as SQLiteSession's are)."""
    if isinstance(value, dict):
        return {key: _copy(inner) for key, inner in value.items()}
    if isinstance(value, list):
        return [_copy(inner) for inner in value]
    return value
