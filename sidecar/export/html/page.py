"""The self-contained page to look at a session: one HTML file, its CSS, JS and data inline.

Built as bytes once: the template's parts are encoded once per process, the document is encoded
by msgspec straight to bytes, and the page is those bytes joined; its size is their length.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files

import msgspec

from ...format.codec import encode_js
from ...format.jsstr import node_utf8
from ..redact import Redactor
from ..shape import ExportDocument


def _asset(name: str) -> str:
    return files(__package__).joinpath(name).read_text(encoding="utf-8")


@cache
def _frame() -> tuple[bytes, bytes, bytes, bytes]:
    """The template with its CSS and JS in, as bytes: (before the title, between the titles and the
    data, after the data)."""
    page = _asset("template.html").replace("__CSS__", _asset("page.css")).replace("__JS__", _asset("page.js"))
    head, rest = page.split("__TITLE__", 1)
    middle, rest = rest.split("__TITLE__", 1)
    before_data, after_data = rest.split("__DATA__", 1)
    return head.encode(), middle.encode(), before_data.encode(), after_data.encode()


def render_html(doc: ExportDocument, redactor: Redactor | None = None) -> bytes:
    data = encode_js(msgspec.json.encode, doc)  # (lone surrogates as JSON.stringify's escapes)
    # Inside <script>, "</" could end the element and "<!--" open a comment: JSON allows "<\/" and "\u003c".
    if b"</" in data:
        data = data.replace(b"</", b"<\\/")
    if b"<!--" in data:
        data = data.replace(b"<!--", b"\\u003c!--")
    if redactor is not None and redactor.found_any:  # the embedded data checked again, as written
        data = redactor.written(data.decode(), json_text=True, html=True).encode()
    title = doc.session.name or f"Session {doc.session.id}"
    # node_utf8: a name holding a lone surrogate is written as Node writes it (U+FFFD), not refused.
    escaped = node_utf8(title.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("_", "&#95;"))
    head, middle, before_data, after_data = _frame()
    return b"".join((head, escaped, middle, escaped, before_data, data, after_data))
