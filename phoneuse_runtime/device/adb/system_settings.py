"""The phone's settings over adb's shell (issue 27): Wi-Fi, Bluetooth, airplane mode, volume,
brightness, Do Not Disturb and auto-rotate, set and read back, as each Android version allows.

What each command is, from AOSP's sources:
- Wi-Fi: `cmd wifi set-wifi-enabled enabled|disabled` (WifiShellCommand, Android 11+), `svc wifi
  enable|disable` before; read back from `settings get global wifi_on` (WifiSettingsStore:
  0 off, 1 on, 2 on in airplane mode, 3 off in airplane mode).
- Bluetooth: `cmd bluetooth_manager enable|disable` (BluetoothShellCommand, Android 13+), `svc
  bluetooth enable|disable` before; read back from `settings get global bluetooth_on` (0 off, 1 on,
  2 on in airplane mode).
- Airplane mode: `cmd connectivity airplane-mode enable|disable` (Android 11+). Before it the only
  way is the protected AIRPLANE_MODE broadcast, which a shell may not send: UNSUPPORTED. Read back
  from `settings get global airplane_mode_on`.
- Volume: `cmd media_session volume --stream N --set I` (MediaShellCommand's VolumeCtrl, Android
  10+), `media volume ...` before; `--get` prints "[V] volume is I in range [MIN..MAX]" (older
  builds "[v]"); an index out of range prints "Error: invalid volume index ..." and sets nothing.
- Brightness: `settings put system screen_brightness 0..255` and `screen_brightness_mode` (0
  manual, 1 adaptive).
- Do Not Disturb: `cmd notification set_dnd off|priority|alarms|none` (NotificationShellCmd,
  Android 11+: "on" there means none, total silence); read back from `settings get global
  zen_mode` (Settings.Global.ZEN_MODE_*: 0 off, 1 important interruptions, 2 no interruptions,
  3 alarms). Before Android 11 ZenModeHelper puts back a zen_mode written from outside: UNSUPPORTED.
- Auto-rotate: `settings put system accelerometer_rotation 0|1`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from phoneuse_runtime.device.adb.shell import command
from phoneuse_runtime.device.base import (
    SWITCH_NAMES,
    Brightness,
    DndMode,
    ShellResult,
    Stream,
    Switch,
    Volume,
)
from phoneuse_runtime.kernel.errors import InvalidParams, PermissionDenied, RuntimeFailure, Unsupported

Sh = Callable[[str], ShellResult]

R = 30  # Android 11: cmd wifi set-wifi-enabled, cmd connectivity airplane-mode, cmd notification set_dnd
Q = 29  # Android 10: cmd media_session
T = 33  # Android 13: cmd bluetooth_manager

# AudioManager.STREAM_*
STREAMS: dict[str, int] = {"ring": 2, "music": 3, "alarm": 4, "notification": 5}
# Settings.Global.ZEN_MODE_* and what `cmd notification set_dnd` takes for each mode.
ZEN_MODES: dict[str, DndMode] = {"0": "off", "1": "priority", "2": "total", "3": "alarms"}
SET_DND: dict[DndMode, str] = {"off": "off", "priority": "priority", "alarms": "alarms", "total": "none"}
# switch -> (settings namespace, key, the values that mean on)
SWITCH_KEYS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "wifi": ("global", "wifi_on", ("1", "2")),
    "bluetooth": ("global", "bluetooth_on", ("1", "2")),
    "airplane_mode": ("global", "airplane_mode_on", ("1",)),
    "auto_rotate": ("system", "accelerometer_rotation", ("1",)),
}
_VOLUME = re.compile(r"volume is (-?\d+) in range \[(-?\d+)\.\.(-?\d+)\]")
_REFUSED = ("SecurityException", "Permission Denial", "permission denied")
_UNKNOWN = ("Unknown command", "Can't find service", "Unknown option", "not found")


def checked(result: ShellResult, what: str) -> str:
    """The command's output; a typed failure when the phone refused it, naming what it said. The
    shell reports only text, so its words are read here and nowhere else."""
    text = (result.stdout + "\n" + result.stderr).strip()
    if any(word in text for word in _REFUSED):
        raise PermissionDenied(f"the phone refused {what}: {text}")
    if result.exit_code == 0 and "Exception" not in text and not text.startswith("Error"):
        return result.stdout
    failure: type[RuntimeFailure] = Unsupported if any(w in text for w in _UNKNOWN) else PermissionDenied
    raise failure(f"the phone could not do {what} (exit {result.exit_code}): {text or 'no output'}")


def setting(sh: Sh, namespace: str, key: str) -> str | None:
    """`settings get`: the value, None where it is unset ("null")."""
    out = checked(sh(command("settings", "get", namespace, key)), f"reading {key}").strip()
    return None if out in ("", "null") else out


def set_switch(sh: Sh, switch: Switch, enabled: bool, *, sdk: int) -> str:
    """Turns the switch on or off; returns `via`, the tool it used."""
    verb = "enable" if enabled else "disable"
    args: list[str]
    if switch == "wifi":
        args = ["cmd", "wifi", "set-wifi-enabled", verb + "d"] if sdk >= R else ["svc", "wifi", verb]
    elif switch == "bluetooth":
        args = ["cmd", "bluetooth_manager", verb] if sdk >= T else ["svc", "bluetooth", verb]
    elif switch == "airplane_mode":
        if sdk < R:
            raise Unsupported(
                f"a shell cannot turn airplane mode on or off before Android 11 (this phone is SDK {sdk}): "
                "it takes the protected AIRPLANE_MODE broadcast; the owner can use the quick settings"
            )
        args = ["cmd", "connectivity", "airplane-mode", verb]
    else:
        namespace, key, _on = SWITCH_KEYS[switch]
        args = ["settings", "put", namespace, key, "1" if enabled else "0"]
    checked(sh(command(*args)), f"turning {SWITCH_NAMES[switch]} {'on' if enabled else 'off'}")
    return " ".join(args[:2])


def switch(sh: Sh, switch: Switch) -> bool:
    namespace, key, on = SWITCH_KEYS[switch]
    return setting(sh, namespace, key) in on


def _volume_tool(sdk: int) -> list[str]:
    return ["cmd", "media_session", "volume"] if sdk >= Q else ["media", "volume"]


def parse_volume(out: str) -> Volume:
    """VolumeCtrl's `--get` line; ValueError where the output has none."""
    match = _VOLUME.search(out)
    if match is None:
        raise ValueError(f"no volume in {out.strip()[:200]!r}")
    return Volume(level=int(match.group(1)), min=int(match.group(2)), max=int(match.group(3)))


def volume(sh: Sh, stream: Stream, *, sdk: int) -> Volume:
    out = checked(sh(command(*_volume_tool(sdk), "--stream", STREAMS[stream], "--get")), "reading the volume")
    try:
        return parse_volume(out)
    except ValueError as exc:
        raise Unsupported(f"the phone did not say the {stream} volume: {exc}") from None


def set_volume(sh: Sh, stream: Stream, level: int, *, sdk: int) -> str:
    tool = _volume_tool(sdk)
    result = sh(command(*tool, "--stream", STREAMS[stream], "--set", level))
    if "invalid volume index" in result.stdout + result.stderr:
        raise InvalidParams(f"level {level} is out of the {stream} stream's range: {result.stderr.strip()}")
    checked(result, f"setting the {stream} volume")
    return " ".join(tool[:2])


def brightness(sh: Sh) -> Brightness:
    """Both settings in one round trip: one line each, "null" where unset."""
    both = " ; ".join(command("settings", "get", "system", key) for key in _BRIGHTNESS_KEYS)
    lines = [*checked(sh(both), "reading the brightness").split("\n"), "", ""]
    level, mode = (line.strip() for line in lines[:2])
    return Brightness(level=int(level) if level.isdigit() else None, auto=mode == "1")


def set_brightness(sh: Sh, level: int | None, *, auto: bool) -> str:
    """The mode, then the level, in one round trip (the level only once the mode is written)."""
    cmd = command("settings", "put", "system", "screen_brightness_mode", "1" if auto else "0")
    if level is not None:
        cmd += " && " + command("settings", "put", "system", "screen_brightness", level)
    checked(sh(cmd), "setting the brightness")
    return "settings"


_BRIGHTNESS_KEYS = ("screen_brightness", "screen_brightness_mode")


def dnd(sh: Sh) -> DndMode:
    value = setting(sh, "global", "zen_mode") or "0"
    mode = ZEN_MODES.get(value)
    if mode is None:
        raise Unsupported(f"the phone's zen_mode is {value!r}, which is none of 0..3")
    return mode


def set_dnd(sh: Sh, mode: DndMode, *, sdk: int) -> str:
    if sdk < R:
        raise Unsupported(
            f"a shell cannot set Do Not Disturb before Android 11 (this phone is SDK {sdk}): the phone puts "
            "back a zen_mode written from outside; the owner can use the quick settings"
        )
    checked(sh(command("cmd", "notification", "set_dnd", SET_DND[mode])), "setting Do Not Disturb")
    return "cmd notification"
