"""The tree of one session: branching, the nodes, entries, labels, names, forks, snapshots and rewinds."""

from __future__ import annotations

import asyncio


from .. import external, wire
from ..errors import InvalidParams, InvalidState
from ..operations import compacting
from ..store import connected_path, label_timestamps
from ..work import NO_WORK, Work


class TreeCalls:
    # -- tree ---------------------------------------------------------------------------

    def branch(self, params: wire.BranchParams, work: Work = NO_WORK) -> wire.BranchResult:
        session = self.session(params.sessionId)
        if params.entryId is not None:
            session.get(params.entryId)
        if params.summarize and params.entryId != session.leaf_id:
            session.check_writable()  # before asking a model for a summary that could not be kept
            # Summarizing awaits a model: run it on this worker thread's own loop.
            summary = asyncio.run(self.compactor.branch_summary(
                session, params.entryId, compacting.options(params, self.settings.compaction), params.provider, work
            ))
            if summary is not None:
                written = session.append([summary], params.entryId)
                return wire.BranchResult(leafId=session.leaf_id, summaryEntryId=written[0].id)
        session.branch(params.entryId)
        self._live_leaf_moved(session)
        return wire.BranchResult(leafId=session.leaf_id)

    def get_tree(self, params: wire.GetTreeParams) -> wire.GetTreeResult:
        session, change = self.store.live(params.sessionId)
        labels = session.tree.labels
        nodes = [
            wire.TreeNode(
                id=entry.id,  # type: ignore[arg-type]
                parentId=parent,
                type=entry.type,
                timestamp=entry.timestamp,
                role=entry.role() if entry.type == "message" else None,
                label=labels.get(entry.id),  # type: ignore[arg-type]
            )
            for entry, parent in session.tree.effective_parents()
        ]
        return wire.GetTreeResult(nodes=nodes, leafId=session.leaf_id, external=external.result_field(change))

    def get_entries(self, params: wire.GetEntriesParams) -> wire.GetEntriesResult:
        session = self.session(params.sessionId)
        entries = session.tree.entries if params.ids is None else [session.get(i) for i in params.ids]
        return wire.GetEntriesResult(entries=external.entry_objects(entries, self.store.blobs))

    def set_label(self, params: wire.SetLabelParams) -> wire.SetLabelResult:
        session = self.session(params.sessionId)
        entry = session.set_label(params.entryId, params.label)
        return wire.SetLabelResult(entryId=entry.id, leafId=session.leaf_id)  # type: ignore[arg-type]

    def set_name(self, params: wire.SetNameParams) -> wire.SetNameResult:
        session = self.session(params.sessionId)
        titled = session.prefix
        entry = session.set_name(params.name)
        if session.prefix != titled:
            self.store.renamed(session)
        return wire.SetNameResult(entryId=entry.id, name=session.name, title=session.name)  # type: ignore[arg-type]

    def fork(self, params: wire.ForkParams) -> wire.ForkResult:
        """Copy the path root -> entry into a new session, connected (store/pathcopy.py).

        Label entries on the path are dropped and the labels of the copied
        entries written again after them, so labels set on other branches
        (whose label entries are not on the path) are kept too.
        """
        source = self.session(params.sessionId)
        target_id = params.entryId if params.entryId is not None else source.leaf_id
        if target_id is None:
            raise InvalidState("the session is empty (or its leaf was reset); name an entryId to fork from")
        target = source.get(target_id)
        if params.entryId is not None and target.type == "message" and target.role() not in ("user", "assistant"):
            raise InvalidParams(
                f"fork from a user or assistant message; entry {target_id} is a {target.role()} message "
                "(forking there could leave a tool call without its result)",
                entryId=target_id,
            )
        copied = connected_path(source.tree.path(target_id), source.tree.labels, label_timestamps(source.tree.entries))
        cwd = params.cwd if params.cwd is not None else source.header_obj().get("cwd", "")
        forked = self.store.copy(source, copied.entries, copied.labels, cwd)
        return wire.ForkResult(sessionId=forked.id, path=self.store.location(forked), persisted=forked.persisted)

    # -- snapshots and rewind (sidecar/snapshots/) -----------------------------------------------

    def snapshot(self, params: wire.SnapshotParams) -> wire.SnapshotResult:
        return self.snapshots.snapshot(self.session(params.sessionId), params)

    def diff(self, params: wire.DiffParams) -> wire.DiffResult:
        return self.snapshots.diff(self.session(params.sessionId), params)

    def rewind(self, params: wire.RewindParams) -> wire.RewindResult:
        return self.snapshots.rewind(self.session(params.sessionId), params)
