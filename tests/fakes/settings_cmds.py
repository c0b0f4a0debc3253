"""The phone's settings commands (issue 27), answering as AOSP's do, by Android version:

- `cmd wifi set-wifi-enabled enabled|disabled` (WifiShellCommand, Android 11+; before it the
  command is unknown), `cmd bluetooth_manager enable|disable` (Android 13+; before it there is no
  such service), `cmd connectivity airplane-mode [enable|disable]` (Android 11+; alone it prints
  "enabled" or "disabled"), each writing the Settings.Global value the phone keeps (wifi_on,
  bluetooth_on, airplane_mode_on); `svc bluetooth` is in system.py beside `svc wifi`.
- `cmd media_session volume` (Android 10+) and `media volume` (up to Android 10: gone from 11),
  VolumeCtrl's options and lines: "[V] will control stream=3 (STREAM_MUSIC)", "[V] volume is 5 in
  range [0..15]", and "Error: invalid volume index 99 for stream 3 (should be in [0..15])" (stderr)
  with nothing set.
- `cmd notification set_dnd on|none|priority|alarms|all|off` (Android 11+: "on" is none, total
  silence), writing Settings.Global.zen_mode; before it "Unknown command: set_dnd" (exit 255).
"""

from __future__ import annotations

from collections.abc import Callable

from .shell import Handler, Proc
from .userland import CMD_SERVICES, command, state_of

# AudioSystem.STREAM_NAMES and AudioService's MIN/MAX_STREAM_VOLUME
STREAM_NAMES = [
    "STREAM_VOICE_CALL",
    "STREAM_SYSTEM",
    "STREAM_RING",
    "STREAM_MUSIC",
    "STREAM_ALARM",
    "STREAM_NOTIFICATION",
]
RANGES = {0: (1, 5), 1: (0, 7), 2: (0, 7), 3: (0, 15), 4: (1, 7), 5: (0, 7)}
# set_dnd's words -> Settings.Global.ZEN_MODE_* as the interruption filter becomes it
ZEN = {"on": "2", "none": "2", "priority": "1", "alarms": "3", "all": "0", "off": "0"}


def service(name: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        CMD_SERVICES[name] = fn
        return fn

    return register


def _global(p: Proc, key: str, value: str) -> None:
    state_of(p).settings.setdefault("global", {})[key] = value


async def _unknown(p: Proc, word: str) -> int:
    await p.print(f"Unknown command: {word}\n")
    return 255


@service("wifi")
async def cmd_wifi(p: Proc) -> int:
    args = p.argv[2:]
    if args[:1] == ["status"]:  # DEVICE_STATUS's read (status_cmds.py)
        from .status_cmds import cmd_wifi as wifi_status

        return await wifi_status(p, args)
    if state_of(p).sdk < 30 or not args or args[0] != "set-wifi-enabled":
        return await _unknown(p, args[0] if args else "")
    if len(args) != 2 or args[1] not in ("enabled", "disabled"):
        await p.error("Invalid argument to 'set-wifi-enabled' - must be 'enabled' or 'disabled'\n")
        return 255
    _global(p, "wifi_on", "1" if args[1] == "enabled" else "0")
    return 0


@service("bluetooth_manager")
async def cmd_bluetooth(p: Proc) -> int:
    args = p.argv[2:]
    if state_of(p).sdk < 33:
        await p.error("cmd: Can't find service: bluetooth_manager\n")
        return 20
    if args[:1] == ["enable"] or args[:1] == ["disable"]:
        _global(p, "bluetooth_on", "1" if args[0] == "enable" else "0")
        return 0
    return await _unknown(p, args[0] if args else "")


@service("connectivity")
async def cmd_connectivity(p: Proc) -> int:
    args = p.argv[2:]
    state = state_of(p)
    if state.sdk < 30 or args[:1] != ["airplane-mode"]:
        return await _unknown(p, args[0] if args else "")
    if len(args) == 1:
        await p.print("enabled\n" if state.setting("global", "airplane_mode_on") == "1" else "disabled\n")
        return 0
    if args[1] not in ("enable", "disable"):
        await p.print(f"Unsupported airplane mode command: {args[1]}\n")
        return 255
    _global(p, "airplane_mode_on", "1" if args[1] == "enable" else "0")
    return 0


async def _volume(p: Proc, args: list[str]) -> int:
    state = state_of(p)
    stream, index, get = 3, None, False
    it = iter(args)
    for option in it:
        if option == "--stream":
            stream = int(next(it, "3"))
            name = STREAM_NAMES[stream] if 0 <= stream < len(STREAM_NAMES) else "invalid stream"
            await p.print(f"[V] will control stream={stream} ({name})\n")
        elif option == "--set":
            index = int(next(it, "5"))
            await p.print(f"[V] will set volume to index={index}\n")
        elif option == "--get":
            get = True
            await p.print("[V] will get volume\n")
        elif option != "--show":
            await p.error(f"Error: Unknown argument {option}\n")
            return 255
    low, high = RANGES.get(stream, (0, 15))
    await p.print("[V] Connecting to AudioService\n")
    if index is not None:
        if not low <= index <= high:
            await p.error(
                f"Error: invalid volume index {index} for stream {stream} (should be in [{low}..{high}])\n"
            )
            return 0  # showError prints and returns: the exit status says nothing
        state.volumes[stream] = index
    if get:
        await p.print(f"[V] volume is {state.volumes.get(stream, low)} in range [{low}..{high}]\n")
    return 0


@service("media_session")
async def cmd_media_session(p: Proc) -> int:
    args = p.argv[2:]
    if state_of(p).sdk < 29:
        await p.error("cmd: Can't find service: media_session\n")
        return 20
    if args[:1] != ["volume"]:
        return await _unknown(p, args[0] if args else "")
    return await _volume(p, args[1:])


@command("media")
async def media(p: Proc) -> int:
    if state_of(p).sdk >= 30:
        await p.error("/system/bin/sh: media: inaccessible or not found\n")
        return 127
    args = p.argv[1:]
    if args[:1] != ["volume"]:
        await p.error(f"Error: unknown command '{args[0] if args else ''}'\n")
        return 1
    return await _volume(p, args[1:])


@service("notification")
async def cmd_notification(p: Proc) -> int:
    args = p.argv[2:]
    if state_of(p).sdk < 30 or args[:1] != ["set_dnd"]:
        return await _unknown(p, args[0] if args else "")
    if len(args) < 2:
        await p.print("Error occurred. Check logcat for details. No argument given\n")
        return 0
    zen = ZEN.get(args[1])
    if zen is not None:  # an unknown word is INTERRUPTION_FILTER_UNKNOWN: nothing changes
        _global(p, "zen_mode", zen)
    return 0
