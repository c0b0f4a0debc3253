"""Issue 27's commands on the fake phone, as a real one answers them: `screenrecord` (a process
that writes its mp4, honours --time-limit and finishes on SIGINT, with frameworks/av's messages),
toybox `stat -c`, `wm dismiss-keyguard`, `svc power stayon`, and `dumpsys window policy` with
PhoneWindowManager's KeyguardServiceDelegate block (showing=, secure=) in the shape of the real
Android 13 capture (realdata/dumpsys/window_mtk-tb8168p1_android13_asleep.txt)."""

from __future__ import annotations

import asyncio
import posixpath
import re
import time

from . import dumpsys as _dumpsys_module
from . import system as _system_module
from .shell import Proc
from .state import PhoneState, ShellProcess
from .userland import command, path_of, state_of

SECURE = ("pin", "pattern", "password")
MAX_TIME_LIMIT_S = 180  # kMaxTimeLimitSec
# An mp4's first box, then a KiB a second recorded: a small file a test can pull and check.
MP4_HEAD = b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom"
BYTES_A_SECOND = 1024
_STAY_ON = {"true": 7, "false": 0, "usb": 2, "ac": 1, "wireless": 4}  # BatteryManager.BATTERY_PLUGGED_*

USAGE = (
    "Usage: screenrecord [options] <filename>\n\n"
    "Android screenrecord v1.3.  Records the device's display to a .mp4 file.\n\n"
    'Options:\n--size WIDTHxHEIGHT\n    Set the video size, e.g. "1280x720".  Default is the device\'s main\n'
    "    display resolution (if supported), 1280x720 if not.  For best results,\n"
    "    use a size supported by the AVC encoder.\n--bit-rate RATE\n"
    "    Set the video bit rate, in bits per second.  Value may be specified as\n"
    "    bits or megabits, e.g. '4000000' is equivalent to '4M'.  Default 20Mbps.\n"
    "--time-limit TIME\n    Set the maximum recording time, in seconds.  Default / maximum is 180.\n"
)


def secure(state: PhoneState) -> bool:
    return state.lock_screen in SECURE


def _bit_rate(text: str) -> int | None:
    found = re.fullmatch(r"(\d+)([mMkK]?)", text)
    if found is None:
        return None
    scale = {"": 1, "k": 1000, "m": 1_000_000}[found.group(2).lower()]
    return int(found.group(1)) * scale


@command("screenrecord")
async def screenrecord(p: Proc) -> int:
    state = state_of(p)
    args = p.argv[1:]
    time_limit, options = MAX_TIME_LIMIT_S, {"--size", "--bit-rate", "--time-limit"}
    files: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in options:
            if i + 1 >= len(args):
                await p.error(f"screenrecord: option '{arg}' requires an argument\n" + USAGE)
                return 2
            value = args[i + 1]
            i += 2
            if arg == "--time-limit":
                time_limit = int(value) if value.isdigit() else 0
                if not 1 <= time_limit <= MAX_TIME_LIMIT_S:
                    await p.error(
                        f"Time limit {time_limit}s outside acceptable range [1,{MAX_TIME_LIMIT_S}]\n"
                    )
                    return 2
            elif arg == "--bit-rate":
                rate = _bit_rate(value)
                if rate is None or not 100_000 <= rate <= 200_000_000:
                    await p.error(f"Bit rate {rate or 0}bps outside acceptable range [100000,200000000]\n")
                    return 2
            elif re.fullmatch(r"\d+x\d+", value) is None:
                await p.error(f"Invalid size '{value}', must be width x height\n")
                return 2
            continue
        if arg in ("--verbose", "--bugreport", "--rotate"):
            i += 1
            continue
        if arg == "--help":
            await p.error(USAGE)
            return 0
        if arg.startswith("-"):
            await p.error(f"screenrecord: unrecognized option '{arg}'\n" + USAGE)
            return 2
        files.append(arg)
        i += 1
    if len(files) != 1:
        await p.error("Must specify output file (see --help).\n")
        return 2
    path = path_of(p, files[0])
    if not state.files.exists(posixpath.dirname(path)):
        await p.error(f"Unable to open '{files[0]}': No such file or directory\n")
        return 1
    try:
        state.files.write(path, b"")
    except OSError as exc:
        await p.error(f"Unable to open '{files[0]}': {exc.strerror}\n")
        return 1
    pid = p.shell.pid
    proc = state.shell_processes[pid] = ShellProcess(pid, "screenrecord")
    began = time.monotonic()
    try:
        while time.monotonic() - began < time_limit and 2 not in proc.signals:
            if p.io.closed or 9 in proc.signals or 15 in proc.signals:
                return 143  # killed, or its stream gone: the mp4 is never finished
            await asyncio.sleep(0.02)
        seconds = max(1, int(min(time_limit, time.monotonic() - began) + 0.999))
        state.files.write(path, MP4_HEAD + bytes(BYTES_A_SECOND * seconds))
        return 0
    finally:
        state.shell_processes.pop(pid, None)


_wm = _system_module.wm


@command("wm")
async def wm(p: Proc) -> int:
    state = state_of(p)
    if p.argv[1:2] == ["dismiss-keyguard"]:
        if state.sdk < 26:
            await p.error("Unknown command: dismiss-keyguard\n")
            return 255
        # WindowManagerService.dismissKeyguard: an insecure one goes; a secure one asks for the
        # credential (the bouncer), which only the owner can give: it stays locked.
        if state.screen_on and not secure(state):
            state.locked = False
        return 0
    return await _wm(p)


_svc = _system_module.svc


@command("svc")
async def svc(p: Proc) -> int:
    args = p.argv[1:]
    if args[:2] == ["power", "stayon"] and len(args) == 3 and args[2] in _STAY_ON:
        state_of(p).settings.setdefault("global", {})["stay_on_while_plugged_in"] = str(_STAY_ON[args[2]])
        return 0
    if args[:2] == ["power", "stayon"]:
        await p.error("usage: svc power stayon [true|false|usb|ac|wireless]\n")
        return 1
    return await _svc(p)


def flag(value: bool) -> str:
    return str(value).lower()


def policy_dump(state: PhoneState) -> str:
    """`dumpsys window policy`: the lines of PhoneWindowManager.dump that tools read."""
    on, showing = state.screen_on, state.locked and state.lock_screen != "none"
    return (
        "WINDOW MANAGER POLICY STATE (dumpsys window policy)\n"
        "    mSafeMode=false mSystemReady=true mSystemBooted=true\n"
        f"    mKeyguardOccluded=false mKeyguardOccludedChanged=false mPendingKeyguardOccluded=false\n"
        "    KeyguardServiceDelegate\n"
        f"      showing={flag(showing)}\n"
        f"      showingAndNotOccluded={flag(showing)}\n"
        "      inputRestricted=" + flag(showing and secure(state)) + "\n"
        "      occluded=false\n"
        f"      secure={flag(secure(state))}\n"
        "      dreaming=false\n"
        "      systemIsReady=true\n"
        f"      deviceHasKeyguard={flag(state.lock_screen != 'none')}\n"
        "      enabled=true\n"
        "      offReason=OFF_BECAUSE_OF_USER\n"
        "      currentUser=0\n"
        "      bootCompleted=true\n"
        f"      screenState={'SCREEN_STATE_ON' if on else 'SCREEN_STATE_OFF'}\n"
        f"      interactiveState={'INTERACTIVE_STATE_AWAKE' if on else 'INTERACTIVE_STATE_SLEEP'}\n"
        "      KeyguardStateMonitor\n"
        f"        mIsShowing={flag(showing)}\n"
        "        mSimSecure=false\n"
        "        mInputRestricted=" + flag(showing and secure(state)) + "\n"
        "        mTrusted=false\n"
        "        mCurrentUserId=0\n"
        "  DisplayPolicy\n"
        f"    mAwake={flag(on)} mScreenOnEarly={flag(on)} mScreenOnFully={flag(on)}\n"
        f"    isKeyguardShowing={flag(showing)}\n"
    )


_dumpsys = _dumpsys_module.dumpsys


@command("dumpsys")
async def dumpsys(p: Proc) -> int:
    if p.argv[1:3] == ["window", "policy"] and "dumpsys window policy" not in state_of(p).printed:
        await p.print(policy_dump(state_of(p)))
        return 0
    return await _dumpsys(p)
