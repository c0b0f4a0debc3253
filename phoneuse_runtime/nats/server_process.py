"""A nats-server child process with JetStream on, for the fleet and the tests.

Debian's nats-server (2.9.10) is started as `nats-server -js -sd STORE_DIR -a 127.0.0.1 -p -1
--ports_file_dir DIR`: JetStream keeps its streams and KV buckets in files under STORE_DIR, the
server listens on loopback on a port the kernel picks, and writes the port it got to
`DIR/nats-server_<pid>.ports` (JSON: `{"nats": ["nats://127.0.0.1:PORT"]}`). The process is
ready once that file names a port and a TCP client there reads the server's `INFO` line
(nats-server opens its client port only after JetStream is up). Stopping it is SIGTERM, then
a bounded wait, then SIGKILL.

    async with nats_server(store_dir) as srv:
        ...  # srv.url == "nats://127.0.0.1:PORT"

`NatsServer.start_sync` / `stop_sync` (and `nats_server_sync`) do the same without a loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING

from phoneuse_runtime.util.children import die_with_parent
from phoneuse_runtime.util.files import PRIVATE_UMASK, append_private, private_dir

if TYPE_CHECKING:
    from phoneuse_runtime.nats.users import NatsUser

log = logging.getLogger(__name__)

DEFAULT_EXECUTABLE = "nats-server"
INSTALL_HINT = "apt-get install nats-server (Debian's 2.9.10 is enough)"
# How nats-server ends when it stops as asked: 1 after its shutdown on SIGTERM (2.9, 2.10), 0 or
# the signal itself on others.
CLEAN_STOP = frozenset({0, 1, -signal.SIGTERM})
START_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 10.0


class NatsServerError(Exception):
    """nats-server could not be found, started, or did not become ready in time."""


class NatsServer:
    """One nats-server process: `start` (or `start_sync`), `url`, `stop` (or `stop_sync`).

    `port` -1 (the default) lets the kernel pick; a restart with the same `store_dir` and the
    previous `port` gives clients the same url and JetStream the same streams."""

    def __init__(
        self,
        store_dir: Path,
        *,
        host: str = "127.0.0.1",
        port: int = -1,
        executable: str = DEFAULT_EXECUTABLE,
        log_file: Path | None = None,
        start_timeout_s: float = START_TIMEOUT_S,
        token_file: Path | None = None,
        users: Sequence[NatsUser] | None = None,
        dies_with_parent: bool = False,
    ) -> None:
        self.store_dir = Path(store_dir)
        self.host = host
        self.requested_port = port
        self.executable = executable
        self.log_file = log_file if log_file is not None else self.store_dir / "nats-server.log"
        self.start_timeout_s = start_timeout_s
        # Clients must then present the token in this file (nats_token_file): nats-server reads
        # it from a private config file, never from its command line, where `ps` shows it.
        self.token_file = token_file
        # Or clients are these users, each with its password and permissions (nats/users.py);
        # `set_users` changes them while it runs (nats-server re-reads its config on SIGHUP).
        if token_file is not None and users is not None:
            raise NatsServerError("a token or users, not both")
        self.users: tuple[NatsUser, ...] | None = tuple(users) if users is not None else None
        # The fleet's own: the kernel stops it when the fleet dies, however it dies (children.py).
        self.dies_with_parent = dies_with_parent
        self.port = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._ports_dir: tempfile.TemporaryDirectory[str] | None = None
        self._log: IO[bytes] | None = None

    @property
    def url(self) -> str:
        if not self.port:
            raise NatsServerError("nats-server is not running")
        return f"nats://{self.host}:{self.port}"

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    # --- sync --------------------------------------------------------------------------
    def start_sync(self) -> str:
        """Starts the process and waits until it takes clients; returns its url."""
        if self.running:
            return self.url
        self._spawn()
        return self._ready()

    def _spawn(self) -> None:
        exe = shutil.which(self.executable)
        if exe is None:
            raise NatsServerError(f"{self.executable} not found on PATH: {INSTALL_HINT}")
        private_dir(self.store_dir)
        self._ports_dir = tempfile.TemporaryDirectory(prefix="phoneuse-nats-ports-")
        # With users, JetStream is in the config file (a reload must not stop it), not here.
        jetstream = [] if self.users is not None else ["-js", "-sd", str(self.store_dir)]
        args = [
            exe,
            *jetstream,
            "-a",
            self.host,
            "-p",
            str(self.requested_port),
            "--ports_file_dir",
            self._ports_dir.name,
        ]
        if self.token_file is not None or self.users is not None:
            args += ["-c", str(self._write_config())]
        if self.log_file.parent != self.store_dir:
            self.log_file.parent.mkdir(parents=True, exist_ok=True)
        self._log = append_private(self.log_file)  # kept open for the child's life
        self._proc = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            umask=PRIVATE_UMASK,  # JetStream's files (it asks 0640/0750): 0600/0700 whatever ours
            # Only prctl runs between fork and exec, looked up beforehand (children.py).
            preexec_fn=die_with_parent if self.dies_with_parent else None,  # noqa: PLW1509
        )

    def _ready(self) -> str:
        assert self._proc is not None
        try:
            self.port = self._wait_ready()
        except BaseException:
            self._terminate(timeout_s=1.0)
            raise
        log.info("nats-server (pid %d) serving %s, JetStream in %s", self._proc.pid, self.url, self.store_dir)
        return self.url

    def _write_config(self) -> Path:
        """The config file (0600, in the 0700 temporary dir of the ports file) that asks clients
        for the token or the users; written beside it and renamed over it."""
        from phoneuse_runtime.nats.link import read_nats_token
        from phoneuse_runtime.nats.users import config_text

        assert self._ports_dir is not None
        if self.users is not None:
            # JetStream in the file too: a reload of a file without it stops JetStream (2.9).
            text = config_text(self.users, jetstream={"store_dir": str(self.store_dir)})
        else:
            assert self.token_file is not None
            token = read_nats_token(str(self.token_file))  # its characters need no quoting
            text = f'authorization {{\n  token: "{token}"\n}}\n'
        path = Path(self._ports_dir.name) / "nats-server.conf"
        tmp = path.with_name(path.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
        return path

    def set_users(self, users: Sequence[NatsUser]) -> None:
        """The users clients may be from now on: the config is rewritten and, while the server
        runs, it re-reads it (SIGHUP; its clients stay connected)."""
        if self.users is None:
            raise NatsServerError("this nats-server was not started with users")
        self.users = tuple(users)
        if self.running and self._proc is not None:
            self._write_config()
            self._proc.send_signal(signal.SIGHUP)
            log.info("nats-server (pid %d): %d user(s)", self._proc.pid, len(self.users))

    def _wait_ready(self) -> int:
        assert self._proc is not None and self._ports_dir is not None
        deadline = time.monotonic() + self.start_timeout_s
        port = 0
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise NatsServerError(
                    f"nats-server exited with status {self._proc.returncode} at start; see {self.log_file}"
                )
            if not port:
                port = self._read_port()
            if port and _says_info(self.host, port):
                return port
            time.sleep(0.02)  # polling the child's start, bounded by the deadline
        raise NatsServerError(
            f"nats-server was not ready within {self.start_timeout_s:.0f} s; see {self.log_file}"
        )

    def _read_port(self) -> int:
        assert self._proc is not None and self._ports_dir is not None
        for path in Path(self._ports_dir.name).glob(f"*_{self._proc.pid}.ports"):
            try:
                urls = json.loads(path.read_text(encoding="utf-8")).get("nats") or []
            except (OSError, ValueError):
                return 0  # half written: read it again on the next turn
            for url in urls:
                host_port = str(url).rsplit("//", 1)[-1]
                with contextlib.suppress(ValueError):
                    return int(host_port.rsplit(":", 1)[1])
        return 0

    def stop_sync(self, *, timeout_s: float = STOP_TIMEOUT_S) -> None:
        """SIGTERM, wait up to `timeout_s`, then SIGKILL. Harmless when not running."""
        self._terminate(timeout_s=timeout_s)

    def kill_sync(self) -> None:
        """SIGKILL, as a crash would (tests)."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
        self._terminate(timeout_s=STOP_TIMEOUT_S)

    def _terminate(self, *, timeout_s: float) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            if proc.poll() is not None:  # it ended before it was asked to
                log.warning(
                    "nats-server (pid %d) had exited by itself (status %s); see %s",
                    proc.pid,
                    proc.returncode,
                    self.log_file,
                )
            else:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=timeout_s)
                except subprocess.TimeoutExpired:
                    log.warning(
                        "nats-server (pid %d) ignored SIGTERM for %.0f s: killing it", proc.pid, timeout_s
                    )
                    proc.kill()
                    proc.wait()
                else:
                    # nats-server ends with status 1 on SIGTERM, after a clean shutdown (its
                    # log's "Server Exiting.."): a stop as asked, not a failure.
                    how = "cleanly" if proc.returncode in CLEAN_STOP else f"with status {proc.returncode}"
                    log.info("nats-server (pid %d) stopped %s on SIGTERM", proc.pid, how)
        if self._log is not None:
            self._log.close()
            self._log = None
        if self._ports_dir is not None:
            self._ports_dir.cleanup()
            self._ports_dir = None
        self.requested_port = self.port or self.requested_port  # a restart keeps the url
        self.port = 0

    # --- async -------------------------------------------------------------------------
    async def start(self) -> str:
        if self.running:
            return self.url
        # Spawned by this thread, the loop's: the parent-death signal follows the thread that
        # forked, and a pool thread may end before the process does.
        self._spawn()
        return await asyncio.to_thread(self._ready)

    async def stop(self, *, timeout_s: float = STOP_TIMEOUT_S) -> None:
        await asyncio.to_thread(self.stop_sync, timeout_s=timeout_s)

    async def kill(self) -> None:
        await asyncio.to_thread(self.kill_sync)


def _says_info(host: str, port: int) -> bool:
    """Whether a client connecting to host:port reads nats-server's greeting."""
    try:
        with socket.create_connection((host, port), timeout=1.0) as conn:
            conn.settimeout(1.0)
            return conn.recv(5) == b"INFO "
    except OSError:
        return False


@contextlib.asynccontextmanager
async def nats_server(
    store_dir: Path, *, port: int = -1, executable: str = DEFAULT_EXECUTABLE, token_file: Path | None = None
) -> AsyncIterator[NatsServer]:
    """A started `NatsServer`, stopped on leaving."""
    server = NatsServer(store_dir, port=port, executable=executable, token_file=token_file)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@contextlib.contextmanager
def nats_server_sync(
    store_dir: Path, *, port: int = -1, executable: str = DEFAULT_EXECUTABLE, token_file: Path | None = None
) -> Iterator[NatsServer]:
    """`nats_server` without a loop."""
    server = NatsServer(store_dir, port=port, executable=executable, token_file=token_file)
    server.start_sync()
    try:
        yield server
    finally:
        server.stop_sync()


def available(executable: str = DEFAULT_EXECUTABLE) -> bool:
    """Whether nats-server is on PATH."""
    return shutil.which(executable) is not None


__all__ = ["INSTALL_HINT", "NatsServer", "NatsServerError", "available", "nats_server", "nats_server_sync"]
