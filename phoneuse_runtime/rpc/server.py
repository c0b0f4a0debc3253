"""The gRPC front end as a component: the AndroidRuntime servicer (which checks tokens),
health and reflection, on one listening address."""

from __future__ import annotations

import logging
from collections.abc import Mapping

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from ..components import Contribution
from ..runtime import Runtime
from . import protocol_pb2 as pb
from .auth import BearerAuth
from .servicer import AndroidRuntimeServicer

log = logging.getLogger(__name__)

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["AndroidRuntime"].full_name
MAX_MESSAGE_BYTES = 4 * 1024 * 1024


class GrpcServer:
    """Serves AndroidRuntime on `address` ("HOST:PORT"; port 0 picks a free one, see `port`).

    `tokens` maps each principal to its token; `serve` has one, the agent's."""

    name = "grpc"

    def __init__(self, address: str, *, tokens: Mapping[str, str], name: str = "grpc") -> None:
        self.name = name
        self.address = address
        self.auth = BearerAuth(tokens)  # keeps only the tokens' hashes
        self.port = 0
        self._server: grpc.aio.Server | None = None

    def contribution(self) -> Contribution:
        return Contribution()

    async def start(self, runtime: Runtime) -> None:
        server = grpc.aio.server(
            options=[
                ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
                ("grpc.so_reuseport", 0),
            ],
        )
        handlers = AndroidRuntimeServicer(runtime, self.auth).method_handlers()
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE_NAME, handlers),))
        server.add_registered_method_handlers(SERVICE_NAME, handlers)
        health_servicer = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
        reflection.enable_server_reflection(
            (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server
        )
        try:
            port = server.add_insecure_port(self.address)
        except RuntimeError as exc:  # grpc's way of saying the bind failed
            raise OSError(f"cannot listen on {self.address}: the address is in use or not available") from exc
        if port == 0:
            raise OSError(f"cannot listen on {self.address}")
        await server.start()
        await health_servicer.set("", health_pb2.HealthCheckResponse.SERVING)
        await health_servicer.set(SERVICE_NAME, health_pb2.HealthCheckResponse.SERVING)
        self._server, self.port = server, port

    async def stop(self, *, grace_s: float) -> None:
        if self._server is not None:
            await self._server.stop(grace_s)
