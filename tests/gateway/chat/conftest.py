"""Fixtures of the chat tests: the production factory with a gateway that runs the chat part
alone (`make_gateway`, and so `gateway_server` and `iris`, are overridden here), the owner with
two app devices on one server (`owner`), and helpers that drive the chat through real frames.

The chat alone: with the agent part beside it, a plain user message with no agent subscribed
gets the agent part's system reply (its own tests cover that), which would be in every history
these tests read."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from phoneuse_runtime.gateway.chat import ChatPart

from ..conftest import WAIT_S, GatewayFactory, GatewayServer, IrisClient


@pytest.fixture
def make_gateway(make_gateway: GatewayFactory) -> GatewayFactory:
    """The shared factory, with the chat as the gateway's one part."""

    async def chat_only(**kwargs: Any) -> GatewayServer:
        return await make_gateway(parts=[ChatPart()], **kwargs)

    return chat_only


@dataclass
class Owner:
    """One server, and two paired devices of its owner, both connected: `phone` and `tablet`."""

    server: GatewayServer
    phone: IrisClient
    tablet: IrisClient
    phone_token: str
    tablet_token: str


@pytest.fixture
async def owner(gateway_server: GatewayServer) -> Owner:
    phone_token = gateway_server.pair("phone").token
    tablet_token = gateway_server.pair("tablet").token
    phone = await gateway_server.connect(phone_token, device_id="phone")
    tablet = await gateway_server.connect(tablet_token, device_id="tablet")
    return Owner(gateway_server, phone, tablet, phone_token, tablet_token)


async def say(client: IrisClient, text: str, **envelope: Any) -> dict[str, Any]:
    """Sends a user message; its `message` reply (fails on an error)."""
    reply = await client.request("message.send", {"text": text}, **envelope)
    assert reply["type"] == "message", reply
    return reply


async def history(
    client: IrisClient, payload: dict[str, Any] | None = None, **envelope: Any
) -> dict[str, Any]:
    reply = await client.request("history", payload or {}, **envelope)
    assert reply["type"] == "history", reply
    return reply


async def texts(client: IrisClient, **envelope: Any) -> list[str]:
    """The texts of a chat's newest 200 messages, oldest first."""
    page = await history(client, {"limit": 200}, **envelope)
    return [m["text"] for m in page["payload"]["messages"]]


async def upload(
    client: IrisClient, ref: str, data: bytes, *, chunk: int = 1000, **fields: Any
) -> dict[str, Any]:
    """A whole upload: start, the bytes in binary frames, end with their sha256; the answer."""
    start = {"media_ref": ref, "size": len(data), "kind": "image", "mime": "image/png", **fields}
    await client.send_frame("media.upload.start", start, id=None)
    for at in range(0, len(data), chunk):
        await client.send_raw(data[at : at + chunk])
    end = {"media_ref": ref, "sha256": hashlib.sha256(data).hexdigest()}
    return await client.request("media.upload.end", end)


async def pull(client: IrisClient, media_id: str) -> tuple[dict[str, Any], bytes]:
    """`media.pull`: its answer, and the bytes that came before it."""
    client.binary.clear()
    end = await client.request("media.pull", {"media_id": media_id})
    return end, b"".join(client.binary)


async def eventually(condition: Callable[[], bool], timeout: float = WAIT_S) -> None:
    """Waits until `condition()` holds (work the server does after a connection closes has no
    frame to wait for); fails the test at the timeout."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, "the condition never held"
        await asyncio.sleep(0.01)
