"""The phone's settings (issue 27): Wi-Fi, Bluetooth, airplane mode, volume, brightness, Do Not
Disturb and auto-rotate. Each sets the value through the backend's own way (never by opening
Settings, which stays the owner's), reads it back from the phone and answers what it read
(`verified`: the value read back is the one asked for). A change that would cut the runtime's own
link to the phone (kernel/links.py) is refused before anything happens, before any hold.

None of them is held by default: they are not among the owner's to decide (installing apps,
permissions); an owner who wants them held lists them in `approval_actions`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from pydantic import Field, model_validator

from phoneuse_runtime.device.base import SWITCH_NAMES, Brightness, DndMode, Stream, Switch, Volume
from phoneuse_runtime.kernel.errors import InvalidParams, PermissionDenied, Unsupported
from phoneuse_runtime.kernel.links import own_links, refuse_cutting
from phoneuse_runtime.kernel.params import Params
from phoneuse_runtime.kernel.registry import ActionContext, ActionResult, ActionSpec

T = TypeVar("T")

# How long a value is read again until it shows the change (a radio takes a moment to come up
# and to say so), and how often: at most this, and never past the call's deadline.
READ_BACK_S = 3.0
READ_BACK_EVERY_S = 0.25


class SwitchParams(Params):
    enabled: bool = Field(description="on (true) or off (false)")


class SwitchResult(ActionResult):
    enabled: bool | None = Field(
        description="the switch as read back from the phone; null where it cannot say"
    )
    verified: bool = Field(description="the value read back is the one asked for")
    verify_error: str | None = Field(default=None, description="why it could not be read back")


class SetVolumeParams(Params):
    stream: Stream = Field(default="music", description="music, ring, alarm or notification")
    level: int | None = Field(default=None, ge=0, le=100, description="the stream's volume index (0..max)")
    percent: int | None = Field(default=None, ge=0, le=100, description="a share of the stream's maximum")

    @model_validator(mode="after")
    def _one(self) -> SetVolumeParams:
        if (self.level is None) == (self.percent is None):
            raise ValueError("give exactly one of level and percent")
        return self


class VolumeResult(ActionResult):
    stream: str
    level: int | None = Field(description="the volume index read back")
    max: int = Field(description="the stream's maximum index")
    percent: int | None = Field(description="level as a share of max")
    verified: bool
    verify_error: str | None = None


class SetBrightnessParams(Params):
    level: int | None = Field(default=None, ge=0, le=255, description="0..255; turns adaptive brightness off")
    auto: bool | None = Field(default=None, description="adaptive brightness on (true) or off (false)")

    @model_validator(mode="after")
    def _some(self) -> SetBrightnessParams:
        if self.level is None and self.auto is None:
            raise ValueError("give level (0..255), auto, or both")
        if self.level is not None and self.auto:
            raise ValueError("a level is a manual brightness: give level, or auto=true, not both")
        return self


class BrightnessResult(ActionResult):
    level: int | None = Field(description="the level read back (0..255); null where the phone cannot say")
    auto: bool | None = Field(description="adaptive brightness as read back; null where the phone cannot say")
    verified: bool
    verify_error: str | None = None


class SetDndParams(Params):
    mode: DndMode = Field(
        description="off (every interruption), priority (priority only), alarms (alarms only), "
        "total (silence)"
    )


class DndResult(ActionResult):
    mode: str | None = Field(description="Do Not Disturb as read back; null where the phone cannot say")
    verified: bool
    verify_error: str | None = None


class _Unreadable(Exception):
    """The phone cannot say the value back; the message says why."""


async def _read_back(ctx: ActionContext, read: Callable[[], Awaitable[T]], done: Callable[[T], bool]) -> T:
    """The value read until `done` says it shows the change, for at most READ_BACK_S; _Unreadable
    where the phone cannot be read back."""
    loop = asyncio.get_running_loop()
    give_up = min(loop.time() + READ_BACK_S, ctx.deadline - 0.5)
    while True:
        try:
            value = await read()
        except (Unsupported, PermissionDenied) as exc:
            raise _Unreadable(f"it cannot be read back: {exc.message}") from None
        if done(value) or loop.time() + READ_BACK_EVERY_S > give_up:
            return value
        await asyncio.sleep(READ_BACK_EVERY_S)


async def _reading(
    ctx: ActionContext, read: Callable[[], Awaitable[T]], done: Callable[[T], bool]
) -> tuple[T | None, str | None]:
    """`_read_back`'s value, or None and why it could not be read."""
    try:
        return await _read_back(ctx, read, done), None
    except _Unreadable as exc:
        return None, str(exc)


async def _set_switch(ctx: ActionContext, switch: Switch, enabled: bool) -> SwitchResult:
    via = await ctx.device.set_switch(switch, enabled)
    now, why = await _reading(ctx, lambda: ctx.device.switch(switch), enabled.__eq__)
    return SwitchResult(enabled=now, verified=now == enabled, verify_error=why, via=via)


def _check_wifi(ctx: ActionContext, p: SwitchParams) -> None:
    if not p.enabled:  # turning it on cuts nothing
        links = own_links(ctx.device, ctx.components.values())
        refuse_cutting("turning Wi-Fi off", links, allowed=ctx.settings.owner.allow_cutting_link)


def _check_airplane(ctx: ActionContext, p: SwitchParams) -> None:
    # Either way: turning it on stops the radios, turning it off restarts them (Wi-Fi as it was
    # before, or not at all where the owner had turned it on in airplane mode).
    links = own_links(ctx.device, ctx.components.values())
    what = f"turning airplane mode {'on' if p.enabled else 'off'}"
    refuse_cutting(what, links, allowed=ctx.settings.owner.allow_cutting_link)


async def set_wifi(ctx: ActionContext, p: SwitchParams) -> SwitchResult:
    return await _set_switch(ctx, "wifi", p.enabled)


async def set_bluetooth(ctx: ActionContext, p: SwitchParams) -> SwitchResult:
    return await _set_switch(ctx, "bluetooth", p.enabled)


async def set_airplane_mode(ctx: ActionContext, p: SwitchParams) -> SwitchResult:
    return await _set_switch(ctx, "airplane_mode", p.enabled)


async def set_auto_rotate(ctx: ActionContext, p: SwitchParams) -> SwitchResult:
    return await _set_switch(ctx, "auto_rotate", p.enabled)


async def set_volume(ctx: ActionContext, p: SetVolumeParams) -> VolumeResult:
    before = await ctx.device.volume(p.stream)
    if p.percent is not None:
        level = before.min + round((before.max - before.min) * p.percent / 100)
    else:
        level = p.level if p.level is not None else 0
        if not before.min <= level <= before.max:
            raise InvalidParams(
                f"level {level} is out of the {p.stream} stream's range on this phone "
                f"[{before.min}..{before.max}]"
            )
    via = await ctx.device.set_volume(p.stream, level)

    def shows(volume: Volume | None) -> bool:
        return volume is not None and volume.level == level

    reading: tuple[Volume | None, str | None] = await _reading(
        ctx, lambda: ctx.device.volume(p.stream), shows
    )
    now, why = reading
    read = now.level if now is not None else None
    top = now.max if now is not None else before.max
    return VolumeResult(
        stream=p.stream,
        level=read,
        max=top,
        percent=round(read * 100 / top) if read is not None and top > 0 else None,
        verified=read == level,
        verify_error=why,
        via=via,
    )


async def set_brightness(ctx: ActionContext, p: SetBrightnessParams) -> BrightnessResult:
    auto = bool(p.auto)  # a level alone is a manual brightness
    via = await ctx.device.set_brightness(p.level, auto=auto)

    def shows(now: Brightness | None) -> bool:
        return now is not None and now.auto in (auto, None) and (p.level is None or now.level == p.level)

    now, why = await _reading(ctx, ctx.device.brightness, shows)
    level = now.level if now is not None else None
    read_auto = now.auto if now is not None else None
    verified = now is not None and read_auto is not None and read_auto == auto
    verified = verified and (p.level is None or level == p.level)
    if now is not None and read_auto is None and why is None:
        why = "this phone does not say whether adaptive brightness is on"
    return BrightnessResult(level=level, auto=read_auto, verified=verified, verify_error=why, via=via)


async def set_dnd(ctx: ActionContext, p: SetDndParams) -> DndResult:
    via = await ctx.device.set_dnd(p.mode)
    now, why = await _reading(ctx, ctx.device.dnd, p.mode.__eq__)
    return DndResult(mode=now, verified=now == p.mode, verify_error=why, via=via)


_LINK_NOTE = (
    "refused with PERMISSION_DENIED, before anything happens and before any hold, where it would cut "
    "the runtime's own link to the phone (adb over Wi-Fi, Termux's wireless debugging, an Iris app "
    "connected over the network), naming the link, unless the owner set allow_cutting_link = true."
)


def _switch_spec(
    action_type: str,
    switch: Switch,
    handler: Callable[[ActionContext, SwitchParams], Awaitable[SwitchResult]],
    notes: str,
    check: Callable[[ActionContext, SwitchParams], None] | None = None,
) -> ActionSpec[SwitchParams, SwitchResult]:
    return ActionSpec(
        action_type,
        SwitchParams,
        handler,
        SwitchResult,
        f"Turn {SWITCH_NAMES[switch]} on or off, and read it back",
        exclusive=True,
        notes=notes,
        check=check,
    )


ACTIONS = (
    _switch_spec(
        "SET_WIFI",
        "wifi",
        set_wifi,
        "adb: `cmd wifi set-wifi-enabled` (Android 11+), `svc wifi` before; read back from "
        "`settings get global wifi_on`. Termux: its own adb; without it, termux-wifi-enable below "
        "Android 10 (an app may not turn Wi-Fi on or off from Android 10 on: UNSUPPORTED). Turning "
        "Wi-Fi off: " + _LINK_NOTE,
        _check_wifi,
    ),
    _switch_spec(
        "SET_BLUETOOTH",
        "bluetooth",
        set_bluetooth,
        "adb: `cmd bluetooth_manager` (Android 13+), `svc bluetooth` before; read back from "
        "`settings get global bluetooth_on`. Termux: its own adb.",
    ),
    _switch_spec(
        "SET_AIRPLANE_MODE",
        "airplane_mode",
        set_airplane_mode,
        "adb: `cmd connectivity airplane-mode` (Android 11+); before Android 11 a shell cannot "
        "(UNSUPPORTED: the owner uses the quick settings). Termux: its own adb. Either way: " + _LINK_NOTE,
        _check_airplane,
    ),
    _switch_spec(
        "SET_AUTO_ROTATE",
        "auto_rotate",
        set_auto_rotate,
        "adb and Termux's own adb: `settings put system accelerometer_rotation`.",
    ),
    ActionSpec(
        "SET_VOLUME",
        SetVolumeParams,
        set_volume,
        VolumeResult,
        "Set a stream's volume (music, ring, alarm, notification) by level or percent, and read it back",
        exclusive=True,
        notes="A level outside the stream's range on this phone is INVALID_PARAMS, naming the range. "
        "adb: `cmd media_session volume` (Android 10+), `media volume` before. Termux: termux-volume.",
    ),
    ActionSpec(
        "SET_BRIGHTNESS",
        SetBrightnessParams,
        set_brightness,
        BrightnessResult,
        "Set the screen's brightness (level 0..255) or adaptive brightness (auto), and read it back",
        exclusive=True,
        notes="adb (and Termux's own adb): `settings put system screen_brightness` / "
        "`screen_brightness_mode`. Termux without its own adb: termux-brightness (Termux:API needs "
        "'Modify system settings', else PERMISSION_DENIED), which reads the level back but never says "
        "whether adaptive brightness is on (`auto` null, `verified` false).",
    ),
    ActionSpec(
        "SET_DO_NOT_DISTURB",
        SetDndParams,
        set_dnd,
        DndResult,
        "Set Do Not Disturb: off, priority, alarms or total, and read it back",
        exclusive=True,
        notes="adb: `cmd notification set_dnd` (Android 11+; before it UNSUPPORTED: the phone puts "
        "back a zen_mode written from outside); read back from `settings get global zen_mode`. "
        "Termux: its own adb.",
    ),
)
