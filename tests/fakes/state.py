"""The fake phone's state: plain dataclasses that tests set up before a run and assert on after.

Everything the phone knows lives here (props, packages, the task stack, providers' rows, settings,
the clipboard, the u2 server's status) and everything it received is appended to `log` (taps,
swipes, keys, typed text, intents, shell commands, JSON-RPC calls). Behaviour lives elsewhere
(`apps.py`, `userland.py`, `providers.py`, `u2server.py`); this module only holds data and a few
helpers that tests use to seed it (`receive_sms`, `add_contact`, `incoming_call`, `notify`).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Literal, Protocol

from .fs import FileSystem
from .ui import UiNode

# --- time ---------------------------------------------------------------------------------


class Clock(Protocol):
    """Wall-clock seconds, so tests can make delayed effects (a late SMS) happen on demand."""

    def now(self) -> float: ...


class SystemClock:
    def now(self) -> float:
        return time.time()


@dataclass
class ManualClock:
    """A clock that only moves when a test calls `advance`."""

    t: float = 1_700_000_000.0

    def now(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds


# --- packages and the activity stack ------------------------------------------------------


def short_component(package: str, cls: str) -> str:
    """ComponentName.flattenToShortString: "pkg/.Cls" when the class lives in the package."""
    if cls.startswith(package + "."):
        return f"{package}/{cls[len(package) :]}"
    return f"{package}/{cls}"


def full_class(package: str, cls: str) -> str:
    return package + cls if cls.startswith(".") else cls


@dataclass
class Package:
    """An installed app: its activities (full class names) and the one the launcher starts."""

    name: str
    label: str
    activities: list[str] = field(default_factory=list)
    launcher: str | None = None
    system: bool = True
    version_name: str = "1.0"
    version_code: int = 1
    uid: int = 10100
    ime: str | None = None  # the InputMethodService class, for keyboards
    enabled: bool = True
    target_sdk: int = 33
    # Intents its launcher activity also handles: "ACTION" or "ACTION scheme", e.g.
    # "android.intent.action.VIEW https" makes it a second browser (and `am start` asks which).
    handles: list[str] = field(default_factory=list)
    # issue 27, packages: the permissions its manifest asks for, and those granted now (install-time
    # ones at install, runtime ones by `pm grant` or the user); permissions.py says which are which.
    requested: list[str] = field(default_factory=list)
    granted: set[str] = field(default_factory=set)

    @property
    def apk_path(self) -> str:
        if self.system:
            folder = self.label.replace(" ", "")
            return f"/product/app/{folder}/{folder}.apk"
        return f"/data/app/~~Qz8xVq3nT0yq2dJf1w==/{self.name}-kX4b1tq7Rr2m9yWc0p==/base.apk"


@dataclass
class IntentRecord:
    """An intent the phone received (am start / broadcast / startservice, monkey, a UI click).

    `extra_types` keeps the am flag each extra came with ("s", "i", "l", "z", "f", "sa", ...), since
    an app reading getLongExtra ignores a value sent with --ei."""

    kind: Literal["activity", "broadcast", "service"] = "activity"
    action: str | None = None
    data: str | None = None
    mime: str | None = None
    categories: list[str] = field(default_factory=list)
    component: str | None = None
    package: str | None = None
    flags: int = 0
    extras: dict[str, object] = field(default_factory=dict)
    extra_types: dict[str, str] = field(default_factory=dict)
    source: str = "am"
    resolved: str | None = None  # "pkg/cls" that handled it; None when nothing did


@dataclass
class ActivityRecord:
    """One running activity: which screen it shows and that screen's own state."""

    package: str
    activity: str  # full class name
    token: int
    intent: IntentRecord | None = None
    fields: dict[str, str] = field(default_factory=dict)  # editable field key -> text
    focus: str | None = None  # key of the focused editable field
    extra: dict[str, object] = field(default_factory=dict)  # screen-specific (e.g. the address)

    @property
    def component(self) -> str:
        return short_component(self.package, self.activity)


@dataclass
class Task:
    id: int
    activities: list[ActivityRecord] = field(default_factory=list)


# --- providers ----------------------------------------------------------------------------

SMS_TYPES = {"all": 0, "inbox": 1, "sent": 2, "draft": 3, "outbox": 4, "failed": 5, "queued": 6}


@dataclass
class SmsRow:
    """A row of content://sms. `type`: 1 inbox, 2 sent, 3 draft, 4 outbox, 5 failed, 6 queued."""

    id: int
    thread_id: int
    address: str
    body: str
    date: int  # ms
    type: int
    read: int = 1
    seen: int = 1
    date_sent: int = 0
    status: int = -1
    creator: str = "com.google.android.apps.messaging"
    due_ms: int | None = None  # an outbox row becomes `final_type` at this time (a late SMS)
    final_type: int | None = None


@dataclass
class RawContact:
    id: int
    account_name: str | None = None
    account_type: str | None = None
    deleted: int = 0
    starred: int = 0


@dataclass
class DataRow:
    """A row of ContactsContract.Data: `values` holds data1..data15."""

    id: int
    raw_contact_id: int
    mimetype: str
    values: dict[str, object] = field(default_factory=dict)
    is_primary: int = 0
    is_super_primary: int = 0


MIME_NAME = "vnd.android.cursor.item/name"
MIME_PHONE = "vnd.android.cursor.item/phone_v2"
MIME_EMAIL = "vnd.android.cursor.item/email_v2"


@dataclass
class Calendar:
    id: int
    name: str
    display_name: str
    account_name: str
    account_type: str = "com.google"
    access_level: int = 700  # 700 owner, 200 read
    visible: int = 1
    is_primary: int = 0
    owner_account: str = ""
    timezone: str = "America/Los_Angeles"
    sync_events: int = 1
    color: int = -14069085


@dataclass
class Event:
    id: int
    calendar_id: int
    title: str | None
    dtstart: int | None
    dtend: int | None = None
    duration: str | None = None
    event_timezone: str | None = "America/Los_Angeles"
    all_day: int = 0
    event_location: str | None = None
    description: str | None = None
    rrule: str | None = None
    deleted: int = 0
    has_alarm: int = 0


@dataclass
class AttendeeRow:
    """content://com.android.calendar/attendees (CalendarContract.AttendeesColumns). `status`:
    0 none, 1 accepted, 2 declined, 3 invited, 4 tentative; `relationship`: 0 none, 1 attendee,
    2 organizer, 3 performer, 4 speaker; `type`: 0 none, 1 required, 2 optional, 3 resource."""

    id: int
    event_id: int
    name: str | None
    email: str | None
    status: int = 0
    relationship: int = 1
    type: int = 1


@dataclass
class CallLogRow:
    """content://call_log/calls. `type`: 1 incoming, 2 outgoing, 3 missed, 5 rejected."""

    id: int
    number: str
    date: int
    duration: int
    type: int
    new: int = 1
    name: str | None = None


@dataclass
class Call:
    number: str
    state: Literal["ringing", "offhook"]
    incoming: bool
    started_ms: int
    answered_ms: int | None = None


@dataclass
class SystemDialog:
    """A dialog the system shows over the app (sysui.system_dialog draws it): an "isn't
    responding" (`anr`) or "keeps stopping" (`crash`) dialog of system_server's about `package`,
    or the permission controller's runtime permission prompt (`permission`) for it."""

    kind: str  # anr, crash, permission
    package: str
    label: str


@dataclass
class Notification:
    id: int
    package: str
    title: str
    text: str
    when: int
    uid: int = 10100
    tag: str | None = None
    channel: str = "default"
    flags: int = 0x10  # FLAG_AUTO_CANCEL

    @property
    def key(self) -> str:
        return f"0|{self.package}|{self.id}|{self.tag}|{self.uid}"


@dataclass
class Alarm:
    """An alarm the Clock app created from a SET_ALARM intent."""

    hour: int
    minutes: int
    message: str = ""
    days: list[int] = field(default_factory=list)
    vibrate: bool = True
    skip_ui: bool = False
    enabled: bool = True


# --- what the phone received --------------------------------------------------------------


@dataclass
class Tap:
    x: float
    y: float
    source: str  # "input", "u2", "u2.selector"
    duration_ms: int = 0
    target: str = ""  # resource-id, or text, of the node that got it
    package: str = ""  # the package of the window it landed in (a dialog's: android)


@dataclass
class Swipe:
    x1: float
    y1: float
    x2: float
    y2: float
    duration_ms: int
    source: str


@dataclass
class Key:
    code: int
    source: str
    meta: int = 0
    longpress: bool = False


@dataclass
class TextInput:
    """Text typed or set into a field. `ok` is False when the phone refused it (input text
    with non-ASCII characters); `target` is the field's key, "" when nothing had focus."""

    text: str
    method: str  # "input text", "u2.setText", "ime:<id>", "paste"
    target: str
    ok: bool = True


@dataclass
class RpcCall:
    method: str
    params: object


@dataclass
class Log:
    taps: list[Tap] = field(default_factory=list)
    swipes: list[Swipe] = field(default_factory=list)
    keys: list[Key] = field(default_factory=list)
    texts: list[TextInput] = field(default_factory=list)
    intents: list[IntentRecord] = field(default_factory=list)
    shell: list[str] = field(default_factory=list)  # each command string the daemon passed in
    commands: list[list[str]] = field(default_factory=list)  # each simple command's argv, expanded
    rpc: list[RpcCall] = field(default_factory=list)
    http: list[str] = field(default_factory=list)  # request lines served on tcp:9008

    def rpc_counts(self) -> Counter[str]:
        return Counter(call.method for call in self.rpc)

    def ran(self, name: str) -> list[list[str]]:
        """The argv of every simple command named `name` that ran."""
        return [argv for argv in self.commands if argv and argv[0].rsplit("/", 1)[-1] == name]


# --- fault knobs --------------------------------------------------------------------------


@dataclass
class Faults:
    """Ways to make the phone misbehave the way real ones do."""

    # The u2 server answers every JSON-RPC call with "UiAutomation not connected" until it is
    # restarted (a new app_process launch clears it).
    u2_not_connected: bool = False
    # After this many more JSON-RPC calls (a batch's each count) UiAutomation is lost, as with
    # u2_not_connected (None: never): a server that stops serving in the middle of a batch.
    u2_disconnect_after_calls: int | None = None
    # The next N app_process launches fail with "... already registered!" and exit.
    u2_already_registered: int = 0
    # The server process dies after this many more JSON-RPC calls (None: never).
    u2_die_after_calls: int | None = None
    # The next JSON-RPC request runs, then the process is killed halfway through writing its
    # answer (the client reads a cut answer, then the close).
    u2_die_mid_answer: bool = False
    # The next JSON-RPC request runs, then NanoHTTPD answers it HTTP 500 with this text (what it
    # sends when writing the answer throws: "SERVER INTERNAL ERROR: IOException: ...").
    u2_http_500: str | None = None
    # Another automation client's process (Appium's "io.appium.uiautomator2.server") holds
    # UiAutomation: every launch fails "... already registered!" (u2server.take_ui_automation).
    u2_held_by: str | None = None
    # Every JSON-RPC call takes this long.
    u2_latency_s: float = 0.0
    # takeScreenshot answers null, as UiAutomation does when it gets no bitmap (a secure window
    # on some builds, a display that is off).
    u2_screenshot_null: bool = False
    # What the Messages app does with a message when Send is tapped: "sent" (a type-2 row),
    # "failed" (type 5), "outbox" (stays type 4 forever) or "never" (no row at all).
    sms_outcome: Literal["sent", "failed", "outbox", "never"] = "sent"
    # When > 0 the message sits in the outbox (type 4) this long before reaching its outcome.
    sms_delay_s: float = 0.0
    # Provider authorities ("sms", "com.android.contacts", ...) that throw Permission Denial, or
    # one table of one ("com.android.calendar/attendees", as a locked-down OEM provider may).
    denied_providers: set[str] = field(default_factory=set)
    # AppOps lets only the default SMS app write content://sms; the shell's inserts are dropped.
    shell_can_write_sms: bool = False
    # uiautomator2's keyboard registers its receiver a moment after `ime set`: the next N
    # broadcasts to it find no receiver (result=0), as on a real phone right after the switch.
    ime_warmup_broadcasts: int = 0
    # getClipboard answers null whatever the clipboard holds, as ClipboardManager answers a
    # caller that may not read it (uiautomator2: "jsonrpc.getClipboard is not OK for now").
    clipboard_unreadable: bool = False


@dataclass
class U2Status:
    """The uiautomator2 server "process" behind tcp:9008."""

    running: bool = False
    pid: int = 0
    port: int = 9008
    launches: int = 0
    connections: int = 0  # tcp streams opened to the server
    touch_down: tuple[float, float, float] | None = None  # injectInputEvent ACTION_DOWN (x, y, t)
    # NanoHTTPD closes a keep-alive connection after this long without a request.
    keepalive_idle_s: float = 5.0
    # Caps waitForExists/waitUntilGone waits, so tests need not wait the client's 20 s default.
    # None (the default) waits as long as asked, like the real server.
    max_wait_s: float | None = None
    # Set once a waitForExists/waitUntilGone has looked and is waiting (on the daemon's thread):
    # a test changes the screen then, while the phone waits, rather than after a guessed delay.
    waiting: threading.Event = field(default_factory=threading.Event)


# --- issue 27, DEVICE_STATUS: what the status reads say (status_cmds.py prints them) ---------


@dataclass
class PhoneStatus:
    """The battery (BatteryManager's status codes: 2 charging, 3 discharging, 4 not charging,
    5 full), the Wi-Fi network, /data's size, memory and uptime. Wi-Fi on/off, mobile data,
    airplane mode and Bluetooth are `settings` (global wifi_on, ...)."""

    level: int = 100
    battery_status: int = 2
    plugged: Literal["ac", "usb", "wireless", "dock", "none"] = "usb"
    temperature_tenths: int = 250
    wifi_ssid: str | None = "AndroidWifi"  # None: on, but connected to nothing
    data_total_kb: int = 6_082_504
    data_used_kb: int = 2_012_340
    mem_total_kb: int = 2_030_092
    mem_available_kb: int | None = 1_129_480  # None: a kernel before 3.14, no MemAvailable line
    uptime_s: float = 5123.45


# --- issue 27: the screen's power and recording ----------------------------------------------


@dataclass
class ShellProcess:
    """A process the shell user left running (screenrecord in the background): `ps -A` lists it,
    `kill -N PID` sends it signal N (appended to `signals`, which it reads as it runs)."""

    pid: int
    name: str
    signals: list[int] = field(default_factory=list)


# --- the phone ----------------------------------------------------------------------------


@dataclass
class PhoneState:
    """Everything the fake phone is. `seed.default_state()` fills in a plausible phone."""

    props: dict[str, str] = field(default_factory=dict)
    features: list[str] = field(default_factory=lambda: ["shell_v2", "cmd"])
    screen_size: tuple[int, int] = (720, 1280)
    density: int = 320
    packages: dict[str, Package] = field(default_factory=dict)
    tasks: list[Task] = field(default_factory=list)
    processes: dict[str, int] = field(default_factory=dict)  # package -> pid
    screen_on: bool = True
    # Apps whose windows set FLAG_SECURE (banking, OTP, password managers): every screenshot,
    # uiautomator2's and screencap's, draws them black; their tree is dumped as ever.
    secure_packages: set[str] = field(default_factory=set)
    locked: bool = False
    shade_open: bool = False
    dialog: SystemDialog | None = None  # a system dialog over the app, with the focus
    keyboard_shown: bool = False
    rotation: int = 0
    clipboard: str | None = None
    settings: dict[str, dict[str, str]] = field(default_factory=dict)  # system/secure/global
    sms: list[SmsRow] = field(default_factory=list)
    raw_contacts: list[RawContact] = field(default_factory=list)
    data: list[DataRow] = field(default_factory=list)
    calendars: list[Calendar] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    attendees: list[AttendeeRow] = field(default_factory=list)
    call_log: list[CallLogRow] = field(default_factory=list)
    call: Call | None = None
    notifications: list[Notification] = field(default_factory=list)
    alarms: list[Alarm] = field(default_factory=list)
    # What a command line prints instead of the modelled answer (a real capture, see golden.py),
    # keyed by its argv joined by spaces ("dumpsys window windows", "getprop", "wm size"), or
    # "rpc:METHOD" for a uiautomator2 JSON-RPC answer ("rpc:dumpWindowHierarchy").
    printed: dict[str, str] = field(default_factory=dict)
    # Screens a test supplies, keyed by "pkg/cls" (short or full): a node tree or hierarchy XML.
    custom_screens: dict[str, UiNode | str] = field(default_factory=dict)
    files: FileSystem = field(default_factory=FileSystem)
    log: Log = field(default_factory=Log)
    faults: Faults = field(default_factory=Faults)
    u2: U2Status = field(default_factory=U2Status)
    clock: Clock = field(default_factory=SystemClock)
    apk_catalog: dict[str, Package] = field(default_factory=dict)  # md5 of an APK -> its package
    status: PhoneStatus = field(default_factory=PhoneStatus)  # issue 27, DEVICE_STATUS
    # Issue 27: the owner's lock screen (none: no keyguard at all; swipe: one that needs no secret;
    # pin, pattern, password: secure, which only the owner opens) and the shell's own processes.
    lock_screen: Literal["none", "swipe", "pin", "pattern", "password"] = "swipe"
    shell_processes: dict[int, ShellProcess] = field(default_factory=dict)
    # --- the phone's settings (issue 27, settings_cmds.py) ---
    # AudioService's volume index per stream (AudioManager.STREAM_*: 2 ring, 3 music, 4 alarm, 5 notification)
    volumes: dict[int, int] = field(default_factory=lambda: {0: 4, 1: 5, 2: 5, 3: 5, 4: 6, 5: 5})
    # MIUI's "USB debugging (Security settings)" off: every `settings put` fails with a SecurityException
    settings_write_denied: bool = False
    _next: dict[str, int] = field(default_factory=dict)

    # --- small helpers ---------------------------------------------------------------

    def now_ms(self) -> int:
        return int(self.clock.now() * 1000)

    def next_id(self, kind: str, start: int = 1) -> int:
        value = self._next.get(kind, start)
        self._next[kind] = value + 1
        return value

    @property
    def sdk(self) -> int:
        return int(self.props.get("ro.build.version.sdk", "33"))

    def foreground(self) -> ActivityRecord:
        return self.tasks[-1].activities[-1]

    def focused_text(self) -> str | None:
        """The text of the focused field on the foreground screen; None when none has focus."""
        top = self.foreground()
        return None if top.focus is None else top.fields.get(top.focus, "")

    def setting(self, namespace: str, key: str) -> str | None:
        return self.settings.get(namespace, {}).get(key)

    def sms_box(self, box: str) -> list[SmsRow]:
        from .apps import settle_sms  # the outbox may have moved on since the last look

        settle_sms(self)
        kind = SMS_TYPES[box]
        return [row for row in self.sms if kind == 0 or row.type == kind]

    # --- seeding helpers for tests ---------------------------------------------------

    def thread_for(self, address: str) -> int:
        for row in self.sms:
            if row.address == address:
                return row.thread_id
        return self.next_id("thread")

    def receive_sms(self, address: str, body: str, *, read: bool = False) -> SmsRow:
        row = SmsRow(
            id=self.next_id("sms"),
            thread_id=self.thread_for(address),
            address=address,
            body=body,
            date=self.now_ms(),
            date_sent=self.now_ms() - 1500,
            type=1,
            read=int(read),
            seen=int(read),
            status=-1,
        )
        self.sms.append(row)
        self.notify("com.google.android.apps.messaging", address, body)
        return row

    def add_contact(
        self, name: str, phones: list[str] | None = None, emails: list[str] | None = None
    ) -> RawContact:
        raw = RawContact(id=self.next_id("raw_contact"))
        self.raw_contacts.append(raw)
        self.data.append(DataRow(self.next_id("data"), raw.id, MIME_NAME, {"data1": name}))
        for number in phones or []:
            values: dict[str, object] = {"data1": number, "data2": 2}
            self.data.append(DataRow(self.next_id("data"), raw.id, MIME_PHONE, values))
        for email in emails or []:
            self.data.append(DataRow(self.next_id("data"), raw.id, MIME_EMAIL, {"data1": email, "data2": 1}))
        return raw

    def notify(self, package: str, title: str, text: str) -> Notification:
        pkg = self.packages.get(package)
        note = Notification(
            id=self.next_id("notification", 1000),
            package=package,
            title=title,
            text=text,
            when=self.now_ms(),
            uid=pkg.uid if pkg else 1000,
        )
        self.notifications.append(note)
        return note

    def incoming_call(self, number: str) -> Call:
        from .apps import ring

        return ring(self, number)
