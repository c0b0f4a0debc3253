"""MEMORY's bounds, through gRPC Query: times past what a time can be, and `q`s past the words a
query may hold, are INVALID_ARGUMENT naming the limit; a heavy query never holds up a light one."""

from __future__ import annotations

import grpc
import pytest

from phoneuse_runtime.rpc import protocol_pb2 as pb

from ..conftest import AUTH, Client


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
    details = await refused(client, {key: value})
    assert "out of range" in details or "expected" in details, details
    assert "0001-01-02" in details and "9999-12-30" in details, details


async def test_the_edges_of_the_range_are_times(client: Client) -> None:
    await client.ok("REMEMBER", {"name": "kept", "text": "x"})
    found, total, _ = await client.query(pb.MEMORY, {"since": "-62135510400000", "until": "253402214399999"})
    assert total == 1 and found[0]["name"] == "kept"
