"""Each paired device's outbox: the frames the schema never drops, kept in SQLite with a cursor.

The cursor is one AUTOINCREMENT sequence for all devices, so it is monotonic for each device,
never reused (even after pruning), and survives a restart. A device's cursor is the sequence of
the newest frame queued for it; `sync {cursor}` replays every frame after it, in order.

Retention: frames older than `retention_s`, all but the newest `max_frames` of a device, and the
oldest of a device's frames whose UTF-8 passes `max_bytes` (counted for each device in
`outbox_usage` by triggers; trimmed at each append, the frame appended always kept), are
pruned (the count is trimmed every `min(max_frames, TRIM_EVERY)` appends, so a device holds at
most that many more for a moment). Pruning raises the device's floor (the newest sequence
pruned for it). A `sync` from a cursor below the floor, or beyond the newest frame (a cursor of
another database), cannot be answered without holes, so it is answered with a reset instead
(see `core.sync`).

Secrets: what is kept here is masked first (`mask_frame`: one-time codes and passwords in every
text of the frame, by the one rule of phoneuse_runtime/owner/privacy.py), since an SMS's text reaches
every device's outbox as a `notification`. A device that is connected gets the frame live as it
is (the owner may need the code on screen now); what `sync` replays later is the masked copy.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass

from phoneuse_runtime.gateway.db import transaction
from phoneuse_runtime.kernel.events import now_ms
from phoneuse_runtime.owner.privacy import mask_secrets, mask_values

TRIM_EVERY = 64

DDL = """
CREATE TABLE IF NOT EXISTS outbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    pairing_id TEXT NOT NULL,
    frame TEXT NOT NULL,
    created_ms INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS outbox_device ON outbox (pairing_id, seq);
CREATE TABLE IF NOT EXISTS outbox_floor (
    pairing_id TEXT PRIMARY KEY,
    floor INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS outbox_usage (
    pairing_id TEXT PRIMARY KEY,
    bytes INTEGER NOT NULL
);
CREATE TRIGGER IF NOT EXISTS outbox_usage_insert AFTER INSERT ON outbox BEGIN
    INSERT INTO outbox_usage (pairing_id, bytes) VALUES (new.pairing_id, length(CAST(new.frame AS BLOB)))
    ON CONFLICT (pairing_id) DO UPDATE SET bytes = bytes + excluded.bytes;
END;
CREATE TRIGGER IF NOT EXISTS outbox_usage_delete AFTER DELETE ON outbox BEGIN
    UPDATE outbox_usage SET bytes = bytes - length(CAST(old.frame AS BLOB)) WHERE pairing_id = old.pairing_id;
END;
"""
# A store made before outbox_usage: its frames counted once (the devices that have a count
# have had it from the triggers since).
COUNT_EXISTING = """
INSERT OR IGNORE INTO outbox_usage (pairing_id, bytes)
SELECT pairing_id, sum(length(CAST(frame AS BLOB))) FROM outbox GROUP BY pairing_id
"""


@dataclass(frozen=True)
class Replay:
    """What a device's `sync` from `cursor` gets: `frames` (seq, frame text) in order, or, when
    that would have holes, `reset` with nothing to replay. `newest` is the device's cursor."""

    frames: list[tuple[int, str]]
    newest: int
    reset: bool


def create_tables(conn: sqlite3.Connection) -> None:
    # One transaction: frames a `pair` command queues meanwhile are counted once, by the trigger.
    conn.executescript(f"BEGIN IMMEDIATE; {DDL}; {COUNT_EXISTING}; COMMIT;")


def _raise_floor(conn: sqlite3.Connection, pairing_id: str, seq: int) -> None:
    conn.execute(
        "INSERT INTO outbox_floor (pairing_id, floor) VALUES (?, ?) "
        "ON CONFLICT (pairing_id) DO UPDATE SET floor = MAX(floor, excluded.floor)",
        (pairing_id, seq),
    )


def mask_frame(frame: str) -> str:
    """The frame (JSON text) with the one-time codes and passwords in its texts masked; the
    envelope and every id as they were."""
    try:
        parsed = json.loads(frame)
    except ValueError:  # not one of the server's frames: masked as plain text
        return mask_secrets(frame)
    if not isinstance(parsed, dict) or "payload" not in parsed:
        return frame
    masked = mask_values(parsed["payload"])
    if masked == parsed["payload"]:
        return frame
    parsed["payload"] = masked
    return json.dumps(parsed, ensure_ascii=False, separators=(",", ":"))


def append(
    conn: sqlite3.Connection,
    frame: str,
    pairing_ids: Iterable[str],
    *,
    now: int | None = None,
    max_bytes: int | None = None,
) -> None:
    """Queues `frame` (masked: `mask_frame`) for each device, in one transaction; then each
    device's oldest frames go until its outbox holds at most `max_bytes` (the new one stays)."""
    now = now_ms() if now is None else now
    frame = mask_frame(frame)
    ids = list(pairing_ids)
    with transaction(conn):
        conn.executemany(
            "INSERT INTO outbox (pairing_id, frame, created_ms) VALUES (?, ?, ?)",
            [(pairing_id, frame, now) for pairing_id in ids],
        )
        if max_bytes is not None:
            for pairing_id in ids:
                _trim_bytes(conn, pairing_id, max_bytes)


def usage(conn: sqlite3.Connection, pairing_id: str) -> int:
    """The UTF-8 bytes of the device's frames in its outbox."""
    row = conn.execute("SELECT bytes FROM outbox_usage WHERE pairing_id = ?", (pairing_id,)).fetchone()
    return int(row["bytes"]) if row is not None else 0


def _trim_bytes(conn: sqlite3.Connection, pairing_id: str, max_bytes: int) -> int:
    """Drops the device's oldest frames until it holds at most `max_bytes` (never its newest)."""
    over = usage(conn, pairing_id) - max_bytes
    if over <= 0:
        return 0
    cutoff, freed = None, 0
    rows = conn.execute(
        "SELECT seq, length(CAST(frame AS BLOB)) AS size FROM outbox WHERE pairing_id = ? "
        "AND seq < (SELECT MAX(seq) FROM outbox WHERE pairing_id = ?1) ORDER BY seq",
        (pairing_id,),
    )
    for row in rows:
        cutoff, freed = row["seq"], freed + row["size"]
        if freed >= over:
            break
    if cutoff is None:
        return 0
    _raise_floor(conn, pairing_id, cutoff)
    return int(
        conn.execute("DELETE FROM outbox WHERE pairing_id = ? AND seq <= ?", (pairing_id, cutoff)).rowcount
    )


def trim(conn: sqlite3.Connection, *, max_frames: int) -> int:
    """Keeps each device's newest `max_frames` frames (raising the floors); returns how many went."""
    dropped = 0
    with transaction(conn):
        over = conn.execute(
            "SELECT pairing_id FROM outbox GROUP BY pairing_id HAVING COUNT(*) > ?", (max_frames,)
        ).fetchall()
        for row in over:
            pairing_id = row["pairing_id"]
            cutoff = conn.execute(
                "SELECT seq FROM outbox WHERE pairing_id = ? ORDER BY seq DESC LIMIT 1 OFFSET ?",
                (pairing_id, max_frames),
            ).fetchone()
            _raise_floor(conn, pairing_id, cutoff["seq"])
            dropped += conn.execute(
                "DELETE FROM outbox WHERE pairing_id = ? AND seq <= ?", (pairing_id, cutoff["seq"])
            ).rowcount
    return dropped


def newest(conn: sqlite3.Connection, pairing_id: str) -> int:
    """The device's cursor: its newest frame's sequence, else its floor, else 0."""
    row = conn.execute("SELECT MAX(seq) AS seq FROM outbox WHERE pairing_id = ?", (pairing_id,)).fetchone()
    if row["seq"] is not None:
        return int(row["seq"])
    return floor(conn, pairing_id)


def floor(conn: sqlite3.Connection, pairing_id: str) -> int:
    row = conn.execute("SELECT floor FROM outbox_floor WHERE pairing_id = ?", (pairing_id,)).fetchone()
    return int(row["floor"]) if row is not None else 0


def since(conn: sqlite3.Connection, pairing_id: str, cursor: int) -> Replay:
    """The frames after `cursor`, or a reset when the outbox no longer holds them all."""
    with transaction(conn):  # one snapshot: no frame pruned between the floor and the rows
        last = newest(conn, pairing_id)
        if cursor < floor(conn, pairing_id) or cursor > last:
            return Replay([], last, reset=True)
        rows = conn.execute(
            "SELECT seq, frame FROM outbox WHERE pairing_id = ? AND seq > ? ORDER BY seq",
            (pairing_id, cursor),
        ).fetchall()
    return Replay([(r["seq"], r["frame"]) for r in rows], last, reset=False)


def prune(conn: sqlite3.Connection, *, retention_ms: int, live: set[str], now: int | None = None) -> int:
    """Drops frames past retention, and every frame of a device no longer paired; returns how many."""
    now = now_ms() if now is None else now
    with transaction(conn):
        old = conn.execute(
            "SELECT pairing_id, MAX(seq) AS seq FROM outbox WHERE created_ms < ? GROUP BY pairing_id",
            (now - retention_ms,),
        ).fetchall()
        for row in old:
            _raise_floor(conn, row["pairing_id"], row["seq"])
        dropped = conn.execute("DELETE FROM outbox WHERE created_ms < ?", (now - retention_ms,)).rowcount
        gone = {r["pairing_id"] for r in conn.execute("SELECT DISTINCT pairing_id FROM outbox")} - live
        for pairing_id in gone:
            dropped += conn.execute("DELETE FROM outbox WHERE pairing_id = ?", (pairing_id,)).rowcount
    return dropped
