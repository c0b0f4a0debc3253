"""gRPC health follows the phone: `AndroidRuntime` is NOT_SERVING while the phone does not answer
and SERVING again once it does; the server itself ("") stays SERVING throughout."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from grpc_health.v1 import health_pb2, health_pb2_grpc

from phoneuse_runtime.device.sim.device import SimDevice
from phoneuse_runtime.rpc.server import SERVICE_NAME

from .conftest import Client

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
WAIT_S = 10.0  # bounds a wait that should end promptly; the test never sleeps


async def _check(health: health_pb2_grpc.HealthStub, service: str) -> int:
    reply = await health.Check(health_pb2.HealthCheckRequest(service=service), timeout=WAIT_S)
    status: int = reply.status
    return status


async def test_health_follows_the_link(client: Client) -> None:
    health = health_pb2_grpc.HealthStub(client.channel)
    device = client.app.runtime.device
    assert isinstance(device, SimDevice)
    watch = health.Watch(health_pb2.HealthCheckRequest(service=SERVICE_NAME), timeout=WAIT_S * 3)
    updates: AsyncIterator[health_pb2.HealthCheckResponse] = watch.__aiter__()

    async def next_status() -> int:
        reply = await asyncio.wait_for(updates.__anext__(), WAIT_S)
        status: int = reply.status
        return status

    try:
        assert await next_status() == SERVING  # Watch starts with the status now
        await client.ok("SIM_DISCONNECT", {"ms": "600000", "reason": "adb server restarted"})
        assert await next_status() == NOT_SERVING
        assert await _check(health, SERVICE_NAME) == NOT_SERVING
        assert await _check(health, "") == SERVING
        device.reconnect()
        assert await next_status() == SERVING
        assert await _check(health, SERVICE_NAME) == SERVING
        assert await _check(health, "") == SERVING
    finally:
        watch.cancel()
