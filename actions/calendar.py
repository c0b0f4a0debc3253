"""Calendar events."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from pydantic import Field, model_validator

from phoneuse_runtime.capabilities import CALENDAR
from phoneuse_runtime.device.base import CalendarEvent
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
    stored = await ctx.device.insert_event(
        CalendarEvent(
            id="",
            title=p.title,
            start_ms=_ms(start),
            end_ms=_ms(end),
            all_day=p.all_day,
            location=p.location,
            description=p.description,
            calendar=p.calendar,
        )
    )
    read_back = next((e for e in await ctx.device.calendar_events() if e.id == stored.id), None)
    verified = read_back is not None and read_back.title == p.title and read_back.start_ms == stored.start_ms
    return CreateEventResult(
        event_id=stored.id,
        title=stored.title,
        start_ms=stored.start_ms,
        end_ms=stored.end_ms,
        all_day=stored.all_day,
        verified=verified,
        via=ctx.device.via,
    )


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
