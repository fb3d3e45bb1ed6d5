"""Other formats: imports from other agents, exports, the spec format's origin fields and conversion."""

from __future__ import annotations

from typing import Any

from .. import wire
from ..errors import InvalidParams
from ..operations import convert, exporting


class FormatCalls:
    # --- import (session/import: sessions of Codex, Claude Code and opencode as pi sessions) ---
    def import_(self, params: wire.ImportParams) -> wire.ImportResult:
        from ..importers.run import import_sources

        return import_sources(self.store, params)

    # --- export (sidecar/export/) ---

    def export(self, params: wire.ExportParams) -> wire.ExportResult:
        return exporting.export(self.session(params.sessionId), params, self.store.blobs)

    # --- spec format (issue 14): where a session came from, converting between formats ---

    def _origin_of(self, params: wire.CreateParams) -> dict[str, Any]:
        """create's source/cronJobId, which only a spec-format store keeps (pi's header has no place for them)."""
        if params.source is None and params.cronJobId is None:
            return {}
        if self.settings.store.format != "spec":
            raise InvalidParams("source and cronJobId are kept by spec-format roots only (store.format \"spec\")",
                                field="source" if params.source is not None else "cronJobId")
        return {"source": params.source, "cron_job_id": params.cronJobId}

    def convert(self, params: wire.ConvertParams) -> wire.ConvertResult:
        return convert.convert(self.store, params)
