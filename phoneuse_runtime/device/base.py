"""The primitives every backend provides, and the plain records they exchange.

Handlers in `actions/` and `queries/` are written only against `Device`, so they run
unchanged on the simulator, over adb, and inside Termux. A backend never knows an
action_type; it only knows how to do one primitive on its phone. Each primitive that
can be done more than one way returns the path it took (`via`), e.g. "sim",
"uiautomator2", "am start", "termux-api".

Primitives raise `RuntimeFailure` subclasses from `phoneuse_runtime.kernel.errors`
(ElementNotFound, Unsupported, PermissionDenied, DeviceUnavailable, ...). They never
sleep to wait for the UI; callers that must wait poll with a visible interval.

The interface is shaped for a phone at the end of a cable, where every primitive is a round
trip that can be slow, drop, or come back partial:
- `find` resolves a selector on the phone where the backend can (one round trip), instead of
  a full dump per look;
- provider reads take filters (`SmsFilter`, `ContactFilter`, `EventFilter`, `CallFilter`) that a
  backend passes down (`content query --where ... --sort ...`), so polling reads only new rows;
- every primitive runs under the call's deadline (`deadline()`, set by the runtime for the
  action's task and inherited by the worker threads it starts), and a backend serialises its
  own work, so a timed-out primitive is never still driving the phone when the next starts;
- `link` says whether the phone answers now; the runtime fails fast while it does not;
- a primitive that can reach its end more than one way returns the way it took (`via`).
"""

from __future__ import annotations

import abc
import asyncio
import contextvars
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, ClassVar, Literal

from phoneuse_runtime.kernel.errors import Unsupported
from phoneuse_runtime.kernel.events import (
    DeviceConnected,
    DeviceDisconnected,
    Event,
    EventSink,
    SystemDialogShown,
)
from phoneuse_runtime.screen.dialogs import DialogWatch, dialog_of_window, find_dialog
from phoneuse_runtime.screen.ref_memory import RefMemory
from phoneuse_runtime.screen.selector import Selector
from phoneuse_runtime.screen.ui import UiNode, parse_hierarchy

# The `source` of the events a phone itself causes (connection changes, arrivals).
SYSTEM_SOURCE = "android.system"

# What the package primitives need where a backend lacks them (issue 27, packages).
PACKAGES_NEED = (
    "needs the package manager as adb's shell user: use --device adb, or on Termux enable wireless "
    "debugging and pair the phone's own adb"
)

# Android KeyEvent codes for the names PRESS_KEY accepts.
KEYCODES: dict[str, int] = {
    "HOME": 3,
    "BACK": 4,
    "CALL": 5,
    "ENDCALL": 6,
    "DPAD_UP": 19,
    "DPAD_DOWN": 20,
    "DPAD_LEFT": 21,
    "DPAD_RIGHT": 22,
    "VOLUME_UP": 24,
    "VOLUME_DOWN": 25,
    "POWER": 26,
    "CAMERA": 27,
    "TAB": 61,
    "SPACE": 62,
    "ENTER": 66,
    "DEL": 67,
    "MENU": 82,
    "SEARCH": 84,
    "MEDIA_PLAY_PAUSE": 85,
    "ESCAPE": 111,
    "FORWARD_DEL": 112,
    "MOVE_HOME": 122,
    "MOVE_END": 123,
    "VOLUME_MUTE": 164,
    "APP_SWITCH": 187,
    "RECENTS": 187,
    "WAKEUP": 224,
    "SLEEP": 223,
}


@dataclass(frozen=True)
class AppInfo:
    package: str
    label: str
    launch_activity: str = ""
    system: bool = False
    # What the backend read of its version (issue 27, APP_STATE installed=true): None where the
    # listing it came from does not say (adb's versionCode needs Android 9's --show-versioncode;
    # the versionName only `dumpsys package`, too slow for a list).
    version_code: int | None = None
    version_name: str | None = None


@dataclass(frozen=True)
class Foreground:
    package: str
    activity: str
    via: str = ""  # how it was brought there, when a primitive did (launch_app)


@dataclass
class Contact:
    id: str
    name: str
    phones: list[str] = field(default_factory=list)
    emails: list[str] = field(default_factory=list)
    starred: bool = False


SmsBox = Literal["inbox", "sent", "outbox", "failed", "draft"]


@dataclass
class CallRecord:
    """A row of the call log (content://call_log/calls)."""

    id: str
    number: str
    kind: Literal["incoming", "outgoing", "missed", "rejected", "blocked", "voicemail"]
    date_ms: int
    duration_s: int = 0
    name: str = ""


@dataclass
class SmsMessage:
    """A row of the SMS provider (content://sms): `box` is its folder."""

    id: str
    thread_id: str
    address: str
    body: str
    date_ms: int
    box: SmsBox
    read: bool = True


# CalendarContract.Attendees.ATTENDEE_STATUS, by name.
AttendeeStatus = Literal["none", "accepted", "declined", "invited", "tentative"]


@dataclass(frozen=True)
class Attendee:
    """One guest of an event (a row of content://com.android.calendar/attendees): the provider may
    know only a name (a guest typed in) or only an address (an invitation from another calendar)."""

    name: str = ""
    email: str = ""
    status: AttendeeStatus = "none"
    organizer: bool = False  # ATTENDEE_RELATIONSHIP is RELATIONSHIP_ORGANIZER


@dataclass
class CalendarEvent:
    id: str
    title: str
    start_ms: int
    end_ms: int
    all_day: bool = False
    location: str = ""
    description: str = ""
    calendar: str = ""
    # Read, never written: insert_event ignores them (a phone invites guests through its
    # calendar app's sync, which the runtime does not drive).
    attendees: list[Attendee] = field(default_factory=list)


@dataclass
class Alarm:
    id: str
    hour: int
    minute: int
    label: str = ""
    days: list[str] = field(default_factory=list)  # MON..SUN; empty means once
    enabled: bool = True


@dataclass
class Notification:
    key: str
    package: str
    title: str
    text: str
    posted_ms: int


ExtraValue = str | int | float | bool | list[str]


@dataclass
class Intent:
    """What `am start` / `am broadcast` / `am startservice` would be given."""

    kind: Literal["activity", "broadcast", "service"] = "activity"
    action: str = ""
    data: str = ""
    package: str = ""
    component: str = ""
    mime: str = ""
    categories: list[str] = field(default_factory=list)
    extras: dict[str, ExtraValue] = field(default_factory=dict)


@dataclass(frozen=True)
class IntentResult:
    """Who handled an intent, and how it was delivered."""

    handled_by: str
    via: str


@dataclass(frozen=True)
class ShellResult:
    exit_code: int
    stdout: str
    stderr: str


@dataclass(frozen=True)
class CallState:
    state: Literal["idle", "ringing", "offhook"]
    number: str = ""


@dataclass(frozen=True)
class DeviceInfo:
    """What identifies a phone, for `doctor`, `APP_STATE` and the connection events."""

    kind: str  # the backend: sim, adb, termux
    serial: str
    model: str
    manufacturer: str
    android_version: str  # ro.build.version.release, e.g. "14"
    sdk: int  # ro.build.version.sdk, e.g. 34
    width: int  # the screen in pixels, portrait
    height: int

    def as_json(self) -> dict[str, str | int]:
        return {
            "kind": self.kind,
            "serial": self.serial,
            "model": self.model,
            "manufacturer": self.manufacturer,
            "android_version": self.android_version,
            "sdk": self.sdk,
            "width": self.width,
            "height": self.height,
        }


# --- issue 27, DEVICE_STATUS: the phone's status --------------------------------------------
Plugged = Literal["ac", "usb", "wireless", "dock", "none"]
BatteryStatus = Literal["charging", "discharging", "not_charging", "full", "unknown"]


@dataclass(frozen=True)
class DeviceStatus:
    """What `Device.status` read, each field None where this phone (or this backend) cannot say:
    never a made-up value. Sizes in bytes, the temperature in degrees Celsius."""

    battery_level: int | None = None  # percent (level * 100 / scale)
    battery_status: BatteryStatus | None = None
    plugged: Plugged | None = None  # what powers it; "none" on battery
    battery_temperature_c: float | None = None
    screen_on: bool | None = None
    locked: bool | None = None  # the keyguard shows
    wifi_enabled: bool | None = None
    wifi_connected: bool | None = None
    wifi_ssid: str | None = None  # without the quotes Android prints
    mobile_data: bool | None = None  # the setting (mobile_data), not whether a network is up
    airplane_mode: bool | None = None
    bluetooth_enabled: bool | None = None
    storage_free_bytes: int | None = None  # of /data, where apps and their files live
    storage_total_bytes: int | None = None
    memory_available_bytes: int | None = None  # MemAvailable (Linux 3.14+)
    memory_total_bytes: int | None = None
    uptime_s: float | None = None
    model: str | None = None
    android_version: str | None = None
    sdk: int | None = None
    via: str = ""  # how it was read: "sim", "adb shell", "termux-api", "termux-api + adb"


@dataclass(frozen=True)
class Screenshot:
    """The screen as the backend encoded it; decoded and re-encoded only when it must shrink."""

    data: bytes
    format: Literal["png", "jpeg"]
    width: int
    height: int
    via: str


@dataclass(frozen=True)
class Saved:
    """A row a primitive stored on the phone: its provider id, and the way it got there."""

    id: str
    via: str


@dataclass(frozen=True)
class PackageState:
    """An installed package as the phone reports it: what INSTALL_APP and the permissions'
    actions read back (issue 27, packages)."""

    package: str
    version_name: str = ""
    version_code: int | None = None
    system: bool = False
    granted: frozenset[str] = frozenset()  # every permission granted now, install-time ones too
    denied: frozenset[str] = frozenset()  # the runtime permissions it asked for and does not hold


@dataclass(frozen=True)
class ElementAct:
    """What `Device.act_on` does to the element a selector picks: tap it, press and hold it
    (`duration_ms`, None for the phone's own long press), focus it (a tap, skipped when it has
    the focus already unless `always`), or empty it (a text field, focused first)."""

    kind: Literal["tap", "long_press", "focus", "clear"]
    duration_ms: int | None = None
    always: bool = False


@dataclass
class ActedOn:
    """The element `act_on` found, as it was before it acted, and (`clear`) as it is after."""

    node: UiNode
    after: UiNode | None = None


# --- issue 27, the screen's power and recording -----------------------------------------------
@dataclass(frozen=True)
class PowerState:
    """The screen as the phone says it is; None where this phone cannot say."""

    awake: bool | None  # the screen on (PowerManager's wakefulness Awake or Dreaming)
    locked: bool | None  # the lock screen showing
    secure: bool | None  # the lock screen needs a PIN, pattern or password
    via: str


@dataclass(frozen=True)
class Recording:
    """A screen recording as it was started: its file on the phone, its limit."""

    path: str  # in shared storage (/sdcard/...), for PULL_FILE
    max_s: int
    started_ms: int  # wall-clock, epoch milliseconds
    via: str


@dataclass(frozen=True)
class RecordedFile:
    """A finished recording: the file on the phone, its size and its length."""

    path: str
    size: int  # bytes
    duration_ms: int  # how long it recorded
    ended: Literal["stopped", "limit", "failed"]  # stopped by the call, at its limit, or it ended early
    via: str


# --- the phone's settings (issue 27) -------------------------------------------
Switch = Literal["wifi", "bluetooth", "airplane_mode", "auto_rotate"]
SWITCH_NAMES: dict[str, str] = {
    "wifi": "Wi-Fi",
    "bluetooth": "Bluetooth",
    "airplane_mode": "airplane mode",
    "auto_rotate": "auto-rotate",
}
Stream = Literal["music", "ring", "alarm", "notification"]
# off: every interruption; priority: the owner's priority ones; alarms: alarms only; total: none.
DndMode = Literal["off", "priority", "alarms", "total"]


@dataclass(frozen=True)
class Volume:
    """A stream's volume index and its range, as the phone reports them."""

    level: int
    max: int
    min: int = 0


@dataclass(frozen=True)
class Brightness:
    """The screen's brightness setting: its level (0..255) and whether adaptive brightness is on
    (None where the backend cannot say)."""

    level: int | None
    auto: bool | None


def _no_check(_node: UiNode) -> None:
    return None


# --- files (issue 27: PUSH_FILE, PULL_FILE) ------------------------------------
FILES_HINT = "use adb, Termux (with termux-setup-storage), or the sim"


@dataclass(frozen=True)
class PhoneFile:
    """What is at a path on the phone: `kind` file (with its `size`), dir, or missing."""

    path: str
    kind: Literal["file", "dir", "missing", "other"]
    size: int = 0


class FileTooLarge(Exception):
    """A file being pulled passed the bytes the caller would take (pull_file's `limit`)."""


def copy_bounded(chunks: Iterable[bytes], dest: BinaryIO, *, limit: int, path: str) -> int:
    """Writes `chunks` (a file as it streams from the phone) to `dest` and returns their size;
    FileTooLarge, with exactly `limit` bytes written, where they pass it."""
    size = 0
    for chunk in chunks:
        size += len(chunk)
        if size > limit:
            dest.write(chunk[: len(chunk) - (size - limit)])
            raise FileTooLarge(path)
        dest.write(chunk)
    return size


# --- filters for provider reads ---------------------------------------------
# Every field narrows; None leaves it open. Rows come newest first (highest id first) unless a
# filter says otherwise, and `limit` caps them after filtering, as `content query` would.


@dataclass(frozen=True)
class SmsFilter:
    box: SmsBox | None = None
    above_id: int | None = None  # only rows whose _id is higher: what arrived since a high-water mark
    since_ms: int | None = None  # only rows dated at or after
    address: str | None = None  # the other party, compared as the phone stores it
    limit: int | None = None


@dataclass(frozen=True)
class ContactFilter:
    id: str | None = None
    name: str | None = None  # display name contains, ignoring case
    phone: str | None = None  # has this number (digits compared)
    limit: int | None = None


@dataclass(frozen=True)
class EventFilter:
    """Calendar rows; these come in start order (earliest first)."""

    id: str | None = None
    starts_after_ms: int | None = None  # events that end after this
    starts_before_ms: int | None = None  # events that start before this
    limit: int | None = None


@dataclass(frozen=True)
class CallFilter:
    above_id: int | None = None
    since_ms: int | None = None
    number: str | None = None
    limit: int | None = None


# --- deadlines ----------------------------------------------------------------
_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar("phoneuse_deadline", default=None)


def set_deadline(when: float | None) -> contextvars.Token[float | None]:
    """Sets the current call's deadline (time.monotonic() seconds, the event loop's clock) for
    every primitive this task runs, and the worker threads it starts (to_thread copies context).
    Returns the token that `reset_deadline` takes to put back the previous one."""
    return _DEADLINE.set(when)


def reset_deadline(token: contextvars.Token[float | None]) -> None:
    _DEADLINE.reset(token)


def deadline() -> float | None:
    """The current call's deadline on time.monotonic(), or None outside a call."""
    return _DEADLINE.get()


def remaining_s(default: float) -> float:
    """Seconds left before the call's deadline (never below 0), or `default` outside a call."""
    when = _DEADLINE.get()
    if when is None:
        return default
    return max(0.0, when - time.monotonic())


# --- the screen an action's own work read -------------------------------------
class ScreenSeen:
    """The screen (hierarchy XML) that the current settling action's own device work read after
    its last act, if it read one (an adb batch that acts and dumps; TYPE_TEXT's read back):
    settling's first look, which then costs nothing more."""

    __slots__ = ("xml",)

    def __init__(self) -> None:
        self.xml: str | None = None


_SEEN: contextvars.ContextVar[ScreenSeen | None] = contextvars.ContextVar(
    "phoneuse_screen_seen", default=None
)


def watch_screen(seen: ScreenSeen | None) -> contextvars.Token[ScreenSeen | None]:
    """Collects into `seen` the screens this task's primitives read (settle.py)."""
    return _SEEN.set(seen)


def unwatch_screen(token: contextvars.Token[ScreenSeen | None]) -> None:
    _SEEN.reset(token)


def wants_screen() -> bool:
    """Whether a settling action watches: a primitive that can read the screen in its own round
    trip after it acts should."""
    return _SEEN.get() is not None


def saw_screen(xml: str | None) -> None:
    """The screen as a primitive read it (None: it acted, so what was read before is stale)."""
    seen = _SEEN.get()
    if seen is not None:
        seen.xml = xml


# --- connection state ---------------------------------------------------------
class Link:
    """Whether the phone answers now. The backend reports changes; the runtime fails calls fast
    while it is down, health follows it, and each change is published once (DEVICE_CONNECTED,
    DEVICE_DISCONNECTED)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.up = False
        self.reason = "not started"
        self.serial = ""
        self._emit: EventSink | None = None
        self._watchers: list[Callable[[bool], None]] = []

    def attach(self, emit: EventSink) -> None:
        """Where the connection events go (the runtime's bus); given in `Device.start`."""
        self._emit = emit

    def publish(self, event: Event) -> None:
        """An event the device found (on the bus the link was attached to; dropped before)."""
        if self._emit is not None:
            self._emit(event)

    def watch(self, watcher: Callable[[bool], None]) -> None:
        """Calls `watcher(up)` on every change, on the event loop's thread."""
        self._watchers.append(watcher)

    def connected(self, *, serial: str, model: str) -> None:
        if self.up:
            return
        self.up, self.reason, self.serial = True, "", serial
        if self._emit is not None:
            self._emit(DeviceConnected(device=self.kind, serial=serial, model=model).to_event(SYSTEM_SOURCE))
        for watcher in self._watchers:
            watcher(True)

    def lost(self, *, reason: str) -> None:
        if not self.up:
            self.reason = reason
            return
        self.up, self.reason = False, reason
        if self._emit is not None:
            self._emit(
                DeviceDisconnected(device=self.kind, serial=self.serial, reason=reason).to_event(
                    SYSTEM_SOURCE
                )
            )
        for watcher in self._watchers:
            watcher(False)


def _everything(_event_type: str) -> bool:
    return True


class Device(abc.ABC):
    """One phone. `start` connects and begins emitting events; `close` releases it.

    Constructors only store settings; all I/O starts in `start`. Subclasses call
    `super().__init__()`, which gives them their `link`.
    """

    kind: ClassVar[str]
    via: ClassVar[str]  # the default path name reported in results
    # What this phone can do (phoneuse_runtime.kernel.capabilities). An instance attribute: a
    # backend may learn it only in `start` (Termux finds out whether its own adb answers).
    capabilities: frozenset[str] = frozenset()
    # How often the default `find` looks again while it waits (the runtime sets wait_poll_ms).
    find_poll_ms: int = 100
    # Whether every UI-driving primitive (tap, long_press, swipe, input_text, clear_text,
    # press_key, act) refuses, before it acts, while a package of the current `FrontGuard` is in
    # front (front_guard.py); else the runtime reads `foreground()` before each UI action.
    guards_front: ClassVar[bool] = False

    def __init__(self) -> None:
        self.refs = RefMemory(self._screen_given)  # the refs of the last screen given to a caller (refs.py)
        self.link = Link(self.kind)
        self.dialogs = DialogWatch()

    def _screen_given(self, root: UiNode) -> None:
        """A screen read for a caller: a system dialog new on it is published (SYSTEM_DIALOG)."""
        dialog = find_dialog(root)
        if self.dialogs.appeared(dialog.kind if dialog is not None else None) and dialog is not None:
            known = self.known_apps()
            event = SystemDialogShown(
                kind=dialog.kind,
                package=next((a.package for a in known if a.label == dialog.label), ""),
                label=dialog.label,
                title=dialog.title,
                buttons=list(dialog.buttons),
            )
            self.link.publish(event.to_event(SYSTEM_SOURCE))

    def front_read(self, front: Foreground) -> None:
        """The window in front as an event poll read it (no tree): a system dialog that came up
        is published (SYSTEM_DIALOG, with the window's title, its buttons unknown)."""
        kind, about = dialog_of_window(front.package, front.activity)
        if self.dialogs.appeared(kind) and kind is not None:
            label = next((a.label for a in self.known_apps() if a.package == about), "")
            event = SystemDialogShown(kind=kind, package=about, label=label, title=front.activity, buttons=[])
            self.link.publish(event.to_event(SYSTEM_SOURCE))

    def known_apps(self) -> list[AppInfo]:
        """The apps the backend knows without a round trip (its last list, if it keeps one)."""
        return []

    def capability_hint(self, capability: str) -> str:
        """How to get a capability this device lacks; backends may say it better."""
        from phoneuse_runtime.kernel.capabilities import CAPABILITIES

        return CAPABILITIES.get(capability, ("", "no backend provides it"))[1]

    # --- lifecycle -------------------------------------------------------
    @abc.abstractmethod
    async def start(self, emit: EventSink, *, wanted: Callable[[str], bool] = _everything) -> None:
        """Connects (reporting through `self.link`, attached to `emit`) and starts its event
        sources. `wanted(event_type)` says whether a caller listens now from outside (the
        bus's `demanded`; the memory does not count): a backend polls the phone for an event
        type only while one does. A phone that cannot be reached yet is not an
        error: the link stays down and the backend keeps trying; a configuration that can never
        work raises ConfigError."""

    @abc.abstractmethod
    async def close(self) -> None: ...

    @abc.abstractmethod
    async def describe(self) -> DeviceInfo:
        """Serial, model, Android version, SDK level, screen size."""

    # --- screen ----------------------------------------------------------
    @abc.abstractmethod
    async def dump_hierarchy(self) -> str:
        """The current screen as uiautomator hierarchy XML."""

    async def find(self, selector: Selector, *, timeout_ms: int = 0) -> UiNode | None:
        """The element `selector` picks (bounds, text, attributes), looked for up to `timeout_ms`;
        None when it did not appear. This default dumps and matches every `find_poll_ms`; a
        backend that can resolve a selector on the phone in one round trip overrides it."""
        loop = asyncio.get_running_loop()
        give_up = loop.time() + timeout_ms / 1000
        while True:
            node = selector.find(parse_hierarchy(await self.dump_hierarchy()))
            if node is not None or loop.time() >= give_up:
                return node
            await asyncio.sleep(min(self.find_poll_ms / 1000, max(0.0, give_up - loop.time())))

    async def wait_gone(self, selector: Selector, *, timeout_ms: int) -> bool:
        """Whether no element matches `selector`, waited for up to `timeout_ms`. This default
        looks (`find`) every `find_poll_ms`; a backend whose phone waits itself overrides it."""
        loop = asyncio.get_running_loop()
        give_up = loop.time() + timeout_ms / 1000
        while True:
            if await self.find(selector) is None:
                return True
            if loop.time() >= give_up:
                return False
            await asyncio.sleep(min(self.find_poll_ms / 1000, max(0.0, give_up - loop.time())))

    async def act_on(
        self, selector: Selector, act: ElementAct, *, check: Callable[[UiNode], None] = _no_check
    ) -> ActedOn | None:
        """Finds the element `selector` picks and does `act` to it; None, doing nothing, when no
        element matches. `check(node)` runs on the element before anything is done to it and may
        raise to refuse it. This default looks (`find`) and then acts with the primitives; a
        backend whose phone resolves selectors as it acts does both in one round trip (adb)."""
        node = await self.find(selector)
        if node is None:
            return None
        check(node)
        x, y = node.center
        if act.kind == "tap":
            await self.tap(x, y)
        elif act.kind == "long_press":
            await self.long_press(x, y, act.duration_ms or 800)
        else:
            if act.always or not node.focused:
                await self.tap(x, y)
            if act.kind == "clear":
                await self.clear_text()
                root = parse_hierarchy(await self.dump_hierarchy())
                after = next((n for n in root.walk() if n.focused and n.editable), None)
                if after is None:
                    after = next((n for n in root.walk() if n.editable and n.bounds == node.bounds), None)
                return ActedOn(node, after)
        return ActedOn(node)

    @abc.abstractmethod
    async def screen_size(self) -> tuple[int, int]: ...

    @abc.abstractmethod
    async def screenshot(self) -> Screenshot: ...

    @abc.abstractmethod
    async def tap(self, x: int, y: int) -> None: ...

    @abc.abstractmethod
    async def long_press(self, x: int, y: int, duration_ms: int) -> None: ...

    @abc.abstractmethod
    async def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int) -> None: ...

    @abc.abstractmethod
    async def input_text(self, text: str, *, replace: bool = False) -> str:
        """Types into the focused field, appending at the cursor (end), or, with `replace`, in
        place of what it holds (emptied in the same step where the backend can). Any Unicode.
        Returns `via`."""

    @abc.abstractmethod
    async def clear_text(self) -> None:
        """Empties the focused field."""

    @abc.abstractmethod
    async def press_key(self, keycode: int) -> None: ...

    # --- apps ------------------------------------------------------------
    @abc.abstractmethod
    async def installed_apps(self) -> list[AppInfo]: ...

    @abc.abstractmethod
    async def foreground(self) -> Foreground: ...

    @abc.abstractmethod
    async def running_packages(self) -> list[str]: ...

    async def running_apps(self) -> tuple[Foreground, list[str]]:
        """The foreground app and the running packages, read together: a backend at the end of a
        cable answers both in one round trip."""
        return await self.foreground(), await self.running_packages()

    @abc.abstractmethod
    async def launch_app(self, package: str) -> Foreground:
        """Brings the app's launch activity to the front (its `via` says how); Unsupported if
        not installed."""

    @abc.abstractmethod
    async def stop_app(self, package: str) -> bool:
        """Force-stops the app; returns whether it was running."""

    @abc.abstractmethod
    async def start_intent(self, intent: Intent) -> IntentResult:
        """Sends the intent; Unsupported when nothing on the phone handles it."""

    # --- personal data ---------------------------------------------------
    @abc.abstractmethod
    async def contacts(self, where: ContactFilter = ContactFilter()) -> list[Contact]:
        """Contacts by display name (ignoring case)."""

    @abc.abstractmethod
    async def add_contact(self, name: str, phones: list[str], emails: list[str]) -> Saved: ...

    @abc.abstractmethod
    async def send_sms(self, number: str, body: str) -> str:
        """Hands the SMS to the phone and returns `via`. Success is verified by the caller
        against the sent box (`sms_messages(SmsFilter(box="sent", above_id=...))`), because
        some backends report success regardless."""

    @abc.abstractmethod
    async def sms_messages(self, where: SmsFilter = SmsFilter()) -> list[SmsMessage]:
        """SMS rows, newest first (highest _id first)."""

    @abc.abstractmethod
    async def call_log(self, where: CallFilter = CallFilter()) -> list[CallRecord]:
        """Call log rows, newest first."""

    @abc.abstractmethod
    async def place_call(self, number: str) -> str:
        """Dials the number; returns `via`."""

    @abc.abstractmethod
    async def end_call(self) -> bool:
        """Hangs up; returns whether a call was active or ringing."""

    @abc.abstractmethod
    async def call_state(self) -> CallState: ...

    @abc.abstractmethod
    async def insert_event(self, event: CalendarEvent, *, timezone: str | None = None) -> Saved:
        """Stores the event (in UTC unless `timezone`); the caller reads it back by id."""

    @abc.abstractmethod
    async def calendar_events(self, where: EventFilter = EventFilter()) -> list[CalendarEvent]: ...

    @abc.abstractmethod
    async def set_alarm(self, alarm: Alarm) -> Saved:
        """Creates the alarm; `id` is empty where the phone does not tell it."""

    @abc.abstractmethod
    async def alarms(self) -> list[Alarm]:
        """Unsupported where the phone does not list alarms."""

    @abc.abstractmethod
    async def set_clipboard(self, text: str) -> str:
        """Returns `via`."""

    @abc.abstractmethod
    async def get_clipboard(self) -> str: ...

    @abc.abstractmethod
    async def notifications(self) -> list[Notification]: ...

    @abc.abstractmethod
    async def shell(self, command: str, *, timeout_s: float) -> ShellResult:
        """Runs a shell command as adb's shell user would."""

    # --- issue 27, DEVICE_STATUS ------------------------------------------------------------
    async def status(self) -> DeviceStatus:
        """The phone's battery, screen, radios, storage, memory, uptime and identity, read in as
        few round trips as the backend can (adb: one shell script). This default knows only
        what `describe` says; a backend that can read more overrides it."""
        info = await self.describe()
        return DeviceStatus(
            model=info.model or None,
            android_version=info.android_version or None,
            sdk=info.sdk or None,
            via=self.via,
        )

    # --- issue 27, the screen's power and recording: WAKE, SLEEP, UNLOCK, SCREEN_RECORD_* -------
    # Not abstract: a backend that cannot answers UNSUPPORTED, saying what would work.
    async def power_state(self) -> PowerState:
        """Whether the screen is awake and the lock screen showing, and whether it is secure."""
        raise Unsupported(f"{self.kind} cannot read the screen's power state; use adb")

    async def wake(self) -> str:
        """Turns the screen on (KEYCODE_WAKEUP: nothing if it is on already); returns `via`."""
        raise Unsupported(f"{self.kind} cannot wake the screen; use adb")

    async def sleep(self) -> str:
        """Turns the screen off (KEYCODE_SLEEP); the phone locks as its settings say. Returns `via`."""
        raise Unsupported(f"{self.kind} cannot put the screen to sleep; use adb")

    async def dismiss_keyguard(self) -> str:
        """Dismisses a lock screen that needs no secret (`wm dismiss-keyguard`); never types one.
        Returns `via`."""
        raise Unsupported(f"{self.kind} cannot dismiss the lock screen; use adb")

    async def start_recording(
        self, *, max_s: int, size: tuple[int, int] | None, bit_rate: int | None
    ) -> Recording:
        """Starts recording the screen to a new mp4 in shared storage, for at most `max_s`; CONFLICT
        while a recording runs (one at a time). Returns it as started."""
        raise Unsupported(f"{self.kind} cannot record the screen; use adb (screenrecord)")

    async def stop_recording(self) -> RecordedFile:
        """Stops the recording (or takes the one that reached its limit) and answers its file;
        INVALID_PARAMS when there is none."""
        raise Unsupported(f"{self.kind} cannot record the screen; use adb (screenrecord)")

    # --- the phone's settings (issue 27: SET_WIFI ... SET_AUTO_ROTATE) ----------------
    # Each setter does the change and returns `via`; each reader reads it back from the phone.
    # Where this phone (or this Android, from a shell or an app) cannot, Unsupported says what would.
    async def set_switch(self, switch: Switch, enabled: bool) -> str:
        """Turns Wi-Fi, Bluetooth, airplane mode or auto-rotate on or off."""
        raise Unsupported(f"this device ({self.kind}) cannot turn {SWITCH_NAMES[switch]} on or off")

    async def switch(self, switch: Switch) -> bool:
        """Whether Wi-Fi, Bluetooth, airplane mode or auto-rotate is on, read from the phone."""
        raise Unsupported(f"this device ({self.kind}) cannot read whether {SWITCH_NAMES[switch]} is on")

    async def set_volume(self, stream: Stream, level: int) -> str:
        """Sets a stream's volume index (0..its maximum, `volume(stream).max`)."""
        raise Unsupported(f"this device ({self.kind}) cannot set the volume")

    async def volume(self, stream: Stream) -> Volume:
        raise Unsupported(f"this device ({self.kind}) cannot read the volume")

    async def set_brightness(self, level: int | None, *, auto: bool) -> str:
        """Adaptive brightness on (`auto`), or off at `level` (0..255; None keeps the level)."""
        raise Unsupported(f"this device ({self.kind}) cannot set the brightness")

    async def brightness(self) -> Brightness:
        raise Unsupported(f"this device ({self.kind}) cannot read the brightness")

    async def set_dnd(self, mode: DndMode) -> str:
        raise Unsupported(f"this device ({self.kind}) cannot set Do Not Disturb")

    async def dnd(self) -> DndMode:
        raise Unsupported(f"this device ({self.kind}) cannot read Do Not Disturb")

    def network_links(self) -> list[str]:
        """The links by which the runtime reaches this phone over its Wi-Fi (adb over TCP, the
        wireless debugging of Termux's own adb), each named for the owner; no I/O. Turning Wi-Fi
        or airplane mode off would cut them (kernel/links.py)."""
        return []

    # --- files (issue 27: PUSH_FILE, PULL_FILE) ----------------------------------------
    # Paths here are already held to owner/paths.py's rules by the caller; `resolve_path`'s answer
    # is checked again before any other of these is called with it.
    files_via: ClassVar[str] = ""  # PUSH_FILE's and PULL_FILE's `via`, where it is not `via`

    async def resolve_path(self, path: str) -> str:
        """`path` with every symlink followed, as the phone sees it (`readlink -f`); a file not
        there yet resolves through its nearest existing folder."""
        raise Unsupported(f"{self.kind} cannot move files: {FILES_HINT}")

    async def file_info(self, path: str) -> PhoneFile:
        """What is at the resolved `path`: a file with its size, a folder, or nothing."""
        raise Unsupported(f"{self.kind} cannot move files: {FILES_HINT}")

    async def file_sha256(self, path: str) -> str:
        """The file's SHA-256, hex, computed on the phone where it can be."""
        raise Unsupported(f"{self.kind} cannot move files: {FILES_HINT}")

    async def read_file(self, path: str, offset: int, length: int) -> bytes:
        """At most `length` bytes of the file from `offset` (fewer at its end)."""
        raise Unsupported(f"{self.kind} cannot move files: {FILES_HINT}")

    async def pull_file(self, path: str, dest: BinaryIO, *, limit: int) -> int:
        """Streams the whole file into `dest` and returns its size; FileTooLarge, having written
        at most `limit` bytes, where it has more."""
        raise Unsupported(f"{self.kind} cannot move files: {FILES_HINT}")

    async def write_file(self, path: str, source: Path | bytes, *, append: bool = False) -> None:
        """Writes `source` (a local file, streamed, or bytes) to the file, creating its folders,
        replacing it or, with `append`, adding to its end."""
        raise Unsupported(f"{self.kind} cannot move files: {FILES_HINT}")

    # --- packages (issue 27: install, uninstall, grant, revoke) ------------------------
    # What the package manager does for the shell user; a backend without it says what would work.
    async def install_apk(self, *, local: Path | None = None, phone_path: str = "") -> str:
        """Installs (or replaces, keeping its data) the APK at `local` on this machine or at
        `phone_path` on the phone; returns `via`. Unsupported, with the package manager's
        reason, when the phone will not install it."""
        raise Unsupported(f"{self.kind}: installing apps {PACKAGES_NEED}")

    async def pull_apk(self, phone_path: str, dest: Path, *, max_bytes: int) -> None:
        """Copies the APK at `phone_path` to `dest` on this machine (its manifest is read before it
        is installed); InvalidParams for a missing file or one past `max_bytes`."""
        raise Unsupported(f"{self.kind}: reading an APK on the phone {PACKAGES_NEED}")

    async def uninstall_app(self, package: str) -> str:
        """Uninstalls the package for every user; returns `via`."""
        raise Unsupported(f"{self.kind}: uninstalling apps {PACKAGES_NEED}")

    async def set_permission(self, package: str, permission: str, *, granted: bool) -> str:
        """Grants or revokes a runtime permission; returns `via`."""
        raise Unsupported(f"{self.kind}: granting and revoking permissions {PACKAGES_NEED}")

    async def package_state(self, package: str) -> PackageState | None:
        """The package as installed now, None when it is not."""
        raise Unsupported(f"{self.kind}: reading a package's state {PACKAGES_NEED}")
