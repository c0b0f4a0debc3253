"""MEMORY's time bounds as a caller means them: the edges of the range are times (the attacks on the
memory's queries: tests/redteam/test_memory_queries.py)."""

from __future__ import annotations

from phoneuse_runtime.rpc import protocol_pb2 as pb

from ..conftest import Client


async def test_the_edges_of_the_range_are_times(client: Client) -> None:
    await client.ok("REMEMBER", {"name": "kept", "text": "x"})
    found, total, _ = await client.query(pb.MEMORY, {"since": "-62135510400000", "until": "253402214399999"})
    assert total == 1 and found[0]["name"] == "kept"
