"""How the phone's system and apps behave: which windows are on screen, activities starting
(intent resolution as `am start` sees it) and finishing, and what the apps do when their buttons
are pressed (Messages sends, the Phone app calls, Calendar saves, Clock sets an alarm).

Everything here is synchronous and mutates a PhoneState; input arrives through interaction.py.
"""

from __future__ import annotations

from . import screens, seed, sysui
from . import widgets as w
from .intents import component_parts, uri_part
from .state import (
    ActivityRecord,
    Alarm,
    Call,
    CallLogRow,
    Event,
    IntentRecord,
    PhoneState,
    SmsRow,
    Task,
    short_component,
)
from .ui import UiNode

NEW_TASK = 0x10000000
EMERGENCY = {"112", "911", "999", "000", "110", "119", "118", "08"}

# --- what is on screen -------------------------------------------------------------------


def windows(state: PhoneState) -> list[UiNode]:
    """Window roots in z-order (last on top): what u2 dumps and what a tap can hit."""
    if state.locked:
        return [sysui.keyguard(state), sysui.status_bar(state)]
    wins = screens.activity_windows(state, state.foreground())
    if state.keyboard_shown:
        wins.append(sysui.keyboard(state))
    wins += [sysui.status_bar(state), sysui.nav_bar(state)]
    if state.dialog is not None:
        wins.append(sysui.system_dialog(state, state.dialog))
    if state.shade_open:
        wins.append(sysui.shade(state))
    return wins


def active_window(state: PhoneState) -> UiNode:
    """getRootInActiveWindow: what `uiautomator dump` sees."""
    if state.shade_open and not state.locked:
        return sysui.shade(state)
    if state.locked:
        return sysui.keyguard(state)
    if state.dialog is not None:
        return sysui.system_dialog(state, state.dialog)
    return screens.activity_windows(state, state.foreground())[0]


def focus_window(state: PhoneState) -> str:
    """The focused window's title as dumpsys window prints it."""
    if state.locked or state.shade_open:
        return "NotificationShade"
    if state.dialog is not None:
        return sysui.dialog_window_title(state.dialog)
    top = state.foreground()
    return f"{top.package}/{top.activity}"


# --- activities ------------------------------------------------------------------------------


def _builtin_handlers(it: IntentRecord) -> list[tuple[str, str]]:
    action, data, cats = it.action or "", it.data or "", it.categories
    scheme = data.partition(":")[0].lower() if ":" in data else ""
    mime = it.mime or ""
    if action == "android.intent.action.MAIN" and "android.intent.category.HOME" in cats:
        return [(seed.LAUNCHER, seed.HOME_ACT)]
    if action in ("android.intent.action.VIEW", "android.intent.action.SENDTO") and scheme in (
        "sms",
        "smsto",
        "mms",
        "mmsto",
    ):
        return [(seed.MESSAGES, seed.MSG_CONV)]
    if action == "android.intent.action.VIEW" and scheme in ("http", "https"):
        return [(seed.CHROME, seed.CHROME_MAIN)]
    if action == "android.intent.action.CALL" and scheme == "tel":
        return [(seed.DIALER, seed.IN_CALL)]
    if action == "android.intent.action.DIAL" or (action == "android.intent.action.VIEW" and scheme == "tel"):
        return [(seed.DIALER, seed.DIAL_MAIN)]
    calendar_item = data.startswith("content://com.android.calendar/events") or mime.endswith("/event")
    if action in ("android.intent.action.INSERT", "android.intent.action.EDIT") and calendar_item:
        return [(seed.CALENDAR, seed.CAL_EDIT)]
    if action == "android.intent.action.VIEW" and data.startswith("content://com.android.calendar"):
        return [(seed.CALENDAR, seed.CAL_MAIN)]
    if action in ("android.intent.action.SET_ALARM", "android.intent.action.SHOW_ALARMS"):
        return [(seed.CLOCK, seed.CLOCK_MAIN)]
    contacts_item = "com.android.contacts" in data or mime.endswith(("/contact", "/raw_contact"))
    if action in ("android.intent.action.INSERT", "android.intent.action.VIEW") and contacts_item:
        return [(seed.CONTACTS, seed.CONTACTS_MAIN)]
    if action.startswith("android.settings."):
        return [(seed.SETTINGS, seed.SETTINGS_MAIN)]
    return []


def resolve(state: PhoneState, it: IntentRecord) -> list[tuple[str, str]]:
    """The (package, activity) pairs that could handle `it`, for an implicit intent."""
    enabled = {name: pkg for name, pkg in state.packages.items() if pkg.enabled}
    pairs: list[tuple[str, str]]
    if it.action == "android.intent.action.MAIN" and "android.intent.category.LAUNCHER" in it.categories:
        pairs = [(p.name, p.launcher) for p in enabled.values() if p.launcher]
    else:
        pairs = [(n, c) for n, c in _builtin_handlers(it) if n in enabled]
        scheme = (it.data or "").partition(":")[0].lower() if ":" in (it.data or "") else ""
        for pkg in enabled.values():
            for handle in pkg.handles:
                action, _, wanted = handle.partition(" ")
                if pkg.launcher and action == it.action and wanted in ("", scheme):
                    pairs.append((pkg.name, pkg.launcher))
    if it.package:
        pairs = [(n, c) for n, c in pairs if n == it.package]
    return pairs


def _task_for(state: PhoneState, package: str) -> Task | None:
    for task in state.tasks:
        if task.activities and task.activities[0].package == package:
            return task
    return None


def push_activity(state: PhoneState, package: str, cls: str, it: IntentRecord | None) -> ActivityRecord:
    """Starts `cls` in its package's task, bringing that task to the front (FLAG_ACTIVITY_NEW_TASK)."""
    rec = ActivityRecord(package, cls, token=state.next_id("token"), intent=it)
    task = _task_for(state, package)
    if task is None:
        task = Task(state.next_id("task"))
        state.tasks.append(task)
    else:
        state.tasks.remove(task)
        state.tasks.append(task)
    task.activities.append(rec)
    state.processes.setdefault(package, state.next_id("pid"))
    state.keyboard_shown = False
    state.shade_open = False
    return rec


def prepare(state: PhoneState, rec: ActivityRecord, it: IntentRecord | None) -> None:
    """Fills a new screen from the intent that started it, as each app reads its extras."""
    extras = it.extras if it else {}
    types = it.extra_types if it else {}

    def string(name: str) -> str | None:
        return str(extras[name]) if types.get(name) == "s" else None

    if rec.activity == seed.MSG_CONV and it is not None:
        address, _, query = uri_part(it.data or "").partition("?")
        rec.extra["address"] = address
        body = string("sms_body") or string("android.intent.extra.TEXT")
        if body is None and query.startswith("body="):
            body = query[5:]
        rec.fields[w.COMPOSE] = body or ""
        rec.focus = w.COMPOSE
        state.keyboard_shown = True
    elif rec.activity == seed.DIAL_MAIN and it is not None and (it.data or "").startswith("tel:"):
        rec.fields[w.DIGITS] = uri_part(it.data or "")
    elif rec.activity == seed.CAL_EDIT:
        hour = 3_600_000
        begin = (
            int(str(extras["beginTime"]))
            if types.get("beginTime") == "l"
            else (state.now_ms() // hour + 1) * hour
        )
        end = int(str(extras["endTime"])) if types.get("endTime") == "l" else begin + hour
        rec.extra.update(begin=begin, end=end, all_day=types.get("allDay") == "z" and bool(extras["allDay"]))
        rec.extra["description"] = string("description")
        rec.fields[w.CAL_TITLE] = string("title") or ""
        rec.fields[w.CAL_LOCATION] = string("eventLocation") or ""
    elif rec.activity == seed.CHROME_MAIN:
        rec.extra["url"] = (it.data if it else None) or "https://www.google.com/"
    elif rec.activity == seed.KEEP_MAIN:
        rec.focus = w.NOTE


def start_activity(state: PhoneState, it: IntentRecord) -> str:
    """Starts what handles `it` and logs it. Returns "ok", "task-to-front", "unresolved" or
    "no-class" (an explicit component that does not exist)."""
    state.log.intents.append(it)
    if it.component:
        pkg, cls = component_parts(it.component)
        app = state.packages.get(pkg)
        if app is None or cls not in app.activities:
            return "no-class"
        choices = [(pkg, cls)]
    else:
        choices = resolve(state, it)
    if not choices:
        return "unresolved"
    if len(choices) > 1 and it.action != "android.intent.action.MAIN":
        it.resolved = "android/" + seed.RESOLVER
        rec = push_activity(state, "android", seed.RESOLVER, it)
        rec.extra["choices"] = [f"{p}/{c}" for p, c in choices]
        return "ok"
    pkg, cls = choices[0]
    it.resolved = short_component(pkg, cls)
    if cls == seed.HOME_ACT:
        go_home(state)
        return "ok"
    launcher_intent = "android.intent.category.LAUNCHER" in it.categories
    task = _task_for(state, pkg)
    if launcher_intent and task is not None:
        state.tasks.remove(task)
        state.tasks.append(task)
        state.shade_open = state.keyboard_shown = False
        return "task-to-front"
    if pkg == seed.DIALER and cls == seed.IN_CALL:
        number = uri_part(it.data or "")
        if number in EMERGENCY:  # the shell may not place emergency calls; the dialer opens
            prepare(state, push_activity(state, pkg, seed.DIAL_MAIN, it), it)
            it.resolved = short_component(pkg, seed.DIAL_MAIN)
            return "ok"
        place_call(state, number)
        return "ok"
    if pkg == seed.CLOCK and it.action == "android.intent.action.SET_ALARM" and _set_alarm(state, it):
        return "ok"
    prepare(state, push_activity(state, pkg, cls, it), it)
    return "ok"


def launch_package(state: PhoneState, package: str, *, source: str) -> bool:
    """What the launcher icon (and monkey -c LAUNCHER) does."""
    app = state.packages.get(package)
    if app is None or not app.launcher or not app.enabled:
        return False
    it = IntentRecord(
        action="android.intent.action.MAIN",
        categories=["android.intent.category.LAUNCHER"],
        component=short_component(package, app.launcher),
        flags=NEW_TASK,
        source=source,
    )
    start_activity(state, it)
    return True


def finish(state: PhoneState, rec: ActivityRecord) -> None:
    for task in list(state.tasks):
        if rec in task.activities:
            task.activities.remove(rec)
            if not task.activities:
                state.tasks.remove(task)
    _ensure_home(state)


def _ensure_home(state: PhoneState) -> None:
    if not any(t.activities and t.activities[0].activity == seed.HOME_ACT for t in state.tasks):
        state.tasks.insert(0, Task(state.next_id("task"), [ActivityRecord(seed.LAUNCHER, seed.HOME_ACT, 1)]))


def go_home(state: PhoneState) -> None:
    state.shade_open = state.keyboard_shown = False
    home = next(t for t in state.tasks if t.activities[0].activity == seed.HOME_ACT)
    state.tasks.remove(home)
    state.tasks.append(home)


def back(state: PhoneState) -> None:
    if state.keyboard_shown:
        state.keyboard_shown = False
    elif state.shade_open:
        state.shade_open = False
    elif state.foreground().activity != seed.HOME_ACT:
        finish(state, state.foreground())


def force_stop(state: PhoneState, package: str) -> bool:
    running = package in state.processes
    state.processes.pop(package, None)
    for task in state.tasks:
        task.activities = [a for a in task.activities if a.package != package]
    state.tasks = [t for t in state.tasks if t.activities]
    _ensure_home(state)
    if package == seed.LAUNCHER:
        state.processes[package] = state.next_id("pid")
    return running


# --- the apps' own behaviour -------------------------------------------------------------------


def send_sms(state: PhoneState, rec: ActivityRecord) -> None:
    """Messages' send button: the message goes to the outbox, then to its outcome."""
    body = rec.fields.get(w.COMPOSE, "")
    if not body.strip():
        return
    address = str(rec.extra.get("address", ""))
    rec.fields[w.COMPOSE] = ""
    faults = state.faults
    if faults.sms_outcome == "never":
        return
    final = {"sent": 2, "failed": 5, "outbox": 4}[faults.sms_outcome]
    now = state.now_ms()
    late = faults.sms_delay_s > 0 and final != 4
    row = SmsRow(state.next_id("sms"), state.thread_for(address), address, body, now, 4 if late else final)
    if late:
        row.due_ms, row.final_type = now + int(faults.sms_delay_s * 1000), final
    state.sms.append(row)


def settle_sms(state: PhoneState) -> None:
    now = state.now_ms()
    for row in state.sms:
        if row.due_ms is not None and now >= row.due_ms and row.final_type is not None:
            row.type, row.due_ms = row.final_type, None


def place_call(state: PhoneState, number: str) -> None:
    if state.call is None:
        now = state.now_ms()
        state.call = Call(number, "offhook", incoming=False, started_ms=now, answered_ms=now)
    rec = push_activity(state, seed.DIALER, seed.IN_CALL, None)
    rec.extra["number"] = number


def ring(state: PhoneState, number: str) -> Call:
    state.call = Call(number, "ringing", incoming=True, started_ms=state.now_ms())
    push_activity(state, seed.DIALER, seed.IN_CALL, None).extra["number"] = number
    return state.call


def end_call(state: PhoneState) -> bool:
    call = state.call
    if call is None:
        return False
    now = state.now_ms()
    duration = 0 if call.answered_ms is None else (now - call.answered_ms) // 1000
    kind = 2 if not call.incoming else (1 if call.answered_ms is not None else 5)
    state.call_log.append(CallLogRow(state.next_id("call"), call.number, call.started_ms, duration, kind))
    state.call = None
    for task in state.tasks:
        for rec in [a for a in task.activities if a.activity == seed.IN_CALL]:
            finish(state, rec)
    return True


def save_event(state: PhoneState, rec: ActivityRecord) -> None:
    writable = [c for c in state.calendars if c.access_level >= 500 and c.visible]
    primary = next((c for c in writable if c.is_primary), writable[0] if writable else None)
    if primary is not None:
        all_day = bool(rec.extra.get("all_day"))
        state.events.append(
            Event(
                id=state.next_id("event"),
                calendar_id=primary.id,
                title=rec.fields.get(w.CAL_TITLE, ""),
                dtstart=int(str(rec.extra["begin"])),
                dtend=int(str(rec.extra["end"])),
                event_timezone="UTC" if all_day else primary.timezone,
                all_day=int(all_day),
                event_location=rec.fields.get(w.CAL_LOCATION) or None,
                description=rec.extra.get("description") or None,  # type: ignore[arg-type]
            )
        )
    finish(state, rec)


def _set_alarm(state: PhoneState, it: IntentRecord) -> bool:
    """Clock's HandleApiCalls: returns True when it finished without showing anything."""
    prefix = "android.intent.extra.alarm."
    types, extras = it.extra_types, it.extras
    it.resolved = f"{seed.CLOCK}/com.android.deskclock.HandleApiCalls"
    if types.get(prefix + "HOUR") != "i":
        return False  # no hour: the app shows its time picker and creates nothing
    hour = int(str(extras[prefix + "HOUR"]))
    minutes = int(str(extras[prefix + "MINUTES"])) if types.get(prefix + "MINUTES") == "i" else 0
    if not (0 <= hour < 24 and 0 <= minutes < 60):
        return False
    message = str(extras[prefix + "MESSAGE"]) if types.get(prefix + "MESSAGE") == "s" else ""
    days_value = extras.get(prefix + "DAYS")
    days = (
        [int(d) for d in days_value]
        if types.get(prefix + "DAYS") == "ial" and isinstance(days_value, list)
        else []
    )
    skip_ui = types.get(prefix + "SKIP_UI") == "z" and bool(extras[prefix + "SKIP_UI"])
    vibrate = not (types.get(prefix + "VIBRATE") == "z" and not extras[prefix + "VIBRATE"])
    same = [
        a for a in state.alarms if (a.hour, a.minutes, a.days, a.message) == (hour, minutes, days, message)
    ]
    if same:
        same[0].enabled = True
    else:
        state.alarms.append(Alarm(hour, minutes, message, days, vibrate, skip_ui))
    return skip_ui
