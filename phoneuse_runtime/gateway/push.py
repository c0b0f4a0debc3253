"""Push: each device's push details (`fcm.register`, or `hello`), and ntfy wake-ups.

When a never-dropped frame is queued for a device that is offline and has an ntfy topic, the
server POSTs an empty message to `NTFY_URL/TOPIC`: the app wakes and syncs. The POST carries no
content at all, so nothing of the owner's chat passes through the ntfy server; and at most one
wake-up per device goes out in `WAKE_INTERVAL_S`, however many frames are queued meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
import re
import sqlite3
import time
import urllib.request
from collections.abc import Iterable

from phoneuse_runtime.kernel.events import now_ms

log = logging.getLogger(__name__)

WAKE_INTERVAL_S = 30.0
WAKE_TIMEOUT_S = 10.0
TOPIC = re.compile(r"[A-Za-z0-9_-]{1,64}")  # ntfy's own rule for topic names
MAX_FCM_TOKEN = 4096

DDL = """
CREATE TABLE IF NOT EXISTS push_targets (
    pairing_id TEXT PRIMARY KEY,
    fcm_token TEXT,
    ntfy_topic TEXT,
    updated_ms INTEGER NOT NULL
);
"""


def create_tables(conn: sqlite3.Connection) -> None:
    conn.executescript(DDL)


def register(
    conn: sqlite3.Connection, pairing_id: str, *, fcm_token: str | None, ntfy_topic: str | None
) -> None:
    """Stores the device's push details; a field left out keeps its stored value, "" clears it."""
    conn.execute(
        "INSERT INTO push_targets (pairing_id, fcm_token, ntfy_topic, updated_ms) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (pairing_id) DO UPDATE SET "
        "fcm_token = COALESCE(excluded.fcm_token, fcm_token), "
        "ntfy_topic = COALESCE(excluded.ntfy_topic, ntfy_topic), updated_ms = excluded.updated_ms",
        (pairing_id, fcm_token, ntfy_topic, now_ms()),
    )


def topics(conn: sqlite3.Connection, pairing_ids: Iterable[str]) -> dict[str, str]:
    """The ntfy topic of each device that has one."""
    ids = list(pairing_ids)
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    rows = conn.execute(
        f"SELECT pairing_id, ntfy_topic FROM push_targets WHERE pairing_id IN ({marks}) "  # noqa: S608
        "AND ntfy_topic IS NOT NULL AND ntfy_topic != ''",
        ids,
    )
    return {r["pairing_id"]: r["ntfy_topic"] for r in rows}


def topic_problem(topic: str) -> str | None:
    if topic and not TOPIC.fullmatch(topic):
        return "an ntfy topic is 1 to 64 letters, digits, '_' or '-'"
    return None


def fcm_problem(token: str) -> str | None:
    if len(token) > MAX_FCM_TOKEN:
        return f"an FCM token has at most {MAX_FCM_TOKEN} characters"
    return None


class Waker:
    """Sends ntfy wake-ups, at most one per device per `WAKE_INTERVAL_S`."""

    def __init__(self, ntfy_url: str) -> None:
        self.base = ntfy_url.rstrip("/")
        self._last: dict[str, float] = {}
        self.started = 0  # wake-ups begun (for the record: `sent` counts those that got through)
        self.sent = 0

    def due(self, pairing_id: str) -> bool:
        now = time.monotonic()
        last = self._last.get(pairing_id)
        if last is not None and now - last < WAKE_INTERVAL_S:
            return False
        self._last[pairing_id] = now
        return True

    async def wake(self, pairing_id: str, topic: str) -> None:
        self.started += 1
        try:
            await asyncio.to_thread(self._post, f"{self.base}/{topic}")
            self.sent += 1
        except OSError as exc:  # the wake-up is a courtesy: the frame waits in the outbox anyway
            log.warning("ntfy wake-up for device %s failed: %s", pairing_id, exc)

    @staticmethod
    def _post(url: str) -> None:
        request = urllib.request.Request(url, data=b"", method="POST")  # noqa: S310 (the owner's URL)
        with urllib.request.urlopen(request, timeout=WAKE_TIMEOUT_S) as response:  # noqa: S310
            response.read()
