"""Events on `--device termux`: polled from Termux:API only while someone subscribes."""

from __future__ import annotations

import time

from phoneuse_runtime.device.termux.device import TermuxDevice
from tests.conftest import Client
from tests.device.adb.test_e2e_faults import Events
from tests.device.termux.conftest import TermuxServe
from tests.fakes.termux.state import FakeTermux
from tests.waiting import wait_until

POLLED = ["MESSAGE_RECEIVED", "NOTIFICATION_POSTED", "CALL_STATE_CHANGED"]


def _device(client: Client) -> TermuxDevice:
    device = client.app.runtime.device
    assert isinstance(device, TermuxDevice)
    return device


async def test_sms_notifications_and_calls_are_reported_while_subscribed(
    serve_termux: TermuxServe, termux: FakeTermux
) -> None:
    client = await serve_termux()
    pollers = _device(client).pollers
    assert pollers is not None
    events = Events(client, POLLED)
    try:
        await wait_until(lambda: pollers.polls >= 2)  # the first poll only takes stock
        since = time.monotonic()
        sms_id = termux.receive_sms("+14155550199", "hello, there ✓")
        key = termux.post_notification("com.whatsapp", "Bob", "lunch?")
        termux.log_call("+14155550177", "MISSED")
        _, message = await events.next("MESSAGE_RECEIVED", after=since, within_s=10)
        _, note = await events.next("NOTIFICATION_POSTED", after=since, within_s=10)
        _, call = await events.next("CALL_STATE_CHANGED", after=since, within_s=10)
    finally:
        events.close()
    assert message == {
        "from": "+14155550199",
        "body": "hello, there ✓",
        "app": "sms",
        "thread_id": "9",
        "message_id": str(sms_id),
    }
    assert note == {"package": "com.whatsapp", "title": "Bob", "text": "lunch?", "key": key}
    assert call == {"state": "idle", "number": "+14155550177"}
    # Each arrival is reported once: the marks moved past them.
    assert [kind for _, kind, _ in events.seen].count("MESSAGE_RECEIVED") == 1


async def test_nothing_is_polled_while_nobody_subscribes(
    serve_termux: TermuxServe, termux: FakeTermux
) -> None:
    client = await serve_termux()
    pollers = _device(client).pollers
    assert pollers is not None
    start_runs = len(termux.state()["runs"])
    await wait_until(lambda: pollers.ticks >= 5)
    assert len(termux.state()["runs"]) == start_runs and pollers.polls == 0
    events = Events(client, ["MESSAGE_RECEIVED"])
    await wait_until(lambda: pollers.polls >= 2)
    events.close()
    await wait_until(lambda: not client.app.runtime.bus.interested("MESSAGE_RECEIVED"))
    stopped_at = pollers.ticks + 1  # a tick under way may still finish its poll
    await wait_until(lambda: pollers.ticks >= stopped_at + 5)
    runs = len(termux.state()["runs"])
    polls = pollers.polls
    await wait_until(lambda: pollers.ticks >= stopped_at + 10)
    assert len(termux.state()["runs"]) == runs and pollers.polls == polls
    # Only what the subscription asked for was run: the SMS list and the battery, nothing else.
    ran = {run[0] for run in termux.state()["runs"][start_runs:]}
    assert ran == {"termux-sms-list", "termux-battery-status"}


async def test_polling_backs_off_on_battery_when_the_screen_cannot_be_seen(
    serve_termux: TermuxServe, termux: FakeTermux
) -> None:
    termux.update(lambda s: s["battery"].update(plugged="UNPLUGGED", status="DISCHARGING"))
    client = await serve_termux(poll_ms=100)
    pollers = _device(client).pollers
    assert pollers is not None
    events = Events(client, ["NOTIFICATION_POSTED"])
    try:
        await wait_until(lambda: pollers.polls >= 1)
        assert pollers.factor == 2.0 and pollers.interval_s == 0.2
        assert "on battery" in pollers.why
    finally:
        events.close()


async def test_a_source_that_never_answers_rests_and_the_others_go_on(
    serve_termux: TermuxServe, termux: FakeTermux
) -> None:
    termux.update(lambda s: s.update(notification_access=False))  # notification-list never returns
    client = await serve_termux(poll_ms=100)
    pollers = _device(client).pollers
    assert pollers is not None and pollers.budget_s == 2.0
    events = Events(client, ["MESSAGE_RECEIVED", "NOTIFICATION_POSTED"])
    try:
        await wait_until(lambda: "notifications" in pollers.resting)
        polls = pollers.polls
        await wait_until(lambda: pollers.polls >= polls + 2)  # the SMS source took stock meanwhile
        since = time.monotonic()
        termux.receive_sms("+14155550199", "still here")
        _, message = await events.next("MESSAGE_RECEIVED", after=since, within_s=10)
    finally:
        events.close()
    assert message["body"] == "still here"
    listed = [run for run in termux.state()["runs"] if run[0] == "termux-notification-list"]
    assert len(listed) == 1  # tried once, then left alone
