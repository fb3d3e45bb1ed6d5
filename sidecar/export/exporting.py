"""A session as Markdown, HTML or JSON text, secrets redacted by default; written to a file atomically.

The room below the service: it reads a Session's tree and never writes the session.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Literal

import msgspec

from ..errors import ExportWriteFailed
from ..format.codec import encode_js
from ..format.jsstr import node_utf8
from ..store.session import Session
from .document import build_document
from .html import render_html
from .markdown import render_markdown
from .redact import Redactor
from .shape import RedactionSummary
from .walk import select

ExportFormat = Literal["markdown", "html", "json"]


@dataclass(slots=True)
class Exported:
    text: str
    entries: int
    redaction: RedactionSummary


def export_session(session: Session, fmt: ExportFormat, *, leaf_id: str | None = None, whole_tree: bool = False,
                   redact: bool = True, resolve: Callable[[Any], dict[str, Any]] | None = None) -> Exported:
    """The session as text in ``fmt``. The page (html) always carries the whole tree, opened at the leaf."""
    selection = select(session, leaf_id, whole_tree or fmt == "html", resolve)
    redactor = Redactor() if redact else None
    doc = build_document(session.header_obj(), session.name, selection, redactor)
    if fmt == "markdown":
        text = render_markdown(doc)
    elif fmt == "html":
        text = render_html(doc)
    else:
        text = encode_js(msgspec.json.encode, doc).decode() + "\n"  # (lone surrogates as JSON.stringify's escapes)
    return Exported(text, len(doc.entries), doc.redaction)


def write_export(path: Path, text: str) -> None:
    """Write atomically (a reader never sees half a file), readable by the owner only (it may hold secrets)."""
    folder = path.parent
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise ExportWriteFailed(f"cannot write the export into {folder}: {exc.strerror or exc}; "
                                "pass a path in an existing, writable folder", path=str(path)) from exc
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(node_utf8(text))  # (a lone surrogate, which UTF-8 cannot hold, as Node writes it: U+FFFD)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise ExportWriteFailed(f"could not write the export to {path}: {exc.strerror or exc}", path=str(path)) from exc
