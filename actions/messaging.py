"""SEND_MESSAGE: SMS through the phone's SMS store, or a chat app through its UI."""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass

from pydantic import Field

from phoneuse_runtime.device.base import Contact, Intent, SmsFilter, SmsMessage
from phoneuse_runtime.device.recipients import resolve_recipient
from phoneuse_runtime.kernel.capabilities import APPS, SMS, UI
from phoneuse_runtime.kernel.errors import DeviceUnavailable, InvalidParams, PermissionDenied, Unsupported
from phoneuse_runtime.kernel.limits import clip
from phoneuse_runtime.kernel.params import Params
from phoneuse_runtime.kernel.registry import ActionContext, ActionResult, ActionSpec
from phoneuse_runtime.screen.lookup import find_element, screen
from phoneuse_runtime.screen.selector import Selector
from phoneuse_runtime.util.numbers import digits, same_number
from phoneuse_runtime.util.polling import poll

SMS_APPS = frozenset(
    {
        "sms",
        "com.google.android.apps.messaging",
        "com.android.mms",
        "com.samsung.android.messaging",
        "com.android.messaging",
    }
)


@dataclass(frozen=True)
class ChatFlow:
    """How to send in a chat app: a deep link to the conversation, then its entry field and send button."""

    deep_link: str  # format string with {number} (digits, no +)
    entry_id: str
    send_id: str
    bubble_id: str


CHAT_APPS: dict[str, ChatFlow] = {
    "com.whatsapp": ChatFlow(
        deep_link="https://wa.me/{number}",
        entry_id="com.whatsapp:id/entry",
        send_id="com.whatsapp:id/send",
        bubble_id="com.whatsapp:id/message_text",
    ),
    "com.whatsapp.w4b": ChatFlow(
        deep_link="https://wa.me/{number}",
        entry_id="com.whatsapp.w4b:id/entry",
        send_id="com.whatsapp.w4b:id/send",
        bubble_id="com.whatsapp.w4b:id/message_text",
    ),
}

# How long to look for the sent message in the store before answering verified=false.
VERIFY_MS = 10_000
# What the verification leaves of the deadline to answer in.
ANSWER_MARGIN_MS = 100


class SendMessageParams(Params):
    to: str = Field(min_length=1, description="a phone number, or a contact's name (exact or unique prefix)")
    body: str = Field(min_length=1, max_length=10_000)


class SendMessageResult(ActionResult):
    to: str = Field(description="the number the message went to")
    contact: str | None = Field(description="the contact's name, when `to` named one")
    app: str
    message_id: str | None = Field(description="the sent store's id of the message; null for chat apps")
    verified: bool
    verify_error: str | None = None


def _verify_window(ctx: ActionContext, *, look_ms: float = 0.0) -> int:
    """How long to keep looking: the last look must end before the deadline, and a look takes
    about as long as reading the mark did (a subprocess on Termux: a few hundred ms on a phone);
    three times that leaves room for a slower one."""
    remaining = int((ctx.deadline - asyncio.get_running_loop().time()) * 1000)
    return max(0, min(VERIFY_MS, remaining - ANSWER_MARGIN_MS - int(3 * look_ms)))


async def _sent_mark(ctx: ActionContext) -> tuple[int | None, str | None]:
    """The highest id in the sent box now, or why the sent box cannot be read."""
    try:
        newest = await ctx.device.sms_messages(SmsFilter(box="sent", limit=1))
    except (Unsupported, PermissionDenied) as exc:
        return None, f"the sent box cannot be read to verify the send: {exc.message}"
    return (int(newest[0].id) if newest else 0), None


async def _send_sms(ctx: ActionContext, number: str, body: str) -> tuple[str | None, str | None, str]:
    started = asyncio.get_running_loop().time()
    mark, unreadable = await _sent_mark(ctx)
    look_ms = (asyncio.get_running_loop().time() - started) * 1000
    via = await ctx.device.send_sms(number, body)
    if mark is None:
        return None, unreadable, via
    # Only rows past the mark: each look reads what is new, not the whole store. The number is
    # compared here, loosely: a phone stores the address its own way ("+14155550101" for
    # "+1 415 555 0101"), and its provider compares them exactly. The body too, less the
    # whitespace around it, which Termux:API trims before sending. Every box, to see a failed send.
    since = SmsFilter(above_id=mark)

    async def look() -> SmsMessage | None:
        rows = await ctx.device.sms_messages(since)
        return next(
            (
                m
                for m in reversed(rows)  # the oldest new row first: the one this send made
                if m.box in ("sent", "failed")
                and m.body.strip() == body.strip()
                and same_number(m.address, number)
            ),
            None,
        )

    within_ms = _verify_window(ctx, look_ms=look_ms)
    # A look slower than the first (a loaded phone) must not carry the answer past the deadline:
    # the looks end by the window's margin before it, and a look cut there found nothing.
    answer_by = ctx.deadline - ANSWER_MARGIN_MS / 1000 - asyncio.get_running_loop().time()
    try:
        found = await asyncio.wait_for(
            poll(look, interval_ms=ctx.settings.wait_poll_ms, within_ms=within_ms),
            timeout=max(0.0, answer_by),
        )
    except asyncio.TimeoutError:
        found = None
    except (Unsupported, PermissionDenied) as exc:
        return None, f"the sent box cannot be read to verify the send: {exc.message}", via
    if found is None:
        return None, f"no matching message reached the sent store within {VERIFY_MS} ms", via
    if found.box == "failed":
        raise DeviceUnavailable(f"the phone could not send the SMS (message {found.id} is in the failed box)")
    return found.id, None, via


async def _send_chat(
    ctx: ActionContext, app: str, flow: ChatFlow, number: str, body: str
) -> tuple[str | None, str]:
    device = ctx.device
    target = digits(number)
    opened = await device.start_intent(
        Intent(action="android.intent.action.VIEW", data=flow.deep_link.format(number=target), package=app)
    )
    entry = await find_element(device, Selector(resource_id=flow.entry_id), wait_ms=_verify_window(ctx))
    await device.tap(*entry.center)
    await device.clear_text()
    await device.input_text(body)
    bubble = Selector(resource_id=flow.bubble_id, text=body)
    # The same text may already be in the conversation; only one more bubble proves this send.
    before = len(bubble.find_all(await screen(device)))
    send = await find_element(device, Selector(resource_id=flow.send_id), wait_ms=0)
    await device.tap(*send.center)
    # The bubble after those there were: one wait on the device, not a dump per look.
    shown = await device.find(dataclasses.replace(bubble, index=before), timeout_ms=_verify_window(ctx))
    return (None if shown else "the message did not appear in the conversation"), opened.via


async def _recipient(ctx: ActionContext, p: SendMessageParams) -> tuple[str, Contact | None]:
    """The number `to` names and its contact; INVALID_PARAMS when it names none or several."""
    number, contact = await resolve_recipient(ctx.device, p.to)
    if not digits(number):
        raise InvalidParams(f"{clip(p.to)} is not a phone number")
    return number, contact


def _sender(ctx: ActionContext) -> tuple[str, ChatFlow | None]:
    """The app that sends (app_target, "sms" by default) and its chat flow (None for SMS);
    UNSUPPORTED for an app no flow is known for, or a chat app on a phone whose UI is not driven."""
    app = ctx.app_target or "sms"
    if app in SMS_APPS:
        return app, None
    if app in CHAT_APPS:
        ctx.require(UI, APPS)  # a chat app is driven through its screens
        return app, CHAT_APPS[app]
    supported = ", ".join(sorted(SMS_APPS | CHAT_APPS.keys()))
    raise Unsupported(f"cannot send messages with {app}; supported app_target values: {supported}")


async def _check_send(ctx: ActionContext, p: SendMessageParams) -> None:
    """Before any hold: no answer of the owner's makes an app the runtime cannot send with, or a
    name that two contacts match, a recipient."""
    _sender(ctx)
    await _recipient(ctx, p)


async def send_message(ctx: ActionContext, p: SendMessageParams) -> SendMessageResult:
    # Resolved again: the contacts may have changed while the call was held.
    number, contact = await _recipient(ctx, p)
    app, flow = _sender(ctx)
    if flow is None:
        message_id, error, via = await _send_sms(ctx, number, p.body)
    else:
        message_id = None
        error, via = await _send_chat(ctx, app, flow, number, p.body)
    return SendMessageResult(
        to=number,
        contact=contact.name if contact else None,
        app=app,
        message_id=message_id,
        verified=error is None,
        verify_error=error,
        via=via,
    )


ACTIONS = (
    ActionSpec(
        "SEND_MESSAGE",
        SendMessageParams,
        send_message,
        SendMessageResult,
        "Send an SMS (default) or a chat message (app_target com.whatsapp), verified against the sent store",
        requires=frozenset({SMS}),
        check=_check_send,
    ),
)
