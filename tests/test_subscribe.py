"""Subscribe: filters, replacement, TASK_COMPLETED and friends, slow subscribers."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import grpc
import pytest

from phoneuse_runtime.events import CallerInfo, EventBus, TaskCompleted
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


async def test_task_completed_after_every_execute(client: Client) -> None:
    stream = await _open(client, "TASK_COMPLETED")
    await client.execute("SET_CLIPBOARD", {"text": "hi"}, request_id="e-1")
    await client.execute("NOPE", {}, request_id="e-2")
    first, second = await _next(stream), await _next(stream)
    one, two = json.loads(first.payload_json), json.loads(second.payload_json)
    assert one == {
        "request_id": "e-1",
        "action_type": "SET_CLIPBOARD",
        "success": True,
        "error": "",
        "duration_ms": one["duration_ms"],
        "held_ms": 0,
        "caller": {"frontend": "grpc", "principal": "agent"},
    }
    assert two["success"] is False and two["error"].startswith("UNKNOWN_ACTION")
    for event in (first, second):
        assert event.timestamp > 1_600_000_000_000
        assert event.source == "phoneuse.runtime"
    stream.cancel()


async def test_empty_event_types_means_all(client: Client) -> None:
    stream = await _open(client)
    await client.ok("OPEN_APP", {"package": "com.android.settings"})
    types = set()
    while "TASK_COMPLETED" not in types:
        types.add((await _next(stream)).event_type)
    assert "APP_STATE_CHANGED" in types
    stream.cancel()


async def test_device_events_have_documented_payloads(client: Client) -> None:
    stream = await _open(client, "APP_STATE_CHANGED", "MESSAGE_RECEIVED", "NOTIFICATION_POSTED")
    await client.ok("OPEN_APP", {"package": "com.android.chrome"})
    changed = await _next(stream, "APP_STATE_CHANGED")
    payload = json.loads(changed.payload_json)
    assert payload["package"] == "com.android.chrome" and payload["activity"]
    assert payload["previous_package"]
    assert changed.source
    sms = await client.ok("SIM_RECEIVE_SMS", {"from": "+14155550199", "body": "Running late 🚗"})
    received = json.loads((await _next(stream, "MESSAGE_RECEIVED")).payload_json)
    assert received == {
        "from": "+14155550199",
        "body": "Running late 🚗",
        "app": "com.google.android.apps.messaging",
        "thread_id": sms["thread_id"],
        "message_id": sms["message_id"],
    }
    posted = await client.ok(
        "SIM_POST_NOTIFICATION", {"package": "com.whatsapp", "title": "Ana", "text": "hey"}
    )
    note = await _next(stream, "NOTIFICATION_POSTED")
    while json.loads(note.payload_json)["key"] != posted["key"]:
        note = await _next(stream, "NOTIFICATION_POSTED")
    assert json.loads(note.payload_json) == {
        "package": "com.whatsapp",
        "title": "Ana",
        "text": "hey",
        "key": posted["key"],
    }
    assert note.source == "com.whatsapp"
    stream.cancel()


async def test_filter_excludes_other_types(client: Client) -> None:
    stream = await _open(client, "MESSAGE_RECEIVED")
    await client.ok("SET_CLIPBOARD", {"text": "ignored"})
    await client.ok("SIM_RECEIVE_SMS", {"from": "+15550001", "body": "only me"})
    event = await _next(stream)
    assert event.event_type == "MESSAGE_RECEIVED"
    stream.cancel()


async def test_same_subscriber_id_replaces_the_old_stream(client: Client) -> None:
    old = await _open(client, subscriber_id="agent-1")
    new = await _open(client, subscriber_id="agent-1")
    assert await asyncio.wait_for(old.read(), 10) is grpc.aio.EOF
    assert await old.code() == grpc.StatusCode.OK
    await client.ok("SET_CLIPBOARD", {"text": "x"})
    assert (await _next(new, "TASK_COMPLETED")).event_type == "TASK_COMPLETED"
    assert client.app.runtime.bus.subscriber_count == 1
    new.cancel()


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


@pytest.mark.parametrize("count", [1, 5])
async def test_fan_out_reaches_every_subscriber(client: Client, count: int) -> None:
    streams = [await _open(client, "TASK_COMPLETED") for _ in range(count)]
    await client.ok("SET_CLIPBOARD", {"text": "fan"}, request_id=f"fan-{count}")
    for stream in streams:
        assert json.loads((await _next(stream)).payload_json)["request_id"] == f"fan-{count}"
        stream.cancel()
