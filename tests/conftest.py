"""L0 harness: the production factory on port 0, real grpcio clients over a real socket."""

from __future__ import annotations

import errno
import json
import socket
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import grpc
import pytest

from phoneuse_runtime.app import App, build_app, default_components
from phoneuse_runtime.config.settings import DEFAULT_GATEWAY_LISTEN, DEFAULT_GRPC_LISTEN, Settings
from phoneuse_runtime.device.base import Device
from phoneuse_runtime.kernel.components import Component
from phoneuse_runtime.kernel.policies import Policy
from phoneuse_runtime.rpc import protocol_pb2 as pb
from phoneuse_runtime.rpc import protocol_pb2_grpc as pb_grpc

TOKEN = "test-token-" + uuid.uuid4().hex
AUTH = (("authorization", f"Bearer {TOKEN}"),)


@dataclass
class Client:
    """A connected grpcio client plus the server it talks to."""

    app: App
    channel: grpc.aio.Channel
    stub: pb_grpc.AndroidRuntimeAsyncStub

    async def execute(
        self,
        action_type: str,
        params: dict[str, str] | None = None,
        *,
        request_id: str | None = None,
        timeout_ms: int = 10_000,
        app_target: str | None = None,
    ) -> pb.ActionResponse:
        request = pb.ActionRequest(
            action_type=action_type,
            params=params or {},
            request_id=request_id or uuid.uuid4().hex,
            timeout_ms=timeout_ms,
        )
        if app_target is not None:
            request.app_target = app_target
        response: pb.ActionResponse = await self.stub.Execute(
            request, metadata=AUTH, timeout=timeout_ms / 1000 + 10
        )
        return response

    async def ok(self, action_type: str, params: dict[str, str] | None = None, **kw: Any) -> dict[str, Any]:
        """Executes and asserts success; returns the parsed result."""
        response = await self.execute(action_type, params, **kw)
        assert response.success, response.error
        assert response.error == ""
        result: dict[str, Any] = json.loads(response.result_json)
        return result

    async def fail(self, action_type: str, params: dict[str, str] | None = None, **kw: Any) -> str:
        """Executes and asserts failure; returns the error code."""
        response = await self.execute(action_type, params, **kw)
        assert not response.success, response.result_json
        assert isinstance(json.loads(response.result_json), dict)
        code, sep, message = response.error.partition(": ")
        assert sep and message, response.error
        return code

    async def query(
        self, query_type: pb.QueryType.ValueType, filters: dict[str, str] | None = None, limit: int = 0
    ) -> tuple[list[dict[str, Any]], int, bool]:
        response = await self.stub.Query(
            pb.QueryRequest(query_type=query_type, filters=filters or {}, limit=limit),
            metadata=AUTH,
            timeout=30,
        )
        return [json.loads(r) for r in response.results_json], response.total_count, response.has_more


ServerFactory = Callable[..., Awaitable[Client]]


@pytest.fixture
async def make_client(tmp_path: Path) -> AsyncIterator[ServerFactory]:
    """Starts apps through the composition root, with Settings overrides and, optionally, their
    own device, policies or extra components (beside the gRPC server); stops them all at the end."""
    started: list[Client] = []

    async def factory(
        *,
        device: Device | None = None,
        policies: Sequence[Policy] = (),
        components: Sequence[Component] = (),
        **overrides: Any,
    ) -> Client:
        # The memory feeds itself from the phone only in the tests that ask (memory_ingest=True):
        # elsewhere its background reads would interleave with the reads a test counts.
        base = Settings(
            data_dir=tmp_path / f"data{len(started)}",
            grpc_listen="127.0.0.1:0",
            gateway=False,  # tests/gateway/ starts it; the runtime's own tests see no gateway
            memory_ingest=False,
        )
        settings = replace(base, **overrides)
        parts = [*default_components(settings, token=TOKEN), *components]
        app = await build_app(settings, token=TOKEN, device=device, policies=policies, components=parts)
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{app.port}")
        client = Client(app, channel, pb_grpc.AndroidRuntimeStub(channel))  # type: ignore[arg-type]
        started.append(client)
        return client

    yield factory
    for client in started:
        await client.channel.close()
        await client.app.stop(grace_s=0)


@pytest.fixture
async def client(make_client: ServerFactory) -> Client:
    return await make_client()


@pytest.fixture
def free_listen(monkeypatch: pytest.MonkeyPatch) -> None:
    """Port 0 for the gRPC server and the gateway: `doctor` checks that `serve` could listen, and
    the default ports may be taken on a shared machine (a server of the user's own)."""
    monkeypatch.setenv("PHONEUSE_GRPC_LISTEN", "127.0.0.1:0")
    monkeypatch.setenv("PHONEUSE_GATEWAY_LISTEN", "127.0.0.1:0")


@pytest.fixture
def default_ports_taken() -> Iterator[None]:
    """The default addresses (gRPC's 127.0.0.1:50051, the gateway's 127.0.0.1:8765) taken for the
    test, as a `serve` of the user's own would take them: a test using it proves it depends on
    neither being free. One already taken by something else is just as taken."""
    held: list[socket.socket] = []
    for address in (DEFAULT_GRPC_LISTEN, DEFAULT_GATEWAY_LISTEN):
        host, _, port = address.rpartition(":")
        sock = socket.socket()
        try:
            sock.bind((host, int(port)))
            sock.listen()
        except OSError as exc:
            sock.close()
            assert exc.errno == errno.EADDRINUSE, f"cannot take {address}: {exc}"
        else:
            held.append(sock)
    yield
    for sock in held:
        sock.close()
