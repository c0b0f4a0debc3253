"""The files the server keeps its state in: crash-safe writes, a writer that keeps a file up to
date without blocking the event loop, and the one error for a file that cannot be used.

Modes: everything in the data dir is the owner's alone, whatever the umask: files 0600
(PRIVATE_FILE), directories 0700 (PRIVATE_DIR). `private_dir`, `create_private`,
`append_private` and `private_sqlite` make them so; `atomic_write_text`'s temporary file is
0600 from the start (mkstemp), and keeps it when renamed. The engines a fleet runs (nginx,
nats-server) run with the umask PRIVATE_UMASK, so the files they make are 0600 too.

A write goes to a temporary file beside the target (a fresh name each time), is flushed to the
disk with `fsync`, renamed over the target, and the directory is synced too: a crash or a power
cut leaves the old file or the new one, never half of one. A crash mid-write can leave a
temporary file behind; the stores remove those when they load (`remove_stale_temps`).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import BinaryIO

log = logging.getLogger(__name__)

TMP_SUFFIX = ".tmp"
PRIVATE_FILE = 0o600
PRIVATE_DIR = 0o700
# The umask a child engine (nginx, nats-server) runs with: the files it makes itself, whatever
# modes it asks for (nginx's logs 0644, JetStream's 0640), are then the owner's alone.
PRIVATE_UMASK = 0o077
# The files SQLite keeps beside a database; it creates them with the database's own mode.
SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")


def private_dir(path: Path) -> Path:
    """`path` made (with its parents) if missing, and mode 0700 whatever the umask."""
    path.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)
    if stat_mode(path) != PRIVATE_DIR:
        os.chmod(path, PRIVATE_DIR)
    return path


def stat_mode(path: Path) -> int:
    import stat

    return stat.S_IMODE(path.stat().st_mode)


def create_private(path: Path) -> BinaryIO:
    """`path` opened for writing as `open(path, "wb")` would, created 0600 whatever the umask
    (an existing file is made 0600 too)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
    try:
        os.fchmod(fd, PRIVATE_FILE)  # an existing file keeps its mode through os.open
        return os.fdopen(fd, "wb")
    except BaseException:
        os.close(fd)
        raise


def append_private(path: Path) -> BinaryIO:
    """`path` opened for appending as `open(path, "ab")` would, created 0600 whatever the umask
    (an existing file is made 0600 too): a log, a lock file."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, PRIVATE_FILE)
    try:
        os.fchmod(fd, PRIVATE_FILE)
        return os.fdopen(fd, "ab")
    except BaseException:
        os.close(fd)
        raise


def private_sqlite(path: Path) -> None:
    """Before SQLite opens `path`: the database file exists, 0600, so that SQLite makes its
    -wal and -shm files 0600 too (it gives them the database's mode); the directory is 0700,
    and side files an earlier version left readable are made 0600."""
    private_dir(path.parent)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, PRIVATE_FILE)
    try:
        os.fchmod(fd, PRIVATE_FILE)
    finally:
        os.close(fd)
    for suffix in SQLITE_SIDE_FILES:
        side = path.with_name(path.name + suffix)
        with contextlib.suppress(FileNotFoundError):
            if stat_mode(side) != PRIVATE_FILE:
                os.chmod(side, PRIVATE_FILE)


class StateFileError(Exception):
    """A file the server keeps state in cannot be used as it is. The message is one line: the
    file, what is wrong with it, and what to do about it."""

    def __init__(self, path: Path, problem: str, remedy: str) -> None:
        self.path = path
        text = f"{path}: {problem}; {remedy}"
        super().__init__(" ".join(text.split()))  # one line, whatever the parts hold


def read_state_text(path: Path, *, remedy: str) -> str:
    """The file's text, which must be UTF-8 (StateFileError otherwise). OSErrors pass through."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise StateFileError(
            path, f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})", remedy
        ) from None


def validation_problem(exc: Exception) -> str:
    """The first error of a pydantic ValidationError, on one line: where in the file, and what."""
    from pydantic import ValidationError

    if not isinstance(exc, ValidationError):
        return str(exc)
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    return f"{where}: {first['msg']}" if where else first["msg"]


def _temp_pattern(path: Path) -> re.Pattern[str]:
    # tempfile.mkstemp's names: the prefix, eight characters from its alphabet, the suffix.
    return re.compile(re.escape(f".{path.name}.") + r"[a-z0-9_]{8}" + re.escape(TMP_SUFFIX))


def remove_stale_temps(path: Path) -> int:
    """Removes the temporary files a crash in the middle of writing `path` left beside it; returns
    how many. Call it before the first write: it assumes no other process is writing `path`."""
    pattern = _temp_pattern(path)
    removed = 0
    try:
        entries = list(os.scandir(path.parent))
    except FileNotFoundError:
        return 0
    for entry in entries:
        if pattern.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
            Path(entry.path).unlink(missing_ok=True)
            removed += 1
    if removed:
        log.info("removed %d unfinished temporary file(s) of %s left by an earlier crash", removed, path)
    return removed


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno != errno.EINVAL:  # a filesystem that cannot sync a directory
            raise
    finally:
        os.close(fd)


def atomic_write_text(path: Path, text: str | Iterable[str]) -> None:
    """Writes `text` (a string, or its pieces in order) as the new content of `path`, atomically
    and durably: when this returns, the new content is on the disk under that name."""
    import tempfile  # only needed when something is written; keeps idle memory down

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TMP_SUFFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            if isinstance(text, str):
                handle.write(text)
            else:
                for piece in text:
                    handle.write(piece)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


Snapshot = Callable[[], Iterable[str]]


class StateWriter:
    """Keeps `path` up to date with some in-memory state, writing it in a worker thread.

    `changed()` says the state changed. One task at a time then writes the newest state, so the
    file only moves forward, and the changes made during a write share the next one. `snapshot`
    runs on the event loop and must be quick: it captures the state as it is at that moment and
    returns the file's text in pieces, which the worker thread produces and writes (so they must
    not read the live state). `written()` waits until every change so far is on disk, or raises
    the error of the write that should have put it there; `close()` waits for the last write.
    A failed write is logged; the next change, `written()` or `close()` tries again.
    """

    def __init__(self, path: Path, snapshot: Snapshot) -> None:
        self.path = path
        self._snapshot = snapshot
        self._changes = 0  # generation of the newest change
        self._attempted = 0  # generation of the newest snapshot a write was attempted with
        self._saved = 0  # generation on disk
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._task: asyncio.Task[None] | None = None

    @property
    def pending(self) -> bool:
        """Whether changes are not on disk yet."""
        return self._saved < self._changes

    def changed(self) -> None:
        self._changes += 1
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def written(self) -> None:
        if not self.pending:
            return
        if self._task is None:  # the last write failed and nothing changed since: try again
            self.changed()
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append((self._changes, waiter))
        await waiter

    async def close(self) -> None:
        """Waits until every change so far is on disk; a failure is logged, not raised."""
        with contextlib.suppress(Exception):  # _run has logged it
            await self.written()

    async def _run(self) -> None:
        try:
            while self._attempted < self._changes:
                target = self._attempted = self._changes
                error: BaseException | None = None
                try:
                    await asyncio.to_thread(atomic_write_text, self.path, self._snapshot())
                except Exception as exc:
                    error = exc
                    if isinstance(exc, OSError):
                        log.error("could not write %s: %s", self.path, exc)
                    else:
                        log.error("could not write %s", self.path, exc_info=exc)
                else:
                    self._saved = target
                self._settle(target, error)
        finally:
            self._task = None

    def _settle(self, target: int, error: BaseException | None) -> None:
        waiting = []
        for generation, waiter in self._waiters:
            if generation > target:
                waiting.append((generation, waiter))
            elif not waiter.done():
                if error is None:
                    waiter.set_result(None)
                else:
                    waiter.set_exception(error)
        self._waiters = waiting
