"""A phone left alone on `--device termux` (issue 17): with the memory feeding itself (its
default) and nobody subscribed from outside, no termux-* command runs; the memory catches up
when it is asked."""

from __future__ import annotations

from phoneuse_runtime.memory import Memory
from phoneuse_runtime.rpc import protocol_pb2 as pb
from tests.conftest import Client
from tests.device.termux.conftest import TermuxServe
from tests.device.termux.test_e2e_events import _device
from tests.fakes.termux.state import FakeTermux
from tests.waiting import wait_until


async def _settled(client: Client) -> None:
    memory = client.app.component("memory")
    assert isinstance(memory, Memory)
    await memory.settled()  # the start-up sync has read the providers


async def test_nobody_subscribed_no_termux_command_runs(
    serve_termux: TermuxServe, termux: FakeTermux
) -> None:
    client = await serve_termux(memory_ingest=True, poll_ms=50)
    pollers = _device(client).pollers
    assert pollers is not None
    await _settled(client)
    runs = len(termux.state()["runs"])
    ticks = pollers.ticks
    await wait_until(lambda: pollers.ticks >= ticks + 10)  # ten poll intervals
    assert termux.state()["runs"][runs:] == [] and pollers.polls == 0


async def test_memory_finds_an_sms_that_arrived_while_nobody_listened(
    serve_termux: TermuxServe, termux: FakeTermux
) -> None:
    client = await serve_termux(memory_ingest=True, poll_ms=50)
    await _settled(client)
    termux.receive_sms("+14155550123", "the blue bicycle is ready for pickup")
    found, total, _ = await client.query(pb.QueryType.MEMORY, {"q": "bicycle pickup"})
    assert total >= 1 and any("blue bicycle" in r["text"] for r in found), found
