"""Scenario actions for the simulated phone: make things happen to it, as the world would."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from phoneuse_runtime.capabilities import SIM
from phoneuse_runtime.errors import Unsupported
from phoneuse_runtime.limits import MAX_BULK_CHARS
from phoneuse_runtime.params import Params
from phoneuse_runtime.registry import ActionContext, ActionResult, ActionSpec
from phoneuse_runtime.ui import fingerprint, parse_hierarchy

if TYPE_CHECKING:
    from phoneuse_runtime.device.sim import SimDevice


def _sim(ctx: ActionContext) -> SimDevice:
    from phoneuse_runtime.device.sim import SimDevice

    if not isinstance(ctx.device, SimDevice):
        raise Unsupported("scenario actions need the simulated phone")
    return ctx.device


class ReceiveSmsParams(Params):
    from_: str = Field(alias="from", min_length=1, description="sender's number")
    body: str = Field(min_length=1)


class ReceiveSmsResult(ActionResult):
    message_id: str
    thread_id: str


async def receive_sms(ctx: ActionContext, p: ReceiveSmsParams) -> ReceiveSmsResult:
    message = await _sim(ctx).receive_sms(p.from_, p.body)
    return ReceiveSmsResult(message_id=message.id, thread_id=message.thread_id, via="sim")


class PostNotificationParams(Params):
    package: str = Field(min_length=1)
    title: str = ""
    text: str = ""


class PostNotificationResult(ActionResult):
    key: str


async def post_notification(ctx: ActionContext, p: PostNotificationParams) -> PostNotificationResult:
    notification = await _sim(ctx).post_notification(p.package, p.title, p.text)
    return PostNotificationResult(key=notification.key, via="sim")


class IncomingCallParams(Params):
    from_: str = Field(alias="from", min_length=1)


class IncomingCallResult(ActionResult):
    number: str
    state: str


async def incoming_call(ctx: ActionContext, p: IncomingCallParams) -> IncomingCallResult:
    sim = _sim(ctx)
    await sim.incoming_call(p.from_)
    state = await sim.call_state()
    return IncomingCallResult(number=p.from_, state=state.state, via="sim")


class SetScreenParams(Params):
    xml: str = Field(min_length=1, max_length=MAX_BULK_CHARS, description="a uiautomator hierarchy dump")


class SetScreenResult(ActionResult):
    ui_fingerprint: str
    nodes: int


async def set_screen(ctx: ActionContext, p: SetScreenParams) -> SetScreenResult:
    sim = _sim(ctx)
    await sim.set_screen(p.xml)
    root = parse_hierarchy(await sim.dump_hierarchy())
    return SetScreenResult(ui_fingerprint=fingerprint(root), nodes=sum(1 for _ in root.walk()), via="sim")


ACTIONS = (
    ActionSpec(
        "SIM_RECEIVE_SMS",
        ReceiveSmsParams,
        receive_sms,
        ReceiveSmsResult,
        "The phone receives an SMS",
        exclusive=False,  # the outside world, not the agent's finger
        requires=frozenset({SIM}),
    ),
    ActionSpec(
        "SIM_POST_NOTIFICATION",
        PostNotificationParams,
        post_notification,
        PostNotificationResult,
        "An app posts a notification",
        exclusive=False,  # the outside world, not the agent's finger
        requires=frozenset({SIM}),
    ),
    ActionSpec(
        "SIM_INCOMING_CALL",
        IncomingCallParams,
        incoming_call,
        IncomingCallResult,
        "A call rings",
        exclusive=False,  # the outside world, not the agent's finger
        requires=frozenset({SIM}),
    ),
    ActionSpec(
        "SIM_SET_SCREEN",
        SetScreenParams,
        set_screen,
        SetScreenResult,
        "Replace the current screen with a uiautomator XML tree",
        requires=frozenset({SIM}),
    ),
)
