"""Query over gRPC: what only this wire has (its enum, its deadline), and what its enum cannot reach.

The runtime's contracts for Query (paging, limits, filters, policies, holds, capabilities) are
in tests/contract/, run through every front end."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from phoneuse_runtime.kernel.callers import Caller
from phoneuse_runtime.kernel.errors import RuntimeFailure
from phoneuse_runtime.kernel.params import Params
from phoneuse_runtime.kernel.policies import PolicyCall
from phoneuse_runtime.kernel.registry import QueryContext, QueryResult, QuerySpec
from phoneuse_runtime.kernel.runtime import QueryCall
from phoneuse_runtime.rpc import protocol_pb2 as pb

from .conftest import AUTH, Client, ServerFactory
from .extras import Extra


async def test_a_query_type_outside_the_enum_is_invalid_argument(client: Client) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await client.stub.Query(pb.QueryRequest(query_type=99), metadata=AUTH)  # type: ignore[arg-type]
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert info.value.details() == (
        "BAD_REQUEST: query_type QUERY_TYPE_UNSPECIFIED is not served; use APP_STATE, CONTACTS, MEMORY"
    )


class DeadlineSeen:
    """Records each call's runtime deadline (loop time; the client shares the loop)."""

    name = "deadline-seen"

    def __init__(self) -> None:
        self.deadlines: list[float] = []

    async def check(self, call: PolicyCall) -> None:
        self.deadlines.append(call.deadline)


async def test_a_querys_runtime_deadline_comes_before_the_rpcs(make_client: ServerFactory) -> None:
    seen = DeadlineSeen()
    client = await make_client(policies=[seen])
    rpc_deadline = asyncio.get_running_loop().time() + 1.0  # no later than the client's own
    await client.stub.Query(pb.QueryRequest(query_type=pb.MEMORY), metadata=AUTH, timeout=1.0)
    [deadline] = seen.deadlines
    assert deadline < rpc_deadline - 0.01  # room for the runtime's answer to travel back


class Crash(BaseException):
    """Neither an Exception nor a cancellation."""


async def crash(ctx: QueryContext, f: Params) -> list[QueryResult]:
    raise Crash


async def test_a_base_exception_from_a_query_handler_is_internal(make_client: ServerFactory) -> None:
    """On the runtime directly: gRPC's QueryType enum cannot name a component's query."""
    extra = Extra(queries=[QuerySpec("CRASHING", Params, crash, QueryResult, "raises a BaseException")])
    client = await make_client(components=[extra])
    with pytest.raises(RuntimeFailure) as info:
        await client.app.runtime.query(Caller("test", "agent"), QueryCall("CRASHING", {}, 0, 5.0))
    assert info.value.wire() == "INTERNAL: CRASHING query failed unexpectedly; see the server log"
