"""Recording the screen: SCREEN_RECORD_START and SCREEN_RECORD_STOP (issue 27). One recording at a
time; the file is an mp4 in the phone's shared storage, ready for PULL_FILE. A recording left
running ends at its limit (screenrecord's own, at most 180 s) and when the server stops."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator

from phoneuse_runtime.device.recording import MAX_BIT_RATE, MAX_S, MIN_BIT_RATE
from phoneuse_runtime.kernel.capabilities import SCREEN_RECORD
from phoneuse_runtime.kernel.params import Params
from phoneuse_runtime.kernel.registry import ActionContext, ActionResult, ActionSpec

_SIZE = re.compile(r"([1-9][0-9]{1,4})x([1-9][0-9]{1,4})")


class StartParams(Params):
    max_s: int = Field(
        default=MAX_S,
        ge=1,
        le=MAX_S,
        description=f"stop by itself after this long (screenrecord's limit: {MAX_S})",
    )
    size: str = Field(
        default="",
        max_length=11,
        pattern=r"^([1-9][0-9]{1,4}x[1-9][0-9]{1,4})?$",
        description="WIDTHxHEIGHT, e.g. 720x1280; empty records at the screen's own size",
    )
    bit_rate: int = Field(
        default=0,
        description=f"bits a second, {MIN_BIT_RATE}..{MAX_BIT_RATE}; 0 takes screenrecord's default",
    )

    @field_validator("bit_rate")
    @classmethod
    def _bit_rate(cls, value: int) -> int:
        if value and not MIN_BIT_RATE <= value <= MAX_BIT_RATE:
            raise ValueError(f"expected 0 or {MIN_BIT_RATE}..{MAX_BIT_RATE}")
        return value

    def dimensions(self) -> tuple[int, int] | None:
        found = _SIZE.fullmatch(self.size)
        return (int(found.group(1)), int(found.group(2))) if found else None


class StartResult(ActionResult):
    path: str = Field(description="the mp4 on the phone (shared storage), once SCREEN_RECORD_STOP answers")
    max_s: int
    started_ms: int = Field(description="when it started, epoch milliseconds")


class StopParams(Params):
    pass


class StopResult(ActionResult):
    path: str = Field(description="the mp4 on the phone, for PULL_FILE")
    size: int = Field(description="its size in bytes, read back from the phone")
    duration_ms: int = Field(description="how long it recorded")
    ended: Literal["stopped", "limit", "failed"] = Field(
        description="stopped (by this call), limit (it reached max_s) or failed (it ended early)"
    )
    verified: bool = Field(description="the file is on the phone and not empty")


async def start(ctx: ActionContext, p: StartParams) -> StartResult:
    recording = await ctx.device.start_recording(
        max_s=p.max_s, size=p.dimensions(), bit_rate=p.bit_rate or None
    )
    return StartResult(
        path=recording.path, max_s=recording.max_s, started_ms=recording.started_ms, via=recording.via
    )


async def stop(ctx: ActionContext, p: StopParams) -> StopResult:
    done = await ctx.device.stop_recording()
    return StopResult(
        path=done.path,
        size=done.size,
        duration_ms=done.duration_ms,
        ended=done.ended,
        verified=done.size > 0,
        via=done.via,
    )


ACTIONS = (
    ActionSpec(
        "SCREEN_RECORD_START",
        StartParams,
        start,
        StartResult,
        "Start recording the screen to an mp4 on the phone",
        requires=frozenset({SCREEN_RECORD}),
        notes=(
            f"One recording at a time: a second start is `CONFLICT`, naming the one that runs. It "
            f"stops by itself after `max_s` (at most {MAX_S} s, screenrecord's own limit) and when the "
            "server stops; SCREEN_RECORD_STOP then still answers its file. adb: `screenrecord "
            "--time-limit N [--size WxH] [--bit-rate B] /sdcard/Movies/phoneuse-<time>.mp4` in the "
            "background. Windows that set FLAG_SECURE record black, as in screenshots."
        ),
    ),
    ActionSpec(
        "SCREEN_RECORD_STOP",
        StopParams,
        stop,
        StopResult,
        "Stop the screen recording and answer its file (path, size, length) for PULL_FILE",
        requires=frozenset({SCREEN_RECORD}),
        notes=(
            "adb: SIGINT to screenrecord (`kill -2`), which finishes the mp4, then `stat` of the file. "
            "`INVALID_PARAMS` when no recording runs or waits to be collected."
        ),
    ),
)
