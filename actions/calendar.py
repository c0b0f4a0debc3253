"""Calendar events."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, field_validator, model_validator

from phoneuse_runtime.device.base import CalendarEvent, EventFilter
from phoneuse_runtime.kernel.capabilities import CALENDAR
from phoneuse_runtime.kernel.errors import PermissionDenied
from phoneuse_runtime.kernel.params import Params, Timestamp
from phoneuse_runtime.kernel.registry import ActionContext, ActionResult, ActionSpec


def _ms(moment: datetime, zone: tzinfo = timezone.utc) -> int:
    """Epoch ms; a time without an offset is read in `zone`."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=zone)
    return int(moment.timestamp() * 1000)


def _zone(name: str) -> tzinfo:
    return ZoneInfo(name) if name else timezone.utc


class CreateEventParams(Params):
    title: str = Field(min_length=1)
    start: Timestamp
    end: Timestamp | None = Field(default=None, description="default: start + 1 hour (+ 1 day when all_day)")
    location: str = ""
    description: str = ""
    all_day: bool = False
    calendar: str = Field(default="", description="calendar name; empty uses the default calendar")
    timezone: str = Field(
        default="",
        description="IANA zone (e.g. Europe/Paris) the event is stored in, and in which `start` and "
        "`end` without an offset are read; empty: UTC. All-day events are always UTC, as Android "
        "requires.",
    )

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, name: str) -> str:
        if name:
            try:
                ZoneInfo(name)
            except (ZoneInfoNotFoundError, ValueError):
                raise ValueError(
                    f"unknown time zone {name!r}; use an IANA name such as Europe/Paris"
                ) from None
        return name

    @model_validator(mode="after")
    def _order(self) -> CreateEventParams:
        zone = _zone(self.timezone)
        if self.end is not None and _ms(self.end, zone) < _ms(self.start, zone):
            raise ValueError("end is before start")
        return self


class CreateEventResult(ActionResult):
    event_id: str
    title: str
    start_ms: int
    end_ms: int
    all_day: bool
    verified: bool = Field(description="the event was read back from the calendar")
    verify_error: str | None = Field(
        default=None, description="why the event could not be read back (the provider refused it)"
    )


async def create_event(ctx: ActionContext, p: CreateEventParams) -> CreateEventResult:
    zone = timezone.utc if p.all_day else _zone(p.timezone)
    start = p.start
    if p.all_day:
        start = datetime(start.year, start.month, start.day, tzinfo=timezone.utc)
    default_length = timedelta(days=1) if p.all_day else timedelta(hours=1)
    end = p.end or start + default_length
    event = CalendarEvent(
        id="",
        title=p.title,
        start_ms=_ms(start, zone),
        end_ms=_ms(end, zone),
        all_day=p.all_day,
        location=p.location,
        description=p.description,
        calendar=p.calendar,
    )
    saved = await ctx.device.insert_event(event, timezone=None if p.all_day else p.timezone or None)
    verify_error = None
    try:
        read_back = await _read_back(ctx, saved.id, event)
    except PermissionDenied as exc:  # stored, but this phone does not let the runtime read calendars
        read_back, verify_error = None, exc.message
    verified = read_back is not None and read_back.title == p.title and read_back.start_ms == event.start_ms
    if read_back is None and verify_error is None:
        verify_error = "the event was not found in the calendar after it was saved"
    elif not verified and verify_error is None:
        verify_error = "the calendar holds the event with another title or start than was asked"
    stored = read_back or event
    return CreateEventResult(
        event_id=saved.id or stored.id,
        title=stored.title,
        start_ms=stored.start_ms,
        end_ms=stored.end_ms,
        all_day=stored.all_day,
        verified=verified,
        verify_error=verify_error,
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
