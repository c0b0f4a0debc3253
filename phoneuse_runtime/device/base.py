"""The primitives every backend provides, and the plain records they exchange.

Handlers in `actions/` and `queries/` are written only against `Device`, so they run
unchanged on the simulator, over adb, and inside Termux. A backend never knows an
action_type; it only knows how to do one primitive on its phone. Each primitive that
can be done more than one way returns the path it took (`via`), e.g. "sim",
"uiautomator2", "am start", "termux-api".

Primitives raise `RuntimeFailure` subclasses from `phoneuse_runtime.errors`
(ElementNotFound, Unsupported, PermissionDenied, DeviceUnavailable, ...). They never
sleep to wait for the UI; callers that must wait poll with a visible interval.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import ClassVar, Literal

from ..events import EventSink

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


@dataclass(frozen=True)
class Foreground:
    package: str
    activity: str


@dataclass
class Contact:
    id: str
    name: str
    phones: list[str] = field(default_factory=list)
    emails: list[str] = field(default_factory=list)
    starred: bool = False


SmsBox = Literal["inbox", "sent", "outbox", "failed", "draft"]


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


class Device(abc.ABC):
    """One phone. `start` connects and begins emitting events; `close` releases it.

    Constructors only store settings; all I/O starts in `start`.
    """

    kind: ClassVar[str]
    via: ClassVar[str]  # the default path name reported in results
    # What this phone can do (phoneuse_runtime.capabilities). An instance attribute: a
    # backend may learn it only in `start` (Termux finds out whether its own adb answers).
    capabilities: frozenset[str] = frozenset()

    def capability_hint(self, capability: str) -> str:
        """How to get a capability this device lacks; backends may say it better."""
        from ..capabilities import CAPABILITIES

        return CAPABILITIES.get(capability, ("", "no backend provides it"))[1]

    # --- lifecycle -------------------------------------------------------
    @abc.abstractmethod
    async def start(self, emit: EventSink) -> None: ...

    @abc.abstractmethod
    async def close(self) -> None: ...

    @abc.abstractmethod
    async def describe(self) -> dict[str, str]:
        """Serial, model, Android version: whatever identifies this phone."""

    # --- screen ----------------------------------------------------------
    @abc.abstractmethod
    async def dump_hierarchy(self) -> str:
        """The current screen as uiautomator hierarchy XML."""

    @abc.abstractmethod
    async def screen_size(self) -> tuple[int, int]: ...

    @abc.abstractmethod
    async def screenshot_png(self) -> bytes: ...

    @abc.abstractmethod
    async def tap(self, x: int, y: int) -> None: ...

    @abc.abstractmethod
    async def long_press(self, x: int, y: int, duration_ms: int) -> None: ...

    @abc.abstractmethod
    async def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int) -> None: ...

    @abc.abstractmethod
    async def input_text(self, text: str) -> None:
        """Types into the focused field, appending at the cursor (end). Any Unicode."""

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

    @abc.abstractmethod
    async def launch_app(self, package: str) -> Foreground:
        """Brings the app's launch activity to the front; Unsupported if not installed."""

    @abc.abstractmethod
    async def stop_app(self, package: str) -> bool:
        """Force-stops the app; returns whether it was running."""

    @abc.abstractmethod
    async def start_intent(self, intent: Intent) -> IntentResult:
        """Sends the intent; Unsupported when nothing on the phone handles it."""

    # --- personal data ---------------------------------------------------
    @abc.abstractmethod
    async def contacts(self) -> list[Contact]: ...

    @abc.abstractmethod
    async def add_contact(self, name: str, phones: list[str], emails: list[str]) -> Contact: ...

    @abc.abstractmethod
    async def send_sms(self, number: str, body: str) -> str:
        """Hands the SMS to the phone and returns `via`. Success is verified by the caller
        against `sms_messages("sent")`, because some backends report success regardless."""

    @abc.abstractmethod
    async def sms_messages(self, box: SmsBox | None = None) -> list[SmsMessage]:
        """SMS rows, newest first; all boxes when `box` is None."""

    @abc.abstractmethod
    async def place_call(self, number: str) -> str:
        """Dials the number; returns `via`."""

    @abc.abstractmethod
    async def end_call(self) -> bool:
        """Hangs up; returns whether a call was active or ringing."""

    @abc.abstractmethod
    async def call_state(self) -> CallState: ...

    @abc.abstractmethod
    async def insert_event(self, event: CalendarEvent) -> CalendarEvent:
        """Stores the event and returns it with its id."""

    @abc.abstractmethod
    async def calendar_events(self) -> list[CalendarEvent]: ...

    @abc.abstractmethod
    async def set_alarm(self, alarm: Alarm) -> Alarm:
        """Creates the alarm and returns it with its id."""

    @abc.abstractmethod
    async def alarms(self) -> list[Alarm]: ...

    @abc.abstractmethod
    async def set_clipboard(self, text: str) -> None: ...

    @abc.abstractmethod
    async def get_clipboard(self) -> str: ...

    @abc.abstractmethod
    async def notifications(self) -> list[Notification]: ...

    @abc.abstractmethod
    async def shell(self, command: str, *, timeout_s: float) -> ShellResult:
        """Runs a shell command as adb's shell user would."""
