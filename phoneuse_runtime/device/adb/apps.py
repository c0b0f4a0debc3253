"""Apps and intents through `am`, `cmd package` and `pm`.

How an app is named (OPEN_APP by `name`): adb cannot read an app's label for most apps (labels
are resources inside the APK, which only the phone's PackageManager resolves), so the label
the runtime matches against is, in order:
1. the label the phone prints itself: `nonLocalizedLabel` in `cmd package query-activities`
   for apps that declare a plain-text label;
2. the label of a well-known package (`KNOWN_LABELS`: Chrome, Messages, Phone, ...);
3. the package name's last word, title-cased (`com.whatsapp` -> "Whatsapp"), so a name still
   matches an app the two above do not know, ignoring case.
Package names themselves always work (OPEN_APP `package`). The list of apps (packages with
launcher activities) is read once and kept for `APPS_TTL_S`, and read again after a launch
finds an app missing. It is read in one shell stream (`LIST_SCRIPT`): the packages with their
versionCode (`--show-versioncode`, Android 9+; older phones refuse the option and are asked
again without it), the system ones (`-s`), the launcher activities and their plain labels. The
versionName is not read: only `dumpsys package` prints it, one package at a time.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from phoneuse_runtime.device.adb.shell import command
from phoneuse_runtime.device.base import AppInfo, Intent
from phoneuse_runtime.kernel.errors import InvalidParams

LAUNCHER = ("-a", "android.intent.action.MAIN", "-c", "android.intent.category.LAUNCHER")
APPS_TTL_S = 60.0

KNOWN_LABELS: dict[str, str] = {
    "com.android.chrome": "Chrome",
    "com.google.android.apps.messaging": "Messages",
    "com.android.messaging": "Messaging",
    "com.samsung.android.messaging": "Messages",
    "com.google.android.dialer": "Phone",
    "com.android.dialer": "Phone",
    "com.samsung.android.dialer": "Phone",
    "com.google.android.contacts": "Contacts",
    "com.android.contacts": "Contacts",
    "com.android.settings": "Settings",
    "com.google.android.calendar": "Calendar",
    "com.android.calendar": "Calendar",
    "com.google.android.deskclock": "Clock",
    "com.android.deskclock": "Clock",
    "com.google.android.GoogleCamera": "Camera",
    "com.android.camera2": "Camera",
    "com.google.android.gm": "Gmail",
    "com.google.android.apps.maps": "Maps",
    "com.google.android.youtube": "YouTube",
    "com.google.android.apps.photos": "Photos",
    "com.android.vending": "Play Store",
    "com.google.android.googlequicksearchbox": "Google",
    "com.google.android.calculator": "Calculator",
    "com.android.calculator2": "Calculator",
    "com.google.android.apps.nbu.files": "Files",
    "com.google.android.documentsui": "Files",
    "com.whatsapp": "WhatsApp",
    "com.whatsapp.w4b": "WhatsApp Business",
    "org.telegram.messenger": "Telegram",
    "com.instagram.android": "Instagram",
    "com.facebook.katana": "Facebook",
    "com.spotify.music": "Spotify",
    "org.mozilla.firefox": "Firefox",
    "com.termux": "Termux",
}

_COMPONENT = re.compile(r"^\s*([A-Za-z][\w.]*)/([\w.$]+)\s*$")
_PACKAGE_FIELD = re.compile(r"\bpackageName=(\S+)")
# The label runs to the next ` field=` on its line (a label may hold spaces).
_NON_LOCALIZED = re.compile(r"\bnonLocalizedLabel=(.*?)(?=\s+\w+=|\s*$)")
# `package:NAME`, `package:APK=NAME` (-f: the path may itself hold "="), then ` versionCode:N`
# (--show-versioncode) and ` uid:N` (-U) in that order, as PackageManagerShellCommand prints them.
_PACKAGE_LINE = re.compile(
    r"^package:(?:\S+=)?([A-Za-z][\w.]*)(?:\s+versionCode:(-?\d+))?(?:\s+uid:\d+(?:,\d+)*)?\s*$",
    re.MULTILINE,
)
_NAME = re.compile(r"^[A-Za-z][\w]*(\.[A-Za-z_][\w]*)+$")


def check_package(package: str) -> str:
    """A package name as Android allows it; anything else never reaches a command line."""
    if not _NAME.match(package):
        raise InvalidParams(f"{package!r} is not an Android package name")
    return package


def fallback_label(package: str) -> str:
    return package.rsplit(".", 1)[-1].replace("_", " ").title()


def parse_components(output: str) -> list[tuple[str, str]]:
    """(package, activity) per line of `--components`/`--brief` output, activities in full."""
    found = []
    for line in output.splitlines():
        match = _COMPONENT.match(line)
        if match:
            package, activity = match.groups()
            found.append((package, package + activity if activity.startswith(".") else activity))
    return found


def parse_package_versions(output: str) -> dict[str, int | None]:
    """package -> its versionCode (None without --show-versioncode), in the order listed, from
    any form of `pm list packages` (-f, --show-versioncode, -U; CRLF-doubled lines too)."""
    found: dict[str, int | None] = {}
    for name, code in _PACKAGE_LINE.findall(output.replace("\r", "")):
        found.setdefault(name, int(code) if code else None)
    return found


def parse_packages(output: str) -> list[str]:
    return list(parse_package_versions(output))


def parse_plain_labels(output: str) -> dict[str, str]:
    """package -> the plain-text label `cmd package query-activities` (without --components)
    shows: each ResolveInfo's ActivityInfo prints `packageName=` and, on a later line,
    `nonLocalizedLabel=` (null unless the app declared its label as text)."""
    labels: dict[str, str] = {}
    package = ""
    for line in output.splitlines():
        named = _PACKAGE_FIELD.search(line)
        if named:
            package = named.group(1)
        label = _NON_LOCALIZED.search(line)
        if label and package and label.group(1) not in ("", "null"):
            labels.setdefault(package, label.group(1).strip())
    return labels


def build_apps(
    packages: dict[str, int | None],
    launchers: Sequence[tuple[str, str]],
    plain: dict[str, str],
    system: set[str],
) -> list[AppInfo]:
    """Every installed package (with its versionCode where listed), with its launcher activity
    (if any) and the best label known."""
    launch: dict[str, str] = {}
    for package, activity in launchers:
        launch.setdefault(package, activity)
    apps = []
    for package in sorted(set(packages) | set(launch)):
        label = plain.get(package) or KNOWN_LABELS.get(package) or fallback_label(package)
        apps.append(
            AppInfo(package, label, launch.get(package, ""), package in system, packages.get(package))
        )
    return apps


# The parts of the one stream that lists the apps, each after a line of its own.
LIST_MARK = "@@apps:"
LIST_PARTS = (
    ("packages", command("pm", "list", "packages", "--show-versioncode") + " 2>&1"),
    ("system", command("pm", "list", "packages", "-s")),
    ("launchers", command("cmd", "package", "query-activities", "--components", *LAUNCHER)),
    ("labels", command("cmd", "package", "query-activities", *LAUNCHER)),
)
LIST_SCRIPT = "; ".join(f"echo {LIST_MARK}{name}; {cmd}" for name, cmd in LIST_PARTS)
PLAIN_LIST = command("pm", "list", "packages")


def split_list(output: str) -> dict[str, str]:
    """LIST_SCRIPT's output, part name -> what it printed."""
    parts: dict[str, str] = {}
    for chunk in output.split(LIST_MARK)[1:]:
        name, _, body = chunk.partition("\n")
        parts[name.strip()] = body
    return parts


def versions_refused(output: str) -> bool:
    """Whether `pm list packages --show-versioncode` was refused (before Android 9: `Error:
    Unknown option: --show-versioncode`), so the packages must be listed again without it."""
    return "--show-versioncode" in output and not parse_package_versions(output)


def resolve_launcher(package: str) -> str:
    return command("cmd", "package", "resolve-activity", "--brief", *LAUNCHER, check_package(package))


def monkey_launch(package: str) -> str:
    return command("monkey", "-p", check_package(package), "-c", "android.intent.category.LAUNCHER", "1")


def am_start_component(package: str, activity: str) -> str:
    return command("am", "start", "-n", f"{check_package(package)}/{activity}")


# --- intents --------------------------------------------------------------------------
_INT32 = range(-(2**31), 2**31)


def _esa(values: list[str]) -> str:
    # `am` splits string arrays on commas that are not escaped with a backslash.
    return ",".join(v.replace("\\", "\\\\").replace(",", "\\,") for v in values)


def intent_args(intent: Intent, *, longs: frozenset[str] = frozenset()) -> list[str]:
    """`am start|broadcast|startservice` arguments for the intent; every value is one argument,
    and each extra's type follows its Python type (str --es, bool --ez, int --ei or --el past 32
    bits, float --ef, list of str --esa); the ints named in `longs` are always --el, for
    receivers that read a long whatever its value (CalendarContract's beginTime)."""
    verb = {"activity": "start", "broadcast": "broadcast", "service": "startservice"}[intent.kind]
    args = ["am", verb, *_match_args(intent)]
    for key, value in intent.extras.items():
        if isinstance(value, bool):
            args += ["--ez", key, "true" if value else "false"]
        elif isinstance(value, int):
            args += ["--ei" if value in _INT32 and key not in longs else "--el", key, str(value)]
        elif isinstance(value, float):
            args += ["--ef", key, repr(value)]
        elif isinstance(value, list):
            args += ["--esa", key, _esa([str(v) for v in value])]
        else:
            args += ["--es", key, str(value)]
    return args


def resolve_args(intent: Intent) -> list[str] | None:
    """`cmd package resolve-activity --brief` arguments that ask who takes an activity intent."""
    if intent.kind != "activity":
        return None
    return ["cmd", "package", "resolve-activity", "--brief", *_match_args(intent)]


def _match_args(intent: Intent) -> list[str]:
    """The arguments that say which component takes `intent`: `am` and `cmd package` share them."""
    args: list[str] = []
    if intent.action:
        args += ["-a", intent.action]
    if intent.data:
        args += ["-d", intent.data]
    if intent.mime:
        args += ["-t", intent.mime]
    for category in intent.categories:
        args += ["-c", category]
    if intent.component:
        args += ["-n", intent.component]
    elif intent.package:
        args += ["-p", intent.package]
    return args


# What `am` prints (exit code 0 on old versions) when an intent went nowhere.
AM_FAILURES = (
    "Error: Activity not started",
    "unable to resolve Intent",
    "Error: Not found; no service started",
    "Error: Activity class",
    "does not exist",
    "Exception occurred while executing",
    "Error type 3",
)
AM_SECURITY = ("java.lang.SecurityException", "Permission Denial")


def am_failure(output: str) -> str | None:
    """The line `am` printed to say the intent was not delivered, if it did."""
    for line in output.splitlines():
        if any(sign in line for sign in AM_FAILURES) or any(sign in line for sign in AM_SECURITY):
            return line.strip()
    return None


def am_denied(output: str) -> bool:
    return any(sign in output for sign in AM_SECURITY)
