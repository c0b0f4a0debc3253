"""The phone at the end of a cable: while it does not answer, every call that needs it fails at once
with DEVICE_UNAVAILABLE naming why, the calls that need no phone carry on, and each change of the
link is published once (DEVICE_DISCONNECTED, DEVICE_CONNECTED). The simulated phone drops with
SIM_DISCONNECT (or `SimDevice.disconnect`) and comes back by itself after `ms`."""

from __future__ import annotations

from .frontend import Event, FrontEnd, Stream, ok, refused, sim

LINK_EVENTS = ("DEVICE_CONNECTED", "DEVICE_DISCONNECTED")
REASON = "usb cable pulled"
LONG_MS = 600_000  # longer than any test: the phone comes back only when the test says so


async def link_events_until(stream: Stream, request_id: str) -> list[Event]:
    """The link events published before `request_id`'s TASK_COMPLETED (the stream also carries
    TASK_COMPLETED, so that a marker call shows nothing else came)."""
    seen: list[Event] = []
    while True:
        event = await stream.next()
        if event.event_type == "TASK_COMPLETED":
            if event.payload["request_id"] == request_id:
                return seen
            continue
        seen.append(event)


async def test_calls_fail_fast_while_the_phone_is_away(frontend: FrontEnd) -> None:
    dropped = await ok(frontend, "SIM_DISCONNECT", {"ms": str(LONG_MS), "reason": REASON})
    assert dropped == {"reason": REASON, "back_in_ms": LONG_MS, "via": "sim"}

    # Long timeouts, answered at once: nothing waits for a phone that is not there.
    tap = await frontend.execute("TAP", {"text": "Chrome"}, timeout_ms=30_000)
    assert tap.code == "DEVICE_UNAVAILABLE"
    assert REASON in tap.message and "TAP" in tap.message
    assert tap.duration_ms < 1_000
    send = await frontend.execute("SEND_MESSAGE", {"to": "alice", "body": "hi"}, timeout_ms=30_000)
    assert send.code == "DEVICE_UNAVAILABLE" and REASON in send.message
    assert send.duration_ms < 1_000
    # The scenario actions need the phone too.
    again = await frontend.execute("SIM_RECEIVE_SMS", {"from": "+1 555 0100", "body": "b"})
    assert again.code == "DEVICE_UNAVAILABLE"
    query = await refused(frontend.query("CONTACTS", {"name": "alice"}, timeout_ms=30_000))
    assert query.code == "DEVICE_UNAVAILABLE"
    assert query.message is not None and REASON in query.message

    # What needs no phone works as ever.
    remembered = await ok(frontend, "REMEMBER", {"name": "cable", "text": "the phone was away"})
    page = await frontend.query("MEMORY", {"id": remembered["id"]})
    assert [item["name"] for item in page.results] == ["cable"]

    sim(frontend).reconnect()
    assert (await ok(frontend, "TAP", {"text": "Chrome"}))["element"]["text"] == "Chrome"
    assert (await frontend.query("CONTACTS", {"name": "alice"})).total_count == 1


async def test_each_change_of_the_link_is_published_once(frontend: FrontEnd) -> None:
    stream = await frontend.subscribe((*LINK_EVENTS, "TASK_COMPLETED"))
    phone = sim(frontend)
    await ok(frontend, "SIM_DISCONNECT", {"ms": str(LONG_MS), "reason": REASON}, request_id="drop")
    phone.disconnect("and again")  # already down: nothing more to announce
    await ok(frontend, "REMEMBER", {"name": "marker 1"}, request_id="marker-1")
    assert [(e.event_type, e.payload) for e in await link_events_until(stream, "marker-1")] == [
        ("DEVICE_DISCONNECTED", {"device": "sim", "serial": "sim-0", "reason": REASON})
    ]
    phone.reconnect()
    phone.reconnect()  # already up
    await ok(frontend, "REMEMBER", {"name": "marker 2"}, request_id="marker-2")
    [back] = await link_events_until(stream, "marker-2")
    assert (back.event_type, back.payload) == (
        "DEVICE_CONNECTED",
        {"device": "sim", "serial": "sim-0", "model": "Pixel 8 (simulated)"},
    )
    assert back.source == "android.system"


async def test_the_simulated_phone_comes_back_by_itself(frontend: FrontEnd) -> None:
    stream = await frontend.subscribe(LINK_EVENTS)
    await ok(frontend, "SIM_DISCONNECT", {"ms": "200"})
    gone = await stream.next()
    assert gone.payload["reason"] == "simulated disconnection"
    failed = await frontend.execute("PRESS_KEY", {"key": "HOME"})
    assert failed.code == "DEVICE_UNAVAILABLE" and "simulated disconnection" in failed.message
    back = await stream.next()  # after 200 ms, with no further call
    assert back.event_type == "DEVICE_CONNECTED"
    assert (await ok(frontend, "PRESS_KEY", {"key": "HOME"}))["keycode"] == 3


async def test_sim_disconnect_needs_a_duration(frontend: FrontEnd) -> None:
    for params in ({}, {"ms": "0"}, {"ms": str(LONG_MS + 1)}, {"ms": "100", "reason": ""}):
        answer = await frontend.execute("SIM_DISCONNECT", params)
        assert answer.code == "INVALID_PARAMS", params
    assert sim(frontend).link.up
