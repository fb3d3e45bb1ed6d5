"""The self-contained page to look at a session: one HTML file, its CSS, JS and data inline."""

from __future__ import annotations

from importlib.resources import files

import msgspec

from ...format.codec import encode_js
from ..shape import ExportDocument


def _asset(name: str) -> str:
    return files(__package__).joinpath(name).read_text(encoding="utf-8")


def render_html(doc: ExportDocument) -> str:
    data = encode_js(msgspec.json.encode, doc).decode()  # (lone surrogates as JSON.stringify's escapes)
    # Inside <script>, "</" could end the element and "<!--" open a comment: JSON allows "<\/" and "\u003c".
    data = data.replace("</", "<\\/").replace("<!--", "\\u003c!--")
    title = doc.session.name or f"Session {doc.session.id}"
    escaped_title = title.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("_", "&#95;")
    page = _asset("template.html")
    # Data last: it is the largest part and must not be searched for the other slots.
    for slot, value in (("__CSS__", _asset("page.css")), ("__JS__", _asset("page.js")), ("__TITLE__", escaped_title)):
        page = page.replace(slot, value)
    return page.replace("__DATA__", data, 1)
