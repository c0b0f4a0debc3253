"""Subscribe over gRPC: what only this wire has (HTTP/2 flow control), and the bus's overflow policy.

The runtime's contracts for Subscribe and the events (filters, replacement, task and approval
events) are in tests/contract/, run through every front end."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import grpc

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
