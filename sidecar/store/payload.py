"""Size rules for what is kept of an appended entry (oh-my-pi's rules, our own code and wording).

Applied to each entry before it is encoded, so a huge payload is cut before a
line is built from it:

* a string longer than ``MAX_CHARS`` keeps its start and ends with
  ``TRUNCATION_NOTICE``; an object holding both ``content`` (a string) and
  ``lineCount`` gets its ``lineCount`` counted again from what was kept;
* an image block (``{"type": "image", "data": <base64>}``) in a message's or a
  ``custom_message``'s ``content`` whose base64 is ``MIN_BLOB_CHARS`` or
  longer goes to the blob store, content-addressed, and the line holds
  ``blob:sha256:<hex>`` instead; ``resolve`` puts the base64 back for readers.

Nothing here changes the caller's objects: a container is copied only where
something in it changes.
"""

from __future__ import annotations

import base64
import binascii
import os
from pathlib import Path
from typing import Any, Protocol

from ..errors import PathOutsideRoot, StorageError
from ..format.jsonl import BLOB_PREFIX, Entry
from .ids import inside

MAX_CHARS = 500_000
MIN_BLOB_CHARS = 1024
BLOB_DIR = ".blobs"
TRUNCATION_NOTICE = "\n[session-sidecar: the rest of this text was too long to store]"


class Blobs(Protocol):
    """Where a store keeps images apart from the lines (``blob:sha256:<hex>``): below a root, or PostgreSQL's table."""

    @property
    def folders(self) -> tuple[Path, ...]:
        """The folders blobs are read from (none for a store that keeps them elsewhere)."""
        ...

    def put(self, data: bytes) -> str:
        """Store ``data``; returns its digest."""
        ...

    def get(self, digest: str) -> bytes | None: ...


class BlobStore:
    """``<folder>/<sha256>``: raw bytes, written once, atomically, owner-only.

    By default the folder is ``<root>/.blobs``; oh-my-pi's compatibility puts
    it in the agent folder (compat.py). ``also_read`` are older folders still
    looked in for references written there before.
    """

    def __init__(self, root: Path, folder: Path | None = None, also_read: tuple[Path, ...] = ()) -> None:
        self.folder = Path(folder) if folder is not None else Path(root) / BLOB_DIR
        # The folder must not lead out of this one (through a symlink).
        self.root = Path(root) if folder is None else self.folder.parent
        self.also_read = tuple(p for p in also_read if p != self.folder)

    def path(self, digest: str) -> Path:
        return self.folder / digest

    @property
    def folders(self) -> tuple[Path, ...]:
        """Every folder blobs are read from: the one written to first."""
        return (self.folder, *self.also_read)

    def put(self, data: bytes) -> str:
        import hashlib  # (here: a store is made at every start, a blob put by an image's append)

        digest = hashlib.sha256(data).hexdigest()
        target = self.path(digest)
        if target.exists():
            try:
                os.utime(target)  # reused now: a blob collection running meanwhile must keep it (upkeep/trash.py)
            except OSError:
                pass
            return digest
        if not inside(self.root, self.folder):
            raise PathOutsideRoot(
                f"{self.folder} leads out of the sessions root {self.root} (a symlink); "
                "make it a plain folder to store images",
                path=str(self.folder),
                root=str(self.root),
            )
        tmp = self.folder / f".{digest}.tmp-{os.getpid()}"
        try:
            if not self.folder.is_dir():
                self.folder.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                self.folder.mkdir(mode=0o700, exist_ok=True)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, target)
        except OSError as exc:
            try:
                tmp.unlink(missing_ok=True)
            except OSError:
                pass
            raise StorageError(
                f"could not store an image in {self.folder}: {exc.strerror or exc}; nothing was appended",
                path=str(target),
                errno=exc.errno,
                latched=False,
            ) from exc
        return digest

    def get(self, digest: str) -> bytes | None:
        if len(digest) != 64 or not all(c in "0123456789abcdef" for c in digest):
            return None
        for folder in (self.folder, *self.also_read):
            if not inside(folder.parent, folder):
                continue
            try:
                fd = os.open(folder / digest, os.O_RDONLY | os.O_NOFOLLOW)  # a planted symlink is not read
            except OSError:
                continue
            with open(fd, "rb") as blob:
                return blob.read()
        return None


def bound(entry: dict[str, Any], blobs: Blobs | None) -> dict[str, Any]:
    """``entry`` as it is to be stored: images moved to ``blobs``, long strings cut."""
    if blobs is not None:
        entry = _externalize(entry, blobs)
    return _truncate(entry)


def externalize(entry: dict[str, Any], blobs: Blobs) -> dict[str, Any]:
    """``entry`` with the images of a message's or custom message's content put in ``blobs`` (the
    entry itself when none moved), as oh-my-pi stores them; nothing else changes."""
    return _externalize(entry, blobs)


def _externalize(entry: dict[str, Any], blobs: Blobs) -> dict[str, Any]:
    kind = entry.get("type")
    if kind == "message" and isinstance(entry.get("message"), dict):
        message = entry["message"]
        content = _blob_images(message.get("content"), blobs)
        if content is not message.get("content"):
            entry = {**entry, "message": {**message, "content": content}}
    elif kind == "custom_message":
        content = _blob_images(entry.get("content"), blobs)
        if content is not entry.get("content"):
            entry = {**entry, "content": content}
    return entry


def _blob_images(content: Any, blobs: Blobs) -> Any:
    if not isinstance(content, list):
        return content
    changed = None
    for index, block in enumerate(content):
        if not (isinstance(block, dict) and block.get("type") == "image"):
            continue
        data = block.get("data")
        if not isinstance(data, str) or len(data) < MIN_BLOB_CHARS or data.startswith(BLOB_PREFIX):
            continue
        raw = _strict_b64decode(data)
        if raw is None:
            continue  # not base64 that encodes back to the same text: keep it inline
        if changed is None:
            changed = list(content)
        changed[index] = {**block, "data": BLOB_PREFIX + blobs.put(raw)}
    return content if changed is None else changed


def _strict_b64decode(data: str) -> bytes | None:
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None
    return raw if base64.b64encode(raw).decode("ascii") == data else None


def _truncate(value: Any) -> Any:
    if isinstance(value, str):
        if len(value) > MAX_CHARS:
            return value[: MAX_CHARS - len(TRUNCATION_NOTICE)] + TRUNCATION_NOTICE
        return value
    if isinstance(value, dict):
        changed = None
        is_image = value.get("type") == "image"
        for key, item in value.items():
            if is_image and key == "data":
                continue  # an image's base64 is never cut: a cut image is no image (pi keeps it whole)
            bounded = _truncate(item)
            if bounded is not item:
                if changed is None:
                    changed = dict(value)
                changed[key] = bounded
        if changed is None:
            return value
        content = changed.get("content")
        if "lineCount" in changed and isinstance(content, str) and content is not value.get("content"):
            changed["lineCount"] = content.count("\n") + 1
        return changed
    if isinstance(value, list):
        changed_list = None
        for index, item in enumerate(value):
            bounded = _truncate(item)
            if bounded is not item:
                if changed_list is None:
                    changed_list = list(value)
                changed_list[index] = bounded
        return value if changed_list is None else changed_list
    return value


def entry_object(entry: Entry, blobs: Blobs) -> dict[str, Any]:
    """An entry's line as a fresh dict with its blob references resolved (the line read once: reading it
    settles whether it holds any, which a large file's parse leaves open)."""
    obj = entry.obj()
    return resolve(obj, blobs) if entry.has_blobs else obj


def resolve(value: Any, blobs: Blobs) -> Any:
    """``value`` (a message or an entry, as decoded) with blob references turned back into base64.

    Changes ``value`` in place (callers pass freshly decoded objects) and
    returns it. A reference whose blob is missing stays as it is.
    """
    if isinstance(value, dict):
        if value.get("type") == "image":
            data = value.get("data")
            if isinstance(data, str) and data.startswith(BLOB_PREFIX):
                raw = blobs.get(data[len(BLOB_PREFIX) :])
                if raw is not None:
                    value["data"] = base64.b64encode(raw).decode("ascii")
            return value
        for item in value.values():
            if isinstance(item, (dict, list)):
                resolve(item, blobs)
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, (dict, list)):
                resolve(item, blobs)
    return value
