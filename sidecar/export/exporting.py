"""A session as Markdown, HTML or JSON text, secrets redacted by default; written to a file atomically.

The room below the service: it reads a Session's tree and never writes the session.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import msgspec

from ..errors import ExportWriteFailed
from ..format.codec import encode_js
from ..format.entry import Entry
from ..format.jsstr import node_utf8
from ..store import Session
from .document import build_document
from .html import render_html
from .markdown import render_markdown
from .redact import Redactor
from .redact.verdicts import clean_entries
from .shape import RedactionSummary
from .walk import select

ExportFormat = Literal["markdown", "html", "json"]


@dataclass(slots=True)
class Exported:
    # The export as written, UTF-8: what a file receives and what ``bytes`` counts.
    data: bytes
    entries: int
    redaction: RedactionSummary
    # The text answered over the wire, where it is not ``data`` decoded: Markdown holding a lone
    # surrogate, which the answer keeps (as its escape) and a file cannot (U+FFFD there, as Node writes).
    own_text: str | None = None

    @property
    def text(self) -> str:
        return self.own_text if self.own_text is not None else self.data.decode()


def export_session(
    session: Session,
    fmt: ExportFormat,
    *,
    leaf_id: str | None = None,
    whole_tree: bool = False,
    redact: bool = True,
    resolve: Callable[[Entry], dict[str, Any]] | None = None,
) -> Exported:
    """The session as text in ``fmt``. The page (html) always carries the whole tree, opened at the leaf."""
    selection = select(session, leaf_id, whole_tree or fmt == "html", resolve)
    redactor = Redactor() if redact else None
    clean = clean_entries(session) if redact else None
    doc = build_document(session.header_obj(), session.name, selection, redactor, clean)
    # What is written is checked again as written (redactor.written): a secret redacted anywhere is
    # gone from every place it is written, in every encoding the format uses.
    if fmt == "markdown":
        text = render_markdown(doc)
        if redactor is not None and redactor.found_any:
            text = redactor.written(text)
        try:
            data = text.encode()
        except UnicodeEncodeError:  # a lone surrogate, which UTF-8 cannot hold: U+FFFD in a file, as Node writes it
            return Exported(node_utf8(text), len(doc.entries), doc.redaction, own_text=text)
    elif fmt == "html":
        data = render_html(doc, redactor)
    else:
        data = encode_js(msgspec.json.encode, doc)  # (lone surrogates as JSON.stringify's escapes)
        if redactor is not None and redactor.found_any:
            data = redactor.written(data.decode(), json_text=True).encode()
        data += b"\n"
    return Exported(data, len(doc.entries), doc.redaction)


def write_export(path: Path, data: bytes) -> None:
    """Write atomically (a reader never sees half a file), readable by the owner only (it may hold secrets)."""
    folder = path.parent
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise ExportWriteFailed(
            f"cannot write the export into {folder}: {exc.strerror or exc}; "
            "pass a path in an existing, writable folder",
            path=str(path),
        ) from exc
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise ExportWriteFailed(f"could not write the export to {path}: {exc.strerror or exc}", path=str(path)) from exc
