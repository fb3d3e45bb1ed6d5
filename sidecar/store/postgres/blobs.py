"""Images stored apart from their session (``blob:sha256:<hex>``), in ``sidecar_blobs``."""

from __future__ import annotations

import hashlib
from pathlib import Path

from ...errors import StorageError
from .db import Database, OutcomeUnknown


class PgBlobStore:
    """Images stored apart (``blob:sha256:<hex>``), in ``sidecar_blobs``."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.folders: tuple[Path, ...] = ()

    def put(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        try:
            self.db.run(
                lambda conn: conn.execute(
                    "INSERT INTO sidecar_blobs (digest, data) VALUES (%s, %s) ON CONFLICT (digest) DO NOTHING",
                    (digest, data),
                ),
                "store an image",
            )
        except OutcomeUnknown as exc:
            raise StorageError(f"could not store an image: {exc}; nothing was appended", latched=False) from None
        return digest

    def get(self, digest: str) -> bytes | None:
        if len(digest) != 64 or not all(c in "0123456789abcdef" for c in digest):
            return None
        row = self.db.read(
            lambda conn: conn.execute("SELECT data FROM sidecar_blobs WHERE digest = %s", (digest,)).fetchone(),
            "read an image",
        )
        return bytes(row[0]) if row else None
