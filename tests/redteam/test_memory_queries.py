"""MEMORY's bounds, through gRPC Query: times past what a time can be, and `q`s past the words a
query may hold, are INVALID_ARGUMENT naming the limit; a heavy query never holds up a light one."""

from __future__ import annotations

import asyncio
import string
import threading
from collections.abc import Sequence

import grpc
import pytest

from phoneuse_runtime.kernel.limits import MEMORY_QUERY_WORDS
from phoneuse_runtime.memory import Memory
from phoneuse_runtime.memory.component import PROGRESS_STEPS
from phoneuse_runtime.rpc import protocol_pb2 as pb

from ..conftest import AUTH, Client

WAIT_S = 10.0  # how long a held query waits before the test fails (a hang, not a timing)


async def refused(client: Client, filters: dict[str, str]) -> str:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await client.stub.Query(
            pb.QueryRequest(query_type=pb.MEMORY, filters=filters), metadata=AUTH, timeout=30
        )
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT, info.value.details()
    return str(info.value.details())


@pytest.mark.parametrize("key", ["since", "until"])
@pytest.mark.parametrize("value", ["9" * 19, "-" + "9" * 19, "9" * 30, "-" + "9" * 30, "+" + "9" * 19])
async def test_times_past_int64_name_the_range(client: Client, key: str, value: str) -> None:
    """Hostile input: MEMORY since/until past int64, to crash the query."""
    details = await refused(client, {key: value})
    assert "out of range" in details or "expected" in details, details
    assert "0001-01-02" in details and "9999-12-30" in details, details


async def test_a_q_past_the_words_allowed_is_refused(client: Client) -> None:
    """Hostile input: a MEMORY q of more words than allowed, to stall the readers."""
    for q in (" ".join(["a"] * (MEMORY_QUERY_WORDS + 1)), " ".join("a" * 120_000)):
        details = await refused(client, {"q": q})
        assert f"at most {MEMORY_QUERY_WORDS} are allowed" in details, details
    found, _, _ = await client.query(pb.MEMORY, {"q": " ".join(["a"] * MEMORY_QUERY_WORDS)})
    assert isinstance(found, list)


async def test_slow_queries_do_not_hold_up_a_plain_one(client: Client) -> None:
    """An agent with a valid token runs slow MEMORY queries to hold up a plain one.

    Four slow queries are running or waiting (two held mid-work in the readers' progress
    handler, which the store calls while SQLite works) when `q=alice` comes: alice runs, and is
    answered, while they are all still in the middle of their work. Before, the readers served
    one query at a time each, so alice waited for two of them to end."""
    memory = client.app.component("memory")
    assert isinstance(memory, Memory)
    await client.ok("REMEMBER", {"kind": "person", "name": "Alice Liddell", "text": "alice"})
    for i in range(40):
        await client.ok("REMEMBER", {"name": f"note {i}", "text": " ".join(string.ascii_lowercase)})
    heavy = [" ".join(string.ascii_lowercase[i:] + string.ascii_lowercase[:i]) for i in range(4)]
    loop = asyncio.get_running_loop()
    two_held = asyncio.Event()
    alice_done = threading.Event()
    stuck: list[list[str]] = []
    held: set[str] = set()
    seen: list[tuple[str, ...]] = []

    def hold(labels: Sequence[str]) -> None:
        """A slow query waits here, in the middle of its work, until alice waits for a reader
        (or is answered)."""
        seen.append(tuple(labels))
        if labels[-1] not in heavy or alice_done.is_set():
            return
        if labels[-1] not in held:
            held.add(labels[-1])
            if len(held) == 2:
                loop.call_soon_threadsafe(two_held.set)
        with memory.arrived:
            ready = memory.arrived.wait_for(
                lambda: alice_done.is_set() or "alice" in memory.waiting_labels(), WAIT_S
            )
        if not ready:
            stuck.append(list(labels))

    memory.slice_steps = PROGRESS_STEPS  # a read lets the waiting ones go at each call
    memory.progress_hook = hold
    try:
        slow = [asyncio.ensure_future(client.query(pb.MEMORY, {"q": q})) for q in heavy]
        await asyncio.wait_for(two_held.wait(), WAIT_S)  # both readers are busy with slow ones
        found, _, _ = await client.query(pb.MEMORY, {"q": "alice"})
        with memory.arrived:
            alice_done.set()
            memory.arrived.notify_all()
        results = await asyncio.gather(*slow)
    finally:
        memory.progress_hook = None
    assert [r["name"] for r in found] == ["Alice Liddell"]
    assert stuck == []
    # alice ran on a reader thread while slow queries were in the middle of their work there.
    assert any(labels[-1] == "alice" and labels[0] in heavy for labels in seen), set(seen)
    assert all(total == 40 for _, total, _ in results)
