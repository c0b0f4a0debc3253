"""The agent part's harness, over tests/gateway/conftest.py's (`make_gateway`: the production
factory, gRPC and the gateway with the parts `serve` runs, on port 0): a paired app, and an agent,
a real gRPC client (`Subscribe` for its events, `Execute` for its CHAT_* actions).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import grpc
import pytest

from phoneuse_runtime.rpc import protocol_pb2 as pb

from ...conftest import AUTH, Client
from ..conftest import WAIT_S, GatewayFactory, GatewayServer, IrisClient


@pytest.fixture
async def server(make_gateway: GatewayFactory) -> GatewayServer:
    return await make_gateway()


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
