"""Assembles the gRPC server: the AndroidRuntime servicer (which checks tokens), health and reflection."""

from __future__ import annotations

import logging

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from ..runtime import Runtime
from . import protocol_pb2 as pb
from . import protocol_pb2_grpc as pb_grpc
from .auth import BearerAuth
from .servicer import AndroidRuntimeServicer

log = logging.getLogger(__name__)

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["AndroidRuntime"].full_name
MAX_MESSAGE_BYTES = 4 * 1024 * 1024


async def start_server(runtime: Runtime, address: str, *, token: str) -> tuple[grpc.aio.Server, int]:
    """Builds and starts the server on `address` ("HOST:PORT"; port 0 picks a free one).

    Returns the started server and the port it listens on."""
    auth = BearerAuth(token)
    server = grpc.aio.server(
        options=[
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.so_reuseport", 0),
        ],
    )
    pb_grpc.add_AndroidRuntimeServicer_to_server(AndroidRuntimeServicer(runtime, auth), server)
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
