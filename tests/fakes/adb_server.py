"""L2 harness: an isolated real adb server, fake devices connected to it, and the pytest fixtures.

    def test_something(fake_device_factory: FakeDeviceFactory) -> None:
        device = fake_device_factory(MyPhone())       # a FakeAdbd, `adb connect`ed, state "device"
        d = device.adbutils_device()                  # adbutils.AdbDevice through the isolated server
        assert d.shell("echo hi") == "hi"
        device.adbd.opened                            # every service the daemon was asked to open
        device.adbd.drop(); device.adbd.resume(); device.reconnect()   # the phone vanished, came back
        device.adbd.hang(); device.adbd.resume()      # the phone froze, thawed (same connection)

The daemon runs on its own thread (`BackgroundAdbd`), so the test may block in adbutils; the phone's
methods run on that thread's event loop.

The session's adb server listens on a free port, never 5037. While it runs (fixture `adb_server`):
- `os.environ["ANDROID_ADB_SERVER_PORT"]` is its port, so `adbutils.AdbClient()` built from then on,
  the `adb` CLI (and adbutils' `adb start-server` fallback) find it;
- `adbutils.adb` (the module-level client, fixed when adbutils was first imported, and the one
  uiautomator2 uses for a serial string) is replaced by a client for it;
- `ADBUTILS_ADB_PATH` names the same adb binary, so nothing mixes adb versions.
Production code that takes an explicit host and port should be given `server.port`.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Coroutine, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

import adbutils
import pytest

from tests.fakes.adbd import DEFAULT_FEATURES, MAX_PAYLOAD, FakeAdbd
from tests.fakes.contract import PhoneSide

T = TypeVar("T")

# Environment the adb binary honours that could point it at another server or device.
_FOREIGN_ENV = (
    "ADB_SERVER_SOCKET",
    "ANDROID_ADB_SERVER_ADDRESS",
    "ANDROID_SERIAL",
    "ANDROID_SDK_HOME",
    "ANDROID_USER_HOME",
    "ADB_VENDOR_KEYS",
)


class AdbHarnessError(RuntimeError):
    """The isolated adb server or a connection to a fake device did not come up."""


def find_adb() -> str | None:
    """The adb to test with: $ADBUTILS_ADB_PATH, else `adb` on PATH, else the one in adbutils' wheel."""
    override = os.environ.get("ADBUTILS_ADB_PATH")
    if override:
        return override
    exe = shutil.which("adb")
    if exe:
        return exe
    try:
        return str(adbutils.adb_path())
    except adbutils.AdbError:
        return None


def _libc_prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
        return prctl
    except (OSError, AttributeError):
        return None


# Looked up here, not in the forked child, where as little as possible should happen.
_PRCTL = _libc_prctl()
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """Runs in the child before exec: on Linux, SIGKILL it when the process that started it dies,
    so a test run killed outright leaves no adb server behind. (Strictly: when the starting thread
    dies; the session fixture starts it from pytest's main thread.)"""
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class AdbServer:
    """A real adb server of our own: its own port, HOME (its adbkey) and log; no USB, no emulator
    scan, no mDNS. Started in the foreground (`nodaemon server`) so its pid is ours to end."""

    def __init__(self, adb_path: str, workdir: Path) -> None:
        self.adb_path = adb_path
        self.workdir = workdir
        self.port = 0
        self.log_path = workdir / "adb-server.log"
        self._process: subprocess.Popen[bytes] | None = None

    def env(self) -> dict[str, str]:
        """The environment for any adb process of this server (the server itself, CLI calls)."""
        env = {k: v for k, v in os.environ.items() if k not in _FOREIGN_ENV}
        env.update(
            HOME=str(self.workdir / "home"),
            ANDROID_ADB_SERVER_PORT=str(self.port),
            ANDROID_ADB_LOG_PATH=str(self.log_path),
            ADB_MDNS="0",  # no mDNS discovery
            ADB_USB="0",  # no USB scan
            ADB_EMU="0",  # no emulator scan of ports 5555..5585
        )
        return env

    def start(self, timeout: float = 10.0) -> None:
        (self.workdir / "home").mkdir(parents=True, exist_ok=True)
        for _ in range(3):  # a free port can be taken between probing and binding it
            self.port = _free_port()
            with self.log_path.open("ab") as log:
                self._process = subprocess.Popen(
                    [self.adb_path, "-P", str(self.port), "nodaemon", "server"],
                    env=self.env(),
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=log,
                    # Only a prctl call, looked up before the fork: nothing there takes a lock.
                    preexec_fn=_die_with_parent,  # noqa: PLW1509
                )
            if self._wait_listening(timeout):
                return
            self._end_process()
        raise AdbHarnessError(f"adb server did not start; see {self.log_path}: {self.log_tail()}")

    def _wait_listening(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self._process is not None
            if self._process.poll() is not None:
                return False
            try:
                self.host("host:version", timeout=1)
                return True
            except (AdbHarnessError, OSError):
                time.sleep(0.02)  # polling against a deadline: the server is still starting
        return False

    def stop(self) -> None:
        """kill-server, then make sure: our process is gone whatever state it was in."""
        if self._process is None:
            return
        try:
            self.host("host:kill", reply="okay", timeout=5)
            self._process.wait(timeout=5)
        except (AdbHarnessError, OSError, subprocess.TimeoutExpired):
            pass
        self._end_process()

    def _end_process(self) -> None:
        if self._process is None:
            return
        if self._process.poll() is None:
            self._process.kill()
            self._process.wait(timeout=5)
        self._process = None

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def client(self, socket_timeout: float | None = 10.0) -> adbutils.AdbClient:
        """An adbutils client for this server; by default no read waits longer than 10 s (adbutils'
        own default is no limit), so a test fails instead of hanging."""
        return adbutils.AdbClient(host="127.0.0.1", port=self.port, socket_timeout=socket_timeout)

    def adb(self, *args: str, timeout: float = 10.0, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Runs the adb CLI against this server."""
        return subprocess.run(
            [self.adb_path, "-P", str(self.port), *args],
            env=self.env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=check,
        )

    def host(
        self, request: str, *, reply: Literal["block", "okay", "okay2"] = "block", timeout: float = 10.0
    ) -> str:
        """One host request to this server, spoken directly: adbutils would start a server on the
        default port if ours were down. `reply`: "block" (OKAY + a length-prefixed string), "okay"
        (OKAY alone) or "okay2" (OKAY now, OKAY when done, as wait-for-* answers)."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=timeout) as sock:
            encoded = request.encode()
            sock.sendall(b"%04x" % len(encoded) + encoded)
            status = _recv_exactly(sock, 4)
            if status == b"FAIL":
                raise AdbHarnessError(f"{request}: {_recv_block(sock)}")
            if status != b"OKAY":
                raise AdbHarnessError(f"{request}: unexpected answer {status!r}")
            if reply == "okay2" and _recv_exactly(sock, 4) != b"OKAY":
                raise AdbHarnessError(f"{request}: no second OKAY")
            return _recv_block(sock) if reply == "block" else ""

    def connect(self, serial: str, timeout: float = 10.0) -> None:
        """`adb connect SERIAL`, then waits (bounded) until the server reports it as "device"."""
        deadline = time.monotonic() + timeout
        answer = self.host(f"host:connect:{serial}", timeout=timeout)
        if "connected to" not in answer:
            raise AdbHarnessError(f"adb connect {serial}: {answer}")
        self.wait_for_device(serial, deadline - time.monotonic())

    def wait_for_device(self, serial: str, timeout: float = 10.0) -> None:
        """The server's own wait-for-device: answers as soon as SERIAL is online, no polling."""
        try:
            self.host(f"host-serial:{serial}:wait-for-any-device", reply="okay2", timeout=max(timeout, 0.1))
        except (AdbHarnessError, OSError) as error:
            raise AdbHarnessError(f"{serial} not online: {error!r}; {self.log_tail()}") from error

    def disconnect(self, serial: str, timeout: float = 5.0) -> None:
        """Forgets SERIAL and waits (bounded) until the server no longer lists it; no error when the
        server did not know it."""
        with contextlib.suppress(AdbHarnessError):
            self.host(f"host:disconnect:{serial}")
        deadline = time.monotonic() + timeout
        while self.state(serial) != "absent" and time.monotonic() < deadline:
            time.sleep(0.01)  # polling against a deadline

    def state(self, serial: str) -> str:
        """ "device", "offline"... as `adb devices` lists SERIAL, or "absent"."""
        for line in self.host("host:devices").splitlines():
            name, _, state = line.partition("\t")
            if name == serial:
                return state
        return "absent"


def _recv_exactly(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise AdbHarnessError(f"adb server closed the connection after {data!r}")
        data += chunk
    return data


def _recv_block(sock: socket.socket) -> str:
    return _recv_exactly(sock, int(_recv_exactly(sock, 4), 16)).decode(errors="replace")


class BackgroundAdbd:
    """A FakeAdbd on its own event loop and thread, so test code may block (adbutils is synchronous)
    while the daemon answers. The phone's methods run on that thread too."""

    def __init__(
        self,
        phone: PhoneSide,
        *,
        features: Sequence[str] = DEFAULT_FEATURES,
        max_payload: int = MAX_PAYLOAD,
        host: str = "127.0.0.1",
    ) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="fake-adbd", daemon=True)
        self._thread.start()
        self.daemon = FakeAdbd(phone, features=features, max_payload=max_payload, host=host)
        try:
            self.run(self.daemon.start())
        except BaseException:
            self.stop()
            raise

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 10.0) -> T:
        """Runs `coro` on the daemon's loop and returns its result."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    @property
    def port(self) -> int:
        return self.daemon.port

    @property
    def serial(self) -> str:
        return self.daemon.serial

    @property
    def opened(self) -> list[str]:
        return self.daemon.opened

    def drop(self) -> None:
        self.run(self.daemon.drop())

    def hang(self) -> None:
        async def hang() -> None:
            self.daemon.hang()

        self.run(hang())  # in effect when this returns, before the test's next request

    def resume(self) -> None:
        self.run(self.daemon.resume())

    def stop(self) -> None:
        """Closes the daemon, ends whatever the phone still runs, and the loop and thread."""
        if self._loop.is_closed():
            return
        try:
            self.run(_shutdown(self.daemon))
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
            if not self._thread.is_alive():
                self._loop.run_until_complete(self._loop.shutdown_asyncgens())
                self._loop.close()


async def _shutdown(daemon: FakeAdbd) -> None:
    await daemon.close()
    current = asyncio.current_task()
    leftovers = [task for task in asyncio.all_tasks() if task is not current]
    for task in leftovers:
        task.cancel()
    await asyncio.gather(*leftovers, return_exceptions=True)
    await asyncio.sleep(0)  # lets the transports those tasks closed run their close callbacks


@dataclass
class FakeDevice:
    """A fake phone as the adb server sees it: connected, serial "127.0.0.1:PORT"."""

    server: AdbServer
    adbd: BackgroundAdbd

    @property
    def serial(self) -> str:
        return self.adbd.serial

    @property
    def adb_port(self) -> int:
        """The isolated adb server's port, for code that builds its own AdbClient."""
        return self.server.port

    def adbutils_device(self) -> adbutils.AdbDevice:
        return self.server.client().device(self.serial)

    def reconnect(self, timeout: float = 10.0) -> None:
        """Forgets the transport and `adb connect`s again, as after `adbd.drop()` and `resume()`:
        waiting for the server's own redial could take 10 s. Tried again if that redial collides
        with ours (the server then drops the newer transport)."""
        deadline = time.monotonic() + timeout
        while True:
            self.server.disconnect(self.serial)
            try:
                self.server.connect(self.serial, min(2.0, max(deadline - time.monotonic(), 0.1)))
                return
            except AdbHarnessError:
                if time.monotonic() >= deadline:
                    raise


@contextmanager
def fake_device(
    server: AdbServer,
    phone: PhoneSide,
    *,
    features: Sequence[str] = DEFAULT_FEATURES,
    max_payload: int = MAX_PAYLOAD,
    host: str = "127.0.0.1",
) -> Iterator[FakeDevice]:
    """Starts a daemon for `phone` (on `host`), connects the server to it, and disconnects and stops
    it after."""
    adbd = BackgroundAdbd(phone, features=features, max_payload=max_payload, host=host)
    try:
        server.connect(adbd.serial)
        yield FakeDevice(server, adbd)
    finally:
        # Disconnect first: otherwise the server keeps redialling the port, which a later daemon
        # may be given.
        try:
            server.disconnect(adbd.serial)
        finally:
            adbd.stop()


class FakeDeviceFactory(Protocol):
    """What the `fake_device_factory` fixture gives a test."""

    def __call__(
        self, phone: PhoneSide, *, features: Sequence[str] = ..., max_payload: int = ..., host: str = ...
    ) -> FakeDevice: ...


@pytest.fixture(scope="session")
def adb_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AdbServer]:
    """The session's isolated adb server; skips when there is no adb binary, unless
    PHONEUSE_REQUIRE_ADB=1 (CI), where that is a failure instead."""
    adb_path = find_adb()
    if adb_path is None:
        if os.environ.get("PHONEUSE_REQUIRE_ADB") == "1":
            pytest.fail("no adb binary, and PHONEUSE_REQUIRE_ADB=1")
        pytest.skip("no adb binary: install adb (Debian package) or an adbutils wheel that bundles it")
    server = AdbServer(adb_path, tmp_path_factory.mktemp("adb"))
    server.start()
    with pytest.MonkeyPatch.context() as patch:
        for name in _FOREIGN_ENV:
            patch.delenv(name, raising=False)
        patch.setenv("ANDROID_ADB_SERVER_PORT", str(server.port))
        patch.setenv("ADBUTILS_ADB_PATH", adb_path)
        patch.setattr(adbutils, "adb", server.client(socket_timeout=None))  # as adbutils builds it
        patch.setattr(adbutils, "device", adbutils.adb.device)
        try:
            yield server
        finally:
            server.stop()


@pytest.fixture
def fake_device_factory(adb_server: AdbServer) -> Iterator[FakeDeviceFactory]:
    """`factory(phone, features=..., max_payload=...) -> FakeDevice`; all torn down after the test."""
    with ExitStack() as stack:

        def factory(
            phone: PhoneSide,
            *,
            features: Sequence[str] = DEFAULT_FEATURES,
            max_payload: int = MAX_PAYLOAD,
            host: str = "127.0.0.1",
        ) -> FakeDevice:
            return stack.enter_context(
                fake_device(adb_server, phone, features=features, max_payload=max_payload, host=host)
            )

        yield factory
