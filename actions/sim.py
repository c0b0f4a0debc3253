"""Scenario actions for the simulated phone: make things happen to it, as the world would."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Field

from phoneuse_runtime.device.sim.ui_server import MAX_DEATHS as MAX_UI_SERVER_DEATHS
from phoneuse_runtime.device.ui_server import RESTART_PAUSE_S, RESTART_WINDOW_S, RESTARTS_IN_WINDOW
from phoneuse_runtime.kernel.capabilities import SIM
from phoneuse_runtime.kernel.errors import Unsupported
from phoneuse_runtime.kernel.limits import MAX_BULK_CHARS
from phoneuse_runtime.kernel.params import Params
from phoneuse_runtime.kernel.registry import ActionContext, ActionResult, ActionSpec
from phoneuse_runtime.screen.ui import fingerprint, parse_hierarchy

if TYPE_CHECKING:
    from phoneuse_runtime.device.sim.device import SimDevice

# How long SIM_DISCONNECT may keep the phone away.
MAX_DISCONNECT_MS = 600_000


def _sim(ctx: ActionContext) -> SimDevice:
    from phoneuse_runtime.device.sim.device import SimDevice

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


class SetBatteryParams(Params):
    level: int | None = Field(default=None, ge=0, le=100, description="percent")
    charging: bool | None = Field(
        default=None,
        description="true plugs it in (USB unless plugged says), false unplugs it; plugged wins",
    )
    plugged: Literal["ac", "usb", "wireless", "dock", "none"] | None = None
    temperature_c: float | None = Field(default=None, ge=-20, le=80)


class SetBatteryResult(ActionResult):
    level: int
    status: str
    plugged: str
    temperature_c: float


async def set_battery(ctx: ActionContext, p: SetBatteryParams) -> SetBatteryResult:
    sim = _sim(ctx)
    plugged = p.plugged
    if plugged is None and p.charging is not None:
        kept = sim.battery.plugged
        plugged = ("usb" if kept == "none" else kept) if p.charging else "none"
    battery = sim.set_battery(level=p.level, plugged=plugged, temperature_c=p.temperature_c)
    return SetBatteryResult(
        level=battery.level,
        status=battery.status,
        plugged=battery.plugged,
        temperature_c=battery.temperature_c,
        via="sim",
    )


class RemoteHangUpParams(Params):
    pass


class RemoteHangUpResult(ActionResult):
    ended: bool = Field(description="false when no call was active or ringing")


async def remote_hang_up(ctx: ActionContext, p: RemoteHangUpParams) -> RemoteHangUpResult:
    return RemoteHangUpResult(ended=await _sim(ctx).remote_hang_up(), via="sim")


# Why the phone is away: what DEVICE_DISCONNECTED and the failed calls meanwhile say.
LostReason = Annotated[
    str,
    Field(
        min_length=1,
        max_length=200,
        description="what DEVICE_DISCONNECTED and the failed calls meanwhile say",
    ),
]


class DisconnectParams(Params):
    ms: int = Field(gt=0, le=MAX_DISCONNECT_MS, description="how long the phone stays unreachable")
    reason: LostReason = "simulated disconnection"


class DisconnectResult(ActionResult):
    reason: str
    back_in_ms: int


async def disconnect(ctx: ActionContext, p: DisconnectParams) -> DisconnectResult:
    _sim(ctx).disconnect(p.reason, for_ms=p.ms)
    return DisconnectResult(reason=p.reason, back_in_ms=p.ms, via="sim")


class SetConnectedParams(Params):
    connected: bool = Field(description="false: the phone drops off its cable until set true again")
    reason: LostReason = "simulated disconnection"


class SetConnectedResult(ActionResult):
    connected: bool = Field(description="whether the phone answers now")


async def set_connected(ctx: ActionContext, p: SetConnectedParams) -> SetConnectedResult:
    sim = _sim(ctx)
    if p.connected:
        sim.reconnect()
    else:
        sim.disconnect(p.reason)
    return SetConnectedResult(connected=sim.link.up, via="sim")


class SetScreenParams(Params):
    xml: str = Field(min_length=1, max_length=MAX_BULK_CHARS, description="a uiautomator hierarchy dump")
    animate: bool = Field(
        default=False,
        description="the screen never stops moving: every look shows the next frame, in the first "
        "window's description (`frame N`)",
    )
    secure: bool = Field(
        default=False,
        description="the screen's app sets FLAG_SECURE (a banking or OTP app): SCREENSHOT gets a black "
        "picture of it, as on a phone, while DUMP_UI reads its tree",
    )


class SetScreenResult(ActionResult):
    ui_fingerprint: str
    nodes: int


async def set_screen(ctx: ActionContext, p: SetScreenParams) -> SetScreenResult:
    sim = _sim(ctx)
    await sim.set_screen(p.xml, animate=p.animate, secure=p.secure)
    root = parse_hierarchy(await sim.dump_hierarchy())
    return SetScreenResult(ui_fingerprint=fingerprint(root), nodes=sum(1 for _ in root.walk()), via="sim")


class UiServerDiesParams(Params):
    times: int = Field(
        default=1,
        ge=1,
        le=MAX_UI_SERVER_DEATHS,
        description="deaths in all: it dies again right after each restart until this many",
    )
    during: bool = Field(
        default=False,
        description="an act that meets a death: false, the server died before it was sent (it did "
        "not run); true, during it (it ran, and the answer says it may have)",
    )


class UiServerDiesResult(ActionResult):
    deaths: int = Field(description="deaths still to come")


async def ui_server_dies(ctx: ActionContext, p: UiServerDiesParams) -> UiServerDiesResult:
    deaths = _sim(ctx).ui_server_dies(p.times, during=p.during)
    return UiServerDiesResult(deaths=deaths, via="sim")


class ShowDialogParams(Params):
    kind: Literal["anr", "crash", "permission"] = Field(
        description='anr: "… isn\'t responding" (Close app, Wait); crash: "… keeps stopping" (App info, '
        "Close app); permission: the permission controller's prompt (the owner's to answer)"
    )
    package: str = Field(min_length=1, max_length=255, description="the app the dialog is about")


class ShowDialogResult(ActionResult):
    package: str = Field(
        description="the package of the dialog's window: android, or the permission controller"
    )
    window: str = Field(description="the window's title as dumpsys window names it, or its activity")


async def show_dialog(ctx: ActionContext, p: ShowDialogParams) -> ShowDialogResult:
    front = await _sim(ctx).show_dialog(p.kind, p.package)
    return ShowDialogResult(package=front.package, window=front.activity, via="sim")


class SetLockParams(Params):
    lock: Literal["none", "swipe", "pin", "pattern", "password"] = Field(
        description="the owner's lock screen: none, swipe (no secret), or a secure pin, pattern or password"
    )
    locked: bool = Field(default=True, description="whether it shows now")


class SetLockResult(ActionResult):
    lock: str
    locked: bool


async def set_lock(ctx: ActionContext, p: SetLockParams) -> SetLockResult:
    device = _sim(ctx)
    device.set_lock(p.lock, locked=p.locked)
    return SetLockResult(lock=p.lock, locked=device.power.locked, via="sim")


ACTIONS = (
    ActionSpec(
        "SIM_SET_LOCK",
        SetLockParams,
        set_lock,
        SetLockResult,
        "The owner sets the phone's lock screen (for UNLOCK's refusal of a secure one)",
        exclusive=False,  # the owner's doing, not the agent's finger
        requires=frozenset({SIM}),
    ),
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
        "SIM_REMOTE_HANG_UP",
        RemoteHangUpParams,
        remote_hang_up,
        RemoteHangUpResult,
        "The other party hangs up",
        exclusive=False,  # the outside world, not the agent's finger
        requires=frozenset({SIM}),
        notes="A call that still rings goes into the call log as missed; one that was answered as "
        "incoming or outgoing, with its duration.",
    ),
    ActionSpec(
        "SIM_DISCONNECT",
        DisconnectParams,
        disconnect,
        DisconnectResult,
        "The phone drops off its cable for `ms`, then comes back",
        exclusive=False,  # the outside world, not the agent's finger
        requires=frozenset({SIM}),
        notes="`DEVICE_DISCONNECTED` (with `reason`) is published at once and `DEVICE_CONNECTED` when it "
        "is back, once each. Meanwhile every action and query that needs the phone, the `SIM_*` ones "
        "included, fails at once with `DEVICE_UNAVAILABLE` naming the reason, gRPC health reports "
        "`AndroidRuntime` NOT_SERVING (the server itself stays SERVING), and `MEMORY` works as ever. "
        "Nothing on the phone changes meanwhile.",
    ),
    ActionSpec(
        "SIM_SET_CONNECTED",
        SetConnectedParams,
        set_connected,
        SetConnectedResult,
        "The phone drops off its cable, or comes back",
        exclusive=False,  # the outside world, not the agent's finger
        # No `requires`: a phone that is away must still be told to come back.
        notes="`connected=false` is `SIM_DISCONNECT` with no end: `DEVICE_DISCONNECTED` at once, and "
        "every call that needs the phone fails with `DEVICE_UNAVAILABLE` until `connected=true` "
        "(`DEVICE_CONNECTED`). Setting the state it is already in changes nothing and publishes "
        "nothing. Only on the simulated phone (`UNSUPPORTED` elsewhere).",
    ),
    ActionSpec(
        "SIM_UI_SERVER_DIES",
        UiServerDiesParams,
        ui_server_dies,
        UiServerDiesResult,
        "The phone's UI server (uiautomator2's) is killed, as low memory or another automation "
        "client does on a real phone",
        exclusive=False,  # the outside world, not the agent's finger
        requires=frozenset({SIM}),
        notes="The next UI call meets the death as it does over adb: the server is restarted (an "
        "`ERROR` event with `code` `UI_SERVER_RESTARTED` and `took_ms`); a call that only reads "
        "(`DUMP_UI`, `WAIT_FOR`, `SCREENSHOT`, a settle's looks) then goes on, one that acts "
        "answers `DEVICE_UNAVAILABLE` saying whether it may have run (`may_have_run` in its "
        f"`result_json`) and is never done twice. After {RESTARTS_IN_WINDOW} restarts within "
        f"{RESTART_WINDOW_S:.0f} s the next death is not restarted for {RESTART_PAUSE_S:.0f} s: the "
        "calls meanwhile answer `DEVICE_UNAVAILABLE` saying why.",
    ),
    ActionSpec(
        "SIM_SHOW_DIALOG",
        ShowDialogParams,
        show_dialog,
        ShowDialogResult,
        "A system dialog about an app comes up over the screen",
        exclusive=False,  # the outside world, not the agent's finger
        requires=frozenset({SIM}),
        notes="As AOSP draws it (the title in `android:id/alertTitle`, the buttons `android:id/aerr_*`; "
        "the permission controller's ids `permission_*`), over the app's screen. The next screen read "
        "for a caller publishes `SYSTEM_DIALOG` once; a gesture at coordinates aimed at a screen read "
        "before it is `STALE_SCREEN`; a tap on the permission prompt is `PERMISSION_DENIED`. Its "
        "buttons close it (Close app also stops the app).",
    ),
    ActionSpec(
        "SIM_SET_BATTERY",
        SetBatteryParams,
        set_battery,
        SetBatteryResult,
        "The phone's battery changes: its level, whether (and how) it is plugged in, its temperature",
        exclusive=False,  # the outside world, not the agent's finger
        requires=frozenset({SIM}),
        notes="What is not given stays. DEVICE_STATUS reads it back: status charging while plugged "
        "in below 100 %, full at 100 %, discharging unplugged.",
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
