"""The gateway's SQLite file in the data dir, used from one thread, off the event loop.

Every gateway table (pairings, outbox, channels, messages, media, ...) lives in this one file.
A part creates its tables with `await db.run(lambda c: c.executescript(DDL))` when it starts.
The CLI's `pair` commands open the same file while the server runs: WAL journal and a busy
timeout let both write without "database is locked".
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from phoneuse_runtime.util.files import private_sqlite

T = TypeVar("T")

DB_FILE = "gateway.sqlite3"
BUSY_TIMEOUT_MS = 5000


def db_path(data_dir: Path) -> Path:
    return data_dir / DB_FILE


def connect(path: Path) -> sqlite3.Connection:
    """A connection as every user of the file opens it (server thread, CLI)."""
    private_sqlite(path)  # 0600, and so its -wal and -shm: it holds token hashes and messages
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: durable at each checkpoint, fast commits
    conn.execute("PRAGMA foreign_keys=ON")
    return conn


class GatewayDb:
    """Runs functions of a `sqlite3.Connection` on the gateway's one database thread.

    `isolation_level=None`: statements autocommit; a function that needs a transaction opens one
    with `with transaction(conn):`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gateway-db")
        self._local = threading.local()
        self._conns: list[sqlite3.Connection] = []

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = connect(self.path)
            self._local.conn = conn
            self._conns.append(conn)
        return conn

    async def run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """`fn(conn)` on the database thread; its exceptions propagate."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, lambda: fn(self._conn()))

    async def close(self) -> None:
        def close_all() -> None:
            for conn in self._conns:
                conn.close()
            self._conns.clear()

        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._pool, close_all)
        self._pool.shutdown(wait=True)


class transaction:
    """`BEGIN IMMEDIATE` ... `COMMIT` (or `ROLLBACK` on an exception) on an autocommit connection.
    IMMEDIATE takes the write lock up front, so a read-then-write cannot be overtaken."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self.conn.execute("ROLLBACK" if exc_type is not None else "COMMIT")
