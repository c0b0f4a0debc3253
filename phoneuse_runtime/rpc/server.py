"""Assembles the gRPC server: token auth, the AndroidRuntime servicer, health and reflection."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from ..runtime import Runtime
from ..tokens import hash_token, token_matches
from . import protocol_pb2 as pb
from . import protocol_pb2_grpc as pb_grpc
from .servicer import AndroidRuntimeServicer

log = logging.getLogger(__name__)

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["AndroidRuntime"].full_name
# Health checks and reflection answer without a token, as load balancers and grpcurl expect.
OPEN_PREFIXES = (
    "/grpc.health.v1.Health/",
    "/grpc.reflection.v1alpha.ServerReflection/",
    "/grpc.reflection.v1.",
)
MAX_MESSAGE_BYTES = 4 * 1024 * 1024
BEARER = "bearer "


def _deny(handler: grpc.RpcMethodHandler, message: str) -> grpc.RpcMethodHandler:
    async def abort(request: Any, context: grpc.aio.ServicerContext) -> None:
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, message)

    if handler.request_streaming and handler.response_streaming:
        return grpc.stream_stream_rpc_method_handler(abort)
    if handler.request_streaming:
        return grpc.stream_unary_rpc_method_handler(abort)
    if handler.response_streaming:
        return grpc.unary_stream_rpc_method_handler(abort)
    return grpc.unary_unary_rpc_method_handler(abort)


class TokenAuthInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Requires `authorization: Bearer <token>` on every method outside OPEN_PREFIXES."""

    def __init__(self, token: str) -> None:
        self._hash = hash_token(token)

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(details)
        if handler is None or details.method.startswith(OPEN_PREFIXES):
            return handler
        presented = ""
        for key, value in details.invocation_metadata or ():
            if key == "authorization":
                presented = value if isinstance(value, str) else value.decode("latin-1")
                break
        if not presented:
            return _deny(handler, "missing authorization metadata (expected 'Bearer <token>')")
        if presented[: len(BEARER)].lower() != BEARER or not token_matches(
            presented[len(BEARER) :], self._hash
        ):
            log.warning("rejected a call to %s: bad token", details.method)
            return _deny(handler, "invalid token")
        return handler


async def start_server(runtime: Runtime, address: str, *, token: str) -> tuple[grpc.aio.Server, int]:
    """Builds and starts the server on `address` ("HOST:PORT"; port 0 picks a free one).

    Returns the started server and the port it listens on."""
    if not token:
        raise ValueError("a token is required, even on loopback")
    server = grpc.aio.server(
        interceptors=[TokenAuthInterceptor(token)],
        options=[
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.so_reuseport", 0),
        ],
    )
    pb_grpc.add_AndroidRuntimeServicer_to_server(AndroidRuntimeServicer(runtime), server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection((SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server)
    try:
        port = server.add_insecure_port(address)
    except RuntimeError as exc:  # grpc's way of saying the bind failed
        raise OSError(f"cannot listen on {address}: the address is in use or not available") from exc
    if port == 0:
        raise OSError(f"cannot listen on {address}")
    await server.start()
    await health_servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    await health_servicer.set(SERVICE_NAME, health_pb2.HealthCheckResponse.SERVING)
    return server, port
