"""Subscribe over gRPC: what only this wire has (HTTP/2 flow control), and the bus's overflow policy.

The runtime's contracts for Subscribe and the events (filters, replacement, task and approval
events) are in tests/contract/, run through every front end."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import grpc
import pytest

from phoneuse_runtime.kernel.events import (
    CallerInfo,
    ErrorEvent,
    Event,
    EventBus,
    TaskCompleted,
    result_preview,
)
from phoneuse_runtime.rpc import protocol_pb2 as pb
from phoneuse_runtime.rpc import protocol_pb2_grpc as pb_grpc

from .conftest import AUTH, Client, ServerFactory


async def _open(client: Client, *types: str, subscriber_id: str = "", stub: Any = None) -> Any:
    stream = (stub or client.stub).Subscribe(
        pb.SubscribeRequest(event_types=list(types), subscriber_id=subscriber_id), metadata=AUTH
    )
    await stream.initial_metadata()  # the subscription is live once headers arrive
    return stream


async def _next(stream: Any, event_type: str | None = None) -> pb.Event:
    while True:
        event: pb.Event = await asyncio.wait_for(stream.read(), 10)
        assert event is not grpc.aio.EOF
        if event_type is None or event.event_type == event_type:
            return event


async def test_stalled_subscriber_does_not_delay_a_live_one(make_client: ServerFactory) -> None:
    client = await make_client(event_queue_size=16)
    # A client that never reads, on a channel whose flow-control window stays at 64 KiB
    # (no BDP probing), so the server's writes stall and its queue overflows.
    slow_channel = grpc.aio.insecure_channel(
        f"127.0.0.1:{client.app.port}", options=[("grpc.http2.bdp_probe", 0)]
    )
    stalled = await _open(client, subscriber_id="stalled", stub=pb_grpc.AndroidRuntimeStub(slow_channel))
    live = await _open(client, "TASK_COMPLETED", subscriber_id="live")
    total = 300
    for batch in range(0, total, 50):
        await asyncio.gather(
            *(
                client.execute(
                    "SIM_POST_NOTIFICATION", {"package": "com.example", "title": "t" * 2000, "text": str(i)}
                )
                for i in range(batch, batch + 50)
            )
        )
    ids: set[str] = set()
    while len(ids) < total:
        event = await _next(live)
        ids.add(json.loads(event.payload_json)["request_id"])
    assert len(ids) == total
    # The stalled stream is intact, and what it missed it is told about when it reads again.
    while True:
        event = await _next(stalled)
        if event.event_type == "ERROR":
            assert json.loads(event.payload_json)["code"] == "EVENTS_DROPPED"
            break
    stalled.cancel()
    await slow_channel.close()
    live.cancel()


async def test_overflow_drops_oldest_and_tells_the_subscriber() -> None:
    bus = EventBus(queue_size=3)
    sub = bus.subscribe("slow", ())
    for i in range(10):
        bus.publish(
            TaskCompleted(
                request_id=str(i),
                action_type="X",
                success=True,
                error="",
                duration_ms=0,
                held_ms=0,
                caller=CallerInfo(frontend="test", principal="p"),
            ).to_event("t")
        )
    bus.close()
    events = [e async for e in sub]
    assert events[0].event_type == "ERROR"
    assert json.loads(events[0].payload_json) == {
        "code": "EVENTS_DROPPED",
        "message": "7 event(s) dropped: queue full",
    }
    assert [json.loads(e.payload_json)["request_id"] for e in events[1:]] == ["7", "8", "9"]


def _completed(action_type: str) -> Event:
    return TaskCompleted(
        request_id="r",
        action_type=action_type,
        success=True,
        error="",
        duration_ms=0,
        held_ms=0,
        caller=CallerInfo(frontend="test", principal="p"),
    ).to_event("t", subject=action_type)


async def test_a_narrowed_subscription_gets_only_its_subjects_and_costs_no_other_events() -> None:
    """An in-process consumer (the memory) wants TASK_COMPLETED of a few actions: the runtime
    builds none for the others while nobody else listens, and other types pass unnarrowed."""
    bus = EventBus()
    sub = bus.subscribe(
        "memory", ("TASK_COMPLETED", "MESSAGE_RECEIVED"), narrow={"TASK_COMPLETED": ["SEND_MESSAGE"]}
    )
    assert bus.interested("TASK_COMPLETED", "SEND_MESSAGE")
    assert not bus.interested("TASK_COMPLETED", "SET_CLIPBOARD")
    assert not bus.interested("TASK_COMPLETED")  # an event without a subject reaches nobody narrowed
    assert bus.interested("MESSAGE_RECEIVED")
    for action_type in ("SET_CLIPBOARD", "SEND_MESSAGE", "TAP"):
        bus.publish(_completed(action_type))
    bus.publish(Event("MESSAGE_RECEIVED", "{}", "t"))
    # A plain subscriber widens TASK_COMPLETED again, for itself only.
    everything = bus.subscribe("agent", ())
    assert bus.interested("TASK_COMPLETED", "SET_CLIPBOARD")
    bus.publish(_completed("TAP"))
    bus.unsubscribe(everything)
    assert not bus.interested("TASK_COMPLETED", "TAP")
    bus.close()
    got = [(e.event_type, e.subject) async for e in sub]
    assert got == [("TASK_COMPLETED", "SEND_MESSAGE"), ("MESSAGE_RECEIVED", "")]
    assert bus.subscriber_count == 0 and not bus.interested("MESSAGE_RECEIVED")


def test_a_subscription_narrows_only_types_it_names() -> None:
    with pytest.raises(ValueError, match="narrows only event types it names"):
        EventBus().subscribe("x", ("MESSAGE_RECEIVED",), narrow={"TASK_COMPLETED": ["TAP"]})


def test_result_previews_stay_short() -> None:
    assert result_preview('{"via":"sim"}') == '{"via":"sim"}'
    long_value = json.dumps({"via": "sim", "xml": "<a>" * 1000, "n": 1}, separators=(",", ":"))
    preview = result_preview(long_value)
    assert json.loads(preview) == {"via": "sim", "xml": ("<a>" * 1000)[:79] + "…", "n": 1}
    many = json.dumps({f"k{i}": i for i in range(500)})  # long without any long value
    assert len(result_preview(many)) == 512 and result_preview(many).endswith("…")
    assert len(result_preview("[" + "1," * 400 + "1]")) == 512


async def test_a_queue_is_bounded_in_bytes_and_the_newest_event_is_always_kept() -> None:
    bus = EventBus(queue_size=1000, queue_bytes=64 * 1024)
    sub = bus.subscribe("slow", ())
    for i in range(10):
        bus.publish(
            TaskCompleted(
                request_id=str(i),
                action_type="X",
                success=False,
                error="E: " + "x" * 30_000,  # about 30 KiB each: two fit
                duration_ms=0,
                held_ms=0,
                caller=CallerInfo(frontend="test", principal="p"),
            ).to_event("t")
        )
    assert sub.queued_bytes <= 64 * 1024
    bus.publish(ErrorEvent(code="BIG", message="y" * 200_000).to_event("t"))  # past the budget alone
    bus.close()
    events = [e async for e in sub]
    assert [e.event_type for e in events] == ["ERROR", "ERROR"]
    assert json.loads(events[0].payload_json)["message"] == "10 event(s) dropped: queue full"
    assert json.loads(events[1].payload_json)["code"] == "BIG"
    assert sub.queued_bytes == 0
