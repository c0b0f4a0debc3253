"""Alarms."""

from __future__ import annotations

from pydantic import Field, field_validator

from phoneuse_runtime.capabilities import ALARMS
from phoneuse_runtime.device.base import Alarm
from phoneuse_runtime.params import Params
from phoneuse_runtime.registry import ActionContext, ActionResult, ActionSpec

DAYS = ("MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN")
_NAMES = ("MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY", "SUNDAY")


def _day(text: str) -> str | None:
    """MON for "mon", "Mond", "monday" or "Mondays"; None for anything else (e.g. "mon-fri", "Monkey")."""
    word = text.strip().upper()
    for short, name in zip(DAYS, _NAMES, strict=True):
        if len(word) >= 3 and (name.startswith(word) or word == name + "S"):
            return short
    return None


class SetAlarmParams(Params):
    hour: int = Field(ge=0, le=23)
    minute: int = Field(default=0, ge=0, le=59)
    label: str = ""
    days: list[str] = Field(
        default_factory=list,
        description="repeat days, e.g. mon,wed,fri (names or their first 3+ letters); empty rings once",
    )

    @field_validator("days")
    @classmethod
    def _days(cls, value: list[str]) -> list[str]:
        out = []
        for day in value:
            short = _day(day)
            if short is None:
                raise ValueError(f"unknown day {day!r}; use {', '.join(DAYS)}")
            if short not in out:
                out.append(short)
        return sorted(out, key=DAYS.index)


class SetAlarmResult(ActionResult):
    alarm_id: str
    hour: int
    minute: int
    label: str
    days: list[str]
    verified: bool


async def set_alarm(ctx: ActionContext, p: SetAlarmParams) -> SetAlarmResult:
    alarm = await ctx.device.set_alarm(
        Alarm(id="", hour=p.hour, minute=p.minute, label=p.label, days=list(p.days))
    )
    verified = any(
        a.id == alarm.id and (a.hour, a.minute) == (p.hour, p.minute) for a in await ctx.device.alarms()
    )
    return SetAlarmResult(
        alarm_id=alarm.id,
        hour=alarm.hour,
        minute=alarm.minute,
        label=alarm.label,
        days=alarm.days,
        verified=verified,
        via=ctx.device.via,
    )


ACTIONS = (
    ActionSpec(
        "SET_ALARM",
        SetAlarmParams,
        set_alarm,
        SetAlarmResult,
        "Create an alarm",
        requires=frozenset({ALARMS}),
    ),
)
