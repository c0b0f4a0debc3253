"""The phone's own adb, reached through wireless debugging (`adb connect 127.0.0.1:PORT` from
Termux, with adb from `pkg install android-tools`): what gives the termux backend the UI,
screenshots, apps, the call state, calendars, alarms and the shell.

Where it is (the `self_adb` setting, `--self-adb`, `$PHONEUSE_SELF_ADB`):
- `auto` (the default): a device the adb server already lists on a local address (you ran
  `adb connect` yourself), else the `_adb-tls-connect._tcp` service that `adb mdns services`
  finds on one of this phone's own addresses. Wireless debugging picks a new port each time it
  is turned on (and it turns off on every Wi-Fi change), so the port is looked for again while
  the phone's adb is away.
- `PORT` or `HOST:PORT`: that address only, e.g. 5555 after `adb tcpip 5555`, which keeps the
  port fixed until the phone reboots.
- `off`: never; the device lacks `ui` and what else needs adb.

While it is not found it is looked for again with a back-off (`Backoff`: `retry_s`, doubling to
RETRY_MAX_S, so at most 2 looks a minute after the first minute; each look in `auto` runs one
`adb mdns services`), and at once when the owner asks: a call that needs it (`wake`, from the
device's capability hint) starts the back-off over. `doctor` looks for itself, at once.

`SelfAdb` holds an `AdbDevice` for the address found (composition: the adb backend does all of
the work) and replaces it when the address changes. That device's own link reports the phone's
adb coming and going (DEVICE_CONNECTED / DEVICE_DISCONNECTED, device `adb`) on the runtime's bus.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import re
import socket
from collections.abc import Awaitable, Callable

from phoneuse_runtime.config.addresses import LOOPBACK, parse_self_adb, server_address
from phoneuse_runtime.config.settings import ConfigError
from phoneuse_runtime.device.adb.device import AdbDevice
from phoneuse_runtime.kernel.events import EventSink
from phoneuse_runtime.screen.dialogs import DialogWatch
from phoneuse_runtime.util.tasks import cancel_and_wait

log = logging.getLogger(__name__)

MDNS_TIMEOUT_S = 5.0
RETRY_MAX_S = 30.0  # the longest wait between two looks for a missing self-adb: 2 looks a minute


class Backoff:
    """The waits between looks for a missing self-adb: `first_s`, doubling up to `max_s`, from
    the first again after `reset` (found, or asked for)."""

    def __init__(self, first_s: float, max_s: float = RETRY_MAX_S) -> None:
        self.first_s = first_s
        self.max_s = max(first_s, max_s)
        self._next_s = first_s

    def next_s(self) -> float:
        wait_s = self._next_s
        self._next_s = min(self.max_s, wait_s * 2)
        return wait_s

    def reset(self) -> None:
        self._next_s = self.first_s


Pause = Callable[[asyncio.Event, float], Awaitable[None]]


async def pause(woken: asyncio.Event, wait_s: float) -> None:
    """Waits `wait_s`, or less when `woken` is set."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(woken.wait(), wait_s)


_CONNECT_SERVICE = re.compile(r"_adb-tls-connect\._tcp\.?\s+(\S+):(\d+)\s*$")


def is_own_address(host: str) -> bool:
    """Whether `host` is an address of this machine: binding to it works only if it is."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host == "localhost"
    if address.is_loopback:
        return True
    family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as probe:
            probe.bind((host, 0))
    except OSError:
        return False
    return True


def parse_mdns(output: str, *, own: Callable[[str], bool] = is_own_address) -> list[str]:
    """The `127.0.0.1:PORT` of each wireless-debugging service that `adb mdns services` lists on
    this phone's own addresses (`<name>\\t_adb-tls-connect._tcp.\\t<ip>:<port>`); other phones on
    the same Wi-Fi announce theirs too."""
    found = []
    for line in output.splitlines():
        match = _CONNECT_SERVICE.search(line.strip())
        if match and own(match.group(1)):
            found.append(f"{LOOPBACK}:{match.group(2)}")
    return found


def local_serials(serials: list[str], *, own: Callable[[str], bool] = is_own_address) -> list[str]:
    """The network serials among `adb devices` that are this phone itself."""
    out = []
    for serial in serials:
        host, sep, port = serial.rpartition(":")
        if sep and port.isdigit() and own(host.strip("[]")):
            out.append(serial)
    return out


class SelfAdb:
    """Finds the phone's own adb and keeps an AdbDevice on it; `device` is None while none is known."""

    def __init__(
        self,
        *,
        mode: str,
        adb_server: str,
        poll_ms: int,
        retry_s: float,
        on_change: Callable[[], None],
        pause: Pause = pause,
        dialogs: DialogWatch | None = None,
        keep_awake: bool = False,
    ) -> None:
        self.mode = parse_self_adb(mode)
        self.dialogs = dialogs  # the termux device's, shared with the adb device it uses
        self.keep_awake = keep_awake  # handed to each AdbDevice (issue 27)
        self.adb_server = adb_server
        self.poll_ms = poll_ms
        self.retry_s = retry_s  # how often an adb that is up is checked, and the back-off's first wait
        self.backoff = Backoff(retry_s)
        self.on_change = on_change
        self._pause = pause  # how the watch waits (tests drive the schedule with their own)
        self._woken = asyncio.Event()
        self.looks = 0  # how many times it was looked for
        self.device: AdbDevice | None = None
        self.problem = "not looked for yet" if self.mode != "off" else "self_adb is off"
        self._emit: EventSink | None = None
        self._wanted: Callable[[str], bool] = lambda _t: False
        self._task: asyncio.Task[None] | None = None

    @property
    def up(self) -> bool:
        return self.device is not None and self.device.link.up

    def start(self, emit: EventSink, wanted: Callable[[str], bool]) -> None:
        if self.mode == "off":
            return
        self._emit, self._wanted = emit, wanted
        self._task = asyncio.create_task(self._watch(), name="termux self-adb watch")

    async def close(self) -> None:
        await cancel_and_wait(self._task)
        self._task = None
        await self._drop()

    def wake(self) -> None:
        """Looks for it at once (somebody needs it now), and from then on often again."""
        if self._task is not None and not self.up:
            self._woken.set()

    async def _watch(self) -> None:
        while True:
            if not self.up:
                await self._look()
            if self.up:
                self.backoff.reset()
                wait_s = self.retry_s  # checking an adb that is up runs nothing
            else:
                wait_s = self.backoff.next_s()
            await self._pause(self._woken, wait_s)
            if self._woken.is_set():
                self._woken.clear()
                self.backoff.reset()

    async def _look(self) -> None:
        self.looks += 1
        try:
            target = await self.find()
        except Exception as exc:  # discovery is best effort; `problem` keeps why for hints
            target = None
            self.problem = f"looking for the phone's own adb failed: {exc}"
        if target is not None and (self.device is None or self.device.serial != target):
            await self._use(target)
        elif target is None and self.mode == "auto" and self.device is not None:
            # Gone, and announced nowhere: wireless debugging is off, and will come back
            # on another port. Stop redialling the old one; discovery finds the new one.
            await self._drop()

    async def find(self, *, may_start: bool = True) -> str | None:
        """The address of the phone's own adb (configured or discovered), or None with `problem` set.
        With `may_start`, a local adb server that is not running is started (after a reboot none
        is, and the pairing keys in ~/.android are all it needs)."""
        if self.mode not in ("auto", "off"):
            return self.mode
        from phoneuse_runtime.device.adb.connection import Client, is_local, start_server

        host, port = server_address(self.adb_server)
        client = Client(host, port)
        try:
            attached = await asyncio.to_thread(client.attached)
        except Exception as exc:  # adbutils raises several kinds; each means no server answers
            problem = (
                f"no adb server on {host}:{port} ({exc}); pkg install android-tools, then adb start-server"
            )
            if not (may_start and is_local(host)):
                self.problem = problem
                return None
            try:
                await asyncio.to_thread(start_server, host, port, timeout_s=MDNS_TIMEOUT_S)
                attached = await asyncio.to_thread(client.attached)
            except Exception:  # no adb binary, or it would not start
                self.problem = problem
                return None
        listed = local_serials([a.serial for a in attached if a.state == "device"])
        if listed:
            return listed[0]
        services = parse_mdns(await asyncio.to_thread(_mdns_services, port))
        if services:
            return services[0]
        self.problem = (
            "wireless debugging is off or not paired: no device on this phone's own address, and "
            "adb mdns services finds no _adb-tls-connect service here"
        )
        return None

    async def _use(self, target: str) -> None:
        await self._drop()
        assert self._emit is not None
        device = AdbDevice(
            device=f"adb:{target}",
            adb_server=self.adb_server,
            poll_ms=self.poll_ms,
            keep_awake=self.keep_awake,
        )
        device.link.watch(lambda _up: self.on_change())
        if self.dialogs is not None:
            device.dialogs = self.dialogs
        try:
            await device.start(self._emit, wanted=self._wanted)
        except ConfigError as exc:
            self.problem = str(exc)
            log.warning("the phone's own adb at %s cannot be used: %s", target, exc)
            return
        self.device = device
        self.problem = "" if device.link.up else f"{target}: {device.link.reason}"
        log.info("using the phone's own adb at %s (%s)", target, "up" if device.link.up else "not yet up")
        self.on_change()

    async def _drop(self) -> None:
        device, self.device = self.device, None
        if device is not None:
            await device.close()
            self.on_change()


def _mdns_services(port: int) -> str:
    """`adb mdns services` from the adb server on `port` (the adb binary adbutils finds)."""
    import subprocess

    import adbutils

    try:
        exe = adbutils.adb_path()
        done = subprocess.run(
            [exe, "-P", str(port), "mdns", "services"],
            capture_output=True,
            text=True,
            timeout=MDNS_TIMEOUT_S,
            check=False,
        )
    except (adbutils.AdbError, OSError, subprocess.TimeoutExpired) as exc:
        log.debug("adb mdns services failed: %s", exc)
        return ""
    return done.stdout
