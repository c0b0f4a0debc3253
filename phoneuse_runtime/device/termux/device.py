"""`TermuxDevice`: the phone the runtime runs on, inside Termux (`--device termux`).

Two paths to the phone:
- Termux:API's `termux-*` commands (commands.py runs them, parse.py reads their JSON): SMS, contacts,
  the call log, calls, the clipboard, notifications, the battery, opening URLs. No input
  injection: an app cannot tap another app's screen.
- The phone's own adb over wireless debugging (selfadb.py): an `AdbDevice` on `127.0.0.1:PORT`,
  composed, not copied. While it answers, the device gains `ui`, `screenshot`, `calendar`,
  `alarms` and `shell`, and apps, contacts (with ids, every number and emails), the call state and
  hanging up go through it. While it does not, those capabilities are missing: the runtime
  answers UNSUPPORTED for their actions with a hint that says how to turn it on, and the device
  keeps looking for it (a DEVICE_CONNECTED event with device `adb` says when it is back).

The termux link itself is up from `start` on: the runtime runs on this phone. A Termux:API
that does not answer (the app missing, a permission not granted) fails the call that needed it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import pathlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from phoneuse_runtime.config.settings import ConfigError
from phoneuse_runtime.device.adb import status
from phoneuse_runtime.device.adb.device import AdbDevice
from phoneuse_runtime.device.base import (
    SWITCH_NAMES,
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
from phoneuse_runtime.device.termux import commands, parse, phone_settings, storage
from phoneuse_runtime.device.termux.events import STATE_CHECK_S, TermuxPollers
from phoneuse_runtime.device.termux.selfadb import Pause, SelfAdb, pause
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
from phoneuse_runtime.kernel.errors import DeviceUnavailable, RuntimeFailure, Unsupported
from phoneuse_runtime.kernel.events import EventSink
from phoneuse_runtime.screen.selector import Selector
from phoneuse_runtime.screen.ui import UiNode
from phoneuse_runtime.util.numbers import same_number
from phoneuse_runtime.util.tasks import cancel_and_wait

log = logging.getLogger(__name__)

# What Termux:API gives on its own, and what the phone's own adb adds.
TERMUX_CAPABILITIES = frozenset({SMS, CALLS, CONTACTS, CLIPBOARD, NOTIFICATIONS, APPS, FILES})
ADB_CAPABILITIES = frozenset({UI, SCREENSHOT, CALENDAR, ALARMS, SHELL, POWER, SCREEN_RECORD})
SELF_ADB_RETRY_S = 5.0  # the first wait before a missing self-adb is looked for again (selfadb.Backoff)
SMS_WINDOW = 50  # rows read per look at the SMS store: new arrivals, a send being verified
CALL_WINDOW = 50
CALL_GUESS_S = 3600.0  # how long a call this device placed counts as up without the log saying it ended
SERIAL = "termux"

ENABLE_SELF_ADB = (
    "turn on wireless debugging (Settings > System > Developer options > Wireless debugging), pair "
    "Termux's adb with it once (`adb pair 127.0.0.1:PAIRING_PORT CODE`, from 'Pair device with "
    "pairing code'), and the runtime connects by itself; termux/README.md says it step by step"
)
ANY_CONTACT, ANY_SMS, ANY_CALL, ANY_EVENT = ContactFilter(), SmsFilter(), CallFilter(), EventFilter()


def _number_arg(number: str) -> str:
    """The number as termux-sms-send takes it: its `-n` is split on commas and spaces."""
    return "".join(c for c in number if c.isdigit() or c in "+*#")


def _read(path: str) -> str:
    try:
        return pathlib.Path(path).read_text(errors="replace")
    except OSError:
        return ""


def _local_status() -> tuple[int | None, int | None, int | None, int | None, float | None]:
    """(storage free, total, memory available, total, uptime) as this process on the phone reads
    them: statvfs of its own files (on /data), /proc/meminfo and /proc/uptime."""
    try:
        fs = os.statvfs(os.environ.get("PREFIX") or os.path.expanduser("~"))
        free, total = fs.f_bavail * fs.f_frsize, fs.f_blocks * fs.f_frsize
    except OSError:
        free, total = None, None
    available, memory = status.parse_meminfo(_read("/proc/meminfo"))
    return free, total, available, memory, status.parse_uptime(_read("/proc/uptime"))


class TermuxDevice(Device):
    """The phone this runs on. See the module docstring for how it is put together."""

    kind = "termux"
    via = "termux-api"
    files_via = "termux storage"

    def __init__(
        self,
        *,
        self_adb: str = "auto",
        adb_server: str = "127.0.0.1:5037",
        poll_ms: int = 1000,
        self_adb_retry_s: float = SELF_ADB_RETRY_S,
        state_check_s: float = STATE_CHECK_S,
        self_adb_pause: Pause = pause,
        keep_awake: bool = False,
    ) -> None:
        super().__init__()
        if poll_ms < 50:
            raise ConfigError(f"poll_ms must be at least 50, got {poll_ms}")
        self.poll_ms = poll_ms
        self.state_check_s = state_check_s
        self.capabilities = TERMUX_CAPABILITIES
        self.self_adb = SelfAdb(
            mode=self_adb,
            adb_server=adb_server,
            poll_ms=poll_ms,
            retry_s=self_adb_retry_s,
            on_change=self._recompute,
            pause=self_adb_pause,
            dialogs=self.dialogs,  # one watch: the adb poll's windows and this device's screens
            keep_awake=keep_awake,
        )
        self.pollers: TermuxPollers | None = None
        self._info: DeviceInfo | None = None
        self._placed: tuple[float, str] | None = None  # when this device last dialed, and whom
        self._task: asyncio.Task[None] | None = None

    # --- lifecycle -----------------------------------------------------------------------
    async def start(self, emit: EventSink, *, wanted: Callable[[str], bool] = lambda _t: True) -> None:
        self.link.attach(emit)
        self._info = await self._read_info()
        self.pollers = TermuxPollers(
            self, emit, wanted, poll_ms=self.poll_ms, state_check_s=self.state_check_s
        )
        self._task = asyncio.create_task(self.pollers.run(), name="termux event pollers")
        # The phone's own adb polls only what Termux:API cannot see: the foreground app (and in
        # the same read, a system dialog's window).
        self.self_adb.start(emit, lambda t: t in ("APP_STATE_CHANGED", "SYSTEM_DIALOG") and wanted(t))
        self.link.connected(serial=SERIAL, model=self._info.model)

    async def close(self) -> None:
        await cancel_and_wait(self._task)
        self._task = None
        await self.self_adb.close()
        self.link.lost(reason="closed")

    def _recompute(self) -> None:
        up = self.self_adb.up
        self.capabilities = TERMUX_CAPABILITIES | ADB_CAPABILITIES if up else TERMUX_CAPABILITIES
        log.info("the phone's own adb is %s", "up: ui and the rest are available" if up else "not up")

    def capability_hint(self, capability: str) -> str:
        if capability in ADB_CAPABILITIES:
            self.self_adb.wake()  # asked for: looked for again at once
            return f"it needs {self._missing_adb()}"
        return super().capability_hint(capability)

    def _adb(self, what: str) -> AdbDevice:
        """The phone's own adb for `what`, or Unsupported with how to turn it on."""
        device = self.self_adb.device
        if device is None or not device.link.up:
            self.self_adb.wake()
            raise Unsupported(f"{what} needs {self._missing_adb()}")
        return device

    def _missing_adb(self) -> str:
        """What is missing and how to get it, for UNSUPPORTED answers."""
        if self.self_adb.mode == "off":
            return (
                "the phone's own adb, which self_adb = off turns off: set it to auto (--self-adb auto), "
                + (ENABLE_SELF_ADB.split(", and the runtime", 1)[0])
            )
        return f"the phone's own adb, which is not connected ({self.self_adb.problem}): {ENABLE_SELF_ADB}"

    def _adb_if_up(self) -> AdbDevice | None:
        device = self.self_adb.device
        return device if device is not None and device.link.up else None

    async def _read_info(self) -> DeviceInfo:
        try:
            out = await commands.run("getprop", cap_s=5.0)
            from phoneuse_runtime.device.adb.shell import parse_getprop

            props = parse_getprop(out.stdout)
        except RuntimeFailure as failure:
            log.warning("cannot read the phone's properties (%s)", failure.message)
            props = {}
        sdk = props.get("ro.build.version.sdk", "0")
        return DeviceInfo(
            kind=self.kind,
            serial=SERIAL,
            model=props.get("ro.product.model", ""),
            manufacturer=props.get("ro.product.manufacturer", ""),
            android_version=props.get("ro.build.version.release", ""),
            sdk=int(sdk) if sdk.isdigit() else 0,
            width=0,
            height=0,
        )

    # --- identity --------------------------------------------------------------------------
    async def describe(self) -> DeviceInfo:
        if self._info is None:
            raise DeviceUnavailable("the termux device has not started")
        adb = self._adb_if_up()
        if adb is None:
            return self._info
        screen = await adb.describe()  # its size as read at connect (screen_size asks the rotation)
        width, height = screen.width, screen.height
        info = self._info
        return DeviceInfo(
            info.kind,
            info.serial,
            info.model,
            info.manufacturer,
            info.android_version,
            info.sdk,
            width,
            height,
        )

    async def screen_size(self) -> tuple[int, int]:
        return await self._adb("reading the screen size").screen_size()

    # --- screen: the phone's own adb ----------------------------------------------------------
    async def dump_hierarchy(self) -> str:
        return await self._adb("reading the screen").dump_hierarchy()

    async def find(self, selector: Selector, *, timeout_ms: int = 0) -> UiNode | None:
        return await self._adb("finding an element").find(selector, timeout_ms=timeout_ms)

    async def screenshot(self) -> Screenshot:
        return await self._adb("taking a screenshot").screenshot()

    async def tap(self, x: int, y: int) -> None:
        await self._adb("tapping").tap(x, y)

    async def long_press(self, x: int, y: int, duration_ms: int) -> None:
        await self._adb("pressing").long_press(x, y, duration_ms)

    async def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int) -> None:
        await self._adb("swiping").swipe(x1, y1, x2, y2, duration_ms)

    async def input_text(self, text: str, *, replace: bool = False) -> str:
        return await self._adb("typing").input_text(text, replace=replace)

    async def clear_text(self) -> None:
        await self._adb("clearing a field").clear_text()

    async def press_key(self, keycode: int) -> None:
        await self._adb("pressing a key").press_key(keycode)

    # --- apps ----------------------------------------------------------------------------------
    async def installed_apps(self) -> list[AppInfo]:
        return await self._adb("listing apps").installed_apps()

    def known_apps(self) -> list[AppInfo]:
        """The phone's own adb's last app list, if it is up."""
        inner = self.self_adb.device
        return inner.known_apps() if inner is not None else []

    async def foreground(self) -> Foreground:
        return await self._adb("reading the foreground app").foreground()

    async def running_packages(self) -> list[str]:
        return await self._adb("listing running apps").running_packages()

    async def launch_app(self, package: str) -> Foreground:
        return await self._adb("opening an app").launch_app(package)

    async def stop_app(self, package: str) -> bool:
        return await self._adb("stopping an app").stop_app(package)

    async def start_intent(self, intent: Intent) -> IntentResult:
        adb = self._adb_if_up()
        if adb is not None:
            return await adb.start_intent(intent)
        plain_view = (
            intent.kind == "activity"
            and intent.action in ("", "android.intent.action.VIEW")
            and intent.data
            and not (intent.component or intent.package or intent.mime or intent.categories or intent.extras)
        )
        if not plain_view:
            raise Unsupported(
                "without the phone's own adb, only a URL can be opened (termux-open-url); "
                f"this intent needs {self._missing_adb()}"
            )
        await commands.run_quiet("termux-open-url", intent.data)
        return IntentResult(handled_by="the phone's default handler", via="termux-open-url")

    # --- contacts --------------------------------------------------------------------------------
    async def contacts(self, where: ContactFilter = ANY_CONTACT) -> list[Contact]:
        adb = self._adb_if_up()
        if adb is not None:  # the provider itself: ids that ADD_CONTACT's ids match, every number
            return await adb.contacts(where)
        rows = parse.contact_rows(await commands.run_json("termux-contact-list"))
        out = [
            c
            for c in rows
            if (where.id is None or c.id == where.id)
            and (where.name is None or where.name.casefold() in c.name.casefold())
            and (where.phone is None or any(same_number(where.phone, p) for p in c.phones))
        ]
        return out[: where.limit] if where.limit is not None else out

    async def add_contact(self, name: str, phones: list[str], emails: list[str]) -> Saved:
        return await self._adb("adding a contact (Termux:API cannot)").add_contact(name, phones, emails)

    # --- SMS -------------------------------------------------------------------------------------
    async def send_sms(self, number: str, body: str) -> str:
        # termux-sms-send exits 0 and prints nothing whether or not the phone sent it: SEND_MESSAGE
        # verifies against the sent box (sms_messages), as with every backend.
        await commands.run_quiet("termux-sms-send", "-n", _number_arg(number), stdin=body)
        return "termux-sms-send"

    async def sms_messages(self, where: SmsFilter = ANY_SMS) -> list[SmsMessage]:
        window = max(SMS_WINDOW, where.limit or 0)
        # `-t` picks the store's folder (failed, queued and all read every folder); rows come back
        # newest date last, so the filters and the newest-first order are applied here.
        box = where.box if where.box in ("inbox", "sent", "outbox", "draft") else "all"
        rows = parse.sms_rows(await commands.run_json("termux-sms-list", "-t", box, "-l", str(window)))
        out = [
            m
            for m in rows
            if (where.box is None or m.box == where.box)
            and (where.above_id is None or int(m.id) > where.above_id)
            and (where.since_ms is None or m.date_ms >= where.since_ms)
            and (where.address is None or same_number(m.address, where.address))
        ]
        out.sort(key=lambda m: int(m.id), reverse=True)
        return out[: where.limit] if where.limit is not None else out

    async def highest_sms_id(self, *, box: str = "inbox") -> int:
        rows = await self.sms_messages(SmsFilter(box=box))  # type: ignore[arg-type]
        return max((int(m.id) for m in rows), default=0)

    async def new_inbox(self, above_id: int) -> list[SmsMessage]:
        return await self.sms_messages(SmsFilter(box="inbox", above_id=above_id))

    # --- calls -------------------------------------------------------------------------------------
    async def call_log(self, where: CallFilter = ANY_CALL) -> list[CallRecord]:
        if where.above_id is not None:
            raise Unsupported("termux-call-log prints no row ids; filter the call log by time instead")
        window = max(CALL_WINDOW, where.limit or 0)
        rows = parse.call_rows(await commands.run_json("termux-call-log", "-l", str(window)))
        out = [
            r
            for r in rows
            if (where.since_ms is None or r.date_ms >= where.since_ms)
            and (where.number is None or same_number(r.number, where.number))
        ]
        out.sort(key=lambda r: r.date_ms, reverse=True)
        return out[: where.limit] if where.limit is not None else out

    async def recent_calls(self) -> list[CallRecord]:
        return await self.call_log()

    async def place_call(self, number: str) -> str:
        await commands.run_quiet("termux-telephony-call", number.strip())
        self._placed = (time.time(), number)
        return "termux-telephony-call"

    async def end_call(self) -> bool:
        return await self._adb("hanging up (Termux:API cannot)").end_call()

    async def call_state(self) -> CallState:
        """Through the phone's own adb when it is up. Without it no Termux:API command prints the
        call state, so it is inferred: `offhook` after this device dialed, until the call log
        has a row for that number dated after the dialing; otherwise `idle`."""
        adb = self._adb_if_up()
        if adb is not None:
            return await adb.call_state()
        placed = self._placed
        if placed is None or time.time() - placed[0] > CALL_GUESS_S:
            return CallState(state="idle")
        since_ms = int(placed[0] * 1000) - 1000  # the log is dated to the second
        ended = await self.call_log(CallFilter(since_ms=since_ms, number=placed[1], limit=1))
        if ended:
            self._placed = None
            return CallState(state="idle")
        return CallState(state="offhook", number=placed[1])

    # --- calendar, alarms: the phone's own adb ------------------------------------------------
    async def insert_event(self, event: CalendarEvent, *, timezone: str | None = None) -> Saved:
        return await self._adb("adding a calendar event").insert_event(event, timezone=timezone)

    async def calendar_events(self, where: EventFilter = ANY_EVENT) -> list[CalendarEvent]:
        return await self._adb("reading the calendar").calendar_events(where)

    async def set_alarm(self, alarm: Alarm) -> Saved:
        return await self._adb("setting an alarm").set_alarm(alarm)

    async def alarms(self) -> list[Alarm]:
        return await self._adb("listing alarms").alarms()

    # --- clipboard, notifications --------------------------------------------------------------
    async def set_clipboard(self, text: str) -> str:
        await commands.run_quiet("termux-clipboard-set", stdin=text)
        return "termux-clipboard-set"

    async def get_clipboard(self) -> str:
        return (await commands.run("termux-clipboard-get")).stdout

    async def notifications(self) -> list[Notification]:
        return parse.notification_rows(await commands.run_json("termux-notification-list"))

    async def shell(self, command: str, *, timeout_s: float) -> ShellResult:
        return await self._adb("the shell").shell(command, timeout_s=timeout_s)

    # --- issue 27, DEVICE_STATUS ----------------------------------------------------------
    async def status(self) -> DeviceStatus:
        """With the phone's own adb: its one-script status (everything). Without it: what
        Termux:API says (the battery, the Wi-Fi connection) and what this process can read on
        the phone itself (/proc/meminfo, /proc/uptime, the free space of Termux's own /data
        filesystem); the screen, the keyguard and the radios' settings stay null."""
        adb = self._adb_if_up()
        if adb is not None:
            found = await adb.status()
            return dataclasses.replace(found, via="adb shell (the phone's own adb)")
        info = await self.describe()
        try:
            battery = parse.battery(await commands.run_json("termux-battery-status"))
        except RuntimeFailure as failure:  # the Termux:API app missing: the rest is still said
            log.info("no battery status: %s", failure.message)
            battery = {}
        level, battery_status, plugged, celsius = parse.battery_fields(battery)
        try:
            enabled, connected, ssid = parse.wifi_connection(
                await commands.run_json("termux-wifi-connectioninfo")
            )
        except RuntimeFailure as failure:  # not installed, the location permission not granted
            log.info("no Wi-Fi connection info: %s", failure.message)
            enabled, connected, ssid = None, None, None
        local = await asyncio.to_thread(_local_status)
        return DeviceStatus(
            battery_level=level,
            battery_status=battery_status,
            plugged=plugged,
            battery_temperature_c=celsius,
            wifi_connected=connected,
            wifi_ssid=ssid,
            wifi_enabled=enabled,
            storage_free_bytes=local[0],
            storage_total_bytes=local[1],
            memory_available_bytes=local[2],
            memory_total_bytes=local[3],
            uptime_s=local[4],
            model=info.model or None,
            android_version=info.android_version or None,
            sdk=info.sdk or None,
            via="termux-api",
        )

    # --- issue 27: the screen's power and recording, through the phone's own adb ----------------
    # (termux-wake-lock keeps the runtime's own process running, not the screen on.)
    async def power_state(self) -> PowerState:
        return await self._adb("reading the screen's power state").power_state()

    async def wake(self) -> str:
        return await self._adb("waking the screen").wake()

    async def sleep(self) -> str:
        return await self._adb("putting the screen to sleep").sleep()

    async def dismiss_keyguard(self) -> str:
        return await self._adb("dismissing the lock screen").dismiss_keyguard()

    async def start_recording(
        self, *, max_s: int, size: tuple[int, int] | None, bit_rate: int | None
    ) -> Recording:
        adb = self._adb("recording the screen")
        return await adb.start_recording(max_s=max_s, size=size, bit_rate=bit_rate)

    async def stop_recording(self) -> RecordedFile:
        return await self._adb("stopping the screen recording").stop_recording()

    # --- the phone's settings (issue 27): Termux:API where it can, else the phone's own adb -----
    async def set_switch(self, switch: Switch, enabled: bool) -> str:
        name = SWITCH_NAMES[switch]
        if switch != "wifi" or self._adb_if_up() is not None:
            return await self._adb(f"turning {name} on or off").set_switch(switch, enabled)
        sdk = self._info.sdk if self._info is not None else 0
        if 0 < sdk < phone_settings.ANDROID_10:
            await commands.run_quiet("termux-wifi-enable", "true" if enabled else "false")
            return "termux-wifi-enable"
        raise Unsupported(
            f"an app cannot turn Wi-Fi on or off from Android 10 on (this phone is SDK {sdk}), so "
            f"Termux:API cannot; it needs {self._missing_adb()}"
        )

    async def switch(self, switch: Switch) -> bool:
        return await self._adb(f"reading whether {SWITCH_NAMES[switch]} is on").switch(switch)

    async def set_volume(self, stream: Stream, level: int) -> str:
        await commands.run_quiet("termux-volume", stream, str(level))
        return "termux-volume"

    async def volume(self, stream: Stream) -> Volume:
        found = phone_settings.volumes(await commands.run_json("termux-volume"))
        if stream not in found:
            raise DeviceUnavailable(f"termux-volume did not list the {stream} stream")
        return found[stream]

    async def set_brightness(self, level: int | None, *, auto: bool) -> str:
        adb = self._adb_if_up()  # set where it is read back: adb says whether it is adaptive
        if adb is not None:
            return await adb.set_brightness(level, auto=auto)
        if auto:
            await self._brightness("auto")
        else:
            if level is None:  # manual at the level it has now
                level = phone_settings.brightness_level(await self._brightness())
            await self._brightness(str(level if level is not None else 128))
        return "termux-brightness"

    async def _brightness(self, *args: str) -> str:
        out = await commands.run("termux-brightness", *args)
        if out.stdout.strip().startswith("{"):
            commands.parse_json(out)  # the permission error object, raised
        return out.stdout

    async def brightness(self) -> Brightness:
        adb = self._adb_if_up()
        if adb is not None:
            return await adb.brightness()
        return Brightness(level=phone_settings.brightness_level(await self._brightness()), auto=None)

    async def set_dnd(self, mode: DndMode) -> str:
        return await self._adb("setting Do Not Disturb").set_dnd(mode)

    async def dnd(self) -> DndMode:
        return await self._adb("reading Do Not Disturb").dnd()

    def network_links(self) -> list[str]:
        adb = self._adb_if_up()
        if adb is None:
            return []
        return [
            f"Termux's own adb ({adb.serial}), over wireless debugging, which Android turns off with Wi-Fi"
        ]

    # --- files (issue 27: PUSH_FILE, PULL_FILE; storage.py: ~/storage/shared) ----------------
    async def resolve_path(self, path: str) -> str:
        return await asyncio.to_thread(storage.resolve, path)

    async def file_info(self, path: str) -> PhoneFile:
        return await asyncio.to_thread(storage.info, path)

    async def file_sha256(self, path: str) -> str:
        return await asyncio.to_thread(storage.sha256, path)

    async def read_file(self, path: str, offset: int, length: int) -> bytes:
        return await asyncio.to_thread(storage.read, path, offset, length)

    async def pull_file(self, path: str, dest: BinaryIO, *, limit: int) -> int:
        return await asyncio.to_thread(storage.pull, path, dest, limit)

    async def write_file(self, path: str, source: Path | bytes, *, append: bool = False) -> None:
        await asyncio.to_thread(storage.write, path, source, append=append)

    # --- packages (issue 27): pm through the phone's own adb (an app's own pm may not install) ---
    async def install_apk(self, *, local: Path | None = None, phone_path: str = "") -> str:
        return await self._adb("installing an app").install_apk(local=local, phone_path=phone_path)

    async def pull_apk(self, phone_path: str, dest: Path, *, max_bytes: int) -> None:
        await self._adb("reading an APK").pull_apk(phone_path, dest, max_bytes=max_bytes)

    async def uninstall_app(self, package: str) -> str:
        return await self._adb("uninstalling an app").uninstall_app(package)

    async def set_permission(self, package: str, permission: str, *, granted: bool) -> str:
        what = "granting a permission" if granted else "revoking a permission"
        return await self._adb(what).set_permission(package, permission, granted=granted)

    async def package_state(self, package: str) -> PackageState | None:
        return await self._adb("reading a package").package_state(package)

    # --- power, for the pollers' backoff ------------------------------------------------------
    async def screen_on(self) -> bool | None:
        """Whether the screen is on (`dumpsys power` through the phone's own adb); None without it."""
        adb = self._adb_if_up()
        if adb is None:
            return None
        out = (await adb.shell("dumpsys power", timeout_s=5.0)).stdout
        return status.parse_screen_on(out)

    async def on_battery(self) -> bool:
        return parse.on_battery(parse.battery(await commands.run_json("termux-battery-status")))
