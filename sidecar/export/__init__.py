"""Export a session as Markdown, HTML or JSON, secrets redacted by default.

    exported = export_session(session, "markdown", leaf_id=None, whole_tree=False, redact=True)
    exported.text, exported.redaction

The room below the service: it reads a Session's tree and never writes the session.
The names below are loaded on first use (exporting.py): every command line
builds the export commands' parsers (cli.py), and the renderers and the
redaction rules are no part of a start-up that never exports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .exporting import Exported, ExportFormat, export_session, write_export

__all__ = ["ExportFormat", "Exported", "export_session", "write_export"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import exporting

        return getattr(exporting, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
