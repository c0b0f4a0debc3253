"""The screen's power: WAKE, SLEEP and UNLOCK (issue 27). UNLOCK only dismisses a lock screen that
needs no secret: the runtime never types a PIN, pattern or password; on a secure lock it answers
OWNER_MUST_UNLOCK. Each answers the state read back from the phone (`verified`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from pydantic import Field

from phoneuse_runtime.device.base import PowerState, remaining_s
from phoneuse_runtime.kernel.capabilities import POWER
from phoneuse_runtime.kernel.errors import OwnerMustUnlock
from phoneuse_runtime.kernel.params import Params
from phoneuse_runtime.kernel.registry import ActionContext, ActionResult, ActionSpec

# How long a change is read back for (a screen turning on, the lock screen's animation), at most,
# and never past half the call's time left.
SETTLE_S = 3.0


class PowerParams(Params):
    pass


class PowerResult(ActionResult):
    awake: bool | None = Field(description="the screen is on, read back (null: the phone cannot say)")
    locked: bool | None = Field(description="the lock screen shows, read back (null: the phone cannot say)")
    secure: bool | None = Field(
        description="the lock screen needs a PIN, pattern or password (null: the phone cannot say)"
    )
    verified: bool = Field(description="the state read back is the one asked for")


def _result(state: PowerState, verified: bool, via: str) -> PowerResult:
    """The state read back; `via` the act's path (the read's where nothing needed doing)."""
    return PowerResult(
        awake=state.awake, locked=state.locked, secure=state.secure, verified=verified, via=via or state.via
    )


async def _read_until(ctx: ActionContext, done: Callable[[PowerState], bool]) -> PowerState:
    """The power state, read again every find_poll_ms until `done(state)` or SETTLE_S passes."""
    loop = asyncio.get_running_loop()
    give_up = loop.time() + min(SETTLE_S, remaining_s(SETTLE_S * 2) / 2)
    while True:
        state = await ctx.device.power_state()
        if done(state) or loop.time() >= give_up:
            return state
        await asyncio.sleep(ctx.device.find_poll_ms / 1000)  # the read-back's poll


async def wake(ctx: ActionContext, p: PowerParams) -> PowerResult:
    via = await ctx.device.wake()
    state = await _read_until(ctx, lambda s: s.awake is True)
    return _result(state, state.awake is True, via)


async def sleep(ctx: ActionContext, p: PowerParams) -> PowerResult:
    via = await ctx.device.sleep()
    state = await _read_until(ctx, lambda s: s.awake is False)
    return _result(state, state.awake is False, via)


def _owner_must_unlock(state: PowerState, why: str) -> OwnerMustUnlock:
    return OwnerMustUnlock(
        f"UNLOCK: {why}; ask the phone's owner to unlock it",
        details={"awake": state.awake, "locked": state.locked, "secure": state.secure},
    )


async def unlock(ctx: ActionContext, p: PowerParams) -> PowerResult:
    state = await ctx.device.power_state()
    if state.secure and state.locked is not False:
        # Refused before anything is done, asleep or awake: the screen is not even woken.
        raise _owner_must_unlock(state, "the lock screen has a PIN, pattern or password")
    via = ""
    if state.awake is not True:
        via = await ctx.device.wake()
        state = await _read_until(ctx, lambda s: s.awake is True)
    if state.locked is False:
        return _result(state, state.awake is True, via)
    if state.secure:
        # Refused before the lock screen is touched: dismissing it would only show the bouncer.
        raise _owner_must_unlock(state, "the lock screen has a PIN, pattern or password")
    dismissed = await ctx.device.dismiss_keyguard()
    via = f"{via} + {dismissed}" if via else dismissed
    state = await _read_until(ctx, lambda s: s.locked is False)
    if state.locked is not False:
        why = (
            "the lock screen did not go away (the phone cannot say whether it needs a PIN, pattern or "
            "password)"
            if state.secure is None
            else "the lock screen did not go away"
        )
        raise _owner_must_unlock(state, why)
    return _result(state, state.awake is True, via)


_STATE_NOTE = (
    "`awake`, `locked` and `secure` are read back from the phone (adb: `dumpsys power`'s "
    "mWakefulness, `dumpsys window policy`'s KeyguardServiceDelegate `showing=` and `secure=`); "
    "null where the phone cannot say. Allowed in front of the owner's controls, as PRESS_KEY's "
    "WAKEUP and SLEEP are."
)

ACTIONS = (
    ActionSpec(
        "WAKE",
        PowerParams,
        wake,
        PowerResult,
        "Turn the screen on (it stays locked if it was)",
        requires=frozenset({POWER}),
        notes=_STATE_NOTE,
    ),
    ActionSpec(
        "SLEEP",
        PowerParams,
        sleep,
        PowerResult,
        "Turn the screen off (the phone locks as its settings say)",
        requires=frozenset({POWER}),
        notes=_STATE_NOTE,
    ),
    ActionSpec(
        "UNLOCK",
        PowerParams,
        unlock,
        PowerResult,
        "Wake the screen and dismiss a lock screen that needs no PIN, pattern or password",
        requires=frozenset({POWER}),
        notes=(
            "The runtime never types a secret: on a lock screen with a PIN, pattern or password it "
            "answers `OWNER_MUST_UNLOCK` before touching it (and where the phone cannot say whether "
            "it is secure, when the dismissed lock screen stays). adb: `input keyevent "
            "KEYCODE_WAKEUP`, then `wm dismiss-keyguard`. " + _STATE_NOTE
        ),
    ),
)
