"""Actions that drive the phone take turns; looking at it does not wait."""

from __future__ import annotations

import asyncio
import json

from phoneuse_runtime.rpc import protocol_pb2 as pb

from .conftest import AUTH, Client


async def _until_held(client: Client) -> None:
    """Yields to the event loop (no timed sleep) until an action holds the phone."""
    lock = client.app.runtime.device_lock
    while not lock.locked():
        await asyncio.sleep(0)


async def test_phone_actions_run_one_at_a_time_in_order(client: Client) -> None:
    stream = client.stub.Subscribe(pb.SubscribeRequest(event_types=["TASK_COMPLETED"]), metadata=AUTH)
    await stream.initial_metadata()
    press = asyncio.create_task(
        client.execute("LONG_PRESS", {"x": "540", "y": "1200", "duration_ms": "800"}, request_id="first")
    )
    await asyncio.wait_for(_until_held(client), 10)
    tap = asyncio.create_task(client.execute("PRESS_KEY", {"key": "HOME"}, request_id="second"))
    look = await client.execute("DUMP_UI", request_id="look")  # does not queue behind the press
    assert look.success
    assert not press.done()
    assert (await press).success and (await tap).success
    order: list[str] = []
    while len(order) < 3:
        event = await asyncio.wait_for(stream.read(), 10)
        order.append(json.loads(event.payload_json)["request_id"])
    assert order == ["look", "first", "second"]
    stream.cancel()


async def test_waiting_for_the_phone_counts_against_the_deadline(client: Client) -> None:
    press = asyncio.create_task(
        client.execute("LONG_PRESS", {"x": "540", "y": "1200", "duration_ms": "2000"})
    )
    await asyncio.wait_for(_until_held(client), 10)
    queued = await client.execute("PRESS_KEY", {"key": "HOME"}, timeout_ms=150)
    assert queued.error.startswith("TIMEOUT: ")
    assert queued.duration_ms < 1500
    assert (await press).success
