"""The file store: pi's JSONL session files below one sessions root (the embedded default).

``FileStore`` implements ``store.base.SessionStore``: ``store.py`` holds the
sessions this process has open, ``catalog.py`` the listing (the index beside the
files, and the files themselves when another sidecar holds it), ``moves.py``
archive, trash, restore and a new cwd, ``cache.py`` the tree cache written at close.
"""

from .store import FileStore

__all__ = ["FileStore"]
