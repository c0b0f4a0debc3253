"""The memory as a component of the app: it owns the SQLite file and its threads, serves
REMEMBER, FORGET, MEMORY and CONTACTS (their handlers reach it with `ctx.component(Memory)`),
and feeds itself from the bus and the phone's providers (ingest.py).

Threads: one writer (every change, each a transaction that is durable when it returns) and a
small pool of readers, each with its own connection; WAL lets them read while it writes. The
event loop never waits on the disk, except to read the rows of a page past the first ones that
a query prepared (`Ranked`), a handful of primary-key lookups.

Fair reads. Reads wait in one queue (FIFO) for a reader. A read that has run for SLICE_STEPS
SQLite instructions while others wait lends its thread: SQLite's progress handler, called every
PROGRESS_STEPS instructions, runs the oldest waiting read right there, on another connection,
and the long read goes on when that one is done. So a slow query (a long `q` over a big graph)
delays the others by one slice at most, never by its own length: a plain `q=alice` is answered
while four slow ones are still running.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import logging
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, overload

from phoneuse_runtime.device.base import deadline
from phoneuse_runtime.kernel.errors import Internal
from phoneuse_runtime.kernel.registry import Contribution
from phoneuse_runtime.memory.embeddings import (
    BATCH,
    DIMENSIONS_KEY,
    LOOPBACK_WARNING,
    QUERY_TIMEOUT_S,
    EmbeddingsError,
    digest,
    embed,
    nearest,
    pack,
    squattable,
)
from phoneuse_runtime.memory.migrate import migrate_json
from phoneuse_runtime.memory.resolve import DEFAULT_REGION, email_key, fold, phone_key
from phoneuse_runtime.memory.schema import DB_FILE, check, connect
from phoneuse_runtime.memory.search import TOP, Filters, Hits, fts_query, fuse, search
from phoneuse_runtime.memory.store import Graph, Node
from phoneuse_runtime.util.tasks import cancel_and_wait

if TYPE_CHECKING:
    from phoneuse_runtime.config.sections import MemorySettings
    from phoneuse_runtime.kernel.runtime import Runtime
    from phoneuse_runtime.memory.ingest import Ingestor

log = logging.getLogger(__name__)

T = TypeVar("T")
PREFETCH = 20  # nodes read in the reader's thread with a query's ids: a default page
READERS = 2
CATCH_UP_WAIT_S = 5.0  # a query waits this long at most for the memory to catch up with the phone
PROGRESS_STEPS = 1000  # SQLite instructions between two calls of a reader's progress handler
SLICE_STEPS = 50_000  # instructions a read runs before it lets a waiting read go first (~1 ms)
ProgressHook = Callable[[Sequence[str]], None]


class _Read:
    """A read waiting for a reader: the work, and where its result goes. `abandoned` once its
    caller gave up (its deadline, a client gone): not started then, and interrupted if running."""

    __slots__ = ("abandoned", "future", "label", "loop", "steps", "work")

    def __init__(self, work: Callable[[Graph], Any], future: asyncio.Future[Any], label: str) -> None:
        self.work, self.future, self.label = work, future, label
        self.loop = future.get_loop()
        self.steps = 0  # SQLite instructions run since it last let the waiting reads go first
        self.abandoned = False

    def settle(self, result: Any = None, error: BaseException | None = None) -> None:
        def set_it() -> None:
            if self.future.done():  # the caller gave up (cancelled)
                return
            if error is not None:
                self.future.set_exception(error)
            else:
                self.future.set_result(result)

        self.loop.call_soon_threadsafe(set_it)


def open_graph(path: Path, *, legacy: Path | None = None) -> sqlite3.Connection:
    """The writer's connection: the file opened (or made), checked, and the JSON store migrated."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    conn = connect(path)
    try:
        check(conn, path)
        conn.create_function("fold", 1, fold, deterministic=True)
        if legacy is not None:
            migrate_json(Graph(conn), legacy)
    except BaseException:
        conn.close()
        raise
    return conn


class Ranked(Sequence[T]):
    """A query's matches in order, read lazily: the first PREFETCH were read with the ids, the
    rest are read when a page reaches them. `len` is the exact count of matches."""

    def __init__(
        self,
        hits: Hits,
        nodes: dict[int, Node],
        load: Callable[[list[int]], dict[int, Node]],
        more: Callable[[Hits, int], None],
        convert: Callable[[Node, float], T],
    ) -> None:
        self._hits, self._nodes, self._load, self._more, self._convert = hits, nodes, load, more, convert
        self._ids, self._scores = hits.ids, hits.scores

    def __len__(self) -> int:
        return self._hits.total

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> list[T]: ...
    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, int):
            return self[index : index + 1 if index != -1 else None][0]
        positions = range(self._hits.total)[index]
        if positions and max(positions) >= len(self._ids):
            self._more(self._hits, max(positions) + 1)
        positions = range(len(self._ids))[index]
        wanted = [self._ids[i] for i in positions if self._ids[i] not in self._nodes]
        if wanted:
            self._nodes.update(self._load(wanted))
        # A node forgotten between the ids and the read is left out of the page.
        return [
            self._convert(self._nodes[self._ids[i]], self._scores[i])
            for i in positions
            if self._ids[i] in self._nodes
        ]

    def __iter__(self) -> Iterator[T]:
        return iter(self[:])


class Memory:
    """The memory graph component (name "memory"). The app adds one unless it is given one."""

    name = "memory"

    def __init__(
        self,
        data_dir: Path,
        *,
        default_region: str = DEFAULT_REGION,
        retention_days: int = 365,
        ingest: bool = True,
        catch_up_s: int = 300,
        embeddings_url: str = "",
        embeddings_model: str = "",
    ) -> None:
        self.path = data_dir / DB_FILE
        self.legacy = data_dir / "memory.json"
        self.default_region = default_region
        self.region = default_region
        self.retention_days = retention_days
        self.ingest_enabled = ingest
        self.catch_up_s = catch_up_s
        self._writer: ThreadPoolExecutor | None = None
        self._readers: ThreadPoolExecutor | None = None
        self._write_conn: sqlite3.Connection | None = None
        self._loop_conn: sqlite3.Connection | None = None
        self._local = threading.local()
        self._reader_conns: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._waiting: collections.deque[_Read] = collections.deque()
        self.slice_steps = SLICE_STEPS
        # Notified whenever a read starts waiting; and called when a read starts and from a
        # reader's progress handler (before it lets the waiting reads go) with the labels of
        # the reads that thread is running, outermost first: for tests, to hold a read while
        # they watch the others.
        self.arrived = threading.Condition()
        self.progress_hook: ProgressHook | None = None
        self.ingestor: Ingestor | None = None
        self.embeddings_url = embeddings_url
        self.embeddings_model = embeddings_model
        self._vectors_wanted = asyncio.Event()
        self._vectors_idle = asyncio.Event()
        self._vectorizer: asyncio.Task[None] | None = None
        self.vector_failures = 0
        self.dimensions: int | None = None  # fixed by the first vectors stored (embeddings.py)

    @classmethod
    def from_settings(cls, memory: MemorySettings, *, data_dir: Path) -> Memory:
        """The memory of the `memory` section (checked by load_settings), in `data_dir`."""
        return cls(
            data_dir,
            default_region=memory.default_region,
            retention_days=memory.retention_days,
            ingest=memory.ingest,
            catch_up_s=memory.catch_up_s,
            embeddings_url=memory.embeddings_url,
            embeddings_model=memory.embeddings_model,
        )

    # --- lifecycle ---------------------------------------------------------------
    def contribution(self) -> Contribution:
        return Contribution()  # REMEMBER, FORGET, MEMORY and CONTACTS are built-in handlers

    async def start(self, runtime: Runtime) -> None:
        self._writer = ThreadPoolExecutor(1, thread_name_prefix="memory-writer")
        self._readers = ThreadPoolExecutor(READERS, thread_name_prefix="memory-reader")
        loop = asyncio.get_running_loop()
        try:
            self._write_conn = await loop.run_in_executor(
                self._writer, lambda: open_graph(self.path, legacy=self.legacy)
            )
        except BaseException:
            self._writer.shutdown(wait=True)
            self._readers.shutdown(wait=True)
            self._writer = self._readers = None
            raise
        self._loop_conn = self._reader_conn()
        if self.embeddings_url:
            if squattable(self.embeddings_url):
                log.warning(LOOPBACK_WARNING, self.embeddings_url)
            fixed = await self.read(lambda g: g.meta(DIMENSIONS_KEY))
            self.dimensions = int(fixed) if fixed.isdigit() else None
            self._vectors_wanted.set()
            self._vectorizer = asyncio.create_task(self._vectorize(), name="memory-vectors")
        if self.ingest_enabled:
            from phoneuse_runtime.memory.ingest import Ingestor

            self.ingestor = Ingestor(self, runtime)
            await self.ingestor.start()

    async def stop(self, *, grace_s: float) -> None:
        if self.ingestor is not None:
            await self.ingestor.stop(grace_s=grace_s)
        await cancel_and_wait(self._vectorizer)
        writer, readers = self._writer, self._readers
        self._writer = self._readers = None
        # Every change already handed to the writer is committed before the file is closed.
        for pool in (writer, readers):
            if pool is not None:
                await asyncio.to_thread(pool.shutdown, wait=True)
        for conn in (self._write_conn, self._loop_conn, *self._reader_conns):
            if conn is not None:
                conn.close()
        self._write_conn = self._loop_conn = None
        self._reader_conns.clear()

    # --- running work --------------------------------------------------------------
    def _reader_conn(self) -> sqlite3.Connection:
        conn = connect(self.path)
        conn.execute("PRAGMA query_only = 1")
        conn.execute("PRAGMA cache_size = -512")  # KiB: a phone runs this beside everything else
        conn.create_function("fold", 1, fold, deterministic=True)
        with self._lock:
            self._reader_conns.append(conn)
        return conn

    def _thread_conn(self) -> sqlite3.Connection:
        """This thread's connection for the read it starts now: one per read it runs at once
        (a read that lends its thread to a waiting one keeps its own connection meanwhile)."""
        local = self._local
        if not hasattr(local, "conns"):
            local.conns, local.running = [], []
        depth = len(local.running)
        while len(local.conns) <= depth:
            fresh = self._reader_conn()
            fresh.set_progress_handler(self._progress, PROGRESS_STEPS)
            local.conns.append(fresh)
        conn: sqlite3.Connection = local.conns[depth]
        return conn

    def _run_read(self, job: _Read) -> None:
        """Runs one read in this thread, and hands its result to the caller's loop; one whose
        caller gave up before it started is dropped."""
        if job.abandoned:
            return
        local = self._local
        conn = self._thread_conn()
        local.running.append(job)
        hook = self.progress_hook
        try:
            if hook is not None:
                hook([running.label for running in local.running])
            result = job.work(Graph(conn))
        except BaseException as exc:
            job.settle(error=exc)
        else:
            job.settle(result)
        finally:
            local.running.pop()

    def _next_read(self) -> None:
        """A reader thread's task: the oldest waiting read, unless another read took it."""
        try:
            job = self._waiting.popleft()
        except IndexError:
            return
        self._run_read(job)

    def _progress(self) -> int:
        """SQLite's progress handler on every reader connection: interrupts the read running
        now if its caller gave up (so no reader is kept by work nobody waits for), else lets the
        waiting reads go first once it has had its slice, and goes on (0)."""
        running: list[_Read] = self._local.running
        current = running[-1]
        if current.abandoned:
            return 1  # SQLite stops the statement: "interrupted", to a caller who is gone
        current.steps += PROGRESS_STEPS
        hook = self.progress_hook
        if hook is not None:
            hook([job.label for job in running])
        if current.steps >= self.slice_steps and self._waiting:
            current.steps = 0
            while True:
                try:
                    job = self._waiting.popleft()
                except IndexError:
                    break
                self._run_read(job)
        return 0

    def waiting_labels(self) -> list[str]:
        """The labels of the reads waiting for a reader now, oldest first."""
        return [job.label for job in list(self._waiting)]

    async def write(self, work: Callable[[Graph], T]) -> T:
        """Runs `work` in one transaction in the writer's thread; durable when this returns."""
        writer = self._writer
        if writer is None:
            raise Internal("the memory is closed (the server is stopping)")

        def run() -> T:
            assert self._write_conn is not None
            graph = Graph(self._write_conn)
            graph.begin()
            try:
                result = work(graph)
                graph.commit()
            except BaseException:
                graph.rollback()
                raise
            return result

        try:
            result = await asyncio.get_running_loop().run_in_executor(writer, run)
        except sqlite3.Error as exc:  # the runtime's own disk, not the phone: not DEVICE_UNAVAILABLE
            raise Internal(f"the memory could not save the change to {self.path}: {exc}") from exc
        if self._vectorizer is not None:
            self._vectors_idle.clear()
            self._vectors_wanted.set()
        return result

    async def read(self, work: Callable[[Graph], T], *, label: str = "") -> T:
        """Runs `work` on a reader's connection in a reader's thread, in its turn (the module
        docstring: a long read lets the others go first). `label` names it for progress_hook."""
        readers = self._readers
        if readers is None:
            raise Internal("the memory is closed (the server is stopping)")
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        job = _Read(work, future, label)
        with self.arrived:
            self._waiting.append(job)
            self.arrived.notify_all()
        readers.submit(self._next_read)
        try:
            return await future
        except asyncio.CancelledError:
            job.abandoned = True  # the reader drops it, or SQLite interrupts it (_progress)
            raise
        except sqlite3.Error as exc:
            raise Internal(f"the memory could not read {self.path}: {exc}") from exc

    def _load_on_loop(self, ids: list[int]) -> dict[int, Node]:
        if self._loop_conn is None:
            return {}
        return Graph(self._loop_conn).nodes(ids)

    def _more_on_loop(self, hits: Hits, upto: int) -> None:
        """Reads the ids of the matches past those read so far, up to `upto`."""
        if hits.rest is None or self._loop_conn is None:
            return
        sql, args = hits.rest
        while len(hits.ids) < upto:
            wanted = upto - len(hits.ids)
            found = [r[0] for r in self._loop_conn.execute(sql, (*args, wanted, hits.offset))]
            hits.offset += len(found)
            new = [n for n in found if n not in hits.skip]  # fused in from the vectors already
            hits.ids.extend(new)
            hits.scores.extend([0.0] * len(new))
            if len(found) < wanted:  # the end: fewer than counted if some were forgotten meanwhile
                hits.total = len(hits.ids)
                return

    # --- what the handlers call ----------------------------------------------------------
    async def search(self, filters: Filters, convert: Callable[[Node, float], T]) -> Ranked[T]:
        query_vector = await self._query_vector(filters.q) if filters.q else None

        def run(graph: Graph) -> tuple[Hits, dict[int, Node]]:
            hits = search(graph.conn, filters)
            if query_vector is not None:
                close = [n for n, _ in nearest(graph.conn, query_vector, limit=TOP)]
                hits = fuse(graph.conn, hits, close, filters, fts_query(filters.q or ""))
            return hits, graph.nodes(hits.ids[:PREFETCH])

        hits, nodes = await self.read(run, label=filters.q or "")
        return Ranked(hits, nodes, self._load_on_loop, self._more_on_loop, convert)

    def person_keys(self, phones: Sequence[str], emails: Sequence[str]) -> list[str]:
        keys = [k for p in phones if (k := phone_key(p, self.region))]
        keys += [k for e in emails if (k := email_key(e))]
        return keys

    # --- semantic search (embeddings.py) ------------------------------------------------
    async def _query_vector(self, q: str) -> list[float] | None:
        """`q` embedded, or None (lexical search only) without an endpoint or when it fails."""
        if not self.embeddings_url:
            return None
        try:
            [vector] = await asyncio.to_thread(
                embed, self.embeddings_url, self.embeddings_model, [q], timeout_s=QUERY_TIMEOUT_S
            )
        except EmbeddingsError as exc:
            log.info("searching lexically only: the embeddings endpoint failed (%s)", exc)
            return None
        if self.dimensions is not None and len(vector) != self.dimensions:
            log.warning(self._other_dimension(len(vector)))
            return None
        return vector

    def _other_dimension(self, got: int) -> str:
        return (
            f"the embeddings endpoint {self.embeddings_url} answered vectors of {got} numbers, and "
            f"this memory's have {self.dimensions}: refused (is another server on its port?). If the "
            'model changed on purpose, stop the server and run: sqlite3 memory.db "DELETE FROM '
            f"vectors; DELETE FROM meta WHERE key = '{DIMENSIONS_KEY}'\" (vectors are made again)"
        )

    async def _vectorize(self) -> None:
        """Embeds the nodes that have no vector, BATCH at a time, after every change. A failing
        endpoint is logged and tried again at the next change."""
        with contextlib.suppress(Internal):  # the memory closed under it: the server is stopping
            await self._vectorize_forever()

    async def _vectorize_forever(self) -> None:
        while True:
            await self._vectors_wanted.wait()
            self._vectors_wanted.clear()
            while True:
                batch = await self.read(
                    lambda g: g.conn.execute(
                        "SELECT n.id, n.name, n.text FROM nodes AS n LEFT JOIN vectors AS v ON v.node = n.id "
                        "WHERE v.node IS NULL ORDER BY n.id DESC LIMIT ?",
                        (BATCH,),
                    ).fetchall()
                )
                if not batch:
                    break
                texts = [f"{name}\n{text}" for _, name, text in batch]
                try:
                    vectors = await asyncio.to_thread(
                        embed, self.embeddings_url, self.embeddings_model, texts
                    )
                except EmbeddingsError as exc:
                    self.vector_failures += 1
                    log.warning("the memory could not compute embeddings now: %s", exc)
                    break
                sizes = {len(v) for v in vectors}
                size = sizes.pop() if len(sizes) == 1 else -1
                if size <= 0 or (self.dimensions is not None and size != self.dimensions):
                    self.vector_failures += 1
                    log.warning(
                        self._other_dimension(size)
                        if size > 0
                        else "the embeddings endpoint "
                        "answered vectors of several sizes (or empty ones): refused"
                    )
                    break
                if self.dimensions is None:
                    self.dimensions = size
                    await self.write(functools.partial(_fix_dimensions, size=size))
                rows = [
                    (n, digest(name, text), pack(v))
                    for (n, name, text), v in zip(batch, vectors, strict=True)
                ]
                await self.write(functools.partial(_store_vectors, rows=rows))
                self._vectors_wanted.clear()  # our own write asked again; the loop goes on anyway
            if not self._vectors_wanted.is_set():
                self._vectors_idle.set()

    async def vectorized(self) -> None:
        """Returns once every node has its vector, or the endpoint failed (for tests)."""
        if self._vectorizer is not None:
            await self._vectors_idle.wait()

    async def recent_apps(self, limit: int = 10) -> list[tuple[str, int, int]]:
        """(package, last_used_ms, foreground_ms_today), newest first, from APP_STATE_CHANGED;
        the app in front now counts its time up to now."""
        import datetime as dt

        from phoneuse_runtime.kernel.events import now_ms

        def run(graph: Graph) -> list[tuple[str, int, int, str]]:
            return graph.conn.execute(
                "SELECT n.name, json_extract(n.attrs, '$.last_used_ms'), "
                "coalesce(json_extract(n.attrs, '$.foreground_ms_today'), 0), "
                "coalesce(json_extract(n.attrs, '$.usage_day'), '') FROM nodes AS n "
                "WHERE n.kind = 'app' AND json_extract(n.attrs, '$.last_used_ms') IS NOT NULL "
                "ORDER BY 2 DESC LIMIT ?",
                (limit,),
            ).fetchall()

        rows = await self.read(run)
        now = now_ms()
        today = dt.datetime.fromtimestamp(now / 1000).date().isoformat()
        front = self.ingestor.front() if self.ingestor is not None else None
        out = []
        for package, last_used, foreground, day in rows:
            total = int(foreground) if day == today else 0
            if front is not None and front[0] == package:
                total += max(0, now - max(front[1], _midnight(now)))
            out.append((str(package), int(last_used), total))
        return out

    async def catch_up(self) -> None:
        """Before a query is answered: reads what the phone's SMS and call log gained since the
        memory last looked (the rows above its marks), waiting at most CATCH_UP_WAIT_S and half
        the time the call has left (a phone slow to answer, or the memory busy with its own
        work, delays the answer that long; then the query reads what is stored)."""
        if self.ingestor is None:
            return
        self.ingestor.request("sms", "calls")
        wait_s = CATCH_UP_WAIT_S
        if (until := deadline()) is not None:
            wait_s = min(wait_s, max(0.0, until - asyncio.get_running_loop().time()) / 2)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.ingestor.settled(), timeout=wait_s)

    async def settled(self) -> None:
        """Returns once every event and sync handed to ingestion so far is stored."""
        if self.ingestor is not None:
            await self.ingestor.settled()

    def graph_stats(self) -> dict[str, Any]:
        from phoneuse_runtime.memory.transfer import stats

        assert self._loop_conn is not None
        return stats(self._loop_conn)


def _midnight(ms: int) -> int:
    """Epoch ms of the local midnight that began the day `ms` falls in."""
    import datetime as dt

    moment = dt.datetime.fromtimestamp(ms / 1000)
    return int(moment.replace(hour=0, minute=0, second=0, microsecond=0).timestamp() * 1000)


def _fix_dimensions(graph: Graph, *, size: int) -> None:
    graph.set_meta(DIMENSIONS_KEY, str(size))


def _store_vectors(graph: Graph, *, rows: list[tuple[int, str, bytes]]) -> None:
    """Stores each vector unless its node is gone or changed since it was read."""
    for n, made_from, blob in rows:
        row = graph.conn.execute("SELECT name, text FROM nodes WHERE id = ?", (n,)).fetchone()
        if row is not None and digest(*row) == made_from:
            graph.conn.execute(
                "INSERT OR REPLACE INTO vectors (node, digest, vec) VALUES (?, ?, ?)", (n, made_from, blob)
            )
