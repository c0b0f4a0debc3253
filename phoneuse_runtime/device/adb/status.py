"""DEVICE_STATUS over adb: one shell script that reads everything, and the parsers of what the
phone's tools print (issue 27). Pure, no I/O: tested on real captures and on the outputs of
several Android versions as AOSP writes them.

What each part reads, and the format it parses:
- `dumpsys battery` (BatteryService.dumpInternal): `  AC powered: false`, `USB powered`,
  `Wireless powered`, `Dock powered` (Android 13+), `status: 2` (BatteryManager.BATTERY_STATUS_*:
  1 unknown, 2 charging, 3 discharging, 4 not charging, 5 full), `level`, `scale`, `temperature`
  in tenths of a degree. Samsung adds lines after AOSP's, some repeating a name in lower case
  (`charge counter`): the first of each name counts.
- `dumpsys power` (PowerManagerService): `mWakefulness=Awake|Asleep|Dozing|Dreaming` (Android
  5+), before that `mScreenOn=true` (Display Power State).
- `dumpsys window policy` (PhoneWindowManager.dump): the keyguard's state,
  `KeyguardStateMonitor` `mIsShowing=` and `KeyguardServiceDelegate` `showing=` (Android 6+),
  `mShowingLockscreen=` (Android 4.4 to 9), `isKeyguardShowing=` (DisplayPolicy, Android 12+).
- `cmd wifi status` (WifiShellCommand, Android 11+): `Wifi is enabled|disabled`, then per
  client mode manager `Wifi is connected to "SSID"` or `Wifi is not connected`. Older phones
  have no `status` (the shell says so), so the SSID is null there and `wifi_on` says on/off.
- `settings get global wifi_on|mobile_data|airplane_mode_on|bluetooth_on`: `1`/`0` (`wifi_on`
  is 2 while airplane mode keeps Wi-Fi on), `null` when never set.
- `df /data`: toybox (Android 6+) prints 1K-blocks (`Filesystem 1K-blocks Used Available Use%
  Mounted on`); old toolbox printed `Size Used Free Blksize` with K/M/G suffixes.
- `/proc/meminfo` (`MemTotal:`, `MemAvailable:` in kB; MemAvailable from Linux 3.14, so absent
  on the oldest phones: null, not guessed from MemFree), `/proc/uptime` (seconds since boot).
The model, Android version and SDK come from `getprop`, read when the runtime connected.
"""

from __future__ import annotations

import re

from phoneuse_runtime.device.adb.power import parse_keyguard
from phoneuse_runtime.device.adb.shell import command
from phoneuse_runtime.device.base import BatteryStatus, DeviceInfo, DeviceStatus, Plugged

# Each part of the script's output starts with a line of its own, `@@status:NAME`: a text no
# tool prints at the start of a line.
MARK = "@@status:"
SETTINGS = ("wifi_on", "mobile_data", "airplane_mode_on", "bluetooth_on")
PARTS: tuple[tuple[str, str], ...] = (
    ("battery", command("dumpsys", "battery")),
    ("power", command("dumpsys", "power")),
    ("policy", command("dumpsys", "window", "policy")),
    ("wifi", command("cmd", "wifi", "status") + " 2>&1"),
    *((f"setting:{name}", command("settings", "get", "global", name)) for name in SETTINGS),
    ("df", command("df", "/data")),
    ("meminfo", command("cat", "/proc/meminfo")),
    ("uptime", command("cat", "/proc/uptime")),
)
# One shell stream for all of it; a part that fails prints nothing useful and its fields are null.
SCRIPT = "; ".join(f"echo {MARK}{name}; {cmd}" for name, cmd in PARTS)


def sections(output: str) -> dict[str, str]:
    """The script's output cut at its marks: part name -> what that part printed."""
    found: dict[str, str] = {}
    name: str | None = None
    lines: list[str] = []
    for line in output.replace("\r\n", "\n").split("\n"):
        if line.startswith(MARK):
            if name is not None:
                found[name] = "\n".join(lines)
            name, lines = line[len(MARK) :].strip(), []
        elif name is not None:
            lines.append(line)
    if name is not None:
        found[name] = "\n".join(lines)
    return found


def _fields(text: str, sep: str) -> dict[str, str]:
    """`name<sep>value` per line, the first of each name (Samsung repeats some), CRLF-doubled
    lines (old adb on Windows) and blank lines skipped."""
    out: dict[str, str] = {}
    for raw in text.replace("\r", "").splitlines():
        name, found, value = raw.strip().partition(sep)
        if found and name and name not in out:
            out[name] = value.strip()
    return out


def _bool(value: str | None) -> bool | None:
    return {"true": True, "false": False}.get((value or "").strip().lower())


def _int(value: str | None) -> int | None:
    text = (value or "").strip()
    return int(text) if re.fullmatch(r"-?\d+", text) else None


_STATUS: dict[int, BatteryStatus] = {
    1: "unknown",
    2: "charging",
    3: "discharging",
    4: "not_charging",
    5: "full",
}
_PLUGS: tuple[tuple[str, Plugged], ...] = (
    ("AC powered", "ac"),
    ("USB powered", "usb"),
    ("Wireless powered", "wireless"),
    ("Dock powered", "dock"),
)


def parse_battery(
    text: str,
) -> tuple[int | None, BatteryStatus | None, Plugged | None, float | None]:
    """(level in percent, status, what powers it, temperature in °C) from `dumpsys battery`."""
    fields = _fields(text, ":")
    level, scale = _int(fields.get("level")), _int(fields.get("scale"))
    percent = None
    if level is not None and level >= 0:
        percent = round(level * 100 / scale) if scale and scale > 0 else level
    code = _int(fields.get("status"))
    status = _STATUS.get(code) if code is not None else None
    plugs = [(kind, _bool(fields.get(name))) for name, kind in _PLUGS]
    plugged: Plugged | None = None
    if any(on is not None for _, on in plugs):
        plugged = next((kind for kind, on in plugs if on), "none")
    tenths = _int(fields.get("temperature"))
    return percent, status, plugged, tenths / 10 if tenths is not None else None


def parse_screen_on(text: str) -> bool | None:
    """Whether the screen is on, from `dumpsys power`: awake or dreaming (a screensaver shows),
    not asleep or dozing (the always-on display); else `Display Power: state=ON|OFF`, or
    `mScreenOn=` (Display Power State, before Android 5)."""
    for raw in text.replace("\r", "").splitlines():
        line = raw.strip()
        if line.startswith("mWakefulness="):
            return line.split("=", 1)[1].strip() in ("Awake", "Dreaming")
        if line.startswith("Display Power: state="):
            return line.split("=", 1)[1].strip() == "ON"
    fields = _fields(text, "=")
    return _bool(fields.get("mScreenOn"))


def parse_locked(text: str) -> bool | None:
    """Whether the keyguard shows, from `dumpsys window policy`: power.parse_keyguard's reading
    (the KeyguardServiceDelegate block, else the inline flags), one parser for DEVICE_STATUS and
    UNLOCK."""
    return parse_keyguard(text)[0]


_CONNECTED = re.compile(r'^Wifi is connected to "(.*)"\s*$', re.MULTILINE)
_UNQUOTED = re.compile(r"^Wifi is connected to (\S.*?)\s*$", re.MULTILINE)


def parse_wifi(text: str) -> tuple[bool | None, bool | None, str | None]:
    """(enabled, connected, SSID) from `cmd wifi status`; all None where the phone has no such
    command (before Android 11: `Unknown command`, `Can't find service`)."""
    enabled: bool | None = None
    if re.search(r"^Wifi is enabled", text, re.MULTILINE):
        enabled = True
    elif re.search(r"^Wifi is disabled", text, re.MULTILINE):
        enabled = False
    if enabled is None:
        return None, None, None
    quoted = _CONNECTED.search(text) or _UNQUOTED.search(text)
    if quoted:
        ssid = quoted.group(1)
        # WifiSsid prints <unknown ssid> when the app lacks location access; shell has it.
        return enabled, True, None if ssid in ("<unknown ssid>", "") else ssid
    if re.search(r"^Wifi is not connected", text, re.MULTILINE) or not enabled:
        return enabled, False, None
    return enabled, None, None


def parse_setting(text: str) -> int | None:
    """`settings get` of an integer setting; None for `null` (never set) or anything else."""
    lines = [ln.strip() for ln in text.replace("\r", "").splitlines() if ln.strip()]
    return _int(lines[-1]) if len(lines) == 1 else None


_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def _size(text: str) -> int | None:
    match = re.fullmatch(r"(\d+(?:\.\d+)?)([KMGT]?)", text)
    return int(float(match.group(1)) * _UNITS[match.group(2)]) if match else None


def parse_df(text: str) -> tuple[int | None, int | None]:
    """(free, total) bytes of the filesystem `df /data` reports."""
    lines = [ln.split() for ln in text.replace("\r", "").splitlines() if ln.strip()]
    if len(lines) < 2 or lines[0][0] != "Filesystem":
        return None, None
    header, row = lines[0], lines[-1]
    if len(header) > 2 and header[1] == "1K-blocks" and len(row) >= 4:  # toybox
        total, free = _int(row[1]), _int(row[3])
        return (free * 1024 if free is not None else None), (total * 1024 if total is not None else None)
    if "Size" in header and "Free" in header and len(row) == len(header):  # toolbox, Android 5-
        return _size(row[header.index("Free")]), _size(row[header.index("Size")])
    return None, None


def parse_meminfo(text: str) -> tuple[int | None, int | None]:
    """(available, total) bytes from /proc/meminfo."""
    fields = _fields(text, ":")

    def kb(name: str) -> int | None:
        value = _int(fields.get(name, "").removesuffix("kB").strip())
        return value * 1024 if value is not None else None

    return kb("MemAvailable"), kb("MemTotal")


def parse_uptime(text: str) -> float | None:
    match = re.match(r"\s*(\d+(?:\.\d+)?)\s", text + " ")
    return float(match.group(1)) if match else None


def read_status(output: str, info: DeviceInfo) -> DeviceStatus:
    """The script's whole output, and what `getprop` said at connect, as a DeviceStatus."""
    part = sections(output)
    level, battery_status, plugged, temperature = parse_battery(part.get("battery", ""))
    settings = {name: parse_setting(part.get(f"setting:{name}", "")) for name in SETTINGS}
    wifi_enabled, connected, ssid = parse_wifi(part.get("wifi", ""))
    wifi_on = settings["wifi_on"]
    if wifi_enabled is None and wifi_on is not None:
        wifi_enabled = wifi_on != 0
        connected = False if not wifi_enabled else None
    free, total = parse_df(part.get("df", ""))
    available, memory = parse_meminfo(part.get("meminfo", ""))

    def flag(name: str) -> bool | None:
        value = settings[name]
        return value != 0 if value is not None else None

    return DeviceStatus(
        battery_level=level,
        battery_status=battery_status,
        plugged=plugged,
        battery_temperature_c=temperature,
        screen_on=parse_screen_on(part.get("power", "")),
        locked=parse_locked(part.get("policy", "")),
        wifi_enabled=wifi_enabled,
        wifi_connected=connected,
        wifi_ssid=ssid,
        mobile_data=flag("mobile_data"),
        airplane_mode=flag("airplane_mode_on"),
        bluetooth_enabled=flag("bluetooth_on"),
        storage_free_bytes=free,
        storage_total_bytes=total,
        memory_available_bytes=available,
        memory_total_bytes=memory,
        uptime_s=parse_uptime(part.get("uptime", "")),
        model=info.model or None,
        android_version=info.android_version or None,
        sdk=info.sdk or None,
        via="adb shell",
    )
