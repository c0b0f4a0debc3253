"""The agent part's harness: the production factory with the gateway's parts, a paired app, and
an agent (a real gRPC client: `Subscribe` for its events, `Execute` for its CHAT_* actions).

Until the chat part offers `ChatSeam`, the gateway runs `MinimalChat` in its place, so that
`message.send` works; once it does, these tests run against the real chat part unchanged.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import grpc
import pytest

from phoneuse_runtime.app import build_app, default_components
from phoneuse_runtime.components import Component
from phoneuse_runtime.config import Settings
from phoneuse_runtime.gateway.agent import AgentPart, ChatSeam, MinimalChat
from phoneuse_runtime.gateway.chat import ChatPart
from phoneuse_runtime.gateway.parts import Part
from phoneuse_runtime.gateway.server import Gateway, default_parts
from phoneuse_runtime.rpc import protocol_pb2 as pb
from phoneuse_runtime.rpc import protocol_pb2_grpc as pb_grpc

from ...conftest import AUTH, TOKEN, Client
from ..conftest import WAIT_S, GatewayServer, IrisClient


def gateway_parts() -> list[Part]:
    """The parts `serve` runs, with the stand-in chat while the real one lacks the seam."""
    if isinstance(ChatPart(), ChatSeam):
        return default_parts()
    return [MinimalChat(), AgentPart()]


AgentGatewayFactory = Callable[..., Awaitable[GatewayServer]]


@pytest.fixture
async def make_agent_gateway(tmp_path: Path) -> AsyncIterator[AgentGatewayFactory]:
    """Starts apps through `build_app` with gRPC and the gateway (its parts as above) on port 0;
    settings overrides as keywords."""
    started: list[GatewayServer] = []

    async def factory(*, data_dir: Path | None = None, **overrides: Any) -> GatewayServer:
        data_dir = data_dir or tmp_path / f"data-{uuid.uuid4().hex[:8]}"
        settings = replace(
            Settings(data_dir=data_dir, grpc_listen="127.0.0.1:0", gateway_listen="127.0.0.1:0"), **overrides
        )
        components: list[Component] = [
            c for c in default_components(settings, token=TOKEN) if not isinstance(c, Gateway)
        ]
        components.append(Gateway(settings, parts=gateway_parts()))
        app = await build_app(settings, token=TOKEN, components=components)
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{app.port}")
        server = GatewayServer(app, data_dir, Client(app, channel, pb_grpc.AndroidRuntimeStub(channel)))  # type: ignore[arg-type]
        started.append(server)
        return server

    yield factory
    for server in started:
        await server.stop()


@pytest.fixture
async def server(make_agent_gateway: AgentGatewayFactory) -> GatewayServer:
    return await make_agent_gateway()


@pytest.fixture
async def app(server: GatewayServer) -> IrisClient:
    """A paired app device that said hello."""
    return await server.connect()


@dataclass
class Agent:
    """The agent's gRPC side: a live Subscribe stream, and Execute through `client`."""

    client: Client
    stream: Any

    async def event(self, event_type: str, timeout: float = WAIT_S) -> dict[str, Any]:
        """The payload of the next event of `event_type` (others are skipped)."""
        while True:
            event: pb.Event = await asyncio.wait_for(self.stream.read(), timeout)
            assert event is not grpc.aio.EOF, "the stream ended"
            if event.event_type == event_type:
                payload: dict[str, Any] = json.loads(event.payload_json)
                return payload

    def close(self) -> None:
        self.stream.cancel()


async def subscribe(client: Client, *event_types: str, subscriber_id: str = "") -> Agent:
    stream = client.stub.Subscribe(
        pb.SubscribeRequest(event_types=list(event_types), subscriber_id=subscriber_id), metadata=AUTH
    )
    await stream.initial_metadata()  # the subscription is live once the headers arrive
    return Agent(client, stream)


@pytest.fixture
async def agent(server: GatewayServer) -> AsyncIterator[Agent]:
    """An agent that subscribed to CHAT_MESSAGE, AGENT_STOP and AGENT_STEER."""
    connected = await subscribe(server.grpc, "CHAT_MESSAGE", "AGENT_STOP", "AGENT_STEER")
    yield connected
    connected.close()


async def send_text(app: IrisClient, text: str, **envelope: Any) -> dict[str, Any]:
    """`message.send`; returns the server's `message` reply (asserting it is one)."""
    reply = await app.request("message.send", {"text": text}, **envelope)
    assert reply["type"] == "message", reply
    assert reply["payload"]["role"] == "user"
    return reply


async def system_message(app: IrisClient) -> str:
    frame = await app.next_where(lambda f: f["type"] == "message" and f["payload"]["role"] == "system")
    text: str = frame["payload"]["text"]
    return text
