"""Images stored apart from their session (``blob:sha256:<hex>``), in ``sidecar_blobs``."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import psycopg

from ...errors import BlobMissing, StorageError
from ...format.jsonl import BLOB_MARK
from .db import Database, OutcomeUnknown
from .rows import now_ms

# A blob named by a line: the byte pattern the file store's collection searches for (upkeep/usage.py).
_NAMED = re.compile(re.escape(BLOB_MARK) + rb"([0-9a-f]{64})")


def named_blobs(lines: list[bytes]) -> list[str]:
    """The digests of the blobs ``lines`` name, sorted (the order rows are locked in)."""
    found: set[str] = set()
    for line in lines:
        if BLOB_MARK in line:
            found.update(match.group(1).decode() for match in _NAMED.finditer(line))
    return sorted(found)


def keep_named(conn: psycopg.Connection, digests: list[str], session_id: str, strict: bool = True) -> None:
    """Within a write's transaction, before its lines go in: touch the blobs they name, so that a collection
    waits for this write and sees its lines (erasing.py), and refuse the write when one was collected meanwhile
    (seen at the statement's start, gone once its row lock was had). ``strict`` (an append: the client's new
    entries) refuses a blob the database does not hold at all too; a fork (not strict) copies the references
    of its source as they are, as the file store does: nothing is lost by copying a reference that was missing."""
    found = conn.execute(
        "WITH seen AS (SELECT digest FROM sidecar_blobs WHERE digest = ANY(%(d)s::text[])), "
        "touched AS (UPDATE sidecar_blobs SET stored_ms = %(now)s WHERE digest IN (SELECT digest FROM sidecar_blobs "
        "WHERE digest = ANY(%(d)s::text[]) ORDER BY digest FOR NO KEY UPDATE) RETURNING digest) "
        "SELECT ARRAY(SELECT digest FROM seen), ARRAY(SELECT digest FROM touched)",
        {"d": digests, "now": now_ms()},
    ).fetchone()
    assert found is not None  # (a SELECT of two arrays answers one row)
    seen, touched = found
    collected = [digest for digest in digests if digest in seen and digest not in touched]
    absent = [digest for digest in digests if digest not in seen and digest not in touched]
    missing = collected or (absent if strict else [])
    if missing:
        raise BlobMissing(
            f"the entries name the image blob:sha256:{missing[0]}, which the database does not hold (collected by "
            "empty-trash --blobs, or never stored); nothing was written: send the image's data instead",
            digest=missing[0],
            sessionId=session_id,
            latched=False,
        )


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
                    # Reused: touched, as the file store touches a blob's file (its grace hour starts again).
                    "INSERT INTO sidecar_blobs (digest, data, stored_ms) VALUES (%s, %s, %s) "
                    "ON CONFLICT (digest) DO UPDATE SET stored_ms = excluded.stored_ms",
                    (digest, data, now_ms()),
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
