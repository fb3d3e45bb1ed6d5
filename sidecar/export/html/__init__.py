"""The page to look at a session (page.py) and its template, CSS and script (package data)."""

from .page import render_html

__all__ = ["render_html"]
