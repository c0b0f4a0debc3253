"""The screen's power and lock screen over adb (issue 27): the commands, and what `dumpsys` prints.

- awake: `dumpsys power`'s mWakefulness (adb/status.parse_screen_on reads it, for both backends);
- the lock screen: `dumpsys window policy`, PhoneWindowManager's dump, whose KeyguardServiceDelegate
  block (Android 5+) says `showing=` and `secure=` (a PIN, pattern or password), as the keyguard
  service last told the window manager; its KeyguardStateMonitor block and DisplayPolicy's
  `isKeyguardShowing=` (Android 10+), or PhoneWindowManager's `mShowingLockscreen=` (before
  Android 10), say `showing` where the block does not;
- waking and sleeping: `input keyevent KEYCODE_WAKEUP` / `KEYCODE_SLEEP` (Android 5+: 224, 223);
- dismissing an insecure lock screen: `wm dismiss-keyguard` (Android 8+), before it KEYCODE_MENU,
  which an insecure keyguard takes as "unlock"; neither ever enters a secret;
- keep-awake: `svc power stayon true` (Settings.Global.STAY_ON_WHILE_PLUGGED_IN = AC|USB|WIRELESS,
  so the screen stays on while the phone is on any charger), the previous value put back at close.
"""

from __future__ import annotations

import re

from phoneuse_runtime.device.adb.shell import command

WAKE = command("input", "keyevent", "KEYCODE_WAKEUP")
SLEEP = command("input", "keyevent", "KEYCODE_SLEEP")
DISMISS = command("wm", "dismiss-keyguard")
DISMISS_BEFORE_O = command("input", "keyevent", "KEYCODE_MENU")
DISMISS_KEYGUARD_SDK = 26  # `wm dismiss-keyguard` is there from Android 8.0
POWER = command("dumpsys", "power")
POLICY = command("dumpsys", "window", "policy")
MARK = "--phoneuse-policy--"  # between the two dumps of one read
READ = f"{POWER}; echo {MARK}; {POLICY}"

STAY_ON_SETTING = command("settings", "get", "global", "stay_on_while_plugged_in")
STAY_ON = command("svc", "power", "stayon", "true")
STAY_ON_ALL = 7  # BatteryManager.BATTERY_PLUGGED_AC | _USB | _WIRELESS


def restore_stay_on(value: int) -> str:
    return command("settings", "put", "global", "stay_on_while_plugged_in", str(value))


def parse_stay_on(output: str) -> int | None:
    """`settings get global stay_on_while_plugged_in`: a number, or "null" where never set (0)."""
    text = output.strip()
    if text == "null":
        return 0
    return int(text) if text.isdigit() else None


_FLAG = re.compile(r"^(\s*)([A-Za-z]+)=(true|false)\s*$")
_INLINE = re.compile(r"\b(isKeyguardShowing|mShowingLockscreen)=(true|false)\b")


def parse_keyguard(policy: str) -> tuple[bool | None, bool | None]:
    """(showing, secure) from `dumpsys window policy` (or all of `dumpsys window`); None for what
    it does not say."""
    lines = policy.replace("\r\n", "\n").split("\n")
    block: dict[str, bool] = {}
    for i, line in enumerate(lines):
        if line.strip() != "KeyguardServiceDelegate":
            continue
        indent = len(line) - len(line.lstrip())
        for inner in lines[i + 1 :]:
            if not inner.strip():
                continue
            if len(inner) - len(inner.lstrip()) <= indent:
                break
            found = _FLAG.match(inner)
            if found is not None:
                block.setdefault(found.group(2), found.group(3) == "true")
        break
    showing = block.get("showing", block.get("mIsShowing"))
    secure = block.get("secure", block.get("mIsSecure"))
    if showing is None:
        inline = _INLINE.search(policy)
        showing = None if inline is None else inline.group(2) == "true"
    return showing, secure
