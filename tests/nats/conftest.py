"""Fixtures for the NATS tests: a real nats-server (Debian's 2.9.10) per test, in its own
store dir on a random loopback port, and runtimes built by the composition root, served over
a real gRPC socket to principals with tokens of their own."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import time
import uuid
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import grpc
import pytest

from phoneuse_runtime.app import App, build_app
from phoneuse_runtime.config.settings import Settings
from phoneuse_runtime.nats.components import nats_components
from phoneuse_runtime.nats.server_process import NatsServer, available
from phoneuse_runtime.rpc import protocol_pb2 as pb
from phoneuse_runtime.rpc import protocol_pb2_grpc as pb_grpc
from phoneuse_runtime.rpc.server import GrpcServer

# CI (PHONEUSE_REQUIRE_NATS=1) installs both: there a missing one fails instead of skipping.
_MISSING = [
    what
    for what, there in (
        ("nats-py (pip install -e '.[dev]': the nats extra)", importlib.util.find_spec("nats") is not None),
        ("nats-server (apt-get install nats-server)", available()),
    )
    if not there
]
if _MISSING and os.environ.get("PHONEUSE_REQUIRE_NATS") == "1":
    raise RuntimeError(f"the NATS tests need {' and '.join(_MISSING)}")
if _MISSING:  # elsewhere they are not collected, and say why
    collect_ignore_glob = ["test_*.py"]
    warnings.warn(f"tests/nats skipped: no {' and '.join(_MISSING)}", stacklevel=1)

TOKENS = {name: f"{name}-{uuid.uuid4().hex}" for name in ("alice", "bob", "agent")}


@dataclass
class Runtime:
    """One runtime on a real socket, and a channel to it."""

    app: App
    channel: grpc.aio.Channel
    stub: pb_grpc.AndroidRuntimeAsyncStub
    settings: Settings
    closed: bool = field(default=False)

    async def execute(
        self, principal: str, action_type: str, params: dict[str, str] | None = None
    ) -> pb.ActionResponse:
        request = pb.ActionRequest(
            action_type=action_type, params=params or {}, request_id=uuid.uuid4().hex, timeout_ms=10_000
        )
        metadata = (("authorization", f"Bearer {TOKENS[principal]}"),)
        response: pb.ActionResponse = await self.stub.Execute(request, metadata=metadata, timeout=20)
        return response

    async def ok(
        self, principal: str, action_type: str, params: dict[str, str] | None = None
    ) -> dict[str, Any]:
        response = await self.execute(principal, action_type, params)
        assert response.success, response.error
        result: dict[str, Any] = json.loads(response.result_json)
        return result

    async def close(self) -> None:
        if not self.closed:
            self.closed = True
            await self.channel.close()
            await self.app.stop(grace_s=1.0)


RuntimeFactory = Callable[..., Awaitable[Runtime]]


@pytest.fixture
async def nats_srv(tmp_path: Path) -> AsyncIterator[NatsServer]:
    server = NatsServer(tmp_path / "nats")
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
async def make_runtime(tmp_path: Path) -> AsyncIterator[RuntimeFactory]:
    """Runtimes with the principals alice, bob and agent, each its own token; stopped at the end."""
    started: list[Runtime] = []

    async def factory(**overrides: Any) -> Runtime:
        base = Settings(
            data_dir=tmp_path / f"data{len(started)}",
            grpc_listen="127.0.0.1:0",
            gateway=False,
            memory_ingest=False,
        )
        settings = replace(base, **overrides)
        parts = [
            GrpcServer("127.0.0.1:0", tokens=TOKENS),
            *nats_components(settings.nats, data_dir=settings.data_dir),
        ]
        app = await build_app(settings, token=TOKENS["agent"], components=parts)
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{app.port}")
        runtime = Runtime(app, channel, pb_grpc.AndroidRuntimeStub(channel), settings)  # type: ignore[arg-type]
        started.append(runtime)
        return runtime

    yield factory
    for runtime in started:
        await runtime.close()


async def eventually(
    check: Callable[[], Awaitable[bool]], *, timeout_s: float = 10.0, what: str = ""
) -> None:
    """Polls `check` until it holds, within a bound."""
    deadline = time.monotonic() + timeout_s
    while not await check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout_s} s: {what}")
        await asyncio.sleep(0.05)  # the poll's interval, bounded by the deadline
