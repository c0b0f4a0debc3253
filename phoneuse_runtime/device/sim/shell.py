"""A tiny `adb shell`: the handful of commands agents use, failing the way a phone's sh does.

Supported: echo, getprop, pm list packages, dumpsys window|activity, wm size, input
(keyevent, tap, swipe, text), sleep, am start|force-stop|broadcast, monkey -p, grep,
whoami, id, true, false; `;`, `&&`, `||` and `|` between them. Anything else exits 127
with "/system/bin/sh: NAME: inaccessible or not found".
"""

from __future__ import annotations

import asyncio
import math
import re
import shlex
import zlib
from dataclasses import dataclass

from phoneuse_runtime.device.base import KEYCODES, Intent, ShellResult
from phoneuse_runtime.device.sim.catalog import APPS, short_component
from phoneuse_runtime.device.sim.intents import describe, start_intent
from phoneuse_runtime.device.sim.phone import SimPhone
from phoneuse_runtime.kernel.errors import RuntimeFailure

PROPS = {
    "ro.product.model": "Pixel 8 (simulated)",
    "ro.product.manufacturer": "Google",
    "ro.product.brand": "google",
    "ro.product.device": "shiba",
    "ro.build.version.release": "14",
    "ro.build.version.sdk": "34",
    "ro.build.id": "UQ1A.240205.002",
    "ro.serialno": "sim-0",
    "ro.debuggable": "0",
}


@dataclass
class Out:
    code: int = 0
    stdout: str = ""
    stderr: str = ""


def _hash(text: str) -> str:
    return format(zlib.crc32(text.encode()) & 0xFFFFFFF, "x")


def _window_lines(phone: SimPhone) -> str:
    top = phone.top()
    if top.activity == "NotificationShade":
        focus = f"Window{{{_hash('shade')} u0 NotificationShade}}"
    else:
        focus = f"Window{{{_hash(top.activity)} u0 {short_component(top.package, top.activity)}}}"
    app = next(t for t in reversed(phone.tasks) if not t.overlay).screens[-1]
    record = f"ActivityRecord{{{_hash(app.package)} u0 {short_component(app.package, app.activity)} t{len(phone.tasks) + 10}}}"  # noqa: E501
    return f"  mCurrentFocus={focus}\n  mFocusedApp={record}\n"


def _seconds(arg: str) -> float | None:
    """sleep's argument: a finite, non-negative number of seconds ("nan" and "inf" are not)."""
    try:
        seconds = float(arg)
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def _keycode(arg: str) -> int | None:
    name = arg.upper().removeprefix("KEYCODE_")
    if name in KEYCODES:
        return KEYCODES[name]
    return int(arg) if arg.isdigit() else None


def _input(phone: SimPhone, args: list[str]) -> Out:
    usage = Out(
        1, "", "Error: Unknown command or bad arguments; usage: input [keyevent|tap|swipe|text] ...\n"
    )
    if not args:
        return usage
    verb, rest = args[0], args[1:]
    try:
        if verb == "keyevent" and rest:
            codes = [_keycode(a) for a in rest if a != "--longpress"]
            if any(c is None for c in codes):
                return Out(1, "", f"Error: Unknown keycode {rest}\n")
            for code in codes:
                assert code is not None
                phone.press_key(code)
                phone.settle()
        elif verb == "tap" and len(rest) == 2:
            phone.tap(int(float(rest[0])), int(float(rest[1])))
        elif verb == "swipe" and len(rest) in (4, 5):
            x1, y1, x2, y2 = (int(float(v)) for v in rest[:4])
            phone.swipe(x1, y1, x2, y2)
        elif verb == "text" and rest:
            phone.input_text(" ".join(rest).replace("%s", " "))
        else:
            return usage
    except (ValueError, OverflowError):  # not a number, or inf ("1e999"), which no int holds
        return usage
    return Out()


def _intent_from(args: list[str]) -> Intent:
    intent = Intent()
    i = 0
    while i < len(args):
        flag = args[i]
        value = args[i + 1] if i + 1 < len(args) else ""
        if flag in ("-a", "-d", "-t", "-n", "-c", "-p", "-f"):
            if flag == "-a":
                intent.action = value
            elif flag == "-d":
                intent.data = value
            elif flag == "-t":
                intent.mime = value
            elif flag == "-n":
                intent.component = value
            elif flag == "-c":
                intent.categories.append(value)
            elif flag == "-p":
                intent.package = value
            i += 2
        elif flag in ("--es", "--ei", "--ez", "--el", "--esa") and i + 2 < len(args):
            key, raw = args[i + 1], args[i + 2]
            if flag in ("--ei", "--el"):
                intent.extras[key] = int(raw)
            elif flag == "--ez":
                intent.extras[key] = raw.lower() == "true"
            elif flag == "--esa":
                intent.extras[key] = raw.split(",")
            else:
                intent.extras[key] = raw
            i += 3
        elif flag.startswith("-"):
            i += 1  # -W, -S, --user 0 and friends change nothing here
            if flag == "--user":
                i += 1
        else:
            intent.package = flag
            i += 1
    return intent


def _am(phone: SimPhone, args: list[str]) -> Out:
    if not args:
        return Out(1, "", "usage: am [start|force-stop|broadcast|startservice] ...\n")
    verb, rest = args[0], args[1:]
    if verb == "force-stop" and rest:
        phone.stop(rest[0])
        return Out()
    if verb in ("start", "start-activity", "broadcast", "startservice", "start-service"):
        try:
            intent = _intent_from(rest)
        except ValueError as exc:
            return Out(1, "", f"Error: {exc}\n")
        intent.kind = "activity" if verb.startswith("start") and "service" not in verb else "broadcast"
        if "service" in verb:
            intent.kind = "service"
        shown = describe(intent)
        head = {"activity": "Starting: ", "broadcast": "Broadcasting: ", "service": "Starting service: "}[
            intent.kind
        ]
        try:
            start_intent(phone, intent)
        except RuntimeFailure as exc:
            return Out(1, f"{head}{shown}\n", exc.message + "\n")
        tail = "Broadcast completed: result=0\n" if intent.kind == "broadcast" else ""
        return Out(0, f"{head}{shown}\n{tail}")
    return Out(1, "", f"Error: unknown command '{verb}'\n")


def _run(phone: SimPhone, argv: list[str], stdin: str) -> Out:
    name, args = argv[0], argv[1:]
    if name == "echo":
        newline = not (args and args[0] == "-n")
        return Out(0, " ".join(args[0 if newline else 1 :]) + ("\n" if newline else ""))
    if name == "getprop":
        if args:
            return Out(0, PROPS.get(args[0], "") + "\n")
        return Out(0, "".join(f"[{k}]: [{v}]\n" for k, v in sorted(PROPS.items())))
    if name == "pm":
        if args[:2] != ["list", "packages"]:
            return Out(1, "", "Error: the simulator's pm knows only 'pm list packages'\n")
        opts = [a for a in args[2:] if a.startswith("-")]
        words = [a for a in args[2:] if not a.startswith("-")]
        apps = [a for a in APPS if ("-3" not in opts or not a.system) and ("-s" not in opts or a.system)]
        names = sorted(a.package for a in apps if not words or words[0] in a.package)
        return Out(0, "".join(f"package:{n}\n" for n in names))
    if name == "dumpsys":
        if args[:1] in (["window"], ["activity"]):
            lines = _window_lines(phone)
            if args[0] == "activity":
                lines = lines.replace("mFocusedApp=", "mResumedActivity: ").replace(
                    "  mCurrentFocus=", "  mLastFocus="
                )
            return Out(0, lines)
        return Out(0, f"Can't find service: {args[0] if args else ''}\n")
    if name == "wm" and args[:1] == ["size"]:
        return Out(0, "Physical size: 1080x2400\n")
    if name == "input":
        return _input(phone, args)
    if name == "am":
        return _am(phone, args)
    if name == "monkey":
        package = args[args.index("-p") + 1] if "-p" in args and args.index("-p") + 1 < len(args) else ""
        try:
            phone.launch(package)
        except RuntimeFailure:
            return Out(0, "** No activities found to run, monkey aborted.\n")
        return Out(0, "  bash arg: -p\n  bash arg: " + package + "\nEvents injected: 1\n")
    if name == "grep":
        flags = [a for a in args if a.startswith("-")]
        pattern = next((a for a in args if not a.startswith("-")), "")
        regex = re.compile(pattern if "-E" in flags else re.escape(pattern), re.I if "-i" in flags else 0)
        keep = [ln for ln in stdin.splitlines(True) if bool(regex.search(ln)) != ("-v" in flags)]
        return Out(0 if keep else 1, "".join(keep))
    if name == "whoami":
        return Out(0, "shell\n")
    if name == "id":
        return Out(0, "uid=2000(shell) gid=2000(shell) groups=2000(shell) context=u:r:shell:s0\n")
    if name in ("true", "false"):
        return Out(0 if name == "true" else 1)
    return Out(127, "", f"/system/bin/sh: {name}: inaccessible or not found\n")


async def run(phone: SimPhone, command: str) -> ShellResult:
    """Runs a command line; the caller bounds it with its timeout."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError as exc:
        return ShellResult(2, "", f"/system/bin/sh: syntax error: {exc}\n")
    stdout, stderr, code = [], [], 0
    pipeline: list[list[str]] = [[]]
    pending_op = ";"
    for token in [*tokens, ";"]:
        if token in ("|",):
            pipeline.append([])
            continue
        if token not in (";", "&&", "||"):
            if set(token) <= set(";&|"):
                return ShellResult(2, "", f"/system/bin/sh: syntax error: unexpected '{token}'\n")
            pipeline[-1].append(token)
            continue
        run_it = pending_op == ";" or (pending_op == "&&") == (code == 0)
        if run_it and any(pipeline):
            piped = ""
            for argv in pipeline:
                if not argv:
                    return ShellResult(2, "", "/system/bin/sh: syntax error: unexpected '|'\n")
                if argv[0] == "sleep":
                    seconds = _seconds(argv[1]) if len(argv) > 1 else 0.0
                    if seconds is None:
                        out = Out(1, "", f"sleep: invalid number '{argv[1]}'\n")
                    else:
                        await asyncio.sleep(seconds)
                        out = Out()
                else:
                    out = _run(phone, argv, piped)
                    phone.settle()
                piped = out.stdout
                stderr.append(out.stderr)
            stdout.append(piped)
            code = out.code
        pipeline, pending_op = [[]], token
    return ShellResult(code, "".join(stdout), "".join(stderr))
