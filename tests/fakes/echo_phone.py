"""A minimal `PhoneSide` for testing the fake adbd on its own, independent of the real fake phone.

Shell commands run in the host's /bin/sh (so `$?`, `;`, stdin and exit codes behave like a shell
without re-implementing one); files live in a dict; tcp ports in `echo_ports` echo back what they
receive and every other port refuses.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import posixpath
import signal
import stat
import time
from collections.abc import Awaitable, Callable

from tests.fakes.contract import ByteStream, FileStat, ProcessIO

ECHO_PORT = 7


class EchoPhone:
    """Runs commands in /bin/sh, keeps files in memory, echoes on `echo_ports`."""

    def __init__(self, *, model: str = "EchoPhone", echo_ports: tuple[int, ...] = (ECHO_PORT,)) -> None:
        self.model = model
        self.echo_ports = echo_ports
        self.files: dict[str, tuple[bytes, int, int]] = {}  # path -> (data, st_mode, mtime)
        self.dirs: set[str] = {"/", "/data", "/data/local", "/data/local/tmp", "/sdcard"}
        self.commands: list[str] = []
        self.killed: list[str] = []  # commands ended because the host closed their stream

    def banner(self) -> str:
        return (
            f"device::ro.product.name={self.model.lower()};ro.product.model={self.model};"
            f"ro.product.device={self.model.lower()};features=shell_v2,cmd"
        )

    async def run_shell(self, command: str, io: ProcessIO) -> int:
        self.commands.append(command)
        try:
            return await self._run(command, io)
        except asyncio.CancelledError:
            self.killed.append(command)
            raise

    async def _run(self, command: str, io: ProcessIO) -> int:
        argv = ["/bin/sh", "-c", command] if command else ["/bin/sh"]
        spawn = asyncio.ensure_future(
            asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                # One pipe for both when the daemon merges them anyway, so their order survives.
                stderr=asyncio.subprocess.STDOUT
                if getattr(io, "stderr_merged", False)
                else asyncio.subprocess.PIPE,
                # Its own process group, so ending it ends what it started too (as the hangup does
                # on a phone); else a grandchild holds the pipes and asyncio's wait() never returns.
                start_new_session=True,
            )
        )
        try:
            # Cancelled mid-creation, asyncio (3.11) can wait forever for pipes it never connected;
            # so the creation always completes, and a cancelled shell is then ended.
            proc = await asyncio.shield(spawn)
        except asyncio.CancelledError:
            await _end(await spawn)
            raise
        assert proc.stdin is not None and proc.stdout is not None
        feeding = asyncio.ensure_future(_feed(io, proc.stdin))
        drains = [_drain(proc.stdout, io.write_stdout)]
        if proc.stderr is not None:
            drains.append(_drain(proc.stderr, io.write_stderr))
        try:
            await asyncio.gather(*drains)
            return await proc.wait()
        finally:
            feeding.cancel()
            await _end(proc)

    def stat(self, path: str) -> FileStat | None:
        path = _norm(path)
        if path in self.dirs:
            return FileStat(mode=stat.S_IFDIR | 0o771, size=4096, mtime=0)
        if path in self.files:
            data, mode, mtime = self.files[path]
            return FileStat(mode=mode, size=len(data), mtime=mtime)
        return None

    def read_file(self, path: str) -> bytes:
        path = _norm(path)
        if path in self.dirs:
            raise IsADirectoryError(errno.EISDIR, "Is a directory", path)
        if path not in self.files:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", path)
        return self.files[path][0]

    def write_file(self, path: str, data: bytes, mode: int, mtime: int) -> None:
        path = _norm(path)
        if path in self.dirs:
            raise IsADirectoryError(errno.EISDIR, "Is a directory", path)
        # adbd creates missing parents (the fixed_push_mkdir feature).
        parent = posixpath.dirname(path)
        while parent not in self.dirs:
            self.dirs.add(parent)
            parent = posixpath.dirname(parent)
        self.files[path] = (
            data,
            mode if stat.S_IFMT(mode) else stat.S_IFREG | mode,
            mtime or int(time.time()),
        )

    def list_dir(self, path: str) -> list[tuple[str, FileStat]]:
        path = _norm(path)
        if path not in self.dirs:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", path)
        children = {p for p in (*self.dirs, *self.files) if p != path and posixpath.dirname(p) == path}
        out = []
        for child in sorted(children):
            info = self.stat(child)
            assert info is not None
            out.append((posixpath.basename(child), info))
        return out

    async def open_tcp(self, port: int, stream: ByteStream) -> None:
        if port not in self.echo_ports:
            raise ConnectionRefusedError(f"nothing listens on tcp:{port}")
        while data := await stream.read():
            await stream.write(data)


def _norm(path: str) -> str:
    return posixpath.normpath("/" + path.lstrip("/")) if path else "/"


async def _end(proc: asyncio.subprocess.Process) -> None:
    if proc.stdin is not None:
        proc.stdin.close()  # else its transport outlives the loop
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)  # the group outlives its leader when a child remains
    # wait() also waits for the pipes to close, and a pipe paused because nobody read it never
    # sees its end: so read what is left.
    leftovers = [pipe.read() for pipe in (proc.stdout, proc.stderr) if pipe is not None]
    await asyncio.gather(proc.wait(), *leftovers)


async def _feed(io: ProcessIO, stdin: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError):
        while data := await io.read_stdin():
            stdin.write(data)
            await stdin.drain()
        stdin.close()


async def _drain(source: asyncio.StreamReader, write: Callable[[bytes], Awaitable[None]]) -> None:
    while chunk := await source.read(64 * 1024):
        await write(chunk)
