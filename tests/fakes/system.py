"""Android's own shell tools: getprop/setprop, settings, ime, wm, input, screencap, uiautomator,
content, logcat, svc. Output and failure modes follow the real tools (e.g. `input text` cannot
type non-ASCII text and fails with an exception; `%s` is a space; a failing `cmd` prints
"Exception occurred while executing '<cmd>':" and exits 255).
"""

from __future__ import annotations

import struct

from . import apps, interaction, seed
from .intents import CommandError, exception
from .render import render
from .shell import Proc
from .state import PhoneState
from .ui import dump_compact
from .userland import command, path_of, print_canned, state_of, wait_closed

KEYCODES = {
    "UNKNOWN": 0,
    "SOFT_LEFT": 1,
    "SOFT_RIGHT": 2,
    "HOME": 3,
    "BACK": 4,
    "CALL": 5,
    "ENDCALL": 6,
    "STAR": 17,
    "POUND": 18,
    "DPAD_UP": 19,
    "DPAD_DOWN": 20,
    "DPAD_LEFT": 21,
    "DPAD_RIGHT": 22,
    "DPAD_CENTER": 23,
    "VOLUME_UP": 24,
    "VOLUME_DOWN": 25,
    "POWER": 26,
    "CAMERA": 27,
    "CLEAR": 28,
    "COMMA": 55,
    "PERIOD": 56,
    "ALT_LEFT": 57,
    "ALT_RIGHT": 58,
    "SHIFT_LEFT": 59,
    "SHIFT_RIGHT": 60,
    "TAB": 61,
    "SPACE": 62,
    "ENTER": 66,
    "DEL": 67,
    "GRAVE": 68,
    "MINUS": 69,
    "EQUALS": 70,
    "SLASH": 76,
    "AT": 77,
    "PLUS": 81,
    "MENU": 82,
    "NOTIFICATION": 83,
    "SEARCH": 84,
    "MEDIA_PLAY_PAUSE": 85,
    "MEDIA_STOP": 86,
    "MEDIA_NEXT": 87,
    "MEDIA_PREVIOUS": 88,
    "MUTE": 91,
    "PAGE_UP": 92,
    "PAGE_DOWN": 93,
    "ESCAPE": 111,
    "FORWARD_DEL": 112,
    "CTRL_LEFT": 113,
    "CTRL_RIGHT": 114,
    "MOVE_HOME": 122,
    "MOVE_END": 123,
    "VOLUME_MUTE": 164,
    "APP_SWITCH": 187,
    "SLEEP": 223,
    "WAKEUP": 224,
    "CUT": 277,
    "COPY": 278,
    "PASTE": 279,
}
KEYCODES.update({str(d): 7 + d for d in range(10)})
KEYCODES.update({chr(ord("A") + i): 29 + i for i in range(26)})
META_FOR = {113: 0x3000, 114: 0x5000, 59: 0x41, 60: 0x81, 57: 0x12, 58: 0x22}
SOURCES = {
    "keyboard",
    "dpad",
    "gamepad",
    "touchscreen",
    "mouse",
    "stylus",
    "trackball",
    "touchpad",
    "touchnavigation",
    "joystick",
    "rotaryencoder",
}
SETTABLE_PROPS = ("debug.", "log.tag.", "persist.log.tag.", "persist.debug.", "ctl.", "service.adb.")


@command("getprop")
async def getprop(p: Proc) -> int:
    if await print_canned(p):
        return 0
    props = state_of(p).props
    if len(p.argv) == 1:
        await p.print("".join(f"[{k}]: [{v}]\n" for k, v in sorted(props.items())))
    else:
        default = p.argv[2] if len(p.argv) > 2 else ""
        await p.print(props.get(p.argv[1], default) + "\n")
    return 0


@command("setprop")
async def setprop(p: Proc) -> int:
    if len(p.argv) != 3:
        await p.error("setprop: Need 2 arguments\n")
        return 1
    key, value = p.argv[1], p.argv[2]
    if not key.startswith(SETTABLE_PROPS):
        await p.error(f"Failed to set property '{key}' to '{value}'.\nSee dmesg for error reason.\n")
        return 1
    state_of(p).props[key] = value
    return 0


# --- settings and input methods ------------------------------------------------------------------


@command("settings")
async def settings(p: Proc) -> int:
    args = p.argv[1:]
    if len(args) >= 2 and args[0] == "--user":
        args = args[2:]
    state = state_of(p)
    if len(args) < 2 or args[0] not in ("get", "put", "delete", "list", "reset"):
        await p.error("usage:  settings [--user <USERID> | current] get namespace key\n")
        return 255
    verb, namespace = args[0], args[1]
    if namespace not in ("system", "secure", "global"):
        await p.error(f"Invalid namespace '{namespace}'\n")
        return 255
    table = state.settings.setdefault(namespace, {})
    if verb == "list":
        await p.print("".join(f"{k}={v}\n" for k, v in sorted(table.items())))
    elif verb == "get" and len(args) >= 3:
        await p.print(table.get(args[2], "null") + "\n")
    elif verb == "put" and len(args) >= 4:
        if state.settings_write_denied:  # MIUI without "USB debugging (Security settings)"
            await p.error(
                "Exception occurred while executing 'put':\njava.lang.SecurityException: Permission denial: "
                "writing to settings requires:android.permission.WRITE_SECURE_SETTINGS\n"
                "\tat com.android.providers.settings.SettingsProvider.enforceWritePermission"
                "(SettingsProvider.java:2214)\n"
            )
            return 255
        table[args[2]] = args[3]
    elif verb == "delete" and len(args) >= 3:
        await p.print(f"Deleted {int(table.pop(args[2], None) is not None)} rows\n")
    else:
        await p.error("Invalid arguments\n")
        return 255
    return 0


def ime_ids(state: PhoneState, *, enabled_only: bool) -> list[str]:
    """Input method ids ("pkg/.Service" or "pkg/full.Service"), as `ime list -s` prints them."""
    ids = [f"{pkg.name}/{pkg.ime}" for pkg in state.packages.values() if pkg.ime]
    enabled = (state.setting("secure", "enabled_input_methods") or "").split(":")
    return [i for i in ids if i in enabled or not enabled_only]


@command("ime")
async def ime(p: Proc) -> int:
    state = state_of(p)
    args = p.argv[1:]
    secure = state.settings.setdefault("secure", {})
    enabled = [e for e in secure.get("enabled_input_methods", "").split(":") if e]
    if args and args[0] == "list":
        ids = ime_ids(state, enabled_only="-a" not in args)
        if "-s" in args:
            await p.print("".join(f"{i}\n" for i in ids))
        else:
            for i in ids:
                pkg = i.split("/")[0]
                await p.print(
                    f"{i}:\n  mId={i} mSettingsActivityName=null\n  Service:\n    packageName={pkg}\n"
                )
        return 0
    if len(args) == 2 and args[0] in ("enable", "disable", "set"):
        verb, ime_id = args
        if ime_id not in ime_ids(state, enabled_only=False):
            action = {"enable": "enabled", "disable": "disabled", "set": "selected"}[verb]
            await p.error(f"Unknown input method {ime_id} cannot be {action} for user #0\n")
            return 0
        if verb == "set":
            if ime_id not in enabled:
                await p.error(f"Unknown input method {ime_id} cannot be selected for user #0\n")
                return 0
            secure["default_input_method"] = ime_id
            await p.print(f"Input method {ime_id} selected for user #0\n")
            return 0
        was = ime_id in enabled
        if verb == "enable" and not was:
            enabled.append(ime_id)
        elif verb == "disable" and was:
            enabled.remove(ime_id)
            if secure.get("default_input_method") == ime_id:
                secure["default_input_method"] = enabled[0] if enabled else seed.LATIN_IME
        secure["enabled_input_methods"] = ":".join(enabled)
        state_word = "already " if was == (verb == "enable") else "now "
        await p.print(f"Input method {ime_id}: {state_word}{verb}d for user #0\n")
        return 0
    if args and args[0] == "reset":
        secure["default_input_method"] = seed.LATIN_IME
        secure["enabled_input_methods"] = seed.LATIN_IME
        await p.print(f"Reset input method for user #0\nInput method {seed.LATIN_IME} selected\n")
        return 0
    await p.error("ime <command>:\n  list [-a] [-s]\n  enable [--user <USER_ID>] <ID>\n  set <ID>\n")
    return 255


@command("wm")
async def wm(p: Proc) -> int:
    if await print_canned(p):
        return 0
    state = state_of(p)
    args = p.argv[1:]
    if args[:1] == ["size"]:
        if len(args) == 1:
            w, h = state.screen_size
            override = state.props.get("fake.wm.override")
            await p.print(f"Physical size: {w}x{h}\n" + (f"Override size: {override}\n" if override else ""))
        elif args[1] == "reset":
            state.props.pop("fake.wm.override", None)
        else:
            state.props["fake.wm.override"] = args[1]
        return 0
    if args[:1] == ["density"]:
        await p.print(f"Physical density: {state.density}\n")
        return 0
    await p.error(f"Unknown command: {args[0] if args else ''}\n")
    return 255


# --- input -------------------------------------------------------------------------------------------


def keycode(arg: str) -> int:
    """KeyEvent.keyCodeFromString: a number first ("6" is ENDCALL), then "KEYCODE_6"/"6"-style
    names ("KEYCODE_6" is the digit key); anything else is KEYCODE_UNKNOWN (0)."""
    if arg.isdigit():
        return int(arg)
    return KEYCODES.get(arg.upper().removeprefix("KEYCODE_"), 0)


def typeable(text: str) -> bool:
    """What the virtual keyboard's KeyCharacterMap can produce: printable ASCII, tab, newline."""
    return all(32 <= ord(c) < 127 or c in "\n\t" for c in text)


def percent_s(arg: str) -> str:
    """InputShellCommand.sendText: "%s" becomes a space."""
    out: list[str] = []
    i = 0
    while i < len(arg):
        if arg[i] == "%" and arg[i + 1 : i + 2] == "s":
            out.append(" ")
            i += 2
        else:
            out.append(arg[i])
            i += 1
    return "".join(out)


@command("input")
async def input_(p: Proc) -> int:
    state = state_of(p)
    args = p.argv[1:]
    if not args:
        await p.print("Usage: input [<source>] [-d DISPLAY_ID] <command> [<arg>...]\n")
        return 0
    if args[0] in SOURCES:
        args = args[1:]
    if args[:1] == ["-d"]:
        args = args[2:]
    cmd, rest = (args[0], args[1:]) if args else ("", [])
    try:

        def num(i: int) -> float:
            if i >= len(rest):
                raise CommandError("java.lang.IllegalArgumentException", f'Argument expected after "{cmd}"')
            try:
                return float(rest[i])
            except ValueError:
                raise CommandError(
                    "java.lang.NumberFormatException", f'For input string: "{rest[i]}"'
                ) from None

        if cmd == "tap":
            interaction.tap(state, num(0), num(1), source="input")
        elif cmd in ("swipe", "draganddrop"):
            x1, y1, x2, y2 = num(0), num(1), num(2), num(3)
            ms = int(num(4)) if len(rest) > 4 else 300
            if abs(x2 - x1) + abs(y2 - y1) < 10 and ms >= interaction.LONG_PRESS_MS:
                interaction.tap(state, x1, y1, source="input swipe", duration_ms=ms)
            else:
                interaction.swipe(state, x1, y1, x2, y2, ms, source="input")
        elif cmd == "text":
            if not rest:
                raise CommandError("java.lang.IllegalArgumentException", 'Argument expected after "text"')
            text = percent_s(rest[0])
            if not typeable(text):
                from .state import TextInput

                state.log.texts.append(TextInput(text, "input text", "", ok=False))
                raise CommandError("java.lang.NullPointerException", "Attempt to get length of null array")
            interaction.type_text(state, text, method="input text")
        elif cmd == "keyevent":
            longpress = "--longpress" in rest
            for arg in (a for a in rest if not a.startswith("--")):
                interaction.press_key(state, keycode(arg), source="input", longpress=longpress)
        elif cmd == "keycombination":
            codes = [keycode(a) for a in rest if not a.startswith("-")]
            meta = sum(META_FOR.get(c, 0) for c in codes[:-1])
            if codes:
                interaction.press_key(state, codes[-1], source="input", meta=meta)
        elif cmd == "press":
            interaction.press_key(state, 23, source="input")
        elif cmd in ("roll", "motionevent"):
            pass
        else:
            await p.error(f"Unknown command: {cmd}\n")
            return 255
    except CommandError as exc:
        await p.error(exception(cmd, exc))
        return 255
    return 0


# --- screen ------------------------------------------------------------------------------------------


@command("screencap")
async def screencap(p: Proc) -> int:
    state = state_of(p)
    args = [a for a in p.argv[1:] if a not in ("-p",)]
    target = next((a for a in args if not a.startswith("-")), None)
    png = "-p" in p.argv or (target or "").endswith(".png")
    if png:
        data = render(state, "PNG")
    else:
        w, h = state.screen_size
        data = struct.pack("<IIII", w, h, 1, 0) + render(state, "RAW")
    if target is None:
        await p.streams.out(data)
        return 0
    try:
        state.files.write(path_of(p, target), data)
    except OSError as exc:
        await p.error(f"Error opening file: {target} ({exc.strerror})\n")
        return 1
    return 0


@command("uiautomator")
async def uiautomator(p: Proc) -> int:
    state = state_of(p)
    args = p.argv[1:]
    if not args or args[0] != "dump":
        await p.error(
            "Usage: uiautomator <subcommand> [options]\n\nAvailable subcommands:\n\nhelp\nruntest\ndump\nevents\n"  # noqa: E501
        )
        return 1
    if state.u2.running:
        await p.error(
            "java.lang.IllegalStateException: UiAutomationService "
            "android.accessibilityservice.IAccessibilityServiceClient$Stub$Proxy@d1c1b6balready registered!\n"
            "\tat android.os.Parcel.createExceptionOrNull(Parcel.java:3027)\n"
            "\tat android.app.UiAutomationConnection.connect(UiAutomationConnection.java:108)\n"
            "\tat com.android.commands.uiautomator.DumpCommand.run(DumpCommand.java:74)\n"
        )
        return 1
    target = next((a for a in args[1:] if not a.startswith("-")), "/sdcard/window_dump.xml")
    xml = dump_compact(apps.active_window(state), rotation=state.rotation)
    if target == "/dev/tty":
        await p.print(xml)
    else:
        try:
            state.files.write(path_of(p, target), xml.encode("utf-8"))
        except OSError as exc:
            await p.error(f"ERROR: dump failed: {exc.strerror}\n")
            return 1
    await p.print(f"UI hierchary dumped to: {target}\n")
    return 0


# --- the rest ----------------------------------------------------------------------------------------


@command("content")
async def content(p: Proc) -> int:
    from .content import run_content

    out, err = run_content(state_of(p), p.argv[1:])
    await p.print(out)
    if err:
        await p.error(err)
    return 0


@command("logcat")
async def logcat(p: Proc) -> int:
    if "-c" in p.argv:
        return 0
    await p.print(
        "--------- beginning of main\n11-14 22:13:20.000  1510  1510 I adbd    : opening shell service\n"
    )
    if "-d" in p.argv:
        return 0
    await wait_closed(p)
    return 130


@command("svc")
async def svc(p: Proc) -> int:
    state = state_of(p)
    args = p.argv[1:]
    keys = {"wifi": "wifi_on", "data": "mobile_data", "bluetooth": "bluetooth_on"}
    if len(args) == 2 and args[0] in keys and args[1] in ("enable", "disable"):
        state.settings.setdefault("global", {})[keys[args[0]]] = "1" if args[1] == "enable" else "0"
        return 0
    if args[:2] == ["power", "stayon"]:
        return 0
    await p.print("Available commands:\n    help\n    power\n    data\n    wifi\n    usb\n    nfc\n")
    return 0


@command("reboot")
async def reboot(p: Proc) -> int:
    await p.error("reboot: Operation not permitted\n")
    return 1
