"""Google Calendar (agenda, event editor) and Clock (alarms)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from phoneuse_runtime.device.base import Alarm, CalendarEvent
from phoneuse_runtime.device.sim.catalog import CALENDAR, CLOCK
from phoneuse_runtime.device.sim.widgets import (
    BUTTON,
    HEIGHT,
    IMAGE_BUTTON,
    LINEAR,
    SWITCH,
    WIDTH,
    Builder,
    Screen,
)
from phoneuse_runtime.kernel.events import now_ms
from phoneuse_runtime.screen.ui import Bounds, UiNode

if TYPE_CHECKING:
    from phoneuse_runtime.device.sim.phone import SimPhone

K = CALENDAR + ":id/"
A = CLOCK + ":id/"
Row = tuple[int, Callable[[Bounds], UiNode]]
DAY_NAMES = {"MON": "Mon", "TUE": "Tue", "WED": "Wed", "THU": "Thu", "FRI": "Fri", "SAT": "Sat", "SUN": "Sun"}


def span(event: CalendarEvent) -> str:
    if event.all_day:
        return time.strftime("%a, %b %d · All day", time.localtime(event.start_ms / 1000))
    start, end = time.localtime(event.start_ms / 1000), time.localtime(event.end_ms / 1000)
    return time.strftime("%a, %b %d · %H:%M", start) + time.strftime(" \u2013 %H:%M", end)


def clock_time(hour: int, minute: int) -> str:
    """How the Clock app shows a time in a 12-hour locale, e.g. "7:00 AM"."""
    return f"{(hour % 12) or 12}:{minute:02d} {'AM' if hour < 12 else 'PM'}"


class AgendaScreen(Screen):
    package = CALENDAR
    activity = "com.android.calendar.AllInOneActivity"

    def build(self, b: Builder, phone: SimPhone) -> None:
        top = b.toolbar("Schedule", title_rid=K + "date_picker_text_view")
        rows: list[Row] = []
        for event in sorted(phone.state.events, key=lambda e: (e.start_ms, int(e.id))):
            when = span(event)

            def row(bounds: Bounds, event: CalendarEvent = event, when: str = when) -> UiNode:
                lines = [(event.title, K + "title"), (when, K + "when")]
                if event.location:
                    lines.append((event.location, K + "where"))
                return b.row(bounds, lines, rid=K + "agenda_item", desc=f"{event.title}, {when}")

            rows.append((260, row))
        if not rows:
            b.text(b.content, (0, 1000, WIDTH, 1100), "Nothing planned", rid=K + "empty_state")
        b.scroll_list(b.content, (0, top, WIDTH, HEIGHT), rows, key="agenda", rid=K + "agenda_list")
        b.add(
            b.content,
            IMAGE_BUTTON,
            (860, HEIGHT - 300, 1040, HEIGHT - 120),
            rid=K + "floating_action_button",
            desc="Create new event",
            on_tap=lambda: phone.open(EditEventScreen()),
        )


class EditEventScreen(Screen):
    """The event editor; like the real one, nothing is stored until Save."""

    package = CALENDAR
    activity = "com.android.calendar.event.EditEventActivity"

    def __init__(
        self,
        *,
        title: str = "",
        start_ms: int = 0,
        end_ms: int = 0,
        all_day: bool = False,
        location: str = "",
        description: str = "",
    ) -> None:
        super().__init__()
        hour = 3_600_000
        self.start_ms = start_ms or (now_ms() // hour + 1) * hour
        self.end_ms = end_ms or self.start_ms + hour
        self.all_day = all_day
        self.fields.update(title=title, location=location, description=description)
        self.focus = "title"
        self.keyboard = True

    def build(self, b: Builder, phone: SimPhone) -> None:
        top = b.toolbar("", back=phone.back)
        b.add(
            b.content,
            BUTTON,
            (820, 140, 1060, 280),
            text="Save",
            rid=K + "save",
            on_tap=lambda: self.save(phone),
        )
        b.field(b.content, (60, top + 40, WIDTH - 60, top + 200), "title", rid=K + "title", hint="Add title")
        draft = CalendarEvent("", "", self.start_ms, self.end_ms, self.all_day)
        b.text(b.content, (60, top + 240, WIDTH - 60, top + 320), span(draft), rid=K + "start_date")
        b.field(
            b.content,
            (60, top + 360, WIDTH - 60, top + 500),
            "location",
            rid=K + "location",
            hint="Add location",
        )
        b.field(
            b.content,
            (60, top + 540, WIDTH - 60, top + 680),
            "description",
            rid=K + "description",
            hint="Add description",
        )

    def save(self, phone: SimPhone) -> None:
        if not self.value("title").strip():
            return
        phone.state.add_event(
            CalendarEvent(
                "",
                self.value("title").strip(),
                self.start_ms,
                self.end_ms,
                self.all_day,
                self.value("location"),
                self.value("description"),
            )
        )
        phone.back()


class AlarmsScreen(Screen):
    package = CLOCK
    activity = "com.android.deskclock.DeskClock"

    def build(self, b: Builder, phone: SimPhone) -> None:
        top = b.toolbar("Alarm", title_rid=A + "action_bar_title")
        rows: list[Row] = []
        for alarm in sorted(phone.state.alarms, key=lambda a: (a.hour, a.minute, int(a.id))):

            def row(bounds: Bounds, alarm: Alarm = alarm) -> UiNode:
                left, top_, right, _ = bounds
                node = b.add(None, LINEAR, bounds, rid=A + "alarm_item")
                shown = clock_time(alarm.hour, alarm.minute)
                b.text(node, (left + 60, top_ + 30, right - 260, top_ + 150), shown, rid=A + "digital_clock")
                days = ", ".join(DAY_NAMES[d] for d in alarm.days) if alarm.days else "Not scheduled"
                b.text(node, (left + 60, top_ + 160, right - 260, top_ + 220), days, rid=A + "days_of_week")
                if alarm.label:
                    b.text(
                        node, (left + 60, top_ + 230, right - 260, top_ + 290), alarm.label, rid=A + "label"
                    )
                b.add(
                    node,
                    SWITCH,
                    (right - 220, top_ + 60, right - 60, top_ + 160),
                    rid=A + "onoff",
                    desc=shown,
                    checkable=True,
                    checked=alarm.enabled,
                    on_tap=lambda: self.toggle(phone, alarm),
                )
                return node

            rows.append((320, row))
        if not rows:
            b.text(b.content, (0, 1000, WIDTH, 1100), "No alarms", rid=A + "alarms_empty_view")
        b.scroll_list(
            b.content, (0, top, WIDTH, HEIGHT - 240), rows, key="alarms", rid=A + "alarm_recycler_view"
        )

    def toggle(self, phone: SimPhone, alarm: Alarm) -> None:
        alarm.enabled = not alarm.enabled
        phone.state.dirty = True
