"""Which phone, through which adb server: the `--device adb[:SERIAL]` setting, serial choice, and
the adbutils client the backend uses.

The serial is the one named, else $ANDROID_SERIAL, else the only attached device; zero or
several devices is a ConfigError that lists what adb reports. A `host:port` serial is a phone
over the network: the backend runs `adb connect` for it at start and after every drop, because
adb itself retries a lost network device only every ~10 s (and adb 29 never says on
track-devices that it was lost).
"""

from __future__ import annotations

import contextlib
import logging
import re
import socket
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import adbutils

from phoneuse_runtime.config.settings import ConfigError

log = logging.getLogger(__name__)

# host:port, [v6]:port: what `adb connect` takes, and what adb then lists as the serial.
_NETWORK_SERIAL = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9][A-Za-z0-9.-]*):(\d{1,5})$")

# adb's states, with what the user can do about each one that is not "device".
STATE_ADVICE: dict[str, str] = {
    "unauthorized": "unlock the phone and accept the 'Allow USB debugging?' prompt (tick 'Always allow')",
    "offline": "the phone stopped answering adb: reconnect the cable or Wi-Fi, or run `adb reconnect`",
    "no permissions": (
        "this user may not open the USB device: install the udev rules (android-sdk-platform-tools-common)"
    ),
    "recovery": "the phone is in recovery; reboot it into Android",
    "bootloader": "the phone is in the bootloader; reboot it into Android",
    "sideload": "the phone is in sideload mode; reboot it into Android",
    "authorizing": "the phone is deciding whether to trust this computer; look at its screen",
    "connecting": "adb is still connecting to the phone",
}


def device_serial(device_setting: str) -> str | None:
    """The serial in `adb[:SERIAL]`, split at the first colon only (`adb:10.0.0.5:5555` names
    the network serial `10.0.0.5:5555`); None for plain `adb`."""
    kind, sep, serial = device_setting.partition(":")
    if kind != "adb":
        raise ConfigError(f"not an adb device setting: {device_setting!r}")
    if sep and not serial.strip():
        raise ConfigError("--device adb: needs a serial after the colon, e.g. adb:emulator-5554")
    return serial.strip() or None


def is_network_serial(serial: str) -> bool:
    """Whether the serial is `host:port`: a phone adb reaches over TCP (Wi-Fi, emulator bridge)."""
    match = _NETWORK_SERIAL.match(serial)
    return match is not None and 0 < int(match.group(2)) < 65536


@dataclass(frozen=True)
class Attached:
    """One line of `adb devices`."""

    serial: str
    state: str

    def describe(self) -> str:
        advice = STATE_ADVICE.get(self.state)
        return f"{self.serial} ({self.state}{': ' + advice if advice else ''})"


def choose_serial(named: str | None, env: str | None, attached: list[Attached]) -> str:
    """The serial to drive: the one named, else $ANDROID_SERIAL, else the only device adb lists
    as ready. With none named, zero or several ready devices is a ConfigError listing them all."""
    if named:
        return named
    if env and env.strip():
        return env.strip()
    ready = [a for a in attached if a.state == "device"]
    if len(ready) == 1:
        return ready[0].serial
    listed = "; ".join(a.describe() for a in attached) or "none"
    if not ready:
        raise ConfigError(
            f"adb lists no ready device (found: {listed}); connect a phone with USB debugging on, "
            "start an emulator, or name one: --device adb:SERIAL (adb:HOST:PORT for Wi-Fi)"
        )
    raise ConfigError(
        f"adb lists {len(ready)} ready devices (found: {listed}); pick one with --device adb:SERIAL "
        "or $ANDROID_SERIAL"
    )


class _Connection(adbutils.AdbConnection):  # type: ignore[misc]
    """adbutils' connection to the adb server, minus its habit of running `adb start-server`
    whenever a connection fails: here a dead server is an error the caller sees and reports."""

    def _safe_connect(self) -> Any:
        sock = self._create_socket()
        # A request often leaves in two writes (adb's 4-byte length, then the command): without
        # this, Nagle holds the second until the server's delayed ACK, ~40 ms a round trip.
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock


class Client(adbutils.AdbClient):  # type: ignore[misc]
    """adbutils' client for one adb server, named explicitly (adbutils would otherwise read
    $ANDROID_ADB_SERVER_PORT once, at import)."""

    _version: int | None = None

    def check_server(self) -> int:
        """The running server's version (`host:version`), asked now: AdbError when none answers."""
        self._version = int(super().server_version())
        return self._version

    def server_version(self) -> int:
        """Asked once: adbutils asks before every stream it opens to a device (to pick the
        transport request), which would double the connections to the server per call."""
        if self._version is None:
            return self.check_server()
        return self._version

    def make_connection(self, timeout: float | None = None) -> adbutils.AdbConnection:
        try:
            conn = _Connection(self.host, self.port)
        except TimeoutError as exc:
            raise adbutils.AdbTimeout("connect to adb server timeout") from exc
        if timeout:
            conn.conn.settimeout(timeout)
        return conn

    def attached(self) -> list[Attached]:
        return [Attached(info.serial, info.state) for info in self.list()]

    def state_of(self, serial: str, *, timeout_s: float) -> str:
        """`adb -s SERIAL get-state`: "device", "offline", ...; AdbError when adb lists no such device."""
        with self.make_connection(timeout=timeout_s) as conn:
            conn.send_command(f"host-serial:{serial}:get-state")
            conn.check_okay()
            return str(conn.read_string_block()).strip()


class TrackDevices:
    """`host:track-devices` on a thread of its own: the adb server pushes its whole device list
    whenever it changes; each list goes to `_listed` as {serial: state}. When the server goes
    away, `_lost` is told why, and the tracker asks again every `RETRY_S`. The adb backend's
    `Tracker` follows its one phone with it, the fleet's `AdbWatch` every ready device."""

    RETRY_S = 1.0  # after the adb server went away, before asking again

    def __init__(self, client: Client, *, name: str) -> None:
        self.client = client
        self._stopped = threading.Event()
        self._conn: adbutils.AdbConnection | None = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def stop(self) -> None:
        self._stopped.set()
        conn = self._conn
        if conn is not None:
            with contextlib.suppress(OSError):
                conn.conn.shutdown(socket.SHUT_RDWR)  # wakes the blocked read
        self._thread.join(timeout=2.0)

    def _run(self) -> None:
        while not self._stopped.is_set():
            try:
                with self.client.make_connection() as conn:
                    self._conn = conn
                    conn.send_command("host:track-devices")
                    conn.check_okay()
                    self._connected()
                    while not self._stopped.is_set():
                        self._listed(device_states(str(conn.read_string_block())))
            except (adbutils.AdbError, OSError) as exc:
                self._lost(exc, stopping=self._stopped.is_set())
            finally:
                self._conn = None
            self._stopped.wait(self.RETRY_S)

    def _connected(self) -> None:
        """The server answers (again)."""

    def _listed(self, states: dict[str, str]) -> None:
        raise NotImplementedError

    def _lost(self, exc: Exception, *, stopping: bool) -> None:
        """The server went away (or `stop` cut the stream: `stopping`)."""
        if not stopping:
            log.debug("track-devices ended (%s); asking again in %.0f s", exc, self.RETRY_S)


class Tracker(TrackDevices):
    """`host:track-devices`: the adb server pushes its device list whenever it changes, so a USB
    phone unplugged or an emulator closed is noticed at once. Not enough alone: Debian's adb 29
    does not report a network device that stopped answering (hence get-state polling and failed
    calls as well). Runs on a thread of its own; `on_change` gets the serial's new state
    ("device", "offline", "unauthorized", ..., "absent" when it is no longer listed), as adb
    lists it: adb 29 drops a phone that left at once ("absent"), adb 36 first lists it
    "offline" and then drops it, and may leave a lost network phone "offline". The backend
    treats every state but "device" alike (the link is down; see AdbDevice._tracked)."""

    def __init__(self, client: Client, serial: str, on_change: Callable[[str], None]) -> None:
        super().__init__(client, name=f"adb track {serial}")
        self.serial = serial
        self.on_change = on_change
        self._last: str | None = None

    def _listed(self, states: dict[str, str]) -> None:
        state = states.get(self.serial, "absent")
        if state != self._last:
            self._last = state
            self.on_change(state)


def device_states(listing: str) -> dict[str, str]:
    """`serial<TAB>state` lines, as host:devices and host:track-devices give them."""
    states = {}
    for line in listing.splitlines():
        serial, _, state = line.partition("\t")
        if serial and state:
            states[serial] = state.strip()
    return states


def start_server(host: str, port: int, *, timeout_s: float) -> str:
    """Starts the adb server on this host (`adb -P PORT start-server`), as any adb command would;
    returns what it said. Only for a local server: a remote one is its owner's to start."""
    exe = adbutils.adb_path()
    log.info("starting the adb server on %s:%d (%s -P %d start-server)", host, port, exe, port)
    done = subprocess.run(
        [exe, "-P", str(port), "start-server"],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )
    return (done.stdout + done.stderr).strip()


def is_local(host: str) -> bool:
    return host in ("127.0.0.1", "localhost", "::1")
