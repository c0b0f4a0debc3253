"""`doctor` for `--device adb[:SERIAL]`: the adb binary, its server, the phone's state, and the
uiautomator2 server and input method on the phone. It only looks: it starts nothing."""

from __future__ import annotations

import asyncio
import os
import subprocess
import time

import adbutils

from phoneuse_runtime.config.addresses import server_address
from phoneuse_runtime.config.sections import DeviceSettings
from phoneuse_runtime.config.settings import ConfigError
from phoneuse_runtime.device.adb.connection import (
    STATE_ADVICE,
    Client,
    choose_serial,
    device_serial,
    is_network_serial,
)
from phoneuse_runtime.device.adb.shell import command
from phoneuse_runtime.device.adb.ui import IME_ID, U2Server
from phoneuse_runtime.device.adb.worker import Budget
from phoneuse_runtime.util.checks import Check

TIMEOUT_S = 5.0


async def checks(settings: DeviceSettings) -> list[Check]:
    """The adb backend's checks (its row in device/backends.py), run off the event loop: adbutils blocks."""
    return await asyncio.to_thread(adb_checks, settings)


def adb_checks(settings: DeviceSettings) -> list[Check]:
    found: list[Check] = []
    try:
        exe = adbutils.adb_path()
        version = subprocess.run(
            [exe, "version"], capture_output=True, text=True, timeout=TIMEOUT_S, check=False
        )
        first = (version.stdout or version.stderr).strip().splitlines()[:1]
        found.append(Check("adb binary", "ok", f"{exe} ({first[0] if first else 'no version'})"))
    except (adbutils.AdbError, OSError, subprocess.TimeoutExpired) as exc:
        found.append(
            Check(
                "adb binary",
                "warn",
                f"no adb binary ({exc})",
                "apt install adb (Debian/Ubuntu), brew install android-platform-tools, or on Termux "
                "pkg install android-tools; only needed to start a server and to `adb connect`",
            )
        )
    host, port = server_address(settings.adb_server)
    client = Client(host, port)
    try:
        client.check_server()
    except adbutils.AdbError as exc:
        found.append(
            Check(
                "adb server",
                "fail",
                f"nothing answers on {host}:{port} ({exc})",
                f"adb -P {port} start-server (serve starts a local one itself)",
            )
        )
        return found
    found.append(Check("adb server", "ok", f"{host}:{port}, version {client.server_version()}"))
    try:
        named = device_serial(settings.device)
        if named and is_network_serial(named):
            said = str(client.connect(named, timeout=TIMEOUT_S))
            if not said.startswith(("connected to", "already connected to")):
                found.append(
                    Check(
                        "device",
                        "fail",
                        f"adb connect {named}: {said}",
                        "turn on wireless debugging (and pair: adb pair HOST:PORT) on the phone",
                    )
                )
                return found
        serial = choose_serial(named, os.environ.get("ANDROID_SERIAL"), [] if named else client.attached())
    except ConfigError as exc:
        found.append(Check("device", "fail", str(exc)))
        return found
    try:
        state = client.state_of(serial, timeout_s=TIMEOUT_S)
    except adbutils.AdbError as exc:
        found.append(Check("device", "fail", f"{serial}: {exc}", "adb devices -l lists what adb sees"))
        return found
    if state != "device":
        found.append(Check("device", "fail", f"{serial} is {state}", STATE_ADVICE.get(state, "")))
        return found
    found.append(Check("device", "ok", f"{serial} is ready"))
    found += _phone_checks(client.device(serial=serial))
    return found


def _phone_checks(dev: adbutils.AdbDevice) -> list[Check]:
    found = []
    server = U2Server(dev)
    budget = Budget(time.monotonic() + TIMEOUT_S)
    try:
        running = server.ping(budget)
        listed = dev.shell2(command("ime", "list", "-s", "-a"), timeout=TIMEOUT_S).output
    except (adbutils.AdbError, OSError) as exc:
        return [Check("uiautomator2 server", "fail", f"the phone did not answer: {exc}")]
    if running:
        found.append(Check("uiautomator2 server", "ok", "answers /ping on the phone's port 9008"))
    else:
        found.append(
            Check(
                "uiautomator2 server",
                "warn",
                "not running",
                "serve pushes u2.jar and starts it when it connects; if that fails, stop other "
                "automation tools (Appium, uiautomator) that hold the accessibility service",
            )
        )
    if IME_ID in listed.split():
        found.append(Check("uiautomator2 input method", "ok", f"{IME_ID} is installed"))
    else:
        found.append(
            Check(
                "uiautomator2 input method",
                "warn",
                f"{IME_ID} is not installed: TYPE_TEXT pastes through the clipboard instead",
                "python -m uiautomator2 init (installs its app-uiautomator.apk)",
            )
        )
    return found
