"""Subscribe and the events: filters, replacement per principal, fan-out, and the task events
that say what every Execute did and who asked."""

from __future__ import annotations

import pytest

from phoneuse_runtime.device.sim.device import SimDevice
from phoneuse_runtime.kernel.capabilities import EVERYTHING

from .frontend import (
    Event,
    FrontEnd,
    FrontEndFactory,
    Stream,
    caller,
    names_subscribers,
    names_tools,
    ok,
    refused,
    wire_text_only,
)


async def events_until_completed(stream: Stream, request_id: str) -> list[Event]:
    """The events up to and including `request_id`'s TASK_COMPLETED."""
    seen = [await stream.next()]
    while not (seen[-1].event_type == "TASK_COMPLETED" and seen[-1].payload["request_id"] == request_id):
        seen.append(await stream.next())
    return seen


async def task_events_until(stream: Stream, request_id: str) -> list[Event]:
    """The TASK_* events up to and including `request_id`'s TASK_COMPLETED."""
    return [e for e in await events_until_completed(stream, request_id) if e.event_type.startswith("TASK_")]


def summary(events: list[Event]) -> list[tuple[str, str]]:
    return [(e.event_type, e.payload["request_id"]) for e in events]


async def test_task_completed_after_every_execute(frontend: FrontEnd) -> None:
    names_tools(frontend)  # NOPE: an unknown tool never reaches the runtime
    stream = await frontend.subscribe(("TASK_COMPLETED",))
    await frontend.execute("SET_CLIPBOARD", {"text": "hi"}, request_id="e-1")
    await frontend.execute("NOPE", {}, request_id="e-2")
    first, second = await stream.next(), await stream.next()
    assert first.payload == {
        "request_id": "e-1",
        "action_type": "SET_CLIPBOARD",
        "success": True,
        "error": "",
        "duration_ms": first.payload["duration_ms"],
        "held_ms": 0,
        "caller": caller(frontend),
        "result_preview": '{"via":"sim","length":2,"verified":true}',
    }
    assert second.payload == {
        "request_id": "e-2",
        "action_type": "NOPE",
        "success": False,
        "error": "UNKNOWN_ACTION: no action 'NOPE' (`phoneuse-runtime actions` lists them)",
        "duration_ms": second.payload["duration_ms"],
        "held_ms": 0,
        "caller": caller(frontend),
        "result_preview": "",
    }
    for event in (first, second):
        assert event.timestamp > 1_600_000_000_000
        assert event.source == "phoneuse.runtime"


async def test_task_started_precedes_task_completed(frontend: FrontEnd) -> None:
    wire_text_only(frontend, "SET_ALARM", {"minute": "05"})  # the params as the wire's text
    stream = await frontend.subscribe(("TASK_STARTED", "TASK_COMPLETED"))
    answer = await frontend.execute(
        "SET_ALARM", {"hour": "7", "minute": "05", "days": "fri,MON"}, request_id="s-1"
    )
    started, completed = await task_events_until(stream, "s-1")
    assert started.event_type == "TASK_STARTED"
    assert started.payload == {
        "request_id": "s-1",
        "action_type": "SET_ALARM",
        "params": {"hour": "7", "minute": "05", "days": "fri,MON"},  # as sent, not as coerced
        "caller": caller(frontend),
    }
    assert started.source == "phoneuse.runtime"
    assert completed.payload["success"] is True
    assert completed.payload["duration_ms"] == answer.duration_ms


async def test_a_call_refused_before_its_handler_has_no_task_started(make_frontend: FrontEndFactory) -> None:
    device = SimDevice()
    device.capabilities = EVERYTHING - {"sim"}
    frontend = await make_frontend(device=device, deny_actions=frozenset({"PRESS_KEY"}))
    names_tools(frontend)  # NOPE: an unknown tool never reaches the runtime
    stream = await frontend.subscribe(("TASK_STARTED", "TASK_COMPLETED"))
    assert (await frontend.execute("NOPE", request_id="r-unknown")).code == "UNKNOWN_ACTION"
    assert (
        await frontend.execute("SET_CLIPBOARD", {"x": "1"}, request_id="r-params")
    ).code == "INVALID_PARAMS"
    assert (await frontend.execute("PRESS_KEY", {"key": "HOME"}, request_id="r-denied")).code == "DENIED"
    unsupported = await frontend.execute(
        "SIM_RECEIVE_SMS", {"from": "1", "body": "b"}, request_id="r-unsupported"
    )
    assert unsupported.code == "UNSUPPORTED"
    await ok(frontend, "DUMP_UI", request_id="marker")
    assert summary(await task_events_until(stream, "marker")) == [
        ("TASK_COMPLETED", "r-unknown"),
        ("TASK_COMPLETED", "r-params"),
        ("TASK_COMPLETED", "r-denied"),
        ("TASK_COMPLETED", "r-unsupported"),
        ("TASK_STARTED", "marker"),
        ("TASK_COMPLETED", "marker"),
    ]


async def test_replays_conflicts_and_malformed_requests_announce_nothing(frontend: FrontEnd) -> None:
    """Task events tell what the runtime did: a replay, a conflict and a malformed request did nothing."""
    stream = await frontend.subscribe(("TASK_STARTED", "TASK_COMPLETED"))
    await ok(frontend, "SET_CLIPBOARD", {"text": "a"}, request_id="once")
    assert summary(await task_events_until(stream, "once")) == [
        ("TASK_STARTED", "once"),
        ("TASK_COMPLETED", "once"),
    ]
    await ok(frontend, "SET_CLIPBOARD", {"text": "a"}, request_id="once")
    assert (await frontend.execute("DUMP_UI", request_id="once")).code == "CONFLICT"
    await refused(frontend.execute("DUMP_UI", request_id="bad", timeout_ms=0))
    await ok(frontend, "DUMP_UI", request_id="marker")
    assert summary(await task_events_until(stream, "marker")) == [
        ("TASK_STARTED", "marker"),
        ("TASK_COMPLETED", "marker"),
    ]


async def test_another_principal_sees_whose_call_it_was(frontend: FrontEnd) -> None:
    theirs = await frontend.subscribe(("TASK_STARTED", "TASK_COMPLETED"), principal="other")
    await ok(frontend, "SET_CLIPBOARD", {"text": "mine"}, request_id="mine")
    await ok(frontend, "DUMP_UI", request_id="theirs", principal="other")
    events = await task_events_until(theirs, "theirs")
    assert [(e.event_type, e.payload["request_id"], e.payload["caller"]) for e in events] == [
        ("TASK_STARTED", "mine", caller(frontend, "agent")),
        ("TASK_COMPLETED", "mine", caller(frontend, "agent")),
        ("TASK_STARTED", "theirs", caller(frontend, "other")),
        ("TASK_COMPLETED", "theirs", caller(frontend, "other")),
    ]


async def test_empty_event_types_means_all(frontend: FrontEnd) -> None:
    stream = await frontend.subscribe()
    await ok(frontend, "OPEN_APP", {"package": "com.google.android.deskclock"}, request_id="open")
    types = [event.event_type for event in await events_until_completed(stream, "open")]
    assert {"TASK_STARTED", "APP_STATE_CHANGED", "TASK_COMPLETED"} <= set(types)


async def test_device_events_have_documented_payloads(frontend: FrontEnd) -> None:
    stream = await frontend.subscribe(("APP_STATE_CHANGED", "MESSAGE_RECEIVED", "NOTIFICATION_POSTED"))
    await ok(frontend, "OPEN_APP", {"package": "com.android.chrome"})
    changed = await stream.next("APP_STATE_CHANGED")
    assert changed.payload["package"] == "com.android.chrome" and changed.payload["activity"]
    assert changed.payload["previous_package"]
    assert changed.source
    sms = await ok(frontend, "SIM_RECEIVE_SMS", {"from": "+14155550199", "body": "Running late 🚗"})
    received = await stream.next("MESSAGE_RECEIVED")
    assert received.payload == {
        "from": "+14155550199",
        "body": "Running late 🚗",
        "app": "com.google.android.apps.messaging",
        "thread_id": sms["thread_id"],
        "message_id": sms["message_id"],
    }
    posted = await ok(
        frontend, "SIM_POST_NOTIFICATION", {"package": "com.whatsapp", "title": "Ana", "text": "hey"}
    )
    note = await stream.next("NOTIFICATION_POSTED")
    while note.payload["key"] != posted["key"]:
        note = await stream.next("NOTIFICATION_POSTED")
    assert note.payload == {"package": "com.whatsapp", "title": "Ana", "text": "hey", "key": posted["key"]}
    assert note.source == "com.whatsapp"


async def test_filter_excludes_other_types(frontend: FrontEnd) -> None:
    stream = await frontend.subscribe(("MESSAGE_RECEIVED",))
    await ok(frontend, "SET_CLIPBOARD", {"text": "ignored"})
    await ok(frontend, "SIM_RECEIVE_SMS", {"from": "+15550001", "body": "only me"})
    event = await stream.next()
    assert event.event_type == "MESSAGE_RECEIVED"
    assert event.payload["body"] == "only me"


async def test_same_subscriber_id_replaces_the_old_stream(frontend: FrontEnd) -> None:
    names_subscribers(frontend)
    old = await frontend.subscribe(subscriber_id="agent-1")
    new = await frontend.subscribe(subscriber_id="agent-1")
    assert old.subscriber_id == new.subscriber_id == "agent-1"
    assert await old.ended()  # cleanly
    await ok(frontend, "SET_CLIPBOARD", {"text": "x"}, request_id="after")
    assert (await new.next("TASK_COMPLETED")).payload["request_id"] == "after"
    assert frontend.app.runtime.bus.subscriber_count == 1


async def test_subscriber_ids_are_scoped_per_principal(frontend: FrontEnd) -> None:
    """The same id under two principals names two live streams; neither replaces the other."""
    names_subscribers(frontend)
    mine = await frontend.subscribe(("TASK_COMPLETED",), subscriber_id="watcher")
    theirs = await frontend.subscribe(("TASK_COMPLETED",), subscriber_id="watcher", principal="other")
    await ok(frontend, "SET_CLIPBOARD", {"text": "x"}, request_id="both")
    assert (await mine.next()).payload["request_id"] == "both"
    assert (await theirs.next()).payload["request_id"] == "both"
    again = await frontend.subscribe(("TASK_COMPLETED",), subscriber_id="watcher", principal="other")
    assert await theirs.ended()
    await ok(frontend, "SET_CLIPBOARD", {"text": "y"}, request_id="later")
    assert (await mine.next()).payload["request_id"] == "later"
    assert (await again.next()).payload["request_id"] == "later"


async def test_an_anonymous_stream_gets_an_id_of_its_own(frontend: FrontEnd) -> None:
    names_subscribers(frontend)
    first, second = await frontend.subscribe(), await frontend.subscribe()
    assert first.subscriber_id and second.subscriber_id and first.subscriber_id != second.subscriber_id
    await ok(frontend, "SET_CLIPBOARD", {"text": "x"}, request_id="anon")
    for stream in (first, second):
        assert (await stream.next("TASK_COMPLETED")).payload["request_id"] == "anon"


async def test_stopping_the_app_ends_the_streams_cleanly(frontend: FrontEnd) -> None:
    stream = await frontend.subscribe(("TASK_COMPLETED",))
    await ok(frontend, "SET_CLIPBOARD", {"text": "x"}, request_id="last")
    await frontend.stop()
    assert (await stream.next()).payload["request_id"] == "last"  # queued events are delivered first
    assert await stream.ended()


@pytest.mark.parametrize("count", [1, 5])
async def test_fan_out_reaches_every_subscriber(frontend: FrontEnd, count: int) -> None:
    streams = [await frontend.subscribe(("TASK_COMPLETED",)) for _ in range(count)]
    await ok(frontend, "SET_CLIPBOARD", {"text": "fan"}, request_id=f"fan-{count}")
    for stream in streams:
        assert (await stream.next()).payload["request_id"] == f"fan-{count}"
