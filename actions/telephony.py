"""Phone calls."""

from __future__ import annotations

from pydantic import Field

from phoneuse_runtime.device.recipients import resolve_recipient
from phoneuse_runtime.kernel.capabilities import CALLS
from phoneuse_runtime.kernel.params import Params
from phoneuse_runtime.kernel.registry import ActionContext, ActionResult, ActionSpec


class MakeCallParams(Params):
    to: str = Field(min_length=1, description="a phone number or a contact's name")


class MakeCallResult(ActionResult):
    number: str
    contact: str | None
    state: str = Field(description="call state after dialing: offhook when the call is up")


async def _check_recipient(ctx: ActionContext, p: MakeCallParams) -> None:
    """Before any hold: no answer of the owner's makes a name that two contacts match a number."""
    await resolve_recipient(ctx.device, p.to)


async def make_call(ctx: ActionContext, p: MakeCallParams) -> MakeCallResult:
    number, contact = await resolve_recipient(ctx.device, p.to)  # again: held, the contacts may change
    via = await ctx.device.place_call(number)
    state = await ctx.device.call_state()
    return MakeCallResult(
        number=number, contact=contact.name if contact else None, state=state.state, via=via
    )


class EndCallParams(Params):
    pass


class EndCallResult(ActionResult):
    ended: bool = Field(description="false when no call was active or ringing")


async def end_call(ctx: ActionContext, p: EndCallParams) -> EndCallResult:
    return EndCallResult(ended=await ctx.device.end_call(), via=ctx.device.via)


ACTIONS = (
    ActionSpec(
        "MAKE_CALL",
        MakeCallParams,
        make_call,
        MakeCallResult,
        "Dial a number or a contact",
        requires=frozenset({CALLS}),
        check=_check_recipient,
    ),
    ActionSpec(
        "END_CALL",
        EndCallParams,
        end_call,
        EndCallResult,
        "Hang up or decline the current call",
        requires=frozenset({CALLS}),
    ),
)
