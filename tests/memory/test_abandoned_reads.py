"""Reads nobody waits for any more: the memory drops or stops them, so a read never waits behind
work whose caller is gone (issue 25, item 12), and a query never waits for the memory to catch up
with the phone past half the time it has."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence

import grpc
import pytest

from phoneuse_runtime.device.base import SmsFilter, SmsMessage
from phoneuse_runtime.device.sim.device import SimDevice
from phoneuse_runtime.memory import Memory
from phoneuse_runtime.memory.component import READERS
from phoneuse_runtime.memory.store import Graph
from phoneuse_runtime.rpc import protocol_pb2 as pb

from ..conftest import AUTH, ServerFactory
from ..waiting import wait_until

# A read that never ends by itself: a recursive count without a limit.
ENDLESS = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"


def _endless(graph: Graph) -> object:
    return graph.conn.execute(ENDLESS).fetchone()


async def test_a_read_whose_caller_gave_up_is_interrupted_and_frees_its_reader(
    make_client: ServerFactory,
) -> None:
    client = await make_client()
    memory = client.app.component("memory")
    assert isinstance(memory, Memory)
    busy: set[str] = set()

    def seen(labels: Sequence[str]) -> None:
        busy.update(labels)

    memory.progress_hook = seen
    stuck = [asyncio.ensure_future(memory.read(_endless, label=f"endless {i}")) for i in range(READERS)]
    await wait_until(lambda: len(busy) == READERS)  # every reader is in an endless read
    waiting = asyncio.ensure_future(memory.read(_endless, label="never started"))
    for task in [*stuck, waiting]:
        task.cancel()
    await asyncio.gather(*stuck, waiting, return_exceptions=True)
    memory.progress_hook = None
    # Both readers are free again: a read runs on each at once, none lent a slice of an endless one.
    both = threading.Barrier(READERS)

    def meet(_graph: Graph) -> bool:
        both.wait(timeout=60)  # broken (an error) unless every reader runs one of these at once
        return True

    assert await asyncio.gather(*(memory.read(meet) for _ in range(READERS))) == [True] * READERS
    assert "never started" not in busy
    # And the memory stops: no reader thread is left in a read (the pool's shutdown waits for them).
    await memory.stop(grace_s=0)


class SmsNeverAnswers(SimDevice):
    """A simulated phone whose SMS provider stops answering (a content query that hangs), once
    `stalled` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.stalled = False
        self.released = asyncio.Event()

    async def sms_messages(self, where: SmsFilter = SmsFilter()) -> list[SmsMessage]:
        if self.stalled:
            await self.released.wait()
        return await super().sms_messages(where)


async def test_a_query_waits_for_the_catch_up_only_half_the_time_it_has(make_client: ServerFactory) -> None:
    """The phone's SMS never answers: the query answers from what is stored, before its deadline."""
    device = SmsNeverAnswers()
    client = await make_client(device=device, memory_ingest=True)
    memory = client.app.component("memory")
    assert isinstance(memory, Memory)
    await memory.settled()
    await client.ok("REMEMBER", {"name": "kept", "text": "x"})
    device.stalled = True
    try:
        response = await client.stub.Query(
            pb.QueryRequest(query_type=pb.MEMORY, filters={"name": "kept"}, limit=5),
            metadata=AUTH,
            timeout=2,
        )
    except grpc.aio.AioRpcError as exc:  # before: the catch-up's 5 s wait outlived the deadline
        pytest.fail(f"the query waited for the phone past its deadline: {exc.code()} {exc.details()}")
    finally:
        device.released.set()
    assert response.total_count == 1
