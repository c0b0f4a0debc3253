"""What each activity looks like, as accessibility node trees built from the phone's state.

Resource ids and descriptions are the ones these apps use on real phones where known (e.g.
Messages' `send_message_button_icon` / "Send SMS"). Layout is simple but consistent: the app
content sits between the status bar and the navigation bar, or above the keyboard when it shows
(apps resize, as Messages does), so a tap's coordinates mean what they would on a phone. A test
can replace any activity's screen with its own tree or hierarchy XML (`state.custom_screens`).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from . import seed
from .state import ActivityRecord, PhoneState
from .ui import UiNode, parse_hierarchy
from .widgets import (
    CAL_LOCATION,
    CAL_TITLE,
    COMPOSE,
    DIGITS,
    NOTE,
    SEND,
    URL_BAR,
    Frame,
    app_window,
    button,
    edit,
    node,
    rows,
    text,
    toolbar,
)

# --- apps -----------------------------------------------------------------------------------


def launcher(state: PhoneState, rec: ActivityRecord, f: Frame) -> list[UiNode]:
    pkg = seed.LAUNCHER
    apps = sorted(
        (p for p in state.packages.values() if p.launcher and p.enabled and p.name != pkg),
        key=lambda p: p.label.lower(),
    )
    cell_w, cell_h = f.width // 4, 180
    icons = []
    for i, app in enumerate(apps):
        x, y = (i % 4) * cell_w, f.top + 160 + (i // 4) * cell_h
        icons.append(
            node(
                "android.widget.TextView",
                pkg,
                (x, y, x + cell_w, y + cell_h),
                text=app.label,
                content_desc=app.label,
                clickable=True,
                long_clickable=True,
                focusable=True,
                action=f"launch:{app.name}",
            )
        )
    search = node(
        "android.widget.FrameLayout",
        pkg,
        (32, f.top + 24, f.width - 32, f.top + 120),
        resource_id=f"{pkg}:id/search_container_workspace",
        content_desc="Search",
        clickable=True,
        focusable=True,
    )
    grid = node(
        "android.widget.ScrollView",
        pkg,
        (0, f.top + 140, f.width, f.bottom),
        resource_id=f"{pkg}:id/workspace",
        scrollable=True,
        children=icons,
    )
    return [search, grid]


def _contact_name(state: PhoneState, number: str) -> str | None:
    from .providers import contact_name

    return contact_name(state, number)


def messages_list(state: PhoneState, rec: ActivityRecord, f: Frame) -> list[UiNode]:
    pkg = seed.MESSAGES
    threads: dict[int, str] = {}
    latest: dict[int, str] = {}
    for row in sorted(state.sms, key=lambda r: r.date):
        threads[row.thread_id] = row.address
        latest[row.thread_id] = row.body
    items = []
    for bounds, (tid, address) in zip(
        rows(f.top + 112, 140, len(threads), f.width), reversed(threads.items()), strict=False
    ):
        left, top, right, _ = bounds
        name = _contact_name(state, address) or address
        items.append(
            node(
                "android.widget.LinearLayout",
                pkg,
                bounds,
                clickable=True,
                focusable=True,
                resource_id=f"{pkg}:id/swipeableContainer",
                action=f"sms:open:{address}",
                children=[
                    text(
                        pkg, name, (left + 140, top + 24, right - 32, top + 70), f"{pkg}:id/conversation_name"
                    ),
                    text(
                        pkg,
                        latest[tid],
                        (left + 140, top + 74, right - 32, top + 116),
                        f"{pkg}:id/conversation_snippet",
                    ),
                ],
            )
        )
    fab = button(
        pkg,
        (f.width - 280, f.bottom - 150, f.width - 32, f.bottom - 40),
        "none",
        label="Start chat",
        rid=f"{pkg}:id/start_chat_fab",
    )
    lst = node(
        "androidx.recyclerview.widget.RecyclerView",
        pkg,
        (0, f.top + 112, f.width, f.bottom),
        resource_id=f"{pkg}:id/conversation_list",
        scrollable=True,
        children=items,
    )
    return [toolbar(pkg, f, "Messages"), lst, fab]


def conversation(state: PhoneState, rec: ActivityRecord, f: Frame) -> list[UiNode]:
    pkg = seed.MESSAGES
    address = str(rec.extra.get("address", ""))
    title = _contact_name(state, address) or address
    state.sms_box("all")  # let a late message reach its final box before drawing it
    msgs = [r for r in sorted(state.sms, key=lambda r: r.date) if r.address == address][-5:]
    bubbles = []
    for i, row in enumerate(msgs):
        top = f.top + 130 + i * 110
        outgoing = row.type != 1
        box = (
            (f.width // 3, top, f.width - 24, top + 96) if outgoing else (24, top, 2 * f.width // 3, top + 96)
        )
        kids = [text(pkg, row.body, (box[0] + 16, top + 8, box[2] - 16, top + 56), f"{pkg}:id/message_text")]
        status = {4: "Sending…", 6: "Sending…", 5: "Not sent. Tap to try again."}.get(row.type)
        if status:
            kids.append(
                text(pkg, status, (box[0] + 16, top + 60, box[2] - 16, top + 92), f"{pkg}:id/message_status")
            )
        bubbles.append(
            node(
                "android.widget.LinearLayout",
                pkg,
                box,
                resource_id=f"{pkg}:id/message_content",
                children=kids,
            )
        )
    compose_top = f.bottom - 120
    body = rec.fields.get(COMPOSE, "")
    return [
        toolbar(pkg, f, title, back=True, rid=f"{pkg}:id/conversation_title"),
        node(
            "androidx.recyclerview.widget.RecyclerView",
            pkg,
            (0, f.top + 112, f.width, compose_top),
            resource_id=f"{pkg}:id/messages_list",
            scrollable=bool(bubbles),
            children=bubbles,
        ),
        edit(rec, pkg, COMPOSE, "Text message", (24, compose_top + 16, f.width - 120, f.bottom - 16)),
        button(
            pkg,
            (f.width - 112, compose_top + 16, f.width - 16, f.bottom - 16),
            "sms:send",
            desc="Send SMS",
            rid=SEND,
            cls="android.widget.ImageView",
            enabled=bool(body.strip()),
        ),
    ]


def dialer(state: PhoneState, rec: ActivityRecord, f: Frame) -> list[UiNode]:
    pkg = seed.DIALER
    mid = (f.top + f.bottom) // 2
    return [
        edit(rec, pkg, DIGITS, "", (32, mid - 200, f.width - 32, mid - 100)),
        button(
            pkg,
            (f.width // 2 - 72, f.bottom - 180, f.width // 2 + 72, f.bottom - 36),
            "dialer:call",
            desc="dial",
            rid=f"{pkg}:id/dialpad_voice_call_button",
            cls="android.widget.ImageButton",
        ),
    ]


def in_call(state: PhoneState, rec: ActivityRecord, f: Frame) -> list[UiNode]:
    pkg = seed.DIALER
    call = state.call
    number = call.number if call else str(rec.extra.get("number", ""))
    if call is None:
        status = "Call ended"
    elif call.state == "ringing":
        status = "Incoming call"
    elif call.answered_ms is None:
        status = "Calling…"
    else:
        secs = max(0, (state.now_ms() - call.answered_ms) // 1000)
        status = f"{secs // 60:02d}:{secs % 60:02d}"
    kids = [
        text(
            pkg,
            _contact_name(state, number) or number,
            (32, f.top + 160, f.width - 32, f.top + 240),
            f"{pkg}:id/contactgrid_contact_name",
        ),
        text(pkg, status, (32, f.top + 250, f.width - 32, f.top + 300), f"{pkg}:id/contactgrid_status_text"),
    ]
    if call is not None and call.state == "ringing":
        kids += [
            button(
                pkg,
                (60, f.bottom - 220, 260, f.bottom - 80),
                "call:answer",
                desc="Answer",
                rid=f"{pkg}:id/incoming_call_answer",
                cls="android.widget.ImageButton",
            ),
            button(
                pkg,
                (f.width - 260, f.bottom - 220, f.width - 60, f.bottom - 80),
                "call:decline",
                desc="Decline",
                rid=f"{pkg}:id/incoming_call_decline",
                cls="android.widget.ImageButton",
            ),
        ]
    elif call is not None:
        kids.append(
            button(
                pkg,
                (f.width // 2 - 80, f.bottom - 220, f.width // 2 + 80, f.bottom - 60),
                "call:end",
                desc="End call",
                rid=f"{pkg}:id/incall_end_call",
                cls="android.widget.ImageButton",
            )
        )
    return kids


def contacts(state: PhoneState, rec: ActivityRecord, f: Frame) -> list[UiNode]:
    from .providers import contact_rows

    pkg = seed.CONTACTS
    names = sorted(str(c["display_name"]) for c in contact_rows(state))
    items = [
        text(pkg, name, b, f"{pkg}:id/cliv_name_textview", clickable=True)
        for name, b in zip(names, rows(f.top + 112, 96, len(names), f.width), strict=False)
    ]
    return [
        toolbar(pkg, f, "Contacts"),
        node(
            "android.widget.ListView",
            pkg,
            (0, f.top + 112, f.width, f.bottom),
            resource_id="android:id/list",
            children=items,
        ),
    ]


def _clock_text(ms: int, *, all_day: bool = False) -> str:
    t = time.localtime(ms / 1000)
    return time.strftime("%a, %b %d", t) + (
        "" if all_day else time.strftime(" · %I:%M %p", t).replace(" 0", " ")
    )


def calendar(state: PhoneState, rec: ActivityRecord, f: Frame) -> list[UiNode]:
    pkg = seed.CALENDAR
    events = sorted(
        (e for e in state.events if not e.deleted and e.dtstart is not None), key=lambda e: e.dtstart or 0
    )[:8]
    items = [
        node(
            "android.view.View",
            pkg,
            b,
            content_desc=f"{e.title}, {_clock_text(e.dtstart or 0)}",
            clickable=True,
        )
        for e, b in zip(events, rows(f.top + 112, 100, len(events), f.width), strict=False)
    ]
    create = button(
        pkg,
        (f.width - 200, f.bottom - 200, f.width - 32, f.bottom - 32),
        "cal:new",
        desc="Create new event",
        rid=f"{pkg}:id/floating_action_button",
        cls="android.widget.ImageButton",
    )
    return [toolbar(pkg, f, time.strftime("%B", time.localtime(state.clock.now()))), *items, create]


def calendar_edit(state: PhoneState, rec: ActivityRecord, f: Frame) -> list[UiNode]:
    pkg = seed.CALENDAR
    begin, end = int(str(rec.extra["begin"])), int(str(rec.extra["end"]))
    all_day = bool(rec.extra.get("all_day"))
    return [
        button(
            pkg,
            (0, f.top, 112, f.top + 112),
            "nav:back",
            desc="Close",
            rid=f"{pkg}:id/cancel",
            cls="android.widget.ImageButton",
        ),
        button(
            pkg,
            (f.width - 200, f.top + 20, f.width - 24, f.top + 92),
            "cal:save",
            label="Save",
            rid=f"{pkg}:id/save",
        ),
        edit(rec, pkg, CAL_TITLE, "Add title", (32, f.top + 130, f.width - 32, f.top + 220)),
        text(
            pkg,
            _clock_text(begin, all_day=all_day),
            (32, f.top + 250, f.width - 32, f.top + 310),
            f"{pkg}:id/start_date",
        ),
        text(
            pkg,
            _clock_text(end, all_day=all_day),
            (32, f.top + 320, f.width - 32, f.top + 380),
            f"{pkg}:id/end_date",
        ),
        edit(rec, pkg, CAL_LOCATION, "Add location", (32, f.top + 410, f.width - 32, f.top + 490)),
    ]


def clock(state: PhoneState, rec: ActivityRecord, f: Frame) -> list[UiNode]:
    pkg = seed.CLOCK
    items = []
    for alarm, (left, top, right, bottom) in zip(
        state.alarms, rows(f.top + 112, 150, len(state.alarms), f.width), strict=False
    ):
        hour = alarm.hour % 12 or 12
        label = f"{hour}:{alarm.minutes:02d}\u202f{'AM' if alarm.hour < 12 else 'PM'}"
        items.append(
            node(
                "android.view.ViewGroup",
                pkg,
                (left, top, right, bottom),
                children=[
                    text(
                        pkg, label, (left + 32, top + 20, right - 200, top + 100), f"{pkg}:id/digital_clock"
                    ),
                    text(
                        pkg,
                        alarm.message,
                        (left + 32, top + 100, right - 200, bottom - 10),
                        f"{pkg}:id/edit_label",
                    ),
                    node(
                        "android.widget.Switch",
                        pkg,
                        (right - 160, top + 40, right - 32, top + 110),
                        resource_id=f"{pkg}:id/onoff",
                        checkable=True,
                        checked=alarm.enabled,
                        clickable=True,
                    ),
                ],
            )
        )
    return [toolbar(pkg, f, "Alarm"), *items]


def chrome(state: PhoneState, rec: ActivityRecord, f: Frame) -> list[UiNode]:
    pkg = seed.CHROME
    url = str(rec.extra.get("url", "about:blank"))
    host = url.split("//", 1)[-1].split("/", 1)[0]
    shown = rec.fields.get(URL_BAR) if rec.focus == URL_BAR else host
    bar = edit(rec, pkg, URL_BAR, "Search or type web address", (24, f.top + 16, f.width - 24, f.top + 100))
    bar.text = shown or ""
    page = node(
        "android.webkit.WebView",
        pkg,
        (0, f.top + 116, f.width, f.bottom),
        text=host,
        scrollable=True,
        focusable=True,
    )
    return [bar, page]


def notes(state: PhoneState, rec: ActivityRecord, f: Frame) -> list[UiNode]:
    return [
        toolbar(seed.KEEP, f, "Keep Notes"),
        edit(rec, seed.KEEP, NOTE, "Note", (24, f.top + 130, f.width - 24, f.bottom - 24)),
    ]


def settings_screen(state: PhoneState, rec: ActivityRecord, f: Frame) -> list[UiNode]:
    pkg = seed.SETTINGS
    labels = [
        "Network & internet",
        "Connected devices",
        "Apps",
        "Notifications",
        "Battery",
        "Storage",
        "Sound & vibration",
        "Display",
        "Accessibility",
        "Security & privacy",
        "System",
    ]
    top = f.top + 112
    wifi_on = state.setting("global", "wifi_on") != "0"
    wifi = node(
        "android.widget.LinearLayout",
        pkg,
        (0, top, f.width, top + 88),
        clickable=True,
        action="setting:toggle:global:wifi_on",
        children=[
            text(pkg, "Wi-Fi", (32, top + 20, f.width - 200, top + 68), "android:id/title"),
            node(
                "android.widget.Switch",
                pkg,
                (f.width - 160, top + 16, f.width - 32, top + 72),
                resource_id="android:id/switch_widget",
                checkable=True,
                checked=wifi_on,
                clickable=True,
                action="setting:toggle:global:wifi_on",
            ),
        ],
    )
    items = [wifi] + [
        text(pkg, label, b, "android:id/title", clickable=True)
        for label, b in zip(labels, rows(top + 88, 88, len(labels), f.width), strict=False)
    ]
    return [
        toolbar(pkg, f, "Settings"),
        node(
            "androidx.recyclerview.widget.RecyclerView",
            pkg,
            (0, f.top + 112, f.width, f.bottom),
            resource_id=f"{pkg}:id/recycler_view",
            children=items,
        ),
    ]


def resolver(state: PhoneState, rec: ActivityRecord, f: Frame) -> list[UiNode]:
    options = [str(c) for c in rec.extra.get("choices", [])]  # type: ignore[attr-defined]
    top = f.bottom - 200 - 110 * len(options)
    items = []
    for comp, b in zip(options, rows(top + 90, 110, len(options), f.width), strict=False):
        pkg = comp.split("/")[0]
        label = state.packages[pkg].label if pkg in state.packages else pkg
        items.append(text("android", label, b, "android:id/text1", clickable=True, action=f"resolve:{comp}"))
    return [
        text("android", "Open with", (32, top, f.width - 32, top + 80), "android:id/title"),
        *items,
        button(
            "android",
            (f.width - 420, f.bottom - 110, f.width - 230, f.bottom - 20),
            "none",
            label="Just once",
            rid="android:id/button_once",
            enabled=False,
        ),
        button(
            "android",
            (f.width - 220, f.bottom - 110, f.width - 32, f.bottom - 20),
            "none",
            label="Always",
            rid="android:id/button_always",
            enabled=False,
        ),
    ]


def generic(state: PhoneState, rec: ActivityRecord, f: Frame) -> list[UiNode]:
    label = state.packages[rec.package].label if rec.package in state.packages else rec.package
    return [toolbar(rec.package, f, label)]


SCREENS: dict[str, Callable[[PhoneState, ActivityRecord, Frame], list[UiNode]]] = {
    seed.HOME_ACT: launcher,
    seed.MSG_LIST: messages_list,
    seed.MSG_CONV: conversation,
    seed.DIAL_MAIN: dialer,
    seed.IN_CALL: in_call,
    seed.CONTACTS_MAIN: contacts,
    seed.CAL_MAIN: calendar,
    seed.CAL_EDIT: calendar_edit,
    seed.CLOCK_MAIN: clock,
    seed.CHROME_MAIN: chrome,
    seed.KEEP_MAIN: notes,
    seed.SETTINGS_MAIN: settings_screen,
    seed.RESOLVER: resolver,
}


def _custom(state: PhoneState, rec: ActivityRecord) -> list[UiNode] | None:
    screen = state.custom_screens.get(rec.component) or state.custom_screens.get(
        f"{rec.package}/{rec.activity}"
    )
    if screen is None:
        return None
    roots = parse_hierarchy(screen) if isinstance(screen, str) else [screen]
    for root in roots:
        for n in root.walk():
            if n.editable:
                n.text = rec.fields.get(n.key, n.text)
                n.focused = rec.focus == n.key
    return roots


def activity_windows(state: PhoneState, rec: ActivityRecord) -> list[UiNode]:
    custom = _custom(state, rec)
    if custom is not None:
        return custom
    frame = Frame(state)
    build = SCREENS.get(rec.activity, generic)
    return [app_window(rec.package, frame, build(state, rec, frame))]
