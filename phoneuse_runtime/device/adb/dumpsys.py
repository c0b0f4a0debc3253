"""Reading `dumpsys` output: the foreground app, notifications, the call state, running apps.

Pure parsers (tested on recorded shapes); their formats differ across Android versions, so
each one knows the variants it accepts and returns None/empty when none matched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from phoneuse_runtime.device.base import Notification
from phoneuse_runtime.screen.dialogs import SYSTEM_SERVER, WINDOW_KINDS

# --- foreground -----------------------------------------------------------------
# `dumpsys window windows` (every version): mCurrentFocus=Window{a1b2 u0 com.pkg/com.pkg.Activity}
# also seen: mCurrentFocus=Window{a1b2 u0 StatusBar} (no activity: a system window has focus).
_FOCUS = re.compile(r"mCurrentFocus=Window\{\S+ \S+ (?P<pkg>[^\s/}]+)/(?P<act>[^\s}]+)\}")
# Android 10+: mFocusedApp=ActivityRecord{c0ffee u0 com.pkg/.Activity t12}
# older: mFocusedApp=AppWindowToken{... token=Token{... ActivityRecord{... u0 com.pkg/.Act t12}}}
_FOCUSED_APP = re.compile(r"mFocusedApp=.*?ActivityRecord\{\S+ \S+ (?P<pkg>[^\s/}]+)/(?P<act>[^\s}]+)")
# `dumpsys activity activities`: mResumedActivity: / ResumedActivity: / topResumedActivity=
_RESUMED = re.compile(
    r"(?:mResumedActivity|ResumedActivity|topResumedActivity)[:=] ?ActivityRecord\{\S+ \S+ "
    r"(?P<pkg>[^\s/}]+)/(?P<act>[^\s}]+)"
)


def _activity(package: str, activity: str) -> str:
    """The full class name (`.Main` is short for `com.pkg.Main`)."""
    return package + activity if activity.startswith(".") else activity


# The system UI's own windows: with one of them focused, the notification shade (or the lock
# screen) is in front of the app, and the front is the system UI's (the sim reports it so too).
_SYSTEM_UI_FOCUS = re.compile(r"mCurrentFocus=Window\{\S+ \S+ (?P<title>NotificationShade|StatusBar)\}")
SYSTEM_UI = "com.android.systemui"
# The system's own dialogs about an app (AppNotRespondingDialog, AppErrorDialog: system_server's
# windows, package "android"), titled for the process they are about:
# mCurrentFocus=Window{a1b2 u0 Application Not Responding: com.android.systemui}. The package in
# the title is the one the dialog is about, not the one in front: the dialog is.
SYSTEM_DIALOG_TITLES = tuple(WINDOW_KINDS)
_DIALOG_FOCUS = re.compile(
    r"mCurrentFocus=Window\{\S+ \S+ (?P<title>(?:" + "|".join(SYSTEM_DIALOG_TITLES) + r"): [^\s}]+)\}"
)


# A display's section in `dumpsys window` / `dumpsys window displays`: "  Display: mDisplayId=0 ..."
_DISPLAY = re.compile(r"^\s*Display: mDisplayId=(\d+)", re.MULTILINE)
# One focus line per display; "null" on a display nothing has focus on.
_FOCUS_LINE = re.compile(r"^\s*(?:mCurrentFocus|mFocusedApp)=(?!null\s*$).*$", re.MULTILINE)


def default_display_part(output: str) -> str:
    """The part of a window dump about the default display, where the user's app is. A foldable
    lists a section per display (the Galaxy Z Flip4's cover screen has the system UI's
    SubHomeActivity focused): with `Display: mDisplayId=N` headers, display 0's section; without
    them (output cut to the focus lines, one per display), the non-null focus lines of the last
    display listed that has any. One display's output is returned whole."""
    headers = list(_DISPLAY.finditer(output))
    if headers:
        for i, header in enumerate(headers):
            if header.group(1) == "0":
                end = headers[i + 1].start() if i + 1 < len(headers) else len(output)
                return output[header.start() : end]
        return output
    lines = [m.group(0) for m in _FOCUS_LINE.finditer(output)]
    kinds = [line.strip().split("=", 1)[0] for line in lines]
    if len(kinds) == len(set(kinds)):
        return output
    # Several displays' focus lines: keep, of each kind, the last listed.
    last = {kind: line for kind, line in zip(kinds, lines, strict=True)}
    return "\n".join(last.values()) + "\n"


def parse_window_focus(output: str) -> tuple[str, str] | None:
    """(package, activity) on the default display from `dumpsys window windows` (or `displays`),
    read by window: the focused window's; the system UI's while the notification shade or lock
    screen has the focus, the system's (`android`) while one of its dialogs about an app does
    (activity: the window's title); else the focused app's (while a window of no package of its
    own, a popup, holds the focus)."""
    part = default_display_part(output)
    return _focus_in(part) or (_focus_in(output) if part is not output else None)


def _focus_in(output: str) -> tuple[str, str] | None:
    shade = _SYSTEM_UI_FOCUS.search(output)
    if shade:
        return SYSTEM_UI, shade.group("title")
    dialog = _DIALOG_FOCUS.search(output)
    if dialog:
        return SYSTEM_SERVER, dialog.group("title")
    for pattern in (_FOCUS, _FOCUSED_APP):
        match = pattern.search(output)
        if match:
            return match.group("pkg"), _activity(match.group("pkg"), match.group("act"))
    return None


def parse_resumed_activity(output: str) -> tuple[str, str] | None:
    """(package, activity) from `dumpsys activity activities`."""
    match = _RESUMED.search(output)
    if match:
        return match.group("pkg"), _activity(match.group("pkg"), match.group("act"))
    return None


# --- running apps -------------------------------------------------------------------
_PACKAGE_NAME = re.compile(r"^[A-Za-z][\w]*(\.[A-Za-z_][\w]*)+$")


def parse_ps_packages(output: str) -> list[str]:
    """Packages with a process, from `ps -A` (the NAME column is last; an app's extra processes
    are `pkg:name`)."""
    found: set[str] = set()
    for line in output.splitlines()[1:]:
        fields = line.split()
        if len(fields) < 2:
            continue
        name = fields[-1].split(":", 1)[0]
        if _PACKAGE_NAME.match(name):
            found.add(name)
    return sorted(found)


# --- call state -----------------------------------------------------------------------
_CALL_STATE = re.compile(r"mCallState=(\d)")
_CALL_NUMBER = re.compile(r"mCallIncomingNumber=(\S*)")
CallStateName = Literal["idle", "ringing", "offhook"]
_STATES: dict[int, CallStateName] = {0: "idle", 1: "ringing", 2: "offhook"}


def parse_call_state(output: str) -> tuple[CallStateName, str]:
    """From `dumpsys telephony.registry`: the first (default subscription's) mCallState."""
    match = _CALL_STATE.search(output)
    state = _STATES.get(int(match.group(1)), "idle") if match else "idle"
    number = _CALL_NUMBER.search(output)
    return state, (number.group(1) if number and state != "idle" else "")


# --- notifications ----------------------------------------------------------------------
# NotificationRecord(0x0e8e8d0d: pkg=com.pkg user=UserHandle{0} id=1 tag=null importance=4
#     key=0|com.pkg|1|null|10123: Notification(channel=...))
_RECORD = re.compile(
    r"NotificationRecord\(0x[0-9a-f]+: pkg=(?P<pkg>\S+) .*?key=(?P<key>\S+?):? Notification\("
)
# extras={ ... android.title=String (Alice) ... } with --noredact; without it, String [length=5].
_EXTRA = re.compile(r"^\s*android\.(?P<name>title|text|bigText)=(?P<type>\w+) \((?P<value>.*)\)\s*$")
_POSTED = re.compile(r"(?:mCreationTimeMs|postTime|mPostTime)=(\d{10,})")


@dataclass
class _Draft:
    key: str
    package: str
    title: str = ""
    text: str = ""
    posted_ms: int = 0


def parse_notifications(output: str) -> list[Notification]:
    """The posted notifications in `dumpsys notification --noredact`, in the order listed."""
    drafts: list[_Draft] = []
    current: _Draft | None = None
    for line in output.splitlines():
        record = _RECORD.search(line)
        if record:
            current = _Draft(record.group("key"), record.group("pkg"))
            drafts.append(current)
            continue
        if current is None:
            continue
        extra = _EXTRA.match(line)
        if extra:
            name, value = extra.group("name"), extra.group("value")
            if name == "title" and not current.title:
                current.title = value
            elif name in ("text", "bigText") and not current.text:
                current.text = value
            continue
        posted = _POSTED.search(line)
        if posted and not current.posted_ms:
            current.posted_ms = int(posted.group(1))
    seen: set[str] = set()
    found = []
    for d in drafts:
        if d.key in seen:  # the same record listed again (e.g. in the ranking section)
            continue
        seen.add(d.key)
        found.append(
            Notification(key=d.key, package=d.package, title=d.title, text=d.text, posted_ms=d.posted_ms)
        )
    return found
