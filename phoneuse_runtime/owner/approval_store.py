"""The owner's terminal answers holds: pending approvals mirrored to a file in the data dir.

The owner is whoever holds the data dir, as with `pair`. While a hold is pending, the server
keeps a row for it in `DATA_DIR/approvals.sqlite3` (mode 0600): its id, the digest of the exact
call, and the text the owner reads (approval_text.py). `phoneuse-runtime approvals approve ID`
(or `deny`) writes the answer into that row, bound to the digest it showed; the server polls
the file (SQLite's `data_version`, every `POLL_S`, only while something is held) and answers
the hold through `Approvals.answer(..., digest=...)`, as the Iris app does. The row goes when
the hold ends, however it ends; a server that starts clears what a dead one left.

The file is opened on the first hold: a server nobody asks anything of never creates it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from phoneuse_runtime.kernel.errors import Conflict
from phoneuse_runtime.kernel.events import now_ms
from phoneuse_runtime.kernel.policies import AskFirst
from phoneuse_runtime.kernel.registry import Contribution
from phoneuse_runtime.owner.approval_text import call_line, full_params
from phoneuse_runtime.owner.approvals import Approvals, Hold, NoSuchApproval

if TYPE_CHECKING:
    from phoneuse_runtime.kernel.runtime import Runtime

log = logging.getLogger(__name__)
T = TypeVar("T")

STORE_FILE = "approvals.sqlite3"
POLL_S = 0.25  # how soon a terminal's answer is taken, while something is held
BUSY_TIMEOUT_S = 5.0
APPROVE, DENY = "approve", "deny"

DDL = """
CREATE TABLE IF NOT EXISTS holds (
    approval_id TEXT PRIMARY KEY,
    digest TEXT NOT NULL,
    name TEXT NOT NULL,
    line TEXT NOT NULL,
    params TEXT NOT NULL,
    caller TEXT NOT NULL,
    reason TEXT NOT NULL,
    requested_ms INTEGER NOT NULL,
    deadline_ms INTEGER NOT NULL,
    answer TEXT,
    answer_digest TEXT,
    answered_by TEXT
);
"""


INSERT = "INSERT OR REPLACE INTO holds VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL)"


def store_path(data_dir: Path) -> Path:
    return data_dir / STORE_FILE


def connect(path: Path) -> sqlite3.Connection:
    """The store as the server and the CLI open it: WAL (both write while the other reads),
    a busy timeout, the file 0600 whatever the umask."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.touch(mode=0o600, exist_ok=True)
    path.chmod(0o600)
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(DDL)
    private(path)
    return conn


def private(path: Path) -> None:
    """The store's WAL and shared-memory files 0600 too (SQLite creates them by the umask)."""
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        if side.exists():
            side.chmod(0o600)


@dataclass(frozen=True)
class Pending:
    """A held call as the terminal shows it."""

    approval_id: str
    digest: str
    name: str
    line: str
    params: dict[str, str]
    caller: str
    reason: str
    requested_ms: int
    deadline_ms: int
    answer: str | None

    @classmethod
    def of(cls, row: sqlite3.Row) -> Pending:
        return cls(
            row["approval_id"],
            row["digest"],
            row["name"],
            row["line"],
            json.loads(row["params"]),
            row["caller"],
            row["reason"],
            row["requested_ms"],
            row["deadline_ms"],
            row["answer"],
        )


def pending(conn: sqlite3.Connection, *, now: int | None = None) -> list[Pending]:
    """The holds still waiting (unanswered, before their deadline), oldest first."""
    now = now_ms() if now is None else now
    rows = conn.execute(
        "SELECT * FROM holds WHERE answer IS NULL AND deadline_ms > ? ORDER BY requested_ms", (now,)
    ).fetchall()
    return [Pending.of(row) for row in rows]


class AmbiguousId(LookupError):
    """An id prefix that names more than one pending approval."""


def find(conn: sqlite3.Connection, approval_id: str, *, now: int | None = None) -> Pending | None:
    """The pending hold `approval_id` names (the whole id, or a unique prefix of 6 or more)."""
    waiting = pending(conn, now=now)
    exact = [p for p in waiting if p.approval_id == approval_id]
    if exact:
        return exact[0]
    if len(approval_id) < 6:
        return None
    matches = [p for p in waiting if p.approval_id.startswith(approval_id)]
    if len(matches) > 1:
        raise AmbiguousId(f"{approval_id!r} starts {len(matches)} pending approvals; give more of the id")
    return matches[0] if matches else None


def record_answer(conn: sqlite3.Connection, hold: Pending, *, approved: bool, by: str) -> bool:
    """Writes the answer for the server to take, bound to the digest shown; False when the hold
    was answered or ended meanwhile."""
    cursor = conn.execute(
        "UPDATE holds SET answer = ?, answer_digest = ?, answered_by = ? "
        "WHERE approval_id = ? AND answer IS NULL AND deadline_ms > ?",
        (APPROVE if approved else DENY, hold.digest, by, hold.approval_id, now_ms()),
    )
    return cursor.rowcount == 1


def still_held(conn: sqlite3.Connection, approval_id: str) -> bool:
    row = conn.execute("SELECT 1 FROM holds WHERE approval_id = ?", (approval_id,)).fetchone()
    return row is not None


class TerminalAnswers:
    """The server's side, a component (name "terminal") like the app's other front ends:
    mirrors the runtime's holds into the store and takes the answers the terminal writes there.
    Its file work runs on one thread of its own, in order."""

    name = "terminal"

    def __init__(self, data_dir: Path, *, holds: frozenset[str] = frozenset()) -> None:
        self.path = store_path(data_dir)
        # The actions it holds itself (the `owner_actions` on a server without the Iris gateway,
        # whose policy holds them otherwise): answered here, from the terminal.
        self.holds = holds
        self.approvals: Approvals | None = None  # the runtime's, from start
        self._pool: ThreadPoolExecutor | None = None
        self._conn: sqlite3.Connection | None = None
        self._poller: asyncio.Task[None] | None = None
        self._quiet = asyncio.Event()  # set while nothing is held
        self._quiet.set()
        self._version = -1
        self._closed = False

    def contribution(self) -> Contribution:
        if not self.holds:
            return Contribution()
        reason = "one of the owner_actions, which the owner answers (`phoneuse-runtime approvals`)"
        return Contribution(policies=[AskFirst(self.holds, reason=reason)])

    async def start(self, runtime: Runtime) -> None:
        self.approvals = runtime.approvals
        runtime.approvals.watch(self._changed)

    async def stop(self, *, grace_s: float) -> None:
        """Goes on taking answers while calls are held, within `grace_s` (the runtime lets held
        actions finish in its own grace), then closes the store."""
        if not self._quiet.is_set():
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._quiet.wait(), grace_s)
        await self.close()

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = connect(self.path)
            self._conn.execute("DELETE FROM holds")  # what a server that died left behind
            private(self.path)
        return self._conn

    def _run(self, work: Callable[[], T]) -> asyncio.Future[T]:
        loop = asyncio.get_running_loop()
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="approval-store")
        return loop.run_in_executor(self._pool, work)

    def _changed(self, hold: Hold, began: bool) -> None:
        if self._closed:
            return
        assert self.approvals is not None
        if self.approvals.pending():
            self._quiet.clear()
        else:
            self._quiet.set()
        if began:
            call = hold.call
            deadline = now_ms() + int((call.deadline - asyncio.get_running_loop().time()) * 1000)
            row = (
                hold.approval_id,
                hold.digest,
                call.name,
                call_line(call.name, call.wire_params, call.app_target),
                json.dumps(full_params(call.wire_params), ensure_ascii=False),
                str(call.caller),
                hold.reason,
                now_ms(),
                deadline,
            )
            future = self._run(lambda: self._db().execute(INSERT, row))
            if self._poller is None or self._poller.done():
                self._poller = asyncio.get_running_loop().create_task(self._poll())
        else:
            future = self._run(
                lambda: self._db().execute("DELETE FROM holds WHERE approval_id = ?", (hold.approval_id,))
            )
        future.add_done_callback(_logged)

    async def _poll(self) -> None:
        """Takes the terminal's answers while anything is held."""
        assert self.approvals is not None
        while self.approvals.pending():
            await asyncio.sleep(POLL_S)
            try:
                answers = await self._run(self._answers)
            except sqlite3.Error:
                log.exception("reading the terminal's approval answers failed")
                continue
            for approval_id, answer, digest, by in answers:
                try:
                    self.approvals.answer(
                        approval_id, approved=answer == APPROVE, by=f"terminal ({by})", digest=digest
                    )
                except NoSuchApproval:
                    pass  # answered in the app meanwhile, or expired
                except Conflict as exc:
                    log.warning("a terminal answer was not taken: %s", exc.message)

    def _answers(self) -> list[tuple[str, str, str, str]]:
        conn = self._db()
        version = conn.execute("PRAGMA data_version").fetchone()[0]
        if version == self._version:
            return []
        self._version = version
        rows = conn.execute(
            "SELECT approval_id, answer, answer_digest, answered_by FROM holds WHERE answer IS NOT NULL"
        ).fetchall()
        return [(r[0], r[1], r[2], r[3] or "") for r in rows]

    async def close(self) -> None:
        self._closed = True
        if self._poller is not None:
            self._poller.cancel()
        if self._pool is not None:
            conn = self._conn

            def close() -> None:
                if conn is not None:
                    conn.close()

            await self._run(close)
            self._pool.shutdown(wait=True)


def _logged(future: asyncio.Future[Any]) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.error("the approval store failed", exc_info=future.exception())
