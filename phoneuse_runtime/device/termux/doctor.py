"""`doctor --device termux`: Termux:API (the commands, the app, each permission), the wake lock,
the runit service, the phantom-process killer and the phone's own adb. It only looks: it sends
no SMS, places no call and starts nothing.

Each Termux:API command runs with a short timeout: one that does not answer means the app is
missing (or, for the notification list, notification access is not granted).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from pathlib import Path

from phoneuse_runtime.config.sections import DeviceSettings
from phoneuse_runtime.config.settings import ConfigError
from phoneuse_runtime.device.termux import commands
from phoneuse_runtime.device.termux.selfadb import SelfAdb
from phoneuse_runtime.kernel.errors import PermissionDenied, RuntimeFailure, Timeout, Unsupported
from phoneuse_runtime.util.checks import Check

TIMEOUT_S = 5.0
SERVICE = "phoneuse-runtime"
PHANTOM_OFF = 2147483647  # max_phantom_processes at Integer.MAX_VALUE: the killer never fires
PHANTOM_FIX = (
    "from a computer (or Termux's own adb): adb shell \"/system/bin/device_config "
    "set_sync_disabled_for_tests persistent; /system/bin/device_config put activity_manager "
    'max_phantom_processes 2147483647"; on Android 14+ also turn on Developer options > '
    '"Disable child process restrictions"'
)

# (check name, command and arguments, what it needs): reads only, each the cheapest form.
PERMISSION_PROBES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("SMS permission", ("termux-sms-list", "-l", "1"), "READ_SMS and READ_CONTACTS"),
    ("contacts permission", ("termux-contact-list",), "READ_CONTACTS"),
    ("call log permission", ("termux-call-log", "-l", "1"), "READ_CALL_LOG"),
    ("phone permission", ("termux-telephony-deviceinfo",), "READ_PHONE_STATE"),
    ("notification access", ("termux-notification-list",), "notification access"),
)


async def checks(settings: DeviceSettings) -> list[Check]:
    found = [await _api_check()]
    if found[0].status == "fail":
        return [*found, await _service_check(), *await _self_adb_checks(settings)]
    listed: object = None
    for name, argv, needs in PERMISSION_PROBES:
        check, answer = await _probe(name, argv, needs)
        found.append(check)
        if argv[0] == "termux-notification-list":
            listed = answer
    found.append(
        Check(
            "send SMS and call permissions",
            "ok",
            "SEND_SMS and CALL_PHONE are not checked (that would send or dial); Android asks on first use",
        )
    )
    found.append(_wake_lock_check(listed))
    found.append(await _service_check())
    found += await _self_adb_checks(settings)
    return found


async def _api_check() -> Check:
    started = time.monotonic()
    try:
        await commands.run("termux-battery-status", cap_s=TIMEOUT_S)
    except Unsupported as exc:
        return Check("Termux:API", "fail", exc.message, "pkg install termux-api")
    except RuntimeFailure as exc:
        return Check(
            "Termux:API",
            "fail",
            f"termux-battery-status: {exc.message}",
            "install the Termux:API app from the same source as Termux (F-Droid or GitHub releases), "
            "open it once, and let it run in the background (Settings > Apps > Termux:API > Battery > "
            "Unrestricted)",
        )
    took = (time.monotonic() - started) * 1000
    return Check("Termux:API", "ok", f"the app answers (termux-battery-status in {took:.0f} ms)")


async def _probe(name: str, argv: tuple[str, ...], needs: str) -> tuple[Check, object]:
    """The check, and what the command printed (None when it failed)."""
    try:
        answer = await commands.run_json(argv[0], *argv[1:], cap_s=TIMEOUT_S)
    except PermissionDenied as exc:
        fix = exc.message.split("grant it: ", 1)[-1]
        return Check(name, "fail", exc.message.split("; grant it", 1)[0], fix), None
    except Unsupported as exc:
        return Check(name, "fail", exc.message.split("; ", 1)[0], commands.PLAY_BUILD_FIX), None
    except (Timeout, RuntimeFailure) as exc:
        fix = (
            "Settings > Notifications > Device & app notifications (notification access) > Termux:API"
            if argv[0] == "termux-notification-list"
            else f"run {argv[0]} in Termux and accept what Android asks"
        )
        return Check(name, "fail", exc.message, fix), None
    return Check(name, "ok", f"{argv[0]} answers ({needs} granted)"), answer


def _wake_lock_check(listed: object) -> Check:
    """Termux's own notification says "wake lock held" while it holds one."""
    fix = "termux-wake-lock (the Termux:Boot script in termux/boot/ takes it at every boot)"
    if not isinstance(listed, list):
        return Check("wake lock", "warn", "cannot tell without notification access", fix)
    rows = listed
    for row in rows:
        termux = isinstance(row, dict) and row.get("packageName") == "com.termux"
        if termux and "wake lock held" in str(row.get("content", "")).lower():
            return Check("wake lock", "ok", "Termux holds a wake lock")
    return Check(
        "wake lock",
        "warn",
        "Termux holds no wake lock: Android may pause the server when the screen is off",
        fix,
    )


async def _service_check() -> Check:
    prefix = os.environ.get("PREFIX", "/data/data/com.termux/files/usr")
    svdir = os.environ.get("SVDIR", f"{prefix}/var/service")
    install = "sh termux/install.sh (it installs the service), then sv-enable phoneuse-runtime"
    if shutil.which("sv") is None:
        return Check(
            "service", "warn", "no sv: termux-services is not installed", "pkg install termux-services"
        )
    if not await asyncio.to_thread(Path(svdir, SERVICE).is_dir):
        return Check("service", "warn", f"{svdir}/{SERVICE} does not exist", install)
    try:
        out = await commands.run("sv", "status", SERVICE, cap_s=TIMEOUT_S)
    except RuntimeFailure as exc:
        return Check("service", "warn", f"sv status {SERVICE}: {exc.message}", install)
    said = out.stdout.strip()
    if said.startswith("run:"):
        return Check("service", "ok", said)
    return Check(
        "service",
        "warn",
        said or "sv said nothing",
        f"sv up {SERVICE}; its log: {prefix}/var/log/sv/{SERVICE}/current",
    )


async def _self_adb_checks(settings: DeviceSettings) -> list[Check]:
    enable = (
        "turn on Developer options > Wireless debugging, pair once with `adb pair 127.0.0.1:PORT CODE` "
        "(termux/README.md), or set self_adb to a fixed port after `adb tcpip 5555`"
    )
    try:
        finder = SelfAdb(
            mode=settings.self_adb,
            adb_server=settings.adb_server,
            poll_ms=settings.poll_ms,
            retry_s=1.0,
            on_change=lambda: None,
        )
    except ConfigError as exc:
        return [Check("self-adb", "fail", str(exc), "self_adb = auto, off, PORT or HOST:PORT")]
    if finder.mode == "off":
        off = "self_adb is off: no UI actions (ui, screenshot, calendar, alarms, shell)"
        return [Check("self-adb", "ok", off), await _phantom_unknown()]
    target = await finder.find(may_start=False)  # doctor only looks
    if target is None:
        return [
            Check("self-adb", "warn", f"UI actions are unavailable: {finder.problem}", enable),
            await _phantom_unknown(),
        ]
    from phoneuse_runtime.config.addresses import server_address
    from phoneuse_runtime.device.adb.connection import Client

    host, port = server_address(settings.adb_server)
    client = Client(host, port)

    def reach() -> str:
        said = str(client.connect(target, timeout=TIMEOUT_S))
        if not said.startswith(("connected to", "already connected to")):
            return said
        return client.state_of(target, timeout_s=TIMEOUT_S)

    try:
        state = await asyncio.to_thread(reach)
    except Exception as exc:
        return [Check("self-adb", "warn", f"{target}: {exc}", enable), await _phantom_unknown()]
    if state != "device":
        return [Check("self-adb", "warn", f"{target}: {state}", enable), await _phantom_unknown()]
    found = [Check("self-adb", "ok", f"the phone's own adb answers at {target}")]
    found.append(await asyncio.to_thread(_phantom_check, client, target))
    return found


async def _phantom_unknown() -> Check:
    """Without the phone's own adb the killer's setting cannot be read (device_config needs the
    shell user); the Android version says whether there is one."""
    try:
        sdk_text = (await commands.run("getprop", "ro.build.version.sdk", cap_s=TIMEOUT_S)).stdout.strip()
    except RuntimeFailure:
        sdk_text = ""
    if sdk_text.isdigit() and int(sdk_text) < 31:
        return Check(
            "phantom-process killer", "ok", f"Android SDK {sdk_text} has none (it came with Android 12)"
        )
    return Check(
        "phantom-process killer",
        "warn",
        "cannot read it without the phone's own adb; unless you turned it off, Android 12+ kills "
        "Termux's child processes past 32",
        PHANTOM_FIX,
    )


def _phantom_check(client: object, serial: str) -> Check:
    from phoneuse_runtime.device.adb.connection import Client

    assert isinstance(client, Client)
    dev = client.device(serial=serial)
    try:
        sdk_text = dev.shell("getprop ro.build.version.sdk", timeout=TIMEOUT_S).strip()
        sdk = int(sdk_text) if sdk_text.isdigit() else 0
        if sdk and sdk < 31:
            return Check(
                "phantom-process killer", "ok", f"Android SDK {sdk} has none (it came with Android 12)"
            )
        limit = dev.shell(
            "/system/bin/device_config get activity_manager max_phantom_processes", timeout=TIMEOUT_S
        )
        monitor = dev.shell("settings get global settings_enable_monitor_phantom_procs", timeout=TIMEOUT_S)
    except Exception as exc:
        return Check("phantom-process killer", "warn", f"cannot read it: {exc}", PHANTOM_FIX)
    limit = limit.strip() if limit.strip().isdigit() else ""  # no device_config: Android 9 and older
    monitor = monitor.strip()
    if limit == str(PHANTOM_OFF) or monitor == "false":
        return Check("phantom-process killer", "ok", "off (max_phantom_processes or the developer option)")
    return Check(
        "phantom-process killer",
        "fail",
        f"on (max_phantom_processes={limit or 'default 32'}): Android kills Termux's child processes past 32",
        PHANTOM_FIX,
    )
