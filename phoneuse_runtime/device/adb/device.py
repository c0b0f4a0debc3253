"""`AdbDevice`: a real phone or emulator over adb (`--device adb[:SERIAL]`), through adbutils
(shell, sync, device state) and uiautomator2's server (the UI).

How it is put together:
- connection.py picks the serial and holds the adbutils client (an explicit adb server, never
  a hidden `adb start-server`);
- worker.py runs every blocking call on the phone's one thread, in order, bounded by the
  call's deadline;
- errors.py translates what the libraries raise, in one place;
- shell.py / providers.py / dumpsys.py / apps.py build the commands and read their output;
- capture.py takes screenshots; forms.py finishes the apps' forms an intent opens (the
  messaging app's send button, a calendar's Save);
- ui.py speaks to the uiautomator2 server; events.py polls for events.

The link: `start` connects once (for a `host:port` serial, `adb connect` first), then a monitor
checks `get-state` every `LINK_CHECK_S`, and at once after a call failed like a lost phone or
when adb's track-devices reports the phone gone or back (a USB phone unplugged is seen at once;
adb 29 does not report a dropped network device there, hence the rest). While the phone is lost,
the monitor reconnects with a backoff capped at `RECONNECT_MAX_S`, and reports each change on
`self.link` (DEVICE_DISCONNECTED / DEVICE_CONNECTED, health, fast failures).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import logging
import os
import stat
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, BinaryIO, TypeVar
from urllib.parse import quote as url_quote

import adbutils

from phoneuse_runtime.config.addresses import server_address
from phoneuse_runtime.config.settings import ConfigError
from phoneuse_runtime.device.adb import (
    apps,
    capture,
    dumpsys,
    files,
    forms,
    packages,
    power,
    providers,
    record,
    status,
    system_settings,
)
from phoneuse_runtime.device.adb.connection import (
    STATE_ADVICE,
    Client,
    Tracker,
    choose_serial,
    device_serial,
    is_local,
    is_network_serial,
    start_server,
)
from phoneuse_runtime.device.adb.errors import SERVER, is_link_failure, translate
from phoneuse_runtime.device.adb.events import Pollers
from phoneuse_runtime.device.adb.shell import command, oriented_size, parse_getprop, parse_wm_size
from phoneuse_runtime.device.adb.status import parse_screen_on
from phoneuse_runtime.device.adb.ui import (
    FOCUSED,
    IME_LIST,
    U2Server,
    Ui,
    guarded,
    ime_listed,
    u2_selector,
)
from phoneuse_runtime.device.adb.worker import Budget, Worker
from phoneuse_runtime.device.base import (
    KEYCODES,
    SWITCH_NAMES,
    ActedOn,
    Alarm,
    AppInfo,
    Brightness,
    CalendarEvent,
    CallFilter,
    CallRecord,
    CallState,
    Contact,
    ContactFilter,
    Device,
    DeviceInfo,
    DeviceStatus,
    DndMode,
    ElementAct,
    EventFilter,
    Foreground,
    Intent,
    IntentResult,
    Notification,
    PackageState,
    PhoneFile,
    PowerState,
    RecordedFile,
    Recording,
    Saved,
    Screenshot,
    ShellResult,
    SmsFilter,
    SmsMessage,
    Stream,
    Switch,
    Volume,
    saw_screen,
    wants_screen,
)
from phoneuse_runtime.device.recording import busy, nothing_recorded, recording_path
from phoneuse_runtime.device.ui_server import RestartLimiter
from phoneuse_runtime.kernel.capabilities import (
    ALARMS,
    APPS,
    CALENDAR,
    CALLS,
    CLIPBOARD,
    CONTACTS,
    FILES,
    NOTIFICATIONS,
    POWER,
    SCREEN_RECORD,
    SCREENSHOT,
    SHELL,
    SMS,
    UI,
)
from phoneuse_runtime.kernel.errors import (
    DeviceUnavailable,
    InvalidParams,
    PermissionDenied,
    RuntimeFailure,
    Unsupported,
)
from phoneuse_runtime.kernel.events import Event, EventSink
from phoneuse_runtime.owner.front_guard import FrontGuard, FrontRefused, current_guard
from phoneuse_runtime.screen.selector import Selector
from phoneuse_runtime.screen.stale import expected
from phoneuse_runtime.screen.ui import UiNode, parse_hierarchy
from phoneuse_runtime.util.tasks import cancel_and_wait

log = logging.getLogger(__name__)
# The screen TYPE_TEXT's paste read in its own batch right after typing: its read back, for this
# task's next device call only (any other call of the task's clears it first).
_TYPED_SCREEN: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "phoneuse_typed_screen", default=None
)

T = TypeVar("T")

CAPABILITIES = frozenset(
    {UI, SCREENSHOT, APPS, SMS, CALLS, CONTACTS, CALENDAR, ALARMS, CLIPBOARD, NOTIFICATIONS, SHELL, FILES}
    | {POWER, SCREEN_RECORD}  # issue 27
)

LINK_CHECK_S = 1.0  # how often a connected phone's state is checked
STATE_TIMEOUT_S = 2.0  # for one get-state / connect to the adb server
RECONNECT_FIRST_S = 0.25  # the reconnect backoff: doubles from here...
RECONNECT_MAX_S = 2.0  # ...up to here
CONNECT_S = 45.0  # for setting up a phone that answers (props, the uiautomator2 server)
DEFAULT_CALL_S = 10.0  # a call's budget outside any action (pollers, start-up reads)
INSTALL_S = 120.0  # an install's budget outside any action (pm verifies and dexopts a big APK)
# From Android 11 `input` is `cmd input` (a binder call, no VM started): a guarded gesture or key
# is then one shell script that checks the front and injects.
INPUT_CMD_SDK = 30
RUNNING_MARK = "--phoneuse-ps--"  # between the two outputs of running_apps' one shell command

# The unfiltered reads (the defaults of the provider primitives).
ANY_CONTACT, ANY_SMS, ANY_CALL, ANY_EVENT = ContactFilter(), SmsFilter(), CallFilter(), EventFilter()
# java.util.Calendar day numbers, as AlarmClock.EXTRA_DAYS takes them.
ALARM_DAYS = {"SUN": 1, "MON": 2, "TUE": 3, "WED": 4, "THU": 5, "FRI": 6, "SAT": 7}


class AdbDevice(Device):
    """A phone over adb. See the module docstring for how it is put together."""

    kind = "adb"
    via = "uiautomator2"
    files_via = "adb sync and toybox"
    guards_front = True  # every UI primitive checks what is in front itself (front_guard.py)

    def __init__(
        self,
        *,
        device: str = "adb",
        adb_server: str = "127.0.0.1:5037",
        poll_ms: int = 1000,
        keep_awake: bool = False,
    ) -> None:
        super().__init__()
        if poll_ms < 50:
            raise ConfigError(f"poll_ms must be at least 50, got {poll_ms}")
        self.named = device_serial(device)
        self.host, self.port = server_address(adb_server)
        self.poll_ms = poll_ms
        self.capabilities = CAPABILITIES
        self.serial = ""
        self.client = Client(self.host, self.port)
        self.worker = Worker(f"adb-{self.host}:{self.port}")
        self._dev: adbutils.AdbDevice | None = None
        self._ui: Ui | None = None
        self.u2: U2Server | None = None
        self._restarts = RestartLimiter(SERVER)  # the device's: it outlives each connection's U2Server
        self._publish: Callable[[Event], None] = lambda _e: None  # from any thread, onto the bus
        self._info: DeviceInfo | None = None
        self._natural: tuple[int, int] = (0, 0)
        self._v2 = False
        self._apps: tuple[float, list[AppInfo]] | None = None
        self._launchers: dict[str, str] = {}
        self._limits = providers.SortLimits()
        self._pollers: Pollers | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._check_now = asyncio.Event()  # check the link (or retry connecting) now
        self._tracker: Tracker | None = None
        self._closing = False
        # Issue 27: the screen recording that runs, and keep_awake's value to put back at close.
        self._recording: record.Running | None = None
        self.keep_awake = keep_awake
        self._stay_on_was: int | None = None

    # --- lifecycle -------------------------------------------------------------
    async def start(self, emit: EventSink, *, wanted: Callable[[str], bool] = lambda _t: True) -> None:
        self.link.attach(emit)
        await self._ensure_server()
        self.serial = await self._choose_serial()
        self.worker.start()
        loop = asyncio.get_running_loop()

        def publish(event: Event) -> None:  # on the worker's thread (a UI server restart)
            with contextlib.suppress(RuntimeError):  # the loop is closing
                loop.call_soon_threadsafe(emit, event)

        self._publish = publish

        def tracked(state: str) -> None:  # on the tracker's thread
            with contextlib.suppress(RuntimeError):  # the loop is closing
                loop.call_soon_threadsafe(self._tracked, state)

        self._tracker = Tracker(self.client, self.serial, tracked)
        self._tracker.start()
        self._pollers = Pollers(self, emit, wanted, poll_ms=self.poll_ms, on_failure=self._failed)
        try:
            await self._connect()
        except (RuntimeFailure, adbutils.AdbError, OSError) as exc:
            reason = exc.message if isinstance(exc, RuntimeFailure) else f"adb: {exc}"
            log.warning("the phone %s is not reachable yet: %s; retrying", self.serial, reason)
            self.link.lost(reason=reason)
        self._tasks = [
            asyncio.create_task(self._monitor(), name="adb link monitor"),
            asyncio.create_task(self._pollers.run(), name="adb event pollers"),
        ]

    async def close(self) -> None:
        self._closing = True
        await cancel_and_wait(*self._tasks)
        self._tasks = []
        await self._leave_phone_as_found()
        if self._tracker is not None:
            await asyncio.to_thread(self._tracker.stop)
        if self.u2 is not None:
            self.u2.stop()
        self.worker.stop()
        self.link.lost(reason="closed")

    async def _ensure_server(self) -> None:
        """The adb server answers, or is started when it is a local one that is not running."""
        try:
            await asyncio.to_thread(self.client.check_server)
            return
        except adbutils.AdbError as exc:
            if not is_local(self.host):
                raise ConfigError(
                    f"the adb server at {self.host}:{self.port} does not answer: {exc}"
                ) from exc
        try:
            said = await asyncio.to_thread(start_server, self.host, self.port, timeout_s=20.0)
        except (OSError, adbutils.AdbError) as exc:
            raise ConfigError(
                f"no adb server on {self.host}:{self.port}, and adb could not start one: {exc}"
            ) from exc
        try:
            await asyncio.to_thread(self.client.check_server)
        except adbutils.AdbError as exc:
            raise ConfigError(
                f"adb start-server did not start a server on port {self.port}: {said or exc}"
            ) from exc

    async def _choose_serial(self) -> str:
        if self.named or os.environ.get("ANDROID_SERIAL", "").strip():
            return choose_serial(self.named, os.environ.get("ANDROID_SERIAL"), [])
        try:
            attached = await asyncio.to_thread(self.client.attached)
        except adbutils.AdbError as exc:
            raise ConfigError(
                f"the adb server at {self.host}:{self.port} would not list devices: {exc}"
            ) from exc
        return choose_serial(None, None, attached)

    async def _connect(self, *, after_drop: bool = False) -> None:
        """One attempt to reach the phone and set it up; the link goes up when it worked."""
        serial = self.serial
        if is_network_serial(serial):
            said = await asyncio.to_thread(self._adb_connect, serial, after_drop)
            log.debug("adb connect %s: %s", serial, said)
        try:
            state = await asyncio.to_thread(self.client.state_of, serial, timeout_s=STATE_TIMEOUT_S)
        except adbutils.AdbError as exc:
            raise DeviceUnavailable(f"adb does not list {serial}: {exc}") from exc
        if state != "device":
            advice = STATE_ADVICE.get(state, "")
            raise DeviceUnavailable(f"{serial} is {state}" + (f": {advice}" if advice else ""))
        first = self._info is None
        self._info = await self._call("connecting", self._setup, default_s=CONNECT_S)
        if self.keep_awake and self._stay_on_was is None:
            await self._stay_awake()
        if first and self._pollers is not None:
            self._pollers.sms_mark = await self._sms_mark()
        log.info(
            "connected to %s (%s, Android %s, SDK %d, %dx%d, shell %s)",
            serial,
            self._info.model,
            self._info.android_version,
            self._info.sdk,
            self._info.width,
            self._info.height,
            "v2" if self._v2 else "v1",
        )
        self.link.connected(serial=serial, model=self._info.model)

    def _adb_connect(self, serial: str, after_drop: bool) -> str:
        """`adb connect`; after a drop, `adb disconnect` first: adb retries a network device it
        lost only every ~10 s, and meanwhile answers "already connected" and leaves it offline."""
        if after_drop:
            self.client.disconnect(serial)
        said = str(self.client.connect(serial, timeout=STATE_TIMEOUT_S))
        if not said.startswith(("connected to", "already connected to")):
            raise DeviceUnavailable(f"adb connect {serial}: {said}")
        return said

    def _setup(self, budget: Budget) -> DeviceInfo:
        """On the worker: the device's properties, shell protocol and screen, and the
        uiautomator2 server (started if it is not running; a failure there is logged and
        retried by the first UI call, which restarts it)."""
        dev = self.client.device(serial=self.serial)
        self._dev = dev
        features = str(dev.get_features())
        self._v2 = "shell_v2" in features.split(",")
        props = parse_getprop(self._sh(budget, "getprop").stdout)
        # The screen's size, and whether uiautomator2's keyboard is installed (uiautomator2 3.x
        # installs it on its first send_keys only): typing without it needs no look of its own.
        screen = self._sh(budget, f"{command('wm', 'size')}; {IME_LIST}").stdout
        size = parse_wm_size(screen) or (0, 0)
        self._natural = size  # the natural orientation's; screen_size() turns it as the display is
        width, height = sorted(size)
        sdk_text = props.get("ro.build.version.sdk", "0")
        info = DeviceInfo(
            kind=self.kind,
            serial=self.serial,
            model=props.get("ro.product.model", "") or self.serial,
            manufacturer=props.get("ro.product.manufacturer", ""),
            android_version=props.get("ro.build.version.release", ""),
            sdk=int(sdk_text) if sdk_text.isdigit() else 0,
            width=width,
            height=height,
        )
        if self.u2 is not None:
            self.u2.stop()  # its launch shell died with the connection
        self.u2 = U2Server(dev, v2=self._v2, limiter=self._restarts, on_restart=self._publish)
        self._ui = Ui(self.u2, self._sh, self._foreground)
        self._ui.ime_installed = ime_listed(screen)
        try:
            self.u2.ensure(budget)
        except Exception as exc:
            log.warning("the uiautomator2 server did not start (%s); the first UI call will retry", exc)
        return info

    async def _sms_mark(self) -> int | None:
        try:
            return await self.highest_sms_id()
        except RuntimeFailure as failure:
            log.warning(
                "cannot read the SMS provider (%s): MESSAGE_RECEIVED will not be reported", failure.message
            )
            return None

    async def _monitor(self) -> None:
        backoff = RECONNECT_FIRST_S
        while not self._closing:
            if self.link.up:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._check_now.wait(), timeout=LINK_CHECK_S)
                self._check_now.clear()
                reason = await self._state_problem()
                if reason is not None and self.link.up:
                    log.warning("lost the phone %s: %s", self.serial, reason)
                    self.link.lost(reason=reason)
                    backoff = RECONNECT_FIRST_S
                continue
            try:
                await self._connect(after_drop=True)
                backoff = RECONNECT_FIRST_S
            except (RuntimeFailure, adbutils.AdbError, OSError) as exc:
                reason = exc.message if isinstance(exc, RuntimeFailure) else str(exc)
                log.debug("reconnecting to %s failed (%s); next try in %.2f s", self.serial, reason, backoff)
                self.link.lost(reason=reason)
                # The reconnect backoff (RECONNECT_FIRST_S..RECONNECT_MAX_S), cut short when adb
                # reports the phone back.
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._check_now.wait(), timeout=backoff)
                self._check_now.clear()
                backoff = min(backoff * 2, RECONNECT_MAX_S)

    def _tracked(self, state: str) -> None:
        """adb's track-devices changed the phone's state: look now rather than at the next poll."""
        if (state != "device") == self.link.up:
            log.debug("adb reports %s as %s", self.serial, state)
            self._check_now.set()

    async def _state_problem(self) -> str | None:
        """Why the phone is not usable now, or None while adb says it is a ready device."""
        try:
            state = await asyncio.to_thread(self.client.state_of, self.serial, timeout_s=STATE_TIMEOUT_S)
        except (adbutils.AdbError, OSError) as exc:
            return f"adb no longer lists {self.serial} ({exc})"
        if state == "device":
            return None
        advice = STATE_ADVICE.get(state, "")
        return f"{self.serial} is {state}" + (f": {advice}" if advice else "")

    def _failed(self, failure: RuntimeFailure) -> None:
        if is_link_failure(failure):
            self._check_now.set()

    # --- calls on the worker -------------------------------------------------------
    async def _call(self, what: str, fn: Callable[[Budget], T], *, default_s: float = DEFAULT_CALL_S) -> T:
        """Runs `fn` on the phone's worker thread, translating what it raises."""
        _TYPED_SCREEN.set(None)  # whatever this call does, the screen typing read is no longer now
        try:
            return await self.worker.call(what, fn, default_s=default_s)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            failure = translate(exc, what)
            self._failed(failure)
            if failure is exc:
                raise
            raise failure from exc

    def _device(self) -> adbutils.AdbDevice:
        if self._dev is None:
            raise DeviceUnavailable(f"the phone {self.serial or '(none chosen)'} has not connected yet")
        return self._dev

    def _ui_now(self) -> Ui:
        if self._ui is None:
            raise DeviceUnavailable(f"the phone {self.serial or '(none chosen)'} has not connected yet")
        return self._ui

    def _sh(self, budget: Budget, cmd: str) -> ShellResult:
        """A shell command on the worker: shell_v2 when the phone has it (exit code, stderr
        apart), else v1 (stderr merged into stdout; the exit code from an echo adbutils adds)."""
        result = self._device().shell2(cmd, timeout=budget.wait_s(), v2=self._v2)
        if self._v2:
            return ShellResult(result.returncode, result.stdout, result.stderr)
        return ShellResult(result.returncode, result.output, "")

    def _out(self, budget: Budget, cmd: str) -> str:
        """stdout and stderr together, for tools that report failures as text (content, am)."""
        result = self._sh(budget, cmd)
        return result.stdout + ("\n" + result.stderr if result.stderr else "")

    # --- identity ---------------------------------------------------------------------
    async def describe(self) -> DeviceInfo:
        if self._info is None:
            raise DeviceUnavailable(f"the phone {self.serial} has not connected yet: {self.link.reason}")
        return self._info

    async def screen_size(self) -> tuple[int, int]:
        """The size as the display is turned now: `wm size` (read at connect) turned by the
        rotation uiautomator2 reports (one round trip), so a gesture stays on a landscape screen."""
        await self.describe()
        rotation = await self._call("reading the screen's rotation", lambda b: self._ui_now().rotation(b))
        return oriented_size(self._natural, rotation)

    # --- screen -------------------------------------------------------------------------
    async def dump_hierarchy(self) -> str:
        """The screen now: read by the typing just before (`input_text`'s last batch, when this
        task made no other device call since), else one `dumpWindowHierarchy`."""
        xml = _TYPED_SCREEN.get()
        if xml is None:
            xml = await self._call("reading the screen", lambda b: self._ui_now().dump(b))
        _TYPED_SCREEN.set(None)
        saw_screen(xml)
        return xml

    async def find(self, selector: Selector, *, timeout_ms: int = 0) -> UiNode | None:
        """One `objInfo`; with `timeout_ms`, a batch of `waitForExists` and `objInfo` (the phone
        waits, then looks), at most FIND_WAIT_CHUNK_MS a call so other calls take turns in between:
        one round trip for an element that is there or shows up within a chunk, where dumping and
        matching would take one every `find_poll_ms`."""
        if selector.ref is not None:
            # A ref names an element by where it sits in the whole tree: resolved on a dump.
            return await super().find(selector, timeout_ms=timeout_ms)
        what = f"finding {selector.describe()}"
        if timeout_ms <= 0:
            return await self._call(what, lambda b: self._ui_now().look(b, selector))
        loop = asyncio.get_running_loop()
        give_up = loop.time() + timeout_ms / 1000
        while True:
            left_ms = max(0, int((give_up - loop.time()) * 1000))
            node = await self._call(what, functools.partial(self._wait_and_look, selector, left_ms))
            if node is not None or loop.time() >= give_up:
                return node

    def _wait_and_look(self, selector: Selector, timeout_ms: int, budget: Budget) -> UiNode | None:
        return self._ui_now().wait_and_look(budget, selector, timeout_ms)

    def _wait_gone(self, selector: Selector, timeout_ms: int, budget: Budget) -> bool:
        return self._ui_now().wait_gone(budget, selector, timeout_ms)

    async def wait_gone(self, selector: Selector, *, timeout_ms: int) -> bool:
        """Waits on the phone (`waitUntilGone`, FIND_WAIT_CHUNK_MS a call so other calls take turns
        in between): one round trip for an element already gone, or that goes within a chunk."""
        if selector.ref is not None:
            return await super().wait_gone(selector, timeout_ms=timeout_ms)
        what = f"waiting for {selector.describe()} to go"
        loop = asyncio.get_running_loop()
        give_up = loop.time() + timeout_ms / 1000
        while True:
            left_ms = max(0, int((give_up - loop.time()) * 1000))
            if await self._call(what, functools.partial(self._wait_gone, selector, left_ms)):
                return True
            if loop.time() >= give_up:
                return False

    async def screenshot(self) -> Screenshot:
        return await self._call(
            "taking a screenshot", lambda b: capture.screenshot(b, self._ui_now(), self._device(), self._sh)
        )

    def _guarded(self, fn: Callable[[Ui, Budget], T], *inject: str) -> Callable[[Budget], T | None]:
        """`fn` (a gesture at coordinates or a key, through uiautomator2) on the worker. Under the
        action's front guard: on Android 11+ `input INJECT...` instead, in one shell script that
        checks the front first (Ui.guarded_input); before 11 (`input` starts a VM a time) the
        front read, then `fn`, in the same worker call."""
        guard = current_guard()
        seen = expected()  # a gesture at coordinates: the screen it was aimed at (screen/stale.py)
        saw_screen(None)
        one_trip = (guard is not None or seen is not None) and self._sdk() >= INPUT_CMD_SDK

        def run(budget: Budget) -> T | None:
            ui = self._ui_now()
            if one_trip:
                ui.guarded_input(budget, guard, *inject, seen=seen)
                return None
            ui.check_front(budget, guard, seen)
            return fn(ui, budget)

        return run

    async def tap(self, x: int, y: int) -> None:
        await self._call(
            f"tapping ({x}, {y})", self._guarded(lambda ui, b: ui.tap(b, x, y), "tap", str(x), str(y))
        )

    async def act_on(
        self, selector: Selector, act: ElementAct, *, check: Callable[[UiNode], None] = lambda _n: None
    ) -> ActedOn | None:
        """One JSON-RPC batch: `objInfo` and the act's own call (`click`, `longClick`, `click` then
        `clearTextField` and `objInfo` again), each with the selector, so the phone finds the
        element as it acts. Under a front guard the selector is guarded (ui.guarded): nothing is
        found while a refused app has the focus; only then is the front read (FrontRefused), and
        the element looked for anywhere on the screen (an element of another window: the
        keyboard's), for `check`, and acted on at its centre."""
        if selector.ref is not None:
            return await super().act_on(selector, act, check=check)
        guard = current_guard()
        dump = wants_screen()  # a settling action: the screen after, read in the same batch
        saw_screen(None)
        what = f"{act.kind.replace('_', ' ')} on {selector.describe()}"
        acted, xml = await self._call(
            what, lambda b: self._act_on(b, selector, act, check=check, guard=guard, dump=dump)
        )
        saw_screen(xml)
        return acted

    def _act_on(
        self,
        budget: Budget,
        selector: Selector,
        act: ElementAct,
        *,
        check: Callable[[UiNode], None],
        guard: FrontGuard | None,
        dump: bool,
    ) -> tuple[ActedOn | None, str | None]:
        ui = self._ui_now()
        plain = u2_selector(selector)
        sel = guarded(plain, guard.refused) if guard is not None else plain
        steps: list[tuple[str, tuple[Any, ...]]]
        after: dict[str, Any] | None = None
        if act.kind == "tap":
            steps = [("click", (sel,))]
        elif act.kind == "long_press":
            steps = [("longClick", (sel,))] if act.duration_ms is None else []
        elif act.kind == "focus":
            steps = [("click", (sel,))] if act.always else []
        else:
            # Read back from the dump (which tells a hint from a text, as objInfo does not).
            focused = guarded(FOCUSED, guard.refused) if guard is not None else FOCUSED
            steps = [("click", (sel,)), ("clearTextField", (focused,))]
            dump = True
        acted = ui.act(budget, sel, steps, after=after, dump=dump and bool(steps))
        if act.kind == "clear" and acted.node is not None:
            acted.after = _field_after(acted.xml, acted.node)
        if acted.node is None:
            ui.check_front(budget, guard)
            if guard is None:
                return None, None
            node = ui.look(budget, selector)  # outside the active window, or a refused package's
            if node is None:
                return None, None
            check(node)
            if guard.refuses(node.package):
                raise FrontRefused(Foreground(package=node.package, activity=""))
            return self._act_at(budget, ui, node, act), None
        check(acted.node)
        if steps:
            return ActedOn(acted.node, acted.after), acted.xml
        return self._act_at(budget, ui, acted.node, act), None

    def _act_at(self, budget: Budget, ui: Ui, node: UiNode, act: ElementAct) -> ActedOn:
        """The act at the element's centre, for what one batch could not do: a press held for a
        duration of the caller's, a focus tap only when the field has not the focus, an element
        outside the active window (its front was checked in this worker call)."""
        x, y = node.center
        if act.kind == "tap":
            ui.tap(budget, x, y)
        elif act.kind == "long_press":
            ui.long_press(budget, x, y, act.duration_ms or 800)
        elif act.always or not node.focused:
            ui.tap(budget, x, y)
        if act.kind == "clear":
            ui.clear_text(budget)
            return ActedOn(node, _field_after(ui.dump(budget), node))
        return ActedOn(node)

    async def long_press(self, x: int, y: int, duration_ms: int) -> None:
        held = ("swipe", str(x), str(y), str(x), str(y), str(duration_ms))
        await self._call(
            f"pressing ({x}, {y})", self._guarded(lambda ui, b: ui.long_press(b, x, y, duration_ms), *held)
        )

    async def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int) -> None:
        path = ("swipe", str(x1), str(y1), str(x2), str(y2), str(duration_ms))
        await self._call(
            "swiping",
            self._guarded(lambda ui, b: ui.swipe(b, x1, y1, x2, y2, duration_ms=duration_ms), *path),
        )

    async def input_text(self, text: str, *, replace: bool = False) -> str:
        """Types (Ui.input_text); the screen its paste's batch read after typing is kept for this
        task's next device call if that is the read back (`dump_hierarchy`)."""
        guard = current_guard()
        saw_screen(None)
        typed = await self._call(
            "typing", lambda b: self._ui_now().input_text(b, text, replace=replace, guard=guard)
        )
        _TYPED_SCREEN.set(typed.xml)
        return typed.via

    async def clear_text(self) -> None:
        guard = current_guard()
        saw_screen(None)
        await self._call("clearing the field", lambda b: self._ui_now().clear_text(b, guard=guard))

    async def press_key(self, keycode: int) -> None:
        await self._call(
            f"pressing key {keycode}",
            self._guarded(lambda ui, b: ui.press_key(b, keycode), "keyevent", str(keycode)),
        )

    # --- apps -------------------------------------------------------------------------------
    def known_apps(self) -> list[AppInfo]:
        """The app list last read (installed_apps), if any."""
        return self._apps[1] if self._apps is not None else []

    async def installed_apps(self) -> list[AppInfo]:
        cached = self._apps
        if cached is not None and time.monotonic() - cached[0] < apps.APPS_TTL_S:
            return cached[1]
        found = await self._call("listing apps", self._list_apps)
        self._apps = (time.monotonic(), found)
        return found

    def _list_apps(self, budget: Budget) -> list[AppInfo]:
        parts = apps.split_list(self._sh(budget, apps.LIST_SCRIPT).stdout)
        listed = parts.get("packages", "")
        if apps.versions_refused(listed):
            listed = self._sh(budget, apps.PLAIN_LIST).stdout
        packages = apps.parse_package_versions(listed)
        system = set(apps.parse_packages(parts.get("system", "")))
        launchers = apps.parse_components(parts.get("launchers", ""))
        labels = apps.parse_plain_labels(parts.get("labels", ""))
        found = apps.build_apps(packages, launchers, labels, system)
        self._launchers.update({a.package: a.launch_activity for a in found if a.launch_activity})
        return found

    async def foreground(self) -> Foreground:
        return await self._call("reading the foreground app", self._foreground)

    def _foreground(self, budget: Budget, windows: str | None = None) -> Foreground:
        """From `dumpsys window windows` (read here unless given), else the resumed activity."""
        if windows is None:
            windows = self._sh(budget, command("dumpsys", "window", "windows")).stdout
        found = dumpsys.parse_window_focus(windows)
        if found is None:
            found = dumpsys.parse_resumed_activity(
                self._sh(budget, command("dumpsys", "activity", "activities")).stdout
            )
        if found is None:
            return Foreground(package="", activity="")
        return Foreground(package=found[0], activity=found[1])

    async def running_packages(self) -> list[str]:
        return await self._call("listing running apps", self._running)

    # --- issue 27, DEVICE_STATUS ----------------------------------------------------------
    async def status(self) -> DeviceStatus:
        """Everything in one shell stream (status.SCRIPT), the identity from connect's getprop."""
        info = await self.describe()
        output = await self._call("reading the phone's status", lambda b: self._sh(b, status.SCRIPT).stdout)
        return status.read_status(output, info)

    def _running(self, budget: Budget, output: str | None = None) -> list[str]:
        """From `ps -A` (read here unless given); before Android 8, ps lists all without -A."""
        if output is None:
            output = self._sh(budget, command("ps", "-A")).stdout
        if len(output.strip().splitlines()) <= 1:
            output = self._sh(budget, "ps").stdout
        return dumpsys.parse_ps_packages(output)

    async def running_apps(self) -> tuple[Foreground, list[str]]:
        def read(budget: Budget) -> tuple[Foreground, list[str]]:
            # One shell stream for both; the marker cannot occur in either output.
            both = self._sh(budget, f"dumpsys window windows; echo {RUNNING_MARK}; ps -A").stdout
            windows, _, processes = both.partition(RUNNING_MARK)
            return self._foreground(budget, windows), self._running(budget, processes)

        return await self._call("reading the running apps", read)

    async def launch_app(self, package: str) -> Foreground:
        apps.check_package(package)
        return await self._call(f"opening {package}", lambda b: self._launch(b, package))

    def _launch(self, budget: Budget, package: str) -> Foreground:
        activity = self._launchers.get(package)
        if activity is None:
            resolved = self._sh(budget, apps.resolve_launcher(package))
            components = apps.parse_components(resolved.stdout)
            if components:
                activity = self._launchers[package] = components[-1][1]
            elif "No activity found" not in resolved.stdout:
                # No `cmd package` (before Android 7) or it failed: monkey resolves it itself.
                out = self._out(budget, apps.monkey_launch(package))
                if "No activities found to run" in out or "monkey aborted" in out:
                    raise Unsupported(f"{package} is not installed or has no launcher activity")
                return Foreground(package=package, activity="", via="monkey")
            else:
                installed = self._sh(budget, command("pm", "path", package)).stdout
                if "package:" not in installed:
                    raise Unsupported(f"{package} is not installed")
                raise Unsupported(
                    f"{package} has no launcher activity; start one of its activities with START_INTENT"
                )
        out = self._out(budget, apps.am_start_component(package, activity))
        failure = apps.am_failure(out)
        if failure is not None:
            self._launchers.pop(package, None)
            self._apps = None
            if apps.am_denied(out):
                raise PermissionDenied(f"opening {package}: {failure}")
            raise Unsupported(f"opening {package}: {failure}")
        return Foreground(package=package, activity=activity, via="am start -n")

    async def stop_app(self, package: str) -> bool:
        apps.check_package(package)

        def stop(budget: Budget) -> bool:
            was_running = package in self._running(budget)
            self._sh(budget, command("am", "force-stop", package))
            return was_running

        return await self._call(f"stopping {package}", stop)

    async def start_intent(self, intent: Intent) -> IntentResult:
        return await self._call("sending the intent", lambda b: self._start_intent(b, intent))

    def _start_intent(
        self, budget: Budget, intent: Intent, *, longs: frozenset[str] = frozenset()
    ) -> IntentResult:
        handled_by = intent.component or intent.package
        ask = apps.resolve_args(intent)
        if ask is not None:
            answer = self._sh(budget, command(*ask)).stdout
            components = apps.parse_components(answer)
            if components:
                package, activity = components[-1]
                handled_by = f"{package}/{activity}"
            elif "No activity found" in answer:
                raise Unsupported(f"no app on the phone handles this intent ({_intent_summary(intent)})")
        out = self._out(budget, command(*apps.intent_args(intent, longs=longs)))
        failure = apps.am_failure(out)
        if failure is not None:
            if apps.am_denied(out):
                raise PermissionDenied(f"the phone refused the intent: {failure}")
            raise Unsupported(f"the intent was not delivered: {failure}")
        verb = {"activity": "am start", "broadcast": "am broadcast", "service": "am startservice"}[
            intent.kind
        ]
        return IntentResult(handled_by=handled_by or intent.kind, via=verb)

    # --- personal data -----------------------------------------------------------------------
    async def contacts(self, where: ContactFilter = ANY_CONTACT) -> list[Contact]:
        return await self._call("reading contacts", lambda b: providers.contacts(self._out, b, where))

    async def add_contact(self, name: str, phones: list[str], emails: list[str]) -> Saved:
        contact_id = await self._call(
            "adding a contact",
            lambda b: providers.add_contact(self._out, b, name, phones, emails, sdk=self._sdk()),
        )
        return Saved(id=contact_id, via="content insert")

    def _sdk(self) -> int:
        return self._info.sdk if self._info is not None else 0

    async def send_sms(self, number: str, body: str) -> str:
        return await self._call("sending the SMS", lambda b: self._send_sms(b, number, body))

    def _send_sms(self, budget: Budget, number: str, body: str) -> str:
        intent = Intent(
            action="android.intent.action.SENDTO",
            data="smsto:" + url_quote(number.strip(), safe="+"),
            extras={"sms_body": body, "exit_on_sent": True},
        )
        self._start_intent(budget, intent)
        forms.tap_when_shown(
            self._ui_now(),
            budget,
            forms.SEND_BUTTONS,
            starts_with=forms.SEND_PREFIX,
            poll_s=self.find_poll_ms / 1000,
            missing="the messaging app opened, but no send button appeared; the message was not sent "
            "(it may be left as a draft)",
        )
        return "sms intent + send button"

    async def sms_messages(self, where: SmsFilter = ANY_SMS) -> list[SmsMessage]:
        return await self._call(
            "reading SMS", lambda b: providers.sms_messages(self._out, b, where, self._limits)
        )

    async def highest_sms_id(self) -> int:
        return await self._call(
            "reading SMS ids", lambda b: providers.highest_sms_id(self._out, b, self._limits)
        )

    async def call_log(self, where: CallFilter = ANY_CALL) -> list[CallRecord]:
        return await self._call(
            "reading the call log", lambda b: providers.call_log(self._out, b, where, self._limits)
        )

    async def place_call(self, number: str) -> str:
        intent = Intent(
            action="android.intent.action.CALL", data="tel:" + url_quote(number.strip(), safe="+*")
        )
        await self._call("placing the call", lambda b: self._start_intent(b, intent))
        return "am start CALL"

    async def end_call(self) -> bool:
        def end(budget: Budget) -> bool:
            state, _ = dumpsys.parse_call_state(
                self._sh(budget, command("dumpsys", "telephony.registry")).stdout
            )
            if state == "idle":
                return False
            self._ui_now().press_key(budget, KEYCODES["ENDCALL"])
            return True

        return await self._call("ending the call", end)

    async def call_state(self) -> CallState:
        def read(budget: Budget) -> CallState:
            out = self._sh(budget, command("dumpsys", "telephony.registry")).stdout
            state, number = dumpsys.parse_call_state(out)
            return CallState(state=state, number=number)

        return await self._call("reading the call state", read)

    async def insert_event(self, event: CalendarEvent, *, timezone: str | None = None) -> Saved:
        return await self._call("adding the event", lambda b: self._insert_event(b, event, timezone or "UTC"))

    def _insert_event(self, budget: Budget, event: CalendarEvent, tz: str) -> Saved:
        try:
            calendar = providers.writable_calendar(self._out, budget)
        except PermissionDenied as exc:
            log.info(
                "calendars are not readable over adb (%s); adding the event through the app", exc.message
            )
            calendar = None
        if calendar is not None:
            try:
                event_id = providers.insert_event(self._out, budget, calendar, event, tz=tz, sdk=self._sdk())
                return Saved(id=event_id, via="content insert")
            except PermissionDenied as exc:
                log.info(
                    "the calendar provider refused the insert (%s); adding it through the app", exc.message
                )
        return self._insert_event_by_intent(budget, event, tz)

    def _insert_event_by_intent(self, budget: Budget, event: CalendarEvent, tz: str) -> Saved:
        try:
            mark: int | None = providers.highest_event_id(self._out, budget, self._limits)
        except PermissionDenied:
            mark = None
        extras: dict[str, Any] = {
            "beginTime": event.start_ms,
            "endTime": event.end_ms,
            "title": event.title,
            "allDay": event.all_day,
            "eventTimezone": tz,
        }
        if event.location:
            extras["eventLocation"] = event.location
        if event.description:
            extras["description"] = event.description
        intent = Intent(action="android.intent.action.INSERT", data=providers.EVENTS_URI, extras=extras)
        self._start_intent(budget, intent, longs=frozenset({"beginTime", "endTime"}))
        forms.tap_when_shown(
            self._ui_now(),
            budget,
            forms.SAVE_BUTTONS,
            poll_s=self.find_poll_ms / 1000,
            missing="the calendar app opened its editor, but no Save button appeared",
        )
        event_id = ""
        if mark is not None:
            give_up = time.monotonic() + min(forms.BUTTON_S, budget.left())
            while True:
                found = providers.find_new_event(self._out, budget, mark, event.title, event.start_ms)
                if found is not None or time.monotonic() + self.find_poll_ms / 1000 >= give_up:
                    event_id = found or ""
                    break
                time.sleep(self.find_poll_ms / 1000)  # the provider poll while the app saves
        return Saved(id=event_id, via="calendar intent + save")

    async def calendar_events(self, where: EventFilter = ANY_EVENT) -> list[CalendarEvent]:
        return await self._call(
            "reading events", lambda b: providers.calendar_events(self._out, b, where, self._limits)
        )

    async def set_alarm(self, alarm: Alarm) -> Saved:
        extras: dict[str, Any] = {
            "android.intent.extra.alarm.HOUR": alarm.hour,
            "android.intent.extra.alarm.MINUTES": alarm.minute,
            "android.intent.extra.alarm.SKIP_UI": True,
        }
        if alarm.label:
            extras["android.intent.extra.alarm.MESSAGE"] = alarm.label
        intent = Intent(action="android.intent.action.SET_ALARM", extras=extras)
        days = [ALARM_DAYS[d[:3].upper()] for d in alarm.days if d[:3].upper() in ALARM_DAYS]

        def set_it(budget: Budget) -> None:
            args = apps.intent_args(intent)
            if days:  # an ArrayList<Integer>: --eial (Android 8+)
                args += ["--eial", "android.intent.extra.alarm.DAYS", ",".join(str(d) for d in days)]
            out = self._out(budget, command(*args))
            failure = apps.am_failure(out)
            if failure is not None:
                raise Unsupported(f"no clock app took the alarm: {failure}")

        await self._call("setting the alarm", set_it)
        return Saved(id="", via="SET_ALARM intent")

    async def alarms(self) -> list[Alarm]:
        raise Unsupported(
            "a phone does not list its clock app's alarms over adb; SET_ALARM cannot read its alarm back"
        )

    async def set_clipboard(self, text: str) -> str:
        await self._call("setting the clipboard", lambda b: self._ui_now().set_clipboard(b, text))
        return "uiautomator2"

    async def get_clipboard(self) -> str:
        return await self._call("reading the clipboard", lambda b: self._ui_now().get_clipboard(b))

    async def notifications(self) -> list[Notification]:
        out = await self._call(
            "reading notifications",
            lambda b: self._sh(b, command("dumpsys", "notification", "--noredact")).stdout,
        )
        return dumpsys.parse_notifications(out)

    async def shell(self, command: str, *, timeout_s: float) -> ShellResult:
        def run(budget: Budget) -> ShellResult:
            return self._sh(Budget(min(budget.until, time.monotonic() + timeout_s)), command)

        return await self._call("running the shell command", run, default_s=timeout_s)

    # --- issue 27: the screen's power and recording -------------------------------------------
    async def power_state(self) -> PowerState:
        def read(budget: Budget) -> PowerState:
            both = self._sh(budget, power.READ).stdout
            dump, _, policy = both.partition(power.MARK)
            showing, secure = power.parse_keyguard(policy)
            return PowerState(awake=parse_screen_on(dump), locked=showing, secure=secure, via="dumpsys")

        return await self._call("reading the screen's power state", read)

    async def wake(self) -> str:
        await self._call("waking the screen", lambda b: self._sh(b, power.WAKE))
        return power.WAKE

    async def sleep(self) -> str:
        await self._call("putting the screen to sleep", lambda b: self._sh(b, power.SLEEP))
        return power.SLEEP

    async def dismiss_keyguard(self) -> str:
        dismiss = power.DISMISS if self._sdk() >= power.DISMISS_KEYGUARD_SDK else power.DISMISS_BEFORE_O
        await self._call("dismissing the lock screen", lambda b: self._sh(b, dismiss))
        return dismiss

    async def start_recording(
        self, *, max_s: int, size: tuple[int, int] | None, bit_rate: int | None
    ) -> Recording:
        if 0 < self._sdk() < record.MIN_SDK:
            raise Unsupported(f"screenrecord needs Android 4.4 or later; this phone runs {self._sdk_name()}")

        def begin(budget: Budget) -> Recording:
            running = self._recording
            if running is not None:
                if record.is_alive(self._sh, budget, running.pid):
                    raise busy(running.recording)
                # It reached its limit: its file stays on the phone (its path was answered).
                self._recording = None
            recording = Recording(
                path=recording_path(), max_s=max_s, started_ms=int(time.time() * 1000), via=record.VIA
            )
            self._recording = record.start(self._sh, budget, recording, size=size, bit_rate=bit_rate)
            return recording

        return await self._call("starting the screen recording", begin)

    async def stop_recording(self) -> RecordedFile:
        def end(budget: Budget) -> RecordedFile:
            running = self._recording
            if running is None:
                raise nothing_recorded()
            done = record.stop(self._sh, budget, running)
            self._recording = None
            return done

        return await self._call(
            "stopping the screen recording", end, default_s=record.FINISH_S + DEFAULT_CALL_S
        )

    def _sdk_name(self) -> str:
        info = self._info
        return (
            f"Android {info.android_version} (SDK {info.sdk})" if info is not None else "an unknown Android"
        )

    async def _stay_awake(self) -> None:
        """keep_awake: `svc power stayon true`, the previous value kept for close (read back)."""

        def stay(budget: Budget) -> int | None:
            was = power.parse_stay_on(self._sh(budget, power.STAY_ON_SETTING).stdout)
            if was is None or was == power.STAY_ON_ALL:
                return None
            self._sh(budget, power.STAY_ON)
            now = power.parse_stay_on(self._sh(budget, power.STAY_ON_SETTING).stdout)
            if now != power.STAY_ON_ALL:
                log.warning("keep_awake: svc power stayon true did not stick (the setting reads %s)", now)
            return was

        try:
            self._stay_on_was = await self._call("keeping the screen awake", stay)
        except RuntimeFailure as failure:
            log.warning("keep_awake: could not keep the screen on (%s)", failure.message)

    async def _leave_phone_as_found(self) -> None:
        """At close: a recording left running is stopped (SIGINT: its mp4 is finished), and the
        screen's stay-on setting that keep_awake changed is put back."""
        running, self._recording = self._recording, None
        was, self._stay_on_was = self._stay_on_was, None
        if (running is None and was is None) or not self.link.up:
            return

        def leave(budget: Budget) -> None:
            if running is not None:
                record.interrupt(self._sh, budget, running.pid)
            if was is not None:
                self._sh(budget, power.restore_stay_on(was))

        try:
            await self._call("leaving the phone as it was", leave, default_s=3.0)
        except RuntimeFailure as failure:
            log.warning("could not leave the phone as it was (%s)", failure.message)

    # --- the phone's settings (issue 27): system_settings.py builds and reads the commands ------
    def _settings_call(self, what: str, fn: Callable[[system_settings.Sh], T]) -> Awaitable[T]:
        return self._call(what, lambda b: fn(functools.partial(self._sh, b)))

    async def set_switch(self, switch: Switch, enabled: bool) -> str:
        sdk = self._sdk()
        return await self._settings_call(
            f"turning {SWITCH_NAMES[switch]} {'on' if enabled else 'off'}",
            lambda sh: system_settings.set_switch(sh, switch, enabled, sdk=sdk),
        )

    async def switch(self, switch: Switch) -> bool:
        return await self._settings_call(
            f"reading {SWITCH_NAMES[switch]}", lambda sh: system_settings.switch(sh, switch)
        )

    async def set_volume(self, stream: Stream, level: int) -> str:
        sdk = self._sdk()
        return await self._settings_call(
            "setting the volume", lambda sh: system_settings.set_volume(sh, stream, level, sdk=sdk)
        )

    async def volume(self, stream: Stream) -> Volume:
        sdk = self._sdk()
        return await self._settings_call(
            "reading the volume", lambda sh: system_settings.volume(sh, stream, sdk=sdk)
        )

    async def set_brightness(self, level: int | None, *, auto: bool) -> str:
        return await self._settings_call(
            "setting the brightness", lambda sh: system_settings.set_brightness(sh, level, auto=auto)
        )

    async def brightness(self) -> Brightness:
        return await self._settings_call("reading the brightness", system_settings.brightness)

    async def set_dnd(self, mode: DndMode) -> str:
        sdk = self._sdk()
        return await self._settings_call(
            "setting Do Not Disturb", lambda sh: system_settings.set_dnd(sh, mode, sdk=sdk)
        )

    async def dnd(self) -> DndMode:
        return await self._settings_call("reading Do Not Disturb", system_settings.dnd)

    def network_links(self) -> list[str]:
        serial = self.serial or self.named or ""
        if is_network_serial(serial) and not is_local(serial.rpartition(":")[0].strip("[]")):
            return [f"adb over Wi-Fi ({serial})"]
        if "._adb-tls-connect." in serial or serial.endswith("._adb-tls-connect._tcp"):
            return [f"adb over wireless debugging ({serial})"]
        return []

    # --- files (issue 27: PUSH_FILE, PULL_FILE; files.py) ------------------------------
    async def resolve_path(self, path: str) -> str:
        return await self._call("resolving a path", lambda b: files.resolve(b, self._sh, path))

    async def file_info(self, path: str) -> PhoneFile:
        return await self._call("reading a file's size", lambda b: files.info(b, self._sh, path))

    async def file_sha256(self, path: str) -> str:
        return await self._call(
            "hashing a file",
            lambda b: files.sha256(b, self._sh, files.TimedSync(self._device(), b), path),
            default_s=120.0,
        )

    async def read_file(self, path: str, offset: int, length: int) -> bytes:
        return await self._call(
            "reading a file", lambda b: files.read(b, self._device(), path, offset, length), default_s=60.0
        )

    async def pull_file(self, path: str, dest: BinaryIO, *, limit: int) -> int:
        return await self._call(
            "pulling a file",
            lambda b: files.pull(files.TimedSync(self._device(), b), path, dest, limit),
            default_s=600.0,
        )

    async def write_file(self, path: str, source: Path | bytes, *, append: bool = False) -> None:
        await self._call(
            "pushing a file",
            lambda b: files.write(
                b, self._sh, files.TimedSync(self._device(), b), path, source, append=append
            ),
            default_s=600.0,
        )

    # --- packages (issue 27): pm as the shell user ------------------------------------------
    async def install_apk(self, *, local: Path | None = None, phone_path: str = "") -> str:
        def install(budget: Budget) -> str:
            remote = phone_path
            if local is not None:  # pushed where pm may read it, removed whatever happens
                remote = f"{packages.REMOTE_DIR}/phoneuse-{uuid.uuid4().hex[:12]}.apk"
                self._device().sync.push(local, remote)
            try:
                out = self._out(budget, packages.install_command(remote))
            finally:
                if local is not None:
                    self._sh(budget, command("rm", "-f", remote))
            failure = packages.pm_failure(out, what="pm install")
            if failure is not None:
                raise failure
            self._apps = None  # the list of apps is read again
            return "pm install"

        return await self._call("installing an app", install, default_s=INSTALL_S)

    async def pull_apk(self, phone_path: str, dest: Path, *, max_bytes: int) -> None:
        def pull(budget: Budget) -> None:
            info = self._device().sync.stat(phone_path)  # sync's STAT is an lstat
            if stat.S_ISLNK(info.mode):
                raise PermissionDenied(
                    f"{phone_path} is a symlink: only a regular file is read, never where it points"
                )
            if info.mode == 0 or not stat.S_ISREG(info.mode):
                raise InvalidParams(f"{phone_path} is not a file on the phone")
            if info.size > max_bytes:
                raise InvalidParams(f"{phone_path} is {info.size} bytes, past the {max_bytes} an APK may be")
            self._device().sync.pull(phone_path, dest)

        await self._call("reading an APK on the phone", pull, default_s=INSTALL_S)

    async def uninstall_app(self, package: str) -> str:
        def uninstall(budget: Budget) -> str:
            out = self._out(budget, packages.uninstall_command(package))
            failure = packages.pm_failure(out, what="pm uninstall")
            if failure is not None:
                raise failure
            self._apps = None
            return "pm uninstall"

        return await self._call("uninstalling an app", uninstall)

    async def set_permission(self, package: str, permission: str, *, granted: bool) -> str:
        verb = "grant" if granted else "revoke"

        def change(budget: Budget) -> str:
            result = self._sh(budget, packages.permission_command(package, permission, granted=granted))
            failure = packages.permission_failure(
                result.exit_code, result.stdout + "\n" + result.stderr, what=f"pm {verb}"
            )
            if failure is not None:
                raise failure
            return f"pm {verb}"

        return await self._call(f"pm {verb}", change)

    async def package_state(self, package: str) -> PackageState | None:
        def read(budget: Budget) -> PackageState | None:
            if not packages.listed(self._sh(budget, packages.list_command(package)).stdout, package):
                return None
            dump = self._sh(budget, packages.dump_command(package)).stdout
            return packages.parse_package_dump(dump, package) or PackageState(package)

        return await self._call("reading a package", read)


def _field_after(xml: str | None, was: UiNode) -> UiNode | None:
    """The field after an edit, in a dump: the focused editable, else the one where it was."""
    if xml is None:
        return None
    root = parse_hierarchy(xml)
    focused = next((n for n in root.walk() if n.focused and n.editable), None)
    return focused or next((n for n in root.walk() if n.editable and n.bounds == was.bounds), None)


def _intent_summary(intent: Intent) -> str:
    parts = [p for p in (intent.action, intent.data, intent.component or intent.package) if p]
    return " ".join(parts) or intent.kind
