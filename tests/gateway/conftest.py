"""L0 harness for the Iris gateway: the production factory (`build_app` with `default_components`,
the sim phone, gRPC and the gateway on port 0), a paired token, and `IrisClient`, a real
`websockets` client that validates EVERY frame it receives against the schema in `proto/`.

    async def test_ping(iris: IrisClient) -> None:
        pong = await iris.request("ping", {"ts": 1})
        assert pong["type"] == "pong"

Fixtures: `gateway_server` (a running app; `.connect()` more clients, `.pair()` more tokens,
`.grpc` a gRPC client on the same app), `iris` (a client that said hello with a paired token),
`make_gateway` (start apps yourself: a data dir of your own to restart on, settings overrides).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import grpc
import jsonschema
import pytest
from websockets.asyncio.client import ClientConnection, connect

from phoneuse_runtime.app import App, build_app, default_components
from phoneuse_runtime.config.settings import Settings
from phoneuse_runtime.gateway.db import connect as db_connect
from phoneuse_runtime.gateway.db import db_path
from phoneuse_runtime.gateway.pairing import Issued, PairingStore
from phoneuse_runtime.gateway.parts import Part
from phoneuse_runtime.gateway.server import Gateway
from phoneuse_runtime.rpc import protocol_pb2_grpc as pb_grpc

from ..conftest import TOKEN, Client

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "proto" / "iris-wire-protocol.schema.json"
SCHEMA: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
WAIT_S = 10.0  # how long a test waits for a frame before it fails (a hang, not a timing)
# Frames the server relays from one app device to the owner's others: the schema describes them
# among the app's frames ("server stores + broadcasts to other devices") and has no server entry.
RELAYED = frozenset({"read.receipt"})


def _payload_schema(spec: dict[str, Any]) -> dict[str, Any]:
    """A frame type's payload as a JSON schema: the schema lists either properties or a $ref."""
    payload = spec.get("payload", {})
    if "$ref" in payload:
        return {"$ref": payload["$ref"]}
    return {"type": "object", "properties": payload}


def _frame_schema(frame_type: str) -> dict[str, Any]:
    side = "app_to_server" if frame_type in RELAYED else "server_to_app"
    spec = SCHEMA["frame_types"][side][frame_type]
    envelope = dict(SCHEMA["envelope"])
    envelope["properties"] = {**envelope["properties"], "payload": _payload_schema(spec)}
    return {"definitions": SCHEMA["definitions"], **envelope}


_VALIDATORS: dict[str, jsonschema.Draft7Validator] = {}


def validate_server_frame(frame: Any) -> None:
    """Fails the test unless `frame` is a server-to-app frame of the schema."""
    assert isinstance(frame, dict), frame
    frame_type = frame.get("type")
    assert isinstance(frame_type, str)
    known = frame_type in SCHEMA["frame_types"]["server_to_app"] or frame_type in RELAYED
    assert known, f"not a server frame type: {frame!r}"
    assert "payload" in frame, f"a server frame always carries a payload: {frame!r}"
    validator = _VALIDATORS.get(frame_type)
    if validator is None:
        validator = _VALIDATORS[frame_type] = jsonschema.Draft7Validator(_frame_schema(frame_type))
    errors = sorted(validator.iter_errors(frame), key=lambda e: list(e.path))
    assert not errors, f"{frame!r} breaks the schema: {errors[0].message} at {list(errors[0].path)}"


@dataclass
class IrisClient:
    """An app connection. Received frames are validated, then buffered until a test takes them."""

    ws: ClientConnection
    frames: list[dict[str, Any]] = field(default_factory=list)
    binary: list[bytes] = field(default_factory=list)
    received: list[dict[str, Any]] = field(default_factory=list)  # every text frame, in order
    next_id: int = 1

    async def send_frame(
        self,
        frame_type: str,
        payload: dict[str, Any] | None = None,
        *,
        id: int | None = None,
        chat_id: str | None = None,
        thread_id: str | None = None,
    ) -> None:
        frame: dict[str, Any] = {"v": 1, "type": frame_type, "payload": payload or {}}
        if id is not None:
            frame["id"] = id
        if chat_id is not None:
            frame["chat_id"] = chat_id
        if thread_id is not None:
            frame["thread_id"] = thread_id
        await self.ws.send(json.dumps(frame))

    async def send_raw(self, data: str | bytes) -> None:
        await self.ws.send(data)

    async def _read(self, timeout: float) -> None:
        message = await asyncio.wait_for(self.ws.recv(), timeout=timeout)
        if isinstance(message, bytes):
            self.binary.append(message)
            return
        frame = json.loads(message)
        validate_server_frame(frame)
        self.received.append(frame)
        self.frames.append(frame)

    async def next_where(
        self, match: Callable[[dict[str, Any]], bool], timeout: float = WAIT_S
    ) -> dict[str, Any]:
        """The first buffered or arriving frame that `match`es; the others stay buffered."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            for i, frame in enumerate(self.frames):
                if match(frame):
                    return self.frames.pop(i)
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise AssertionError(f"no matching frame within {timeout} s; buffered: {self.frames!r}")
            await self._read(remaining)

    async def next(self, frame_type: str, timeout: float = WAIT_S) -> dict[str, Any]:
        """The next frame of `frame_type` (buffered or arriving)."""
        return await self.next_where(lambda f: f["type"] == frame_type, timeout)

    async def request(
        self,
        frame_type: str,
        payload: dict[str, Any] | None = None,
        *,
        chat_id: str | None = None,
        thread_id: str | None = None,
        timeout: float = WAIT_S,
    ) -> dict[str, Any]:
        """Sends a request with a fresh integer id and returns the frame that answers it
        (its natural response, or an `error` with the same id)."""
        request_id = self.next_id
        self.next_id += 1
        await self.send_frame(frame_type, payload, id=request_id, chat_id=chat_id, thread_id=thread_id)
        return await self.next_where(lambda f: f.get("id") == request_id, timeout)

    async def hello(self, token: str, **fields: Any) -> dict[str, Any]:
        return await self.request("hello", {"token": token, "device_id": "test-device", **fields})

    async def closed(self, timeout: float = WAIT_S) -> int | None:
        """Waits until the server closes the connection (validating what comes before); its code."""
        try:
            while True:
                await self._read(timeout)
        except Exception as exc:
            from websockets.exceptions import ConnectionClosed

            if not isinstance(exc, ConnectionClosed):
                raise
        return self.ws.close_code

    async def close(self) -> None:
        await self.ws.close()


class SlowIrisClient:
    """An app that reads only when told: websockets' own sans-I/O client protocol over a plain
    TCP stream, so that while it reads nothing, nothing is read for it (the kernel's buffers,
    and no more, fill up). Every frame it does read is validated too."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, url: str) -> None:
        from websockets.client import ClientProtocol
        from websockets.uri import parse_uri

        self.reader, self.writer = reader, writer
        self.protocol = ClientProtocol(parse_uri(url), max_size=None)
        self.received: list[dict[str, Any]] = []
        self.close_code: int | None = None

    @classmethod
    async def open(cls, url: str, port: int) -> SlowIrisClient:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        client = cls(reader, writer, url)
        client.protocol.send_request(client.protocol.connect())
        client._flush()
        while client.protocol.state.name == "CONNECTING":
            data = await asyncio.wait_for(reader.read(65536), WAIT_S)
            assert data, "the server closed during the handshake"
            client.protocol.receive_data(data)
        assert client.protocol.handshake_exc is None, client.protocol.handshake_exc
        client._take()
        return client

    def _flush(self) -> None:
        for data in self.protocol.data_to_send():
            if data:
                self.writer.write(data)

    def _take(self) -> None:
        from websockets.frames import Close, Frame, Opcode

        for event in self.protocol.events_received():
            if isinstance(event, Frame) and event.opcode is Opcode.TEXT:
                frame = json.loads(bytes(event.data))
                validate_server_frame(frame)
                self.received.append(frame)
            elif isinstance(event, Frame) and event.opcode is Opcode.CLOSE:
                self.close_code = Close.parse(event.data).code if event.data else 1005
        self._flush()

    async def send_frame(self, frame_type: str, payload: dict[str, Any], *, id: int | None = None) -> None:
        frame: dict[str, Any] = {"v": 1, "type": frame_type, "payload": payload}
        if id is not None:
            frame["id"] = id
        self.protocol.send_text(json.dumps(frame).encode())
        self._flush()
        await self.writer.drain()

    async def read_until(self, match: Callable[[dict[str, Any]], bool], timeout: float = WAIT_S) -> None:
        """Reads until a frame that `match`es has arrived, or the connection closed."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not any(match(f) for f in self.received) and self.close_code is None:
            data = await asyncio.wait_for(self.reader.read(65536), max(0.0, deadline - loop.time()))
            if not data:
                self.protocol.receive_eof()
                self._take()
                if self.close_code is None:
                    self.close_code = 1006
                return
            self.protocol.receive_data(data)
            self._take()

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(OSError):
            await self.writer.wait_closed()


@dataclass
class GatewayServer:
    """A running app with the gateway, its data dir, and a gRPC client on the same app."""

    app: App
    data_dir: Path
    grpc: Client
    clients: list[IrisClient | SlowIrisClient] = field(default_factory=list)
    stopped: bool = False

    @property
    def gateway(self) -> Gateway:
        gateway = self.app.component("gateway")
        assert isinstance(gateway, Gateway)
        return gateway

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.gateway.port}/ws"

    def pair(self, name: str = "test phone", **kw: Any) -> Issued:
        """Issues a token as `pair new` does: on the data dir's database, beside the server."""
        conn = db_connect(db_path(self.data_dir))
        try:
            PairingStore.create_tables(conn)
            return PairingStore(conn).issue(name, **kw)
        finally:
            conn.close()

    async def open(self, path: str = "/ws") -> IrisClient:
        """A connection that has said nothing yet."""
        ws = await connect(f"ws://127.0.0.1:{self.gateway.port}{path}", max_size=None, max_queue=None)
        client = IrisClient(ws)
        self.clients.append(client)
        return client

    async def slow(self, token: str) -> SlowIrisClient:
        """An app that said hello and then reads only when told (see `SlowIrisClient`)."""
        client = await SlowIrisClient.open(self.url, self.gateway.port)
        self.clients.append(client)
        await client.send_frame("hello", {"token": token, "device_id": "slow"}, id=1)
        await client.read_until(lambda f: f.get("id") == 1)
        assert client.received[-1]["type"] == "hello.ack", client.received
        return client

    async def connect(self, token: str | None = None, **hello: Any) -> IrisClient:
        """A connection that said hello (with a new paired token unless one is given) and got
        its hello.ack."""
        client = await self.open()
        ack = await client.hello(token or self.pair().token, **hello)
        assert ack["type"] == "hello.ack", ack
        return client

    async def stop(self) -> None:
        if self.stopped:
            return
        self.stopped = True
        for client in self.clients:
            await client.close()
        await self.grpc.channel.close()
        await self.app.stop(grace_s=0)


GatewayFactory = Callable[..., Awaitable[GatewayServer]]


@pytest.fixture
async def make_gateway(tmp_path: Path) -> AsyncIterator[GatewayFactory]:
    """Starts apps through the production factory with the gateway and gRPC on port 0.
    `data_dir` (default: a new one) lets a test restart on the same state; `parts` (default:
    those `serve` runs) the gateway's parts."""
    started: list[GatewayServer] = []

    async def factory(
        *, data_dir: Path | None = None, parts: Sequence[Part] | None = None, **overrides: Any
    ) -> GatewayServer:
        data_dir = data_dir or tmp_path / f"data-{uuid.uuid4().hex[:8]}"
        settings = replace(
            Settings(data_dir=data_dir, grpc_listen="127.0.0.1:0", gateway_listen="127.0.0.1:0"), **overrides
        )
        components = default_components(settings, token=TOKEN)
        if parts is not None:  # a gateway with only these parts (e.g. the chat without the agent)
            components = [c for c in components if not isinstance(c, Gateway)]
            components.append(Gateway(settings, parts=parts))
        app = await build_app(settings, token=TOKEN, components=components)
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{app.port}")
        server = GatewayServer(app, data_dir, Client(app, channel, pb_grpc.AndroidRuntimeStub(channel)))  # type: ignore[arg-type]
        started.append(server)
        return server

    yield factory
    for server in started:
        await server.stop()


@pytest.fixture
async def gateway_server(make_gateway: GatewayFactory) -> GatewayServer:
    return await make_gateway()


@pytest.fixture
async def iris(gateway_server: GatewayServer) -> IrisClient:
    return await gateway_server.connect()


@pytest.fixture
def grpc_client(gateway_server: GatewayServer) -> Client:
    """A gRPC client (tests/conftest.py's `Client`) on the same app as `gateway_server`."""
    return gateway_server.grpc
