"""`SimDevice`: a simulated Android 14 phone (Pixel 8, 1080x2400) that keeps real state.

It is a state model, not canned answers: apps have screens whose taps and typing change
what the next dump shows, SMS typed into Messages land in the sent box, intents resolve
like the package manager would, and failures read like a phone's. Data (contacts, SMS,
the call log, events, alarms, notifications, WhatsApp chats, clipboard, Wi-Fi) persists to
`state_file` after every change; the UI (which app is open) starts at the home screen.

The phone it starts as is documented in `seed.SEED`. Scenario methods, used by sim-only
actions and tests: `receive_sms`, `receive_chat_message`, `post_notification`,
`incoming_call`, `remote_hang_up`, `set_screen`, and `disconnect` / `reconnect`, which make the
phone drop off its cable and come back (every primitive raises DeviceUnavailable meanwhile).

Its stores are bounded like a phone's (`state.LIMITS`, also in the spec): the oldest SMS, chat
messages, notifications and calls go first; contacts, events and alarms past their limits are refused.

The state file is written behind the changes, by one task in a worker thread, so a large state
never stalls the server: changes made during a write share the next one, the file only moves
forward, and `close` (or `flush`) waits until the last change is in it. A crash can lose the
changes of the last moments; it never leaves a torn file.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import dataclasses
import pathlib
import re
from collections.abc import Callable
from typing import BinaryIO, TypeVar, cast

from phoneuse_runtime.device.base import (
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
    EventFilter,
    Foreground,
    Intent,
    IntentResult,
    Notification,
    PackageState,
    PhoneFile,
    Plugged,
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
)
from phoneuse_runtime.device.sim import shell as sim_shell
from phoneuse_runtime.device.sim.catalog import APPS, app_info
from phoneuse_runtime.device.sim.dialogs import DialogKind, DialogScreen
from phoneuse_runtime.device.sim.files import SimFiles
from phoneuse_runtime.device.sim.home import CustomScreen
from phoneuse_runtime.device.sim.intents import start_intent
from phoneuse_runtime.device.sim.packages import SimPackages
from phoneuse_runtime.device.sim.phone import SimPhone
from phoneuse_runtime.device.sim.power import LockKind, SimPower, SimRecorder
from phoneuse_runtime.device.sim.render import render_png
from phoneuse_runtime.device.sim.seed import SEED, seed_state
from phoneuse_runtime.device.sim.state import VOLUME_RANGES, ChatMessage, SimState, render_state
from phoneuse_runtime.device.sim.status import SimBattery, sim_status
from phoneuse_runtime.device.sim.ui_server import SimUiServer
from phoneuse_runtime.device.sim.widgets import HEIGHT, WIDTH
from phoneuse_runtime.kernel.capabilities import EVERYTHING
from phoneuse_runtime.kernel.errors import DeviceUnavailable, InvalidParams, Timeout, Unsupported
from phoneuse_runtime.kernel.events import EventSink
from phoneuse_runtime.screen.stale import check_front as stale_check
from phoneuse_runtime.screen.ui import parse_hierarchy, to_hierarchy_xml
from phoneuse_runtime.util.apk import ApkError, read_apk
from phoneuse_runtime.util.files import StateWriter, remove_stale_temps
from phoneuse_runtime.util.numbers import digits, same_number

T = TypeVar("T")

__all__ = ["SEED", "ChatMessage", "SimDevice"]

MODEL = "Pixel 8 (simulated)"
SERIAL = "sim-0"
INFO = DeviceInfo(
    kind="sim",
    serial=SERIAL,
    model=MODEL,
    manufacturer="Google",
    android_version="14",
    sdk=34,
    width=WIDTH,
    height=HEIGHT,
)


def _everything(_event_type: str) -> bool:
    return True


def _same_address(stored: str, wanted: str) -> bool:
    """An SMS address as the phone compares it: the same number, or, for a sender without digits
    (an alphanumeric one, e.g. "Google"), the same text."""
    if digits(stored) and digits(wanted):
        return same_number(stored, wanted)
    return stored.strip().casefold() == wanted.strip().casefold()


def _limited(rows: list[T], limit: int | None) -> list[T]:
    return rows if limit is None else rows[: max(0, limit)]


def _fresh(phone: SimPhone) -> None:
    front = phone.foreground()
    stale_check(front.package, front.activity)


async def _gesture(duration_ms: int) -> None:
    """A gesture lasts as long as asked; this is the gesture itself, not a wait for the UI."""
    if duration_ms < 0:
        raise InvalidParams(f"duration_ms must not be negative, got {duration_ms}")
    await asyncio.sleep(duration_ms / 1000)


# The dump's own rotation attribute (uiautomator writes the display's, 0..3).
_ROTATION = re.compile(r"<hierarchy\b[^>]*\brotation=\"(\d)\"")


_SERVING = contextlib.nullcontext()  # a live UI server: nothing to do around the call


# Each switch and the SimState field that holds it.
_SWITCH_FIELDS: dict[str, str] = {
    "wifi": "wifi_enabled",
    "bluetooth": "bluetooth_enabled",
    "airplane_mode": "airplane_mode",
    "auto_rotate": "auto_rotate",
}


class _Operation:
    """The bracket around one primitive (a class, not a generator: it runs on every call)."""

    __slots__ = ("device", "phone")

    def __init__(self, device: SimDevice, phone: SimPhone) -> None:
        self.device = device
        self.phone = phone

    def __enter__(self) -> SimPhone:
        return self.phone

    def __exit__(self, *exc_info: object) -> None:
        self.phone.settle()
        state = self.phone.state
        if state.dirty:
            state.dirty = False
            writer = self.device.writer
            if writer is not None:
                writer.changed()  # written by its own task: a cancelled call still persists


class SimDevice(Device):
    """The simulated phone behind the `Device` primitives."""

    kind = "sim"
    via = "sim"

    def __init__(self, *, state_file: pathlib.Path | None = None) -> None:
        super().__init__()
        self.state_file = state_file
        self.capabilities = EVERYTHING  # the sim does it all, scenarios included
        self._phone: SimPhone | None = None
        self.writer: StateWriter | None = None
        self._comeback: asyncio.TimerHandle | None = None
        self.ui_server: SimUiServer | None = None  # SIM_UI_SERVER_DIES kills it
        self.battery = SimBattery()  # SIM_SET_BATTERY sets it (issue 27)
        self.power = SimPower()  # issue 27: the screen's power and lock, not kept in the state file
        self.recorder = SimRecorder()
        self.files = SimFiles.seeded()  # shared storage (files.py), not in the state file
        self.packages = SimPackages()  # what INSTALL_APP installed, and every app's permissions

    # --- lifecycle -------------------------------------------------------
    async def start(self, emit: EventSink, *, wanted: Callable[[str], bool] = _everything) -> None:
        # `wanted` is for backends that poll the phone; the sim's events cost nothing unheard.
        self.link.attach(emit)
        path = self.state_file
        state: SimState | None = None
        if path is not None:
            await asyncio.to_thread(remove_stale_temps, path)
            if await asyncio.to_thread(path.exists):
                state = await asyncio.to_thread(SimState.load, path)  # StateFileError if it is not one
        if state is None:
            state = seed_state()
        if path is not None:
            live = state
            self.writer = StateWriter(path, lambda: render_state(live.snapshot()))
        self._phone = SimPhone(state, emit)
        self.ui_server = SimUiServer(emit)
        self.link.connected(serial=SERIAL, model=MODEL)

    async def close(self) -> None:
        self._cancel_comeback()
        self.recorder.close()  # a recording left running ends with the phone
        phone, self._phone = self._phone, None
        if phone is None:
            return
        if self.writer is not None:
            await self.writer.close()
        self.link.lost(reason="closed")

    async def flush(self) -> None:
        """Waits until every change so far is in the state file (the write's OSError if it failed)."""
        if self.writer is not None:
            await self.writer.written()

    async def describe(self) -> DeviceInfo:
        self._reachable()
        return INFO

    def _reachable(self) -> SimPhone:
        phone = self._phone
        if phone is None:
            raise DeviceUnavailable("the simulated phone is not started (or already closed)")
        if not self.link.up:
            raise DeviceUnavailable(f"the simulated phone is not reachable: {self.link.reason}")
        return phone

    def _ui(self, doing: str, *, reads: bool = False) -> contextlib.AbstractContextManager[None]:
        """Around a UI primitive: the UI server's deaths met (SimUiServer.serving)."""
        self._reachable()
        server = self.ui_server
        if server is None or not server.dead:
            return _SERVING  # the common case costs no generator (see _Operation)
        return server.serving(doing, reads=reads)

    def _op(self) -> _Operation:
        """Wraps every primitive: announces foreground changes, persists data changes."""
        return _Operation(self, self._reachable())

    # --- issue 27: the screen's power and recording --------------------------
    async def power_state(self) -> PowerState:
        self._reachable()
        power = self.power
        return PowerState(awake=power.awake, locked=power.locked, secure=power.secure, via=self.via)

    async def wake(self) -> str:
        self._reachable()
        self.power.wake()
        return self.via

    async def sleep(self) -> str:
        self._reachable()
        self.power.sleep()
        return self.via

    async def dismiss_keyguard(self) -> str:
        self._reachable()
        self.power.dismiss()
        return self.via

    def set_lock(self, lock: LockKind, *, locked: bool) -> None:
        """SIM_SET_LOCK: the owner's lock screen (none, swipe, or a secure pin, pattern, password)."""
        self._reachable()
        self.power.lock = lock
        self.power.locked = locked and lock != "none"

    async def start_recording(
        self, *, max_s: int, size: tuple[int, int] | None, bit_rate: int | None
    ) -> Recording:
        self._reachable()
        return self.recorder.start(max_s)

    async def stop_recording(self) -> RecordedFile:
        self._reachable()
        return self.recorder.stop()

    # --- connection (sim only) --------------------------------------------
    def disconnect(self, reason: str = "simulated disconnection", *, for_ms: int | None = None) -> None:
        """The phone drops off its cable: DEVICE_DISCONNECTED, and every primitive raises
        DeviceUnavailable until `reconnect`, which happens by itself after `for_ms` if given."""
        if self._phone is None:
            raise DeviceUnavailable("the simulated phone is not started (or already closed)")
        if for_ms is not None and for_ms <= 0:
            raise InvalidParams(f"for_ms must be positive, got {for_ms}")
        self._cancel_comeback()
        self.link.lost(reason=reason)
        if for_ms is not None:
            self._comeback = asyncio.get_running_loop().call_later(for_ms / 1000, self.reconnect)

    def reconnect(self) -> None:
        """The phone answers again: DEVICE_CONNECTED. Nothing on it changed meanwhile."""
        self._cancel_comeback()
        if self._phone is not None:
            self.link.connected(serial=SERIAL, model=MODEL)

    def _cancel_comeback(self) -> None:
        if self._comeback is not None:
            self._comeback.cancel()
            self._comeback = None

    def ui_server_dies(self, times: int, *, during: bool) -> int:
        """SIM_UI_SERVER_DIES: the UI server is killed, `times` deaths in all; how many are to come."""
        self._reachable()
        assert self.ui_server is not None  # made with the phone
        return self.ui_server.dies(times, during=during)

    # --- screen ----------------------------------------------------------
    async def dump_hierarchy(self) -> str:
        with self._ui("reading the screen", reads=True), self._op() as phone:
            return to_hierarchy_xml(phone.view().root, rotation=phone.top().rotation)

    async def screen_size(self) -> tuple[int, int]:
        """As the screen in front is turned: a custom screen from a landscape dump is landscape."""
        phone = self._reachable()
        return (HEIGHT, WIDTH) if phone.top().rotation % 2 else (WIDTH, HEIGHT)

    async def screenshot(self) -> Screenshot:
        with self._ui("taking a screenshot", reads=True), self._op() as phone:
            root = copy.deepcopy(phone.view().root)
            # A secure screen's apps' windows are black; the system UI's bars over them show.
            windows = root.children if root.class_name == "hierarchy" else [root]
            apps = {w.package for w in windows if w.package != "com.android.systemui"}
            secure = frozenset(apps) if phone.top().secure else frozenset()
            png = await asyncio.to_thread(render_png, root, (WIDTH, HEIGHT), secure=secure)
            return Screenshot(data=png, format="png", width=WIDTH, height=HEIGHT, via=self.via)

    # A gesture at coordinates first checks the window in front against the screen it was aimed
    # at (screen/stale.py), as the phone does in the gesture's own command.
    async def tap(self, x: int, y: int) -> None:
        with self._ui(f"tapping ({x}, {y})"), self._op() as phone:
            _fresh(phone)
            phone.tap(x, y)

    async def long_press(self, x: int, y: int, duration_ms: int) -> None:
        """Holds for `duration_ms` like `input swipe x y x y ms`; a cancelled press does nothing."""
        with self._ui(f"pressing ({x}, {y})"), self._op() as phone:
            _fresh(phone)
            await _gesture(duration_ms)
            phone.long_press(x, y)

    async def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int) -> None:
        """Takes `duration_ms`, as the finger does on a phone; a cancelled swipe scrolls nothing."""
        with self._ui("swiping"), self._op() as phone:
            _fresh(phone)
            await _gesture(duration_ms)
            phone.swipe(x1, y1, x2, y2)

    async def input_text(self, text: str, *, replace: bool = False) -> str:
        with self._ui("typing"), self._op() as phone:
            if replace:
                phone.clear_text()
            phone.input_text(text)
            return self.via

    async def clear_text(self) -> None:
        with self._ui("clearing the field"), self._op() as phone:
            phone.clear_text()

    async def press_key(self, keycode: int) -> None:
        with self._ui(f"pressing key {keycode}"), self._op() as phone:
            phone.press_key(keycode)

    # --- issue 27, DEVICE_STATUS -------------------------------------------
    async def status(self) -> DeviceStatus:
        with self._op() as phone:
            return sim_status(phone.state, self.battery, INFO)

    def set_battery(
        self, *, level: int | None = None, plugged: Plugged | None = None, temperature_c: float | None = None
    ) -> SimBattery:
        """SIM_SET_BATTERY: what is given changes, the rest stays."""
        self._reachable()
        if level is not None:
            self.battery.level = level
        if plugged is not None:
            self.battery.plugged = plugged
        if temperature_c is not None:
            self.battery.temperature_c = temperature_c
        return self.battery

    # --- apps ------------------------------------------------------------
    def known_apps(self) -> list[AppInfo]:
        return [app_info(app) for app in APPS]

    async def installed_apps(self) -> list[AppInfo]:
        self._reachable()
        return [app_info(app) for app in APPS] + self.packages.apps()

    async def foreground(self) -> Foreground:
        with self._op() as phone:
            return phone.foreground()

    async def running_packages(self) -> list[str]:
        """Most recently used first."""
        with self._op() as phone:
            return list(reversed(phone.running))

    async def launch_app(self, package: str) -> Foreground:
        with self._op() as phone:
            return dataclasses.replace(phone.launch(package), via=self.via)

    async def stop_app(self, package: str) -> bool:
        with self._op() as phone:
            return phone.stop(package)

    async def start_intent(self, intent: Intent) -> IntentResult:
        with self._op() as phone:
            return start_intent(phone, intent)

    # --- personal data ---------------------------------------------------
    async def contacts(self, where: ContactFilter = ContactFilter()) -> list[Contact]:
        with self._op() as phone:
            name = where.name.casefold() if where.name is not None else None
            rows = [
                c
                for c in phone.state.contacts
                if (where.id is None or c.id == where.id)
                and (name is None or name in c.name.casefold())
                and (where.phone is None or any(same_number(p, where.phone) for p in c.phones))
            ]
            rows.sort(key=lambda c: (c.name.casefold(), int(c.id)))
            return copy.deepcopy(_limited(rows, where.limit))

    async def add_contact(self, name: str, phones: list[str], emails: list[str]) -> Saved:
        with self._op() as phone:
            return Saved(phone.state.add_contact(name, phones, emails).id, self.via)

    async def send_sms(self, number: str, body: str) -> str:
        with self._op() as phone:
            phone.send_sms(number, body)
            return self.via

    async def sms_messages(self, where: SmsFilter = SmsFilter()) -> list[SmsMessage]:
        with self._op() as phone:
            rows = [
                m
                for m in phone.state.sms
                if (where.box is None or m.box == where.box)
                and (where.above_id is None or int(m.id) > where.above_id)
                and (where.since_ms is None or m.date_ms >= where.since_ms)
                and (where.address is None or _same_address(m.address, where.address))
            ]
            rows.sort(key=lambda m: int(m.id), reverse=True)
            return copy.deepcopy(_limited(rows, where.limit))

    async def call_log(self, where: CallFilter = CallFilter()) -> list[CallRecord]:
        with self._op() as phone:
            rows = [
                c
                for c in phone.state.calls
                if (where.above_id is None or int(c.id) > where.above_id)
                and (where.since_ms is None or c.date_ms >= where.since_ms)
                and (where.number is None or same_number(c.number, where.number))
            ]
            rows.sort(key=lambda c: int(c.id), reverse=True)
            return copy.deepcopy(_limited(rows, where.limit))

    async def place_call(self, number: str) -> str:
        with self._op() as phone:
            phone.place_call(number)
            return self.via

    async def end_call(self) -> bool:
        with self._op() as phone:
            return phone.end_call()

    async def call_state(self) -> CallState:
        with self._op() as phone:
            return phone.call

    async def insert_event(self, event: CalendarEvent, *, timezone: str | None = None) -> Saved:
        """Times are epoch milliseconds, so `timezone` changes nothing the simulator shows."""
        with self._op() as phone:
            return Saved(phone.state.add_event(event).id, self.via)

    async def calendar_events(self, where: EventFilter = EventFilter()) -> list[CalendarEvent]:
        with self._op() as phone:
            rows = [
                e
                for e in phone.state.events
                if (where.id is None or e.id == where.id)
                and (where.starts_after_ms is None or e.end_ms > where.starts_after_ms)
                and (where.starts_before_ms is None or e.start_ms < where.starts_before_ms)
            ]
            rows.sort(key=lambda e: (e.start_ms, int(e.id)))
            return copy.deepcopy(_limited(rows, where.limit))

    async def set_alarm(self, alarm: Alarm) -> Saved:
        with self._op() as phone:
            return Saved(phone.state.add_alarm(alarm).id, self.via)

    async def alarms(self) -> list[Alarm]:
        with self._op() as phone:
            return copy.deepcopy(phone.state.alarms)

    async def set_clipboard(self, text: str) -> str:
        with self._op() as phone:
            phone.state.clipboard = text
            phone.state.dirty = True
            return self.via

    async def get_clipboard(self) -> str:
        with self._op() as phone:
            return phone.state.clipboard

    # --- the phone's settings (issue 27) ------------------------------------------
    async def set_switch(self, switch: Switch, enabled: bool) -> str:
        with self._op() as phone:
            setattr(phone.state, _SWITCH_FIELDS[switch], enabled)
            phone.state.dirty = True
            return self.via

    async def switch(self, switch: Switch) -> bool:
        with self._op() as phone:
            return bool(getattr(phone.state, _SWITCH_FIELDS[switch]))

    async def set_volume(self, stream: Stream, level: int) -> str:
        low, high = VOLUME_RANGES[stream]
        if not low <= level <= high:
            raise InvalidParams(f"level {level} is out of the {stream} stream's range [{low}..{high}]")
        with self._op() as phone:
            phone.state.volumes[stream] = level
            phone.state.dirty = True
            return self.via

    async def volume(self, stream: Stream) -> Volume:
        low, high = VOLUME_RANGES[stream]
        with self._op() as phone:
            return Volume(level=phone.state.volumes.get(stream, low), min=low, max=high)

    async def set_brightness(self, level: int | None, *, auto: bool) -> str:
        with self._op() as phone:
            phone.state.brightness_auto = auto
            if level is not None:
                phone.state.brightness = level
            phone.state.dirty = True
            return self.via

    async def brightness(self) -> Brightness:
        with self._op() as phone:
            return Brightness(level=phone.state.brightness, auto=phone.state.brightness_auto)

    async def set_dnd(self, mode: DndMode) -> str:
        with self._op() as phone:
            phone.state.dnd = mode
            phone.state.dirty = True
            return self.via

    async def dnd(self) -> DndMode:
        with self._op() as phone:
            return cast(DndMode, phone.state.dnd)

    async def notifications(self) -> list[Notification]:
        """Newest first."""
        with self._op() as phone:
            return copy.deepcopy(list(reversed(phone.state.notifications)))

    # --- packages (issue 27): the sim's own table (packages.py) -----------------------------
    async def install_apk(self, *, local: pathlib.Path | None = None, phone_path: str = "") -> str:
        self._reachable()
        if local is None:
            raise Unsupported(
                f"the sim has no shared storage to install {phone_path} from: put the APK in the "
                "runtime's files directory (DATA_DIR/files) and name it by its file name"
            )
        try:
            manifest = await asyncio.to_thread(read_apk, local)
        except ApkError as exc:
            raise InvalidParams(f"Failure [INSTALL_PARSE_FAILED_NOT_APK: {exc}]") from exc
        self.packages.install(manifest)
        return self.via

    async def uninstall_app(self, package: str) -> str:
        with self._op() as phone:
            self.packages.uninstall(package)
            phone.stop(package)
        return self.via

    async def set_permission(self, package: str, permission: str, *, granted: bool) -> str:
        self._reachable()
        self.packages.set_permission(package, permission, granted=granted)
        return self.via

    async def package_state(self, package: str) -> PackageState | None:
        self._reachable()
        return self.packages.state(package)

    async def shell(self, command: str, *, timeout_s: float) -> ShellResult:
        if timeout_s <= 0:
            raise InvalidParams(f"timeout_s must be positive, got {timeout_s}")
        with self._op() as phone:
            try:
                return await asyncio.wait_for(sim_shell.run(phone, command), timeout_s)
            except asyncio.TimeoutError as exc:
                raise Timeout(f"shell command did not finish within {timeout_s:g} s: {command!r}") from exc

    # --- scenarios (sim only) --------------------------------------------
    async def receive_sms(self, sender: str, body: str) -> SmsMessage:
        """An SMS arrives: an unread inbox row, a notification, MESSAGE_RECEIVED and NOTIFICATION_POSTED."""
        with self._op() as phone:
            return copy.deepcopy(phone.receive_sms(sender, body))

    async def receive_chat_message(self, app: str, sender: str, body: str) -> ChatMessage:
        """A WhatsApp message arrives from a number or a contact's exact name; the chat is created if new."""
        with self._op() as phone:
            return copy.deepcopy(phone.receive_chat(app, sender, body))

    async def post_notification(self, package: str, title: str, text: str) -> Notification:
        with self._op() as phone:
            return copy.deepcopy(phone.post_notification(package, title, text))

    async def incoming_call(self, number: str) -> None:
        """The phone rings: state ringing, the incoming-call screen with Answer/Decline in front."""
        with self._op() as phone:
            phone.incoming_call(number)

    async def remote_hang_up(self) -> bool:
        """The other party ends the call (one that still rings is logged as missed); returns
        whether there was one."""
        with self._op() as phone:
            return phone.remote_hang_up()

    async def show_dialog(self, kind: DialogKind, package: str) -> Foreground:
        """A system dialog about `package` comes up over the app (device/sim/dialogs.py); its window."""
        with self._op() as phone:
            phone.overlay(DialogScreen(kind, package))
            return phone.foreground()

    async def set_screen(self, xml: str, *, animate: bool = False, secure: bool = False) -> None:
        """Shows a uiautomator dump as the current screen (InvalidParams if it is not one); BACK
        leaves it. With `animate`, every look at it shows another frame (it never settles); with
        `secure`, its app's window sets FLAG_SECURE (a screenshot draws it black)."""
        root = parse_hierarchy(xml)
        turned = _ROTATION.search(xml)
        with self._op() as phone:
            rotation = int(turned.group(1)) if turned else 0
            phone.show_custom(
                CustomScreen(root, rotation=rotation, animate=animate, size=len(xml), secure=secure)
            )

    # --- files (issue 27: PUSH_FILE, PULL_FILE) ----------------------------------------
    async def resolve_path(self, path: str) -> str:
        self._reachable()
        return self.files.resolve(path)

    async def file_info(self, path: str) -> PhoneFile:
        self._reachable()
        return self.files.info(path)

    async def file_sha256(self, path: str) -> str:
        self._reachable()
        return self.files.sha256(path)

    async def read_file(self, path: str, offset: int, length: int) -> bytes:
        self._reachable()
        return self.files.read(path)[offset : offset + length]

    async def pull_file(self, path: str, dest: BinaryIO, *, limit: int) -> int:
        self._reachable()
        return self.files.pull(path, dest, limit=limit)

    async def write_file(self, path: str, source: pathlib.Path | bytes, *, append: bool = False) -> None:
        self._reachable()
        if not isinstance(source, bytes):
            size = (await asyncio.to_thread(source.stat)).st_size
            self.files.room_for(path, size)  # a full phone refuses before it is read
            source = await asyncio.to_thread(source.read_bytes)
        self.files.write(path, source, append=append)
