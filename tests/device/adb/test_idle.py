"""A phone left alone (issue 17): with the memory feeding itself (its default) and nobody
subscribed from outside, the adb backend opens no stream to the phone; a Subscribe stream makes
it poll, and it stops once the stream ends; the memory catches up when it is asked."""

from __future__ import annotations

import asyncio
import time

from phoneuse_runtime.device.adb.device import AdbDevice
from phoneuse_runtime.device.adb.events import Pollers
from phoneuse_runtime.memory import Filters, Memory
from phoneuse_runtime.rpc import protocol_pb2 as pb
from tests.device.adb.conftest import AdbServe, Served
from tests.device.adb.test_e2e_faults import Events
from tests.waiting import wait_until

POLLED = ["MESSAGE_RECEIVED", "NOTIFICATION_POSTED", "APP_STATE_CHANGED"]


def _pollers(s: Served) -> Pollers:
    device = s.client.app.runtime.device
    assert isinstance(device, AdbDevice) and device._pollers is not None
    return device._pollers


async def _settled(s: Served) -> None:
    memory = s.client.app.component("memory")
    assert isinstance(memory, Memory)
    await memory.settled()  # the start-up sync has read the providers


async def test_nobody_subscribed_no_stream_is_opened(serve_adb: AdbServe) -> None:
    s = await serve_adb(memory_ingest=True, poll_ms=50)
    pollers = _pollers(s)
    await wait_until(lambda: pollers.ticks >= 1)
    await _settled(s)
    opened = len(s.opened())
    ticks = pollers.ticks
    await wait_until(lambda: pollers.ticks >= ticks + 10)  # ten poll intervals
    assert s.opened()[opened:] == [] and pollers.polls == 0


async def test_polling_starts_with_a_subscriber_and_stops_when_it_leaves(serve_adb: AdbServe) -> None:
    s = await serve_adb(memory_ingest=True, poll_ms=50)
    pollers = _pollers(s)
    await _settled(s)
    events = Events(s.client, POLLED)
    await wait_until(lambda: pollers.polls >= 2)
    assert len(s.opened()) > 0
    events.close()
    bus = s.client.app.runtime.bus
    await wait_until(lambda: not any(bus.demanded(t) for t in POLLED))
    stopped_at = pollers.ticks + 1  # a tick under way may still finish its poll
    await wait_until(lambda: pollers.ticks >= stopped_at + 1)
    opened, polls = len(s.opened()), pollers.polls
    await wait_until(lambda: pollers.ticks >= stopped_at + 10)
    assert len(s.opened()) == opened and pollers.polls == polls


async def test_memory_finds_an_sms_that_arrived_while_nobody_listened(serve_adb: AdbServe) -> None:
    s = await serve_adb(memory_ingest=True, poll_ms=50)
    await _settled(s)
    s.state.receive_sms("+14155550123", "the blue bicycle is ready for pickup")
    found, total, _ = await s.client.query(pb.QueryType.MEMORY, {"q": "bicycle pickup"})
    assert total >= 1
    assert any("blue bicycle" in r["text"] for r in found), found


async def test_the_memory_catches_up_on_its_own_at_its_cadence(serve_adb: AdbServe) -> None:
    s = await serve_adb(memory_ingest=True, memory_catch_up_s=1, poll_ms=50)
    await _settled(s)
    memory = s.client.app.component("memory")
    assert isinstance(memory, Memory)
    s.state.receive_sms("+14155550123", "the red kite flies at noon")
    # No query (MEMORY would catch up first): the store is read directly until the timer's
    # catch-up has stored the SMS; nobody subscribed, so no poll found it.
    give_up = time.monotonic() + 10
    while not len(await memory.search(Filters(q="kite noon"), lambda node, _score: node)):
        assert time.monotonic() < give_up, "the timed catch-up never came"
        await asyncio.sleep(0.05)  # a visible poll of the store, not a wait for an outcome
    assert _pollers(s).polls == 0
