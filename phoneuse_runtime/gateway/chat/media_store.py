"""The media table: one row per completed upload or server-produced file (its bytes are a file
of the same name in the data dir's media directory). Uploads in progress are no rows: they
live in their connection's state until their sha256 checks out."""

from __future__ import annotations

import secrets
import sqlite3
from typing import Any

from phoneuse_runtime.gateway.errors import GatewayError
from phoneuse_runtime.kernel.events import now_ms

DDL = """
CREATE TABLE IF NOT EXISTS chat_media (
    media_id TEXT PRIMARY KEY,
    pairing_id TEXT,
    media_ref TEXT,
    kind TEXT NOT NULL,
    mime TEXT NOT NULL,
    size INTEGER NOT NULL,
    filename TEXT,
    sha256 TEXT NOT NULL,
    created_ms INTEGER NOT NULL,
    UNIQUE (pairing_id, media_ref)
);
"""


def create_tables(conn: sqlite3.Connection) -> None:
    conn.executescript(DDL)


def new_media_id() -> str:
    return f"med_{secrets.token_hex(8)}"


def media_dict(row: sqlite3.Row) -> dict[str, Any]:
    """The schema's `media_ref`."""
    out: dict[str, Any] = {
        "media_id": row["media_id"],
        "kind": row["kind"],
        "mime": row["mime"],
        "size": row["size"],
    }
    if row["filename"] is not None:
        out["filename"] = row["filename"]
    return out


def insert_media(
    conn: sqlite3.Connection,
    media_id: str,
    *,
    kind: str,
    mime: str,
    size: int,
    sha256: str,
    filename: str | None = None,
    pairing_id: str | None = None,
    media_ref: str | None = None,
) -> dict[str, Any]:
    conn.execute(
        "INSERT INTO chat_media (media_id, pairing_id, media_ref, kind, mime, size, filename, sha256, "
        "created_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (media_id, pairing_id, media_ref, kind, mime, size, filename, sha256, now_ms()),
    )
    row = get_media(conn, media_id)
    assert row is not None
    return media_dict(row)


def get_media(conn: sqlite3.Connection, media_id: str) -> sqlite3.Row | None:
    row: sqlite3.Row | None = conn.execute(
        "SELECT * FROM chat_media WHERE media_id = ?", (media_id,)
    ).fetchone()
    return row


def uploaded(conn: sqlite3.Connection, pairing_id: str, media_ref: str) -> sqlite3.Row | None:
    """The device's completed upload that it calls `media_ref`."""
    row: sqlite3.Row | None = conn.execute(
        "SELECT * FROM chat_media WHERE pairing_id = ? AND media_ref = ?", (pairing_id, media_ref)
    ).fetchone()
    return row


def uploads_named(conn: sqlite3.Connection, pairing_id: str, media_refs: list[str]) -> list[dict[str, Any]]:
    """The device's completed uploads that `media_refs` name, in order; `not_found` for a ref
    that names none (another device's, one still uploading, or one never started)."""
    out = []
    for ref in media_refs:
        row = uploaded(conn, pairing_id, ref)
        if row is None:
            raise GatewayError("not_found", f"no completed upload of this device has media_ref {ref!r}")
        out.append(media_dict(row))
    return out
