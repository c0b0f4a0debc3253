"""A gRPC client that relays for a front end (`x-phoneuse-frontend`, rpc/frontends.py), against a
real `serve` subprocess: the attached `phoneuse-runtime mcp` (the official SDK's stdio client)
makes calls the server names `mcp:agent`; any other value is refused before anything runs; the
principal and the idempotency scope stay the token's."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import grpc
import pytest

from phoneuse_runtime.rpc import protocol_pb2 as pb
from phoneuse_runtime.rpc import protocol_pb2_grpc as pb_grpc
from phoneuse_runtime.rpc.frontends import FRONTEND_KEY

from ..serving import ServeProcess, start_serve
from .test_stdio import spawned


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    s = start_serve(tmp_path_factory.mktemp("relayed") / "data")
    yield s
    s.proc.terminate()
    s.proc.wait(timeout=30)


@asynccontextmanager
async def stub_of(served: ServeProcess) -> AsyncIterator[pb_grpc.AndroidRuntimeStub]:
    async with grpc.aio.insecure_channel(served.address) as channel:
        yield pb_grpc.AndroidRuntimeStub(channel)


def auth(served: ServeProcess, *extra: tuple[str, str]) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {served.token}"), *extra)


class Tasks:
    """TASK_STARTED events from a live Subscribe stream of the server's, by request_id."""

    def __init__(self, call: Any) -> None:
        self.call = call
        self.seen: dict[str, dict[str, Any]] = {}

    async def until(self, request_id: str) -> dict[str, Any]:
        async def read() -> dict[str, Any]:
            while request_id not in self.seen:
                event = await self.call.read()
                assert event is not grpc.aio.EOF
                payload = json.loads(event.payload_json)
                self.seen[payload["request_id"]] = payload
            return self.seen[request_id]

        return await asyncio.wait_for(read(), 20)


@asynccontextmanager
async def tasks(stub: pb_grpc.AndroidRuntimeStub, served: ServeProcess) -> AsyncIterator[Tasks]:
    call = stub.Subscribe(pb.SubscribeRequest(event_types=["TASK_STARTED"]), metadata=auth(served))
    await asyncio.wait_for(call.initial_metadata(), 20)  # the subscription is live
    try:
        yield Tasks(call)
    finally:
        call.cancel()


def alarm(request_id: str, minute: int = 7) -> pb.ActionRequest:
    return pb.ActionRequest(
        action_type="SET_ALARM",
        params={"hour": "6", "minute": str(minute)},
        request_id=request_id,
        timeout_ms=10_000,
    )


async def test_an_attached_mcp_client_s_calls_carry_the_mcp_caller(served: ServeProcess) -> None:
    async with stub_of(served) as stub, tasks(stub, served) as seen:
        async with spawned(served.data_dir) as client:
            done = await client.call_tool("set_alarm", {"hour": 6, "minute": 5, "request_id": "via-mcp-1"})
            assert not done.is_error, done.content
        started = await seen.until("via-mcp-1")
        assert started["action_type"] == "SET_ALARM"
        assert started["caller"] == {"frontend": "mcp", "principal": "agent"}
        # A plain gRPC call of the same token is still `grpc:agent`.
        plain = await stub.Execute(alarm("via-grpc-1"), metadata=auth(served))
        assert plain.success, plain.error
        assert (await seen.until("via-grpc-1"))["caller"] == {"frontend": "grpc", "principal": "agent"}


async def test_a_retry_across_front_ends_is_the_same_call_of_the_principal(served: ServeProcess) -> None:
    """Idempotency stays scoped by principal: the same request_id from the attached MCP face and
    from a plain gRPC client of the same token is one call, replayed, and CONFLICT with other params."""
    async with stub_of(served) as stub, tasks(stub, served) as seen:
        async with spawned(served.data_dir) as client:
            first = await client.call_tool("set_alarm", {"hour": 6, "minute": 7, "request_id": "shared-2"})
            assert not first.is_error, first.content
        assert (await seen.until("shared-2"))["caller"]["frontend"] == "mcp"
        again = await stub.Execute(alarm("shared-2", minute=7), metadata=auth(served))
        assert again.success, again.error
        assert json.loads(again.result_json) == first.structured_content
        other = await stub.Execute(alarm("shared-2", minute=8), metadata=auth(served))
        assert not other.success and other.error.startswith("CONFLICT: "), other.error
        # The replay started nothing: the next TASK_STARTED is the next call's.
        marker = await stub.Execute(alarm("after-shared-2"), metadata=auth(served))
        assert marker.success
        await seen.until("after-shared-2")
        assert list(seen.seen) == ["shared-2", "after-shared-2"]


@pytest.mark.parametrize("value", ["gateway", "grpc", "MCP", "", "x" * 200])
async def test_an_unknown_front_end_is_invalid_argument_and_nothing_runs(
    served: ServeProcess, value: str
) -> None:
    request_id = f"bad-frontend-{len(value)}-{value[:8]}"
    async with stub_of(served) as stub, tasks(stub, served) as seen:
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await stub.Execute(alarm(request_id), metadata=auth(served, (FRONTEND_KEY, value)))
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        details = refused.value.details() or ""
        assert details.startswith(f"BAD_REQUEST: {FRONTEND_KEY} ") and "known: mcp" in details
        assert len(details) < 200  # a long value is not echoed whole
        marker = f"after-{request_id}"
        assert (await stub.Execute(alarm(marker), metadata=auth(served))).success
        await seen.until(marker)
        assert request_id not in seen.seen
        # The same request_id is still free: nothing was stored for it.
        retried = await stub.Execute(alarm(request_id), metadata=auth(served))
        assert retried.success
        assert (await seen.until(request_id))["caller"]["frontend"] == "grpc"


async def test_query_and_subscribe_check_the_front_end_too(served: ServeProcess) -> None:
    bad = auth(served, (FRONTEND_KEY, "gateway"))
    async with stub_of(served) as stub:
        with pytest.raises(grpc.aio.AioRpcError) as query:
            await stub.Query(pb.QueryRequest(query_type=pb.QueryType.Value("CONTACTS")), metadata=bad)
        assert query.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        stream = stub.Subscribe(pb.SubscribeRequest(), metadata=bad)
        with pytest.raises(grpc.aio.AioRpcError) as subscribe:
            await stream.read()
        assert subscribe.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        # Sent twice, every entry must name a known front end.
        twice = auth(served, (FRONTEND_KEY, "mcp"), (FRONTEND_KEY, "gateway"))
        with pytest.raises(grpc.aio.AioRpcError) as doubled:
            await stub.Query(pb.QueryRequest(query_type=pb.QueryType.Value("CONTACTS")), metadata=twice)
        assert doubled.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "'gateway'" in (doubled.value.details() or "")
        same = auth(served, (FRONTEND_KEY, "mcp"), (FRONTEND_KEY, "mcp"))
        page = await stub.Query(pb.QueryRequest(query_type=pb.QueryType.Value("CONTACTS")), metadata=same)
        assert page.total_count >= 0


async def test_the_token_is_checked_before_the_front_end(served: ServeProcess) -> None:
    """Metadata never names the principal, and a caller without the token learns nothing of it."""
    async with stub_of(served) as stub:
        for metadata in (
            (("authorization", "Bearer wrong"), (FRONTEND_KEY, "mcp")),
            (("authorization", "Bearer wrong"), (FRONTEND_KEY, "nonsense")),
            ((FRONTEND_KEY, "mcp"),),
        ):
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await stub.Execute(alarm("no-token"), metadata=metadata)
            assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
