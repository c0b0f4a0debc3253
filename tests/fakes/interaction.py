"""Input reaching the phone: taps and long presses hit-tested against the screen, swipes (the
shade, the keyguard), key events (HOME, BACK, ENDCALL, POWER, PASTE, Ctrl+V, characters), text
typed into the focused field, and broadcasts (with uiautomator2's AdbKeyboard input method).

Each entry point logs what arrived (state.log) before acting on it.
"""

from __future__ import annotations

import base64
import binascii

from . import apps, seed
from . import widgets as w
from .intents import CommandError, component_parts
from .state import IntentRecord, Key, PhoneState, Swipe, Tap, TextInput, short_component
from .ui import UiNode, hit

PROTECTED_BROADCASTS = {
    "android.intent.action.AIRPLANE_MODE",
    "android.intent.action.BOOT_COMPLETED",
    "android.intent.action.BATTERY_CHANGED",
    "android.intent.action.SCREEN_ON",
    "android.intent.action.SCREEN_OFF",
    "android.intent.action.TIME_SET",
    "android.provider.Telephony.SMS_RECEIVED",
    "android.provider.Telephony.SMS_DELIVER",
}
LONG_PRESS_MS = 400
CTRL = 0x1000 | 0x2000 | 0x4000  # META_CTRL_ON, _LEFT_ON, _RIGHT_ON
CHARS = {62: " ", 55: ",", 56: ".", 69: "-", 70: "=", 76: "/", 77: "@", 81: "+", 66: "\n"}
CHARS.update({7 + d: str(d) for d in range(10)})
CHARS.update({29 + i: chr(ord("a") + i) for i in range(26)})


def tap(state: PhoneState, x: float, y: float, *, source: str, duration_ms: int = 0) -> None:
    """A touch at (x, y): clicks what is under it, unless held long enough to be a long press."""
    target = hit(apps.windows(state), x, y) if state.screen_on else None
    name = (target.resource_id or target.a11y_text or target.content_desc) if target else ""
    state.log.taps.append(Tap(x, y, source, duration_ms, name, target.package if target else ""))
    if target is None or not state.screen_on or duration_ms >= LONG_PRESS_MS:
        return
    click(state, target)


def click(state: PhoneState, node: UiNode) -> None:
    """A click on `node`: focus for fields, else the node's action."""
    rec = state.foreground()
    if node.editable:
        if rec.focus != node.key and node.key == w.URL_BAR:
            rec.fields[w.URL_BAR] = ""  # Chrome selects the URL; typing replaces it
        rec.focus = node.key
        state.keyboard_shown = True
        return
    kind, _, arg = node.action.partition(":")
    if kind == "launch":
        apps.launch_package(state, arg, source="ui")
    elif kind == "nav":
        {"back": apps.back, "home": apps.go_home}.get(arg, lambda s: None)(state)
    elif node.action == "sms:send":
        apps.send_sms(state, rec)
    elif kind == "sms" and arg.startswith("open:"):
        it = IntentRecord(action="android.intent.action.SENDTO", data="smsto:" + arg[5:], source="ui")
        apps.start_activity(state, it)
    elif node.action == "dialer:call" and rec.fields.get(w.DIGITS):
        apps.place_call(state, rec.fields[w.DIGITS])
    elif node.action == "call:end" or node.action == "call:decline":
        apps.end_call(state)
    elif node.action == "call:answer" and state.call is not None:
        state.call.state, state.call.answered_ms = "offhook", state.now_ms()
    elif node.action == "cal:save":
        apps.save_event(state, rec)
    elif node.action == "cal:new":
        it = IntentRecord(
            action="android.intent.action.INSERT", data="content://com.android.calendar/events", source="ui"
        )
        apps.start_activity(state, it)
    elif kind == "setting" and arg.startswith("toggle:"):
        namespace, _, key = arg[len("toggle:") :].partition(":")
        values = state.settings.setdefault(namespace, {})
        values[key] = "0" if values.get(key, "1") != "0" else "1"
    elif kind == "resolve":
        it = rec.intent or IntentRecord()
        apps.finish(state, rec)
        pkg, cls = component_parts(arg)
        it.resolved = short_component(pkg, cls)
        apps.prepare(state, apps.push_activity(state, pkg, cls, it), it)
    elif kind == "dialog" and state.dialog is not None:
        about, state.dialog = state.dialog.package, None
        if arg == "close":  # "Close app": the app is killed
            apps.force_stop(state, about)
    elif node.action == "notif:clear":
        state.notifications.clear()
        state.shade_open = False
    elif kind == "notif":
        note = next((n for n in state.notifications if n.key == arg), None)
        if note is not None:
            state.notifications.remove(note)
            if note.package == seed.MESSAGES:
                apps.start_activity(
                    state, IntentRecord(action="android.intent.action.VIEW", data="sms:" + note.title)
                )
            else:
                apps.launch_package(state, note.package, source="ui")


def swipe(state: PhoneState, x1: float, y1: float, x2: float, y2: float, ms: int, *, source: str) -> None:
    """A swipe: down from the status bar opens the shade, up closes it or dismisses the keyguard."""
    state.log.swipes.append(Swipe(x1, y1, x2, y2, ms, source))
    if not state.screen_on:
        return
    if state.locked:
        # Swiping up opens a lock screen that needs no secret; a secure one shows its bouncer.
        state.locked = not (y1 - y2 > 200) or state.lock_screen in ("pin", "pattern", "password")
    elif state.shade_open and y1 - y2 > 200:
        state.shade_open = False
    elif y1 <= w.STATUS_BAR * 2 and y2 - y1 > 200:
        state.shade_open = True


def press_key(state: PhoneState, code: int, *, source: str, meta: int = 0, longpress: bool = False) -> None:
    """A key event as PhoneWindowManager and the focused app would handle it."""
    state.log.keys.append(Key(code, source, meta, longpress))
    rec = state.foreground()
    if code in (26, 223, 224, 6) and not (code == 6 and state.call is not None):
        # POWER toggles; SLEEP, and ENDCALL with no call (END_BUTTON_BEHAVIOR_SLEEP), turn off.
        on = {26: not state.screen_on, 223: False, 224: True, 6: False}[code]
        state.locked = (state.locked or not on) and state.lock_screen != "none"
        state.screen_on = on
        return
    if not state.screen_on:
        return
    if code == 82 and state.locked:  # MENU dismisses an insecure keyguard (a secure one asks)
        state.locked = state.lock_screen in ("pin", "pattern", "password")
    elif state.locked:
        return
    elif code == 3:
        apps.go_home(state)
    elif code == 4:
        apps.back(state)
    elif code == 5:
        if state.call is not None and state.call.state == "ringing":
            state.call.state, state.call.answered_ms = "offhook", state.now_ms()
    elif code == 6:
        apps.end_call(state)
    elif code == 67 and rec.focus is not None:
        current = rec.fields.get(rec.focus, "")
        rec.fields[rec.focus] = "" if rec.extra.pop("select_all", False) else current[:-1]
    elif code == 279 or (code == 50 and meta & CTRL):
        paste(state)
    elif code == 29 and meta & CTRL:
        rec.extra["select_all"] = True
    elif code == 66 and rec.focus == w.URL_BAR:
        typed = rec.fields.get(w.URL_BAR, "")
        has_scheme = "://" in typed
        rec.extra["url"] = (
            typed if has_scheme else ("https://" + typed if "." in typed else "https://www.google.com/")
        )
        rec.focus, state.keyboard_shown = None, False
    elif code in CHARS and not meta & CTRL:
        type_text(state, CHARS[code].upper() if meta & 0x1 else CHARS[code], method="keyevent", log=False)


def type_text(state: PhoneState, text: str, *, method: str, log: bool = True) -> str:
    """Appends to the focused field; returns its key ("" when nothing had focus)."""
    rec = state.foreground()
    target = rec.focus if state.screen_on and not state.locked and rec.focus is not None else ""
    if log:
        state.log.texts.append(TextInput(text, method, target))
    if target:
        old = "" if rec.extra.pop("select_all", False) else rec.fields.get(target, "")
        rec.fields[target] = old + text
    return target


def set_field(state: PhoneState, node: UiNode, text: str, *, method: str) -> None:
    """UiObject2.setText after a click: replaces the field's text (any Unicode)."""
    rec = state.foreground()
    state.log.texts.append(TextInput(text, method, node.key if node.editable else ""))
    if node.editable:
        rec.fields[node.key] = text
        rec.focus = node.key
        state.keyboard_shown = True


def paste(state: PhoneState) -> None:
    if state.clipboard:
        type_text(state, state.clipboard, method="paste")


def current_ime(state: PhoneState) -> str:
    chosen = state.setting("secure", "default_input_method") or ""
    enabled = (state.setting("secure", "enabled_input_methods") or "").split(":")
    pkg = state.packages.get(chosen.split("/")[0])
    return chosen if pkg is not None and pkg.ime and chosen in enabled else seed.LATIN_IME


def broadcast(state: PhoneState, it: IntentRecord) -> tuple[int, str | None]:
    """Delivers a broadcast; returns (result code, result data) as `am broadcast` reports them."""
    state.log.intents.append(it)
    action = it.action or ""
    if action in PROTECTED_BROADCASTS:
        raise CommandError(
            "java.lang.SecurityException",
            f"Permission Denial: not allowed to send broadcast {action} from pid=4321, uid=2000",
        )
    # A broadcast with `-p` reaches that package's receivers only.
    to_ime = it.package in (None, seed.U2_IME.split("/", 1)[0])
    if action.startswith("ADB_KEYBOARD_") and to_ime and current_ime(state) == seed.U2_IME:
        if state.faults.ime_warmup_broadcasts > 0:  # its receiver is not registered yet
            state.faults.ime_warmup_broadcasts -= 1
            return 0, None
        it.resolved = seed.U2_IME
        return -1, _adb_keyboard(state, it)
    return 0, None


def _adb_keyboard(state: PhoneState, it: IntentRecord) -> str | None:
    """uiautomator2's AdbKeyboard (com.github.uiautomator/.AdbKeyboard) receiver."""
    action = it.action or ""
    rec = state.foreground()
    if rec.focus is None and action != "ADB_KEYBOARD_GET_CLIPBOARD":
        return action  # no InputConnection: the receiver answers with the action's name
    if action in ("ADB_KEYBOARD_INPUT_TEXT", "ADB_KEYBOARD_SET_TEXT"):
        try:
            text = base64.b64decode(str(it.extras.get("text", ""))).decode("utf-8", "replace")
        except (binascii.Error, ValueError):
            return "error:bad base-64"
        if action == "ADB_KEYBOARD_SET_TEXT":
            rec.fields[str(rec.focus)] = ""
        type_text(state, text, method=f"ime:{seed.U2_IME}")
    elif action == "ADB_KEYBOARD_CLEAR_TEXT":
        rec.fields[str(rec.focus)] = ""
    elif action == "ADB_KEYBOARD_INPUT_KEYCODE":
        press_key(state, int(str(it.extras.get("code", -1))), source="ime")
    elif action == "ADB_KEYBOARD_HIDE":
        state.keyboard_shown = False
    elif action == "ADB_KEYBOARD_SHOW":
        state.keyboard_shown = True
    elif action == "ADB_KEYBOARD_GET_CLIPBOARD":
        return base64.b64encode((state.clipboard or "").encode()).decode()
    return None
