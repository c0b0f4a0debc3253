"""What a device can do, named. A device declares its capabilities; an action requires some.

An action whose requirement the device lacks answers UNSUPPORTED before its handler runs,
with the hint below (a backend may give a better one, e.g. Termux without its own adb).
"""

from __future__ import annotations

UI = "ui"
SCREENSHOT = "screenshot"
APPS = "apps"
SMS = "sms"
CALLS = "calls"
CONTACTS = "contacts"
CALENDAR = "calendar"
ALARMS = "alarms"
CLIPBOARD = "clipboard"
NOTIFICATIONS = "notifications"
SHELL = "shell"
SIM = "sim"
# Issue 27, the screen's power and recording.
POWER = "power"
SCREEN_RECORD = "screen_record"
FILES = "files"  # issue 27: PUSH_FILE, PULL_FILE

# capability -> (what it is, how a device gets it when it lacks it)
CAPABILITIES: dict[str, tuple[str, str]] = {
    UI: (
        "read the screen's UI tree and drive it: taps, swipes, typing, keys",
        "the runtime needs adb to the phone (uiautomator2); on Termux, enable wireless debugging "
        "and pair the phone's own adb with it",
    ),
    SCREENSHOT: (
        "capture the screen as an image",
        "the runtime needs adb to the phone (screencap); on Termux, enable wireless debugging",
    ),
    APPS: (
        "list, launch and stop apps, and send intents",
        "the runtime needs adb to the phone, or Termux's am",
    ),
    SMS: ("send SMS and read the SMS provider", "grant the SMS permission to Termux:API, or use adb"),
    CALLS: ("place and end calls, read the call state", "grant the phone permission to Termux:API"),
    CONTACTS: ("read and add contacts", "grant the contacts permission to Termux:API, or use adb"),
    CALENDAR: ("read and add calendar events", "use adb (content provider access)"),
    ALARMS: ("set and list alarms", "use adb (the clock app's intents)"),
    CLIPBOARD: ("read and set the clipboard", "install Termux:API, or use adb with a clipboard helper"),
    NOTIFICATIONS: ("list notifications", "grant notification access to Termux:API, or use adb"),
    SHELL: ("run shell commands as the shell user", "use adb (or Termux) and start serve with --allow-shell"),
    POWER: (
        "wake the screen, put it to sleep, and dismiss a lock screen that has no PIN, pattern or password",
        "the runtime needs adb to the phone (input keyevent, wm dismiss-keyguard); on Termux, enable "
        "wireless debugging",
    ),
    SCREEN_RECORD: (
        "record the screen to an mp4 on the phone",
        "the runtime needs adb to the phone (screenrecord); on Termux, enable wireless debugging",
    ),
    FILES: (
        "move files between the phone's shared storage and the runtime's files directory",
        "use adb, or on Termux run termux-setup-storage (shared storage for Termux)",
    ),
    SIM: ("simulate the outside world: incoming SMS, calls, notifications", "use --device sim"),
}

EVERYTHING = frozenset(CAPABILITIES)
