"""The seam between the fake adb daemon (the wire: transport, shell, sync, tcp streams) and the
fake phone behind it (userland commands, files, the uiautomator2 server, the phone's state).

`adbd.py` speaks the adb transport and calls a `PhoneSide`; `phone.py` implements it. Neither
imports the other's internals, so each is tested on its own and together through the real adb
server.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


class ByteStream(Protocol):
    """One direction-pair of an adb stream as the phone side sees it (a socket, a pipe)."""

    async def read(self) -> bytes:
        """The next chunk the host sent; b"" once the host closed the stream."""

    async def write(self, data: bytes) -> None:
        """Sends to the host; waits while the host has not acknowledged (flow control)."""

    @property
    def closed(self) -> bool: ...


class ProcessIO(Protocol):
    """A shell process's standard streams. In shell v1, stderr is merged into stdout and the
    exit code is lost (as on a real phone); in shell_v2 they travel apart (ids 1, 2, 3)."""

    async def read_stdin(self) -> bytes:
        """b"" at end of input, or once the host closed the stream."""

    async def write_stdout(self, data: bytes) -> None: ...

    async def write_stderr(self, data: bytes) -> None: ...

    @property
    def closed(self) -> bool:
        """The host went away: a long-running process should end."""


@dataclass
class FileStat:
    mode: int  # st_mode, e.g. 0o100644 for a regular file, 0o040755 for a directory
    size: int
    mtime: int  # seconds


class PhoneSide(Protocol):
    """What the fake daemon needs from the phone behind it."""

    def banner(self) -> str:
        """The CNXN banner, e.g.
        "device::ro.product.name=..;ro.product.model=..;ro.product.device=..;features=shell_v2,cmd"."""

    async def run_shell(self, command: str, io: ProcessIO) -> int:
        """Runs `command` as `sh -c` would (command is the exact string after "shell:"; empty means
        an interactive shell) and returns its exit code. A long-running command (the uiautomator2
        server's app_process) returns only when it ends or `io.closed`."""

    def stat(self, path: str) -> FileStat | None: ...

    def read_file(self, path: str) -> bytes:
        """FileNotFoundError / PermissionError / IsADirectoryError as a phone would give them."""

    def write_file(self, path: str, data: bytes, mode: int, mtime: int) -> None: ...

    def list_dir(self, path: str) -> list[tuple[str, FileStat]]: ...

    async def open_tcp(self, port: int, stream: ByteStream) -> None:
        """Serves one `tcp:PORT` stream until either side closes it. Raises ConnectionRefusedError
        when nothing listens on PORT (the daemon then closes the stream at once, as adbd does)."""
