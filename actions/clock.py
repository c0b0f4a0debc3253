"""Alarms."""

from __future__ import annotations

from pydantic import Field, field_validator

from phoneuse_runtime.device.base import Alarm
from phoneuse_runtime.kernel.capabilities import ALARMS
from phoneuse_runtime.kernel.errors import PermissionDenied, Unsupported
from phoneuse_runtime.kernel.params import Params
from phoneuse_runtime.kernel.registry import ActionContext, ActionResult, ActionSpec

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
    alarm_id: str = Field(description="empty where the phone does not tell it")
    hour: int
    minute: int
    label: str
    days: list[str]
    verified: bool = Field(description="the alarm was read back from the clock")
    verify_error: str | None = Field(default=None, description="why it could not be read back")


async def set_alarm(ctx: ActionContext, p: SetAlarmParams) -> SetAlarmResult:
    alarm = Alarm(id="", hour=p.hour, minute=p.minute, label=p.label, days=list(p.days))
    saved = await ctx.device.set_alarm(alarm)
    stored: Alarm | None = None
    verify_error = None
    try:
        alarms = await ctx.device.alarms()
    except (Unsupported, PermissionDenied) as exc:  # many phones set alarms they do not list
        verify_error = f"the phone's alarms cannot be read back: {exc.message}"
    else:
        if saved.id:
            stored = next((a for a in alarms if a.id == saved.id), None)
        else:
            same = [a for a in alarms if (a.hour, a.minute, a.label) == (p.hour, p.minute, p.label)]
            stored = same[-1] if same else None
        if stored is None or (stored.hour, stored.minute) != (p.hour, p.minute):
            verify_error = "the alarm is not among the phone's alarms"
    shown = stored or alarm
    return SetAlarmResult(
        alarm_id=saved.id,
        hour=shown.hour,
        minute=shown.minute,
        label=shown.label,
        days=shown.days,
        verified=verify_error is None,
        verify_error=verify_error,
        via=saved.via,
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
