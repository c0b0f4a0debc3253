"""Every AndroidRuntime method needs the bearer token; health and reflection do not."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from phoneuse_runtime.rpc import protocol_pb2 as pb

from .conftest import TOKEN, Client

REQUEST = pb.ActionRequest(
    action_type="SET_CLIPBOARD", params={"text": "x"}, request_id="r1", timeout_ms=1000
)


@pytest.mark.parametrize(
    "metadata",
    [
        (),
        (("authorization", "Bearer wrong"),),
        (("authorization", TOKEN),),  # no scheme
        (("authorization", f"Basic {TOKEN}"),),
        (("authorization", f"Bearer {TOKEN}x"),),
        (("authorization", "Bearer "),),
    ],
    ids=["missing", "wrong", "no-scheme", "basic", "longer", "empty"],
)
async def test_execute_rejects_bad_tokens(client: Client, metadata: tuple[tuple[str, str], ...]) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await client.stub.Execute(REQUEST, metadata=metadata)
    assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
    # Nothing ran: the clipboard is still empty.
    assert (await client.app.runtime.device.get_clipboard()) == ""


async def test_query_and_subscribe_need_the_token(client: Client) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await client.stub.Query(pb.QueryRequest(query_type=pb.CONTACTS))
    assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
    stream = client.stub.Subscribe(pb.SubscribeRequest(), metadata=(("authorization", "Bearer nope"),))
    with pytest.raises(grpc.aio.AioRpcError) as info:
        async for _ in stream:
            pass
    assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED


async def test_bearer_scheme_is_case_insensitive(client: Client) -> None:
    response = await client.stub.Execute(REQUEST, metadata=(("authorization", f"bearer {TOKEN}"),))
    assert response.success


async def test_health_needs_no_token(client: Client) -> None:
    health = health_pb2_grpc.HealthStub(client.channel)
    for service in ("", "ai.lemon.phoneuse.mcpserver.protocol.AndroidRuntime"):
        reply = await health.Check(health_pb2.HealthCheckRequest(service=service))
        assert reply.status == health_pb2.HealthCheckResponse.SERVING


async def test_reflection_lists_the_service_without_a_token(client: Client) -> None:
    stub = reflection_pb2_grpc.ServerReflectionStub(client.channel)

    async def one() -> AsyncIterator[reflection_pb2.ServerReflectionRequest]:
        yield reflection_pb2.ServerReflectionRequest(list_services="")

    names: list[str] = []
    async for reply in stub.ServerReflectionInfo(one()):
        names += [s.name for s in reply.list_services_response.service]
    assert "ai.lemon.phoneuse.mcpserver.protocol.AndroidRuntime" in names
    assert "grpc.health.v1.Health" in names


def test_server_refuses_to_start_without_a_token() -> None:
    from phoneuse_runtime.rpc.server import GrpcServer

    with pytest.raises(ValueError, match="token is required"):
        GrpcServer("127.0.0.1:0", tokens={"agent": ""})
    with pytest.raises(ValueError, match="token is required"):
        GrpcServer("127.0.0.1:0", tokens={})


async def test_tokens_never_reach_the_log(client: Client, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("DEBUG")
    presented = "Bearer presented-secret-value"
    with pytest.raises(grpc.aio.AioRpcError):
        await client.stub.Execute(REQUEST, metadata=(("authorization", presented),))
    await client.stub.Execute(REQUEST, metadata=(("authorization", f"Bearer {TOKEN}"),))
    assert "rejected a call" in caplog.text
    assert "presented-secret-value" not in caplog.text
    assert TOKEN not in caplog.text


async def test_every_android_runtime_method_requires_the_token(client: Client) -> None:
    """Walks the service descriptor, so a method added later cannot skip the check."""
    service = pb.DESCRIPTOR.services_by_name["AndroidRuntime"]
    assert {m.name for m in service.methods} == {"Execute", "Query", "Subscribe"}
    for method in service.methods:
        path = f"/{service.full_name}/{method.name}"
        request = pb.DESCRIPTOR.message_types_by_name[method.input_type.name]
        payload = getattr(pb, request.name)().SerializeToString()
        if method.server_streaming:
            stream = client.channel.unary_stream(path)(payload, metadata=(("authorization", "Bearer x"),))
            with pytest.raises(grpc.aio.AioRpcError) as info:
                async for _ in stream:
                    pass
        else:
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await client.channel.unary_unary(path)(payload)
        assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED, method.name
