"""Calendar events."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from pydantic import Field, model_validator

from phoneuse_runtime.capabilities import CALENDAR
from phoneuse_runtime.device.base import CalendarEvent, EventFilter
from phoneuse_runtime.params import Params, Timestamp
from phoneuse_runtime.registry import ActionContext, ActionResult, ActionSpec


def _ms(moment: datetime) -> int:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return int(moment.timestamp() * 1000)


class CreateEventParams(Params):
    title: str = Field(min_length=1)
    start: Timestamp
    end: Timestamp | None = Field(default=None, description="default: start + 1 hour (+ 1 day when all_day)")
    location: str = ""
    description: str = ""
    all_day: bool = False
    calendar: str = Field(default="", description="calendar name; empty uses the default calendar")

    @model_validator(mode="after")
    def _order(self) -> CreateEventParams:
        if self.end is not None and _ms(self.end) < _ms(self.start):
            raise ValueError("end is before start")
        return self


class CreateEventResult(ActionResult):
    event_id: str
    title: str
    start_ms: int
    end_ms: int
    all_day: bool
    verified: bool = Field(description="the event was read back from the calendar")


async def create_event(ctx: ActionContext, p: CreateEventParams) -> CreateEventResult:
    start = p.start
    if p.all_day:
        start = datetime(start.year, start.month, start.day, tzinfo=timezone.utc)
    default_length = timedelta(days=1) if p.all_day else timedelta(hours=1)
    end = p.end or start + default_length
    event = CalendarEvent(
        id="",
        title=p.title,
        start_ms=_ms(start),
        end_ms=_ms(end),
        all_day=p.all_day,
        location=p.location,
        description=p.description,
        calendar=p.calendar,
    )
    saved = await ctx.device.insert_event(event)
    read_back = await _read_back(ctx, saved.id, event)
    verified = read_back is not None and read_back.title == p.title and read_back.start_ms == event.start_ms
    stored = read_back or event
    return CreateEventResult(
        event_id=saved.id or stored.id,
        title=stored.title,
        start_ms=stored.start_ms,
        end_ms=stored.end_ms,
        all_day=stored.all_day,
        verified=verified,
        via=saved.via,
    )


async def _read_back(ctx: ActionContext, event_id: str, event: CalendarEvent) -> CalendarEvent | None:
    """The stored event: by its id, or (where the phone did not tell it) by title among those
    starting at the same moment."""
    if event_id:
        rows = await ctx.device.calendar_events(EventFilter(id=event_id))
        return next((e for e in rows if e.id == event_id), None)
    moment = EventFilter(starts_after_ms=event.start_ms - 1, starts_before_ms=event.start_ms + 1)
    rows = await ctx.device.calendar_events(moment)
    return next((e for e in rows if e.title == event.title and e.start_ms == event.start_ms), None)


ACTIONS = (
    ActionSpec(
        "CREATE_EVENT",
        CreateEventParams,
        create_event,
        CreateEventResult,
        "Add a calendar event",
        requires=frozenset({CALENDAR}),
    ),
)
