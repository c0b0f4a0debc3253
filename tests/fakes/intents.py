"""Intents as `am`/`cmd package` parse them (Intent.parseCommandArgs) and print them
(Intent.toShortString with the data URI made "safe", as `am start` prints it).

Parsing follows ShellCommand.getNextOption: "-aVALUE" is "-a VALUE", option parsing stops at the
first word without a leading "-", and that word becomes the data URI (if it has a ":"), a
component (if it has a "/") or a package. Errors are `CommandError`s carrying the Java exception
the real command would throw.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from .state import IntentRecord, full_class, short_component


class CommandError(Exception):
    """A Java exception escaping a `cmd` handler: printed as "Exception occurred while
    executing '<cmd>':" plus a stack trace, exit code 255."""

    def __init__(self, java_class: str, message: str) -> None:
        super().__init__(f"{java_class}: {message}")
        self.java_class = java_class
        self.message = message


SHELL_FRAMES = {
    "input": "com.android.server.input.InputShellCommand.onCommand(InputShellCommand.java:327)",
    "activity": "com.android.server.am.ActivityManagerShellCommand.onCommand(ActivityManagerShellCommand.java:233)",  # noqa: E501
    "package": "com.android.server.pm.PackageManagerShellCommand.onCommand(PackageManagerShellCommand.java:216)",  # noqa: E501
}


def exception(cmd: str, exc: CommandError, service: str = "input") -> str:
    """How BasicShellCommandHandler.exec reports an exception (on stderr; the exit code is 255)."""
    return (
        f"\nException occurred while executing '{cmd}':\n{exc.java_class}: {exc.message}\n"
        f"\tat {SHELL_FRAMES[service]}\n"
        "\tat com.android.modules.utils.BasicShellCommandHandler.exec(BasicShellCommandHandler.java:97)\n"
        "\tat android.os.ShellCommand.exec(ShellCommand.java:38)\n"
        "\tat android.os.Binder.shellCommand(Binder.java:1049)\n"
        "\tat android.os.Binder.onTransact(Binder.java:877)\n"
    )


def illegal(message: str) -> CommandError:
    return CommandError("java.lang.IllegalArgumentException", message)


class Args:
    """ShellCommand's argument cursor."""

    def __init__(self, argv: list[str]) -> None:
        self.argv = argv
        self.pos = 0
        self.cur: str | None = None

    def next_option(self) -> str | None:
        if self.cur is not None:
            raise illegal(f'No argument expected after "{self.argv[self.pos - 1]}"')
        if self.pos >= len(self.argv):
            return None
        arg = self.argv[self.pos]
        if not arg.startswith("-"):
            return None
        self.pos += 1
        if arg == "--":
            return None
        if len(arg) > 2 and arg[1] != "-":
            self.cur = arg[2:]
            return arg[:2]
        return arg

    def next_arg(self) -> str | None:
        if self.cur is not None:
            value, self.cur = self.cur, None
            return value
        if self.pos < len(self.argv):
            self.pos += 1
            return self.argv[self.pos - 1]
        return None

    def required(self) -> str:
        value = self.next_arg()
        if value is None:
            raise illegal(f'Argument expected after "{self.argv[self.pos - 1]}"')
        return value

    def rest(self) -> list[str]:
        return self.argv[self.pos :]


def java_int(text: str, *, decode: bool = True) -> int:
    """Integer.decode (hex, octal, '#'; 32 bits) or Long.valueOf (decimal only; 64 bits).

    So `--ei beginTime 1700000000000` fails the way it does on a phone."""
    value = text
    try:
        if decode:
            sign = -1 if value.startswith("-") else 1
            body = value[1:] if value[:1] in "+-" else value
            if body.lower().startswith("0x") or body.startswith("#"):
                number = sign * int(body[2:] if body[0] == "0" else body[1:], 16)
            elif body.startswith("0") and len(body) > 1:
                number = sign * int(body[1:], 8)
            else:
                number = sign * int(body, 10)
            limit = 2**31
        else:
            if not re.fullmatch(r"[+-]?\d+", value):
                raise ValueError(value)
            number, limit = int(value), 2**63
        if not -limit <= number < limit:
            raise ValueError(value)
        return number
    except ValueError:
        raise CommandError("java.lang.NumberFormatException", f'For input string: "{text}"') from None


def _float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise CommandError("java.lang.NumberFormatException", f'For input string: "{text}"') from None


def _bool(text: str) -> bool:
    value = text.lower()
    if value in ("true", "t"):
        return True
    if value in ("false", "f"):
        return False
    try:
        return java_int(value) != 0
    except CommandError:
        raise illegal(f"Invalid boolean value: {value}") from None


def _split_array(text: str) -> list[str]:
    return [part.replace("\\,", ",") for part in re.split(r"(?<!\\),", text)]


EXTRA_PARSERS: dict[str, tuple[str, Callable[[str], object]]] = {
    "--es": ("s", str),
    "-e": ("s", str),
    "--ei": ("i", java_int),
    "--el": ("l", lambda v: java_int(v, decode=False)),
    "--ef": ("f", _float),
    "--ed": ("d", _float),
    "--eu": ("u", str),
    "--ecn": ("cn", str),
    "--ez": ("z", _bool),
    "--eia": ("ia", lambda v: [java_int(x) for x in v.split(",")]),
    "--eial": ("ial", lambda v: [java_int(x) for x in v.split(",")]),
    "--ela": ("la", lambda v: [java_int(x, decode=False) for x in v.split(",")]),
    "--elal": ("lal", lambda v: [java_int(x, decode=False) for x in v.split(",")]),
    "--efa": ("fa", lambda v: [_float(x) for x in v.split(",")]),
    "--efal": ("fal", lambda v: [_float(x) for x in v.split(",")]),
    "--esa": ("sa", _split_array),
    "--esal": ("sal", _split_array),
}

FLAG_OPTIONS = {
    "--grant-read-uri-permission": 0x1,
    "--grant-write-uri-permission": 0x2,
    "--exclude-stopped-packages": 0x10,
    "--include-stopped-packages": 0x20,
    "--debug-log-resolution": 0x8,
    "--activity-brought-to-front": 0x400000,
    "--activity-clear-top": 0x4000000,
    "--activity-clear-when-task-reset": 0x80000,
    "--activity-exclude-from-recents": 0x800000,
    "--activity-launched-from-history": 0x100000,
    "--activity-multiple-task": 0x8000000,
    "--activity-no-animation": 0x10000,
    "--activity-no-history": 0x40000000,
    "--activity-no-user-action": 0x40000,
    "--activity-previous-is-top": 0x1000000,
    "--activity-reorder-to-front": 0x20000,
    "--activity-reset-task-if-needed": 0x200000,
    "--activity-single-top": 0x20000000,
    "--activity-clear-task": 0x8000,
    "--activity-task-on-home": 0x4000,
    "--activity-match-external": 0x800,
    "--receiver-registered-only": 0x40000000,
    "--receiver-replace-pending": 0x20000000,
    "--receiver-foreground": 0x10000000,
    "--receiver-no-abort": 0x8000000,
    "--receiver-include-background": 0x1000000,
}

# Options ActivityManagerShellCommand handles itself, with whether they take a value.
AM_OPTIONS = {
    "-D": False,
    "-N": False,
    "-W": False,
    "-S": False,
    "-P": True,
    "--start-profiler": True,
    "--sampling": True,
    "--streaming": False,
    "--attach-agent": True,
    "--attach-agent-bind": True,
    "-R": True,
    "--track-allocation": False,
    "--user": True,
    "--receiver-permission": True,
    "--display": True,
    "--windowingMode": True,
    "--activityType": True,
    "--task": True,
    "--task-overlay": False,
    "--lock-task": False,
    "--allow-background-activity-starts": False,
    "--async": False,
    "--brief": False,
    "--components": False,
    "--query-flags": True,
}


@dataclass
class ParsedIntent:
    intent: IntentRecord
    options: dict[str, str] = field(default_factory=dict)


def parse_intent(argv: list[str], *, kind: str = "activity", source: str = "am") -> ParsedIntent:
    """The intent (and am's own options) described by `argv`, which follows the subcommand."""
    args = Args(argv)
    it = IntentRecord(kind=kind, source=source)  # type: ignore[arg-type]
    options: dict[str, str] = {}
    while (opt := args.next_option()) is not None:
        if opt == "-a":
            it.action = args.required()
        elif opt == "-d":
            it.data = args.required()
        elif opt == "-t":
            it.mime = args.required()
        elif opt == "-i":
            args.required()
        elif opt == "-c":
            it.categories.append(args.required())
        elif opt in EXTRA_PARSERS:
            key = args.required()
            flavour, convert = EXTRA_PARSERS[opt]
            it.extras[key] = convert(args.required())
            it.extra_types[key] = flavour
        elif opt == "--esn":
            key = args.required()
            it.extras[key] = None
            it.extra_types[key] = "sn"
        elif opt == "-n":
            value = args.required()
            if "/" not in value:
                raise illegal(f"Bad component name: {value}")
            it.component = value
        elif opt == "-p":
            it.package = args.required()
        elif opt == "-f":
            it.flags |= java_int(args.required())
        elif opt in FLAG_OPTIONS:
            it.flags |= FLAG_OPTIONS[opt]
        elif opt == "--selector":
            pass
        elif opt in AM_OPTIONS:
            options[opt] = args.required() if AM_OPTIONS[opt] else "true"
        else:
            raise illegal(f"Unknown option: {opt}")
    arg = args.next_arg()
    if arg is not None:
        if ":" in arg:
            it.data = arg
            it.action = it.action or "android.intent.action.VIEW"
        else:
            it.action = it.action or "android.intent.action.MAIN"
            if "android.intent.category.LAUNCHER" not in it.categories:
                it.categories.append("android.intent.category.LAUNCHER")
            if "/" in arg:
                it.component = arg
            else:
                it.package = arg
    return ParsedIntent(it, options)


def component_parts(component: str) -> tuple[str, str]:
    """("pkg", "full.Class") from "pkg/.Cls" or "pkg/full.Class"."""
    pkg, _, cls = component.partition("/")
    return pkg, full_class(pkg, cls)


def safe_uri(uri: str) -> str:
    """Uri.toSafeString: phone numbers and addresses become x's, web URLs lose their path."""
    scheme, colon, ssp = uri.partition(":")
    if not colon:
        return uri
    low = scheme.lower()
    if low in ("tel", "sip", "sms", "smsto", "mailto", "nfc"):
        return scheme + ":" + "".join(c if c in "-@." else "x" for c in ssp)
    if low in ("http", "https", "ftp", "rtsp"):
        parts = urlsplit(uri)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
        return f"{scheme}://{host}{port}/..."
    return uri


def short_string(it: IntentRecord, *, extra_flags: int = 0) -> str:
    """Intent.toShortString(secure=true, comp=true, extras=true, clip=false)."""
    parts: list[str] = []
    if it.action:
        parts.append(f"act={it.action}")
    if it.categories:
        parts.append("cat=[" + ",".join(it.categories) + "]")
    if it.data is not None:
        parts.append(f"dat={safe_uri(it.data)}")
    if it.mime:
        parts.append(f"typ={it.mime}")
    flags = it.flags | extra_flags
    if flags:
        parts.append(f"flg=0x{flags:x}")
    if it.package:
        parts.append(f"pkg={it.package}")
    if it.component:
        parts.append("cmp=" + short_component(*component_parts(it.component)))
    if it.extras:
        parts.append("(has extras)")
    return "Intent { " + " ".join(parts) + " }"


def uri_part(uri: str) -> str:
    """The scheme-specific part with %xx escapes decoded: "smsto:%2B1555" -> "+1555"."""
    from urllib.parse import unquote

    return unquote(uri.partition(":")[2])
