"""The gateway's core over a real socket: hello, ping, the envelope, and bad input."""

from __future__ import annotations

import json

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from phoneuse_runtime.gateway.server import CLOSE_POLICY, CLOSE_REPLACED

from .conftest import GatewayFactory, GatewayServer, IrisClient


async def test_hello_ack_advertises_caps_limits_cursor_and_the_default_channel(
    gateway_server: GatewayServer,
) -> None:
    client = await gateway_server.open()
    ack = await client.hello(gateway_server.pair().token)
    assert ack["type"] == "hello.ack"
    assert ack["id"] == 1
    caps = ack["payload"]["server_caps"]
    assert caps["streaming"] and caps["tools"] and caps["media"] and caps["search"] and caps["pickers"]
    assert caps["push"] == "none"
    assert caps["max_frame_bytes"] == gateway_server.gateway.limits.max_frame_bytes
    assert caps["max_media_bytes"] > 0 and caps["max_frames_per_second"] > 0
    assert isinstance(ack["payload"]["sync_cursor"], int)
    defaults = [c for c in ack["payload"]["channels"] if c["is_default"]]
    assert [c["chat_id"] for c in defaults] == ["android:default"]


async def test_push_is_ntfy_when_an_ntfy_server_is_configured(make_gateway: GatewayFactory) -> None:
    server = await make_gateway(ntfy_url="http://127.0.0.1:9/")
    client = await server.open()
    ack = await client.hello(server.pair().token)
    assert ack["payload"]["server_caps"]["push"] == "ntfy"


async def test_ping_gets_pong_with_the_request_id(iris: IrisClient) -> None:
    pong = await iris.request("ping", {"ts": 5})
    assert pong["type"] == "pong"
    assert isinstance(pong["payload"]["ts"], int) and pong["payload"]["ts"] > 5


async def test_a_request_without_an_id_gets_an_answer_without_one(iris: IrisClient) -> None:
    await iris.send_frame("ping")
    pong = await iris.next("pong")
    assert "id" not in pong


@pytest.mark.parametrize(
    ("raw", "carries_id"),
    [
        ("{not json", False),
        ("[1, 2]", False),
        ('"hello"', False),
        (json.dumps({"type": "ping", "id": 7}), True),  # no v
        (json.dumps({"v": 2, "type": "ping", "id": 7}), True),
        (json.dumps({"v": "1", "type": "ping", "id": 7}), True),
        (json.dumps({"v": True, "type": "ping", "id": 7}), True),
        (json.dumps({"v": 1, "id": 7}), True),  # no type
        (json.dumps({"v": 1, "type": "", "id": 7}), True),
        (json.dumps({"v": 1, "type": "no.such.frame", "id": 7}), True),
        (json.dumps({"v": 1, "type": "pong", "id": 7}), True),  # a server frame is no request
        (json.dumps({"v": 1, "type": "ping", "id": 7, "payload": [1]}), True),
        (json.dumps({"v": 1, "type": "ping", "id": 7, "payload": {"ts": "soon"}}), True),
        (json.dumps({"v": 1, "type": "ping", "id": 7, "chat_id": 3}), True),
        (json.dumps({"v": 1, "type": "ping", "id": "7"}), False),
        (json.dumps({"v": 1, "type": "ping", "id": 7.5}), False),
        (json.dumps({"v": 1, "type": "ping", "id": True}), False),
        (json.dumps({"v": 1, "type": "hello", "id": 7, "payload": {"token": "x"}}), True),  # said already
    ],
)
async def test_bad_input_is_unsupported_and_the_connection_stays_open(
    iris: IrisClient, raw: str, carries_id: bool
) -> None:
    await iris.send_raw(raw)
    error = await iris.next("error")
    assert error["payload"]["code"] == "unsupported"
    assert error["payload"]["message"]
    if carries_id:
        assert error["id"] == 7
    else:
        assert "id" not in error
    assert (await iris.request("ping"))["type"] == "pong"


async def test_a_binary_frame_with_no_upload_open_is_unsupported(iris: IrisClient) -> None:
    await iris.send_raw(b"\x00\x01")
    error = await iris.next("error")
    assert error["payload"]["code"] == "unsupported"
    assert (await iris.request("ping"))["type"] == "pong"


async def test_a_frame_before_hello_is_an_auth_error_then_a_close(gateway_server: GatewayServer) -> None:
    client = await gateway_server.open()
    await client.send_frame("ping", id=3)
    error = await client.next("error")
    assert error["payload"]["code"] == "auth"
    assert error["id"] == 3
    assert await client.closed() == CLOSE_POLICY


@pytest.mark.parametrize("first", ["{garbage", b"\x00"])
async def test_garbage_before_hello_is_an_auth_error_then_a_close(
    gateway_server: GatewayServer, first: str | bytes
) -> None:
    client = await gateway_server.open()
    await client.send_raw(first)
    assert (await client.next("error"))["payload"]["code"] == "auth"
    assert await client.closed() == CLOSE_POLICY


@pytest.mark.parametrize(
    "payload",
    [
        {"token": ""},
        {"token": "not-a-token-we-know"},  # no device_id: no pairing request either
        {"token": 42},
        {},
    ],
)
async def test_a_bad_token_is_an_auth_error_then_a_close(
    gateway_server: GatewayServer, payload: dict[str, object]
) -> None:
    client = await gateway_server.open()
    answer = await client.request("hello", payload)
    assert answer["type"] == "error"
    assert answer["payload"]["code"] == "auth"
    assert await client.closed() == CLOSE_POLICY


async def test_an_expired_or_revoked_token_is_refused(gateway_server: GatewayServer) -> None:
    from phoneuse_runtime.gateway.db import connect as db_connect
    from phoneuse_runtime.gateway.db import db_path
    from phoneuse_runtime.gateway.pairing import PairingStore

    expired = gateway_server.pair(ttl_days=1, now=0)  # issued in 1970: long expired
    revoked = gateway_server.pair()
    conn = db_connect(db_path(gateway_server.data_dir))
    PairingStore(conn).revoke(revoked.pairing_id)
    conn.close()
    for token, word in ((expired.token, "expired"), (revoked.token, "revoked")):
        client = await gateway_server.open()
        answer = await client.hello(token)
        assert answer["payload"]["code"] == "auth"
        assert word in answer["payload"]["message"]
        assert await client.closed() == CLOSE_POLICY


async def test_only_the_ws_path_is_served(gateway_server: GatewayServer) -> None:
    with pytest.raises(InvalidStatus) as caught:
        await connect(f"ws://127.0.0.1:{gateway_server.gateway.port}/other")
    assert caught.value.response.status_code == 404


async def test_a_second_connection_of_a_device_replaces_the_first(gateway_server: GatewayServer) -> None:
    token = gateway_server.pair().token
    first = await gateway_server.connect(token)
    second = await gateway_server.connect(token)
    assert await first.closed() == CLOSE_REPLACED
    assert (await second.request("ping"))["type"] == "pong"
    assert len(gateway_server.gateway.sessions) == 1


async def test_two_devices_are_two_sessions(gateway_server: GatewayServer) -> None:
    await gateway_server.connect()
    await gateway_server.connect()
    assert len(gateway_server.gateway.sessions) == 2


async def test_an_oversize_frame_is_an_error_and_the_connection_stays_open(
    make_gateway: GatewayFactory,
) -> None:
    server = await make_gateway(gateway_max_frame_bytes=1024)
    client = await server.connect()
    big = json.dumps({"v": 1, "id": 9, "type": "ping", "payload": {"pad": "x" * 3000}})
    await client.send_raw(big)
    error = await client.next("error")
    assert error["payload"]["code"] == "unsupported"
    assert "max_frame_bytes" in error["payload"]["message"]
    await client.send_raw(b"x" * 4000)
    assert (await client.next("error"))["payload"]["code"] == "unsupported"
    assert (await client.request("ping"))["type"] == "pong"


async def test_a_frame_past_four_times_the_limit_closes_the_connection(make_gateway: GatewayFactory) -> None:
    server = await make_gateway(gateway_max_frame_bytes=1024)
    client = await server.connect()
    await client.send_raw("x" * (4 * 1024 + 1))
    assert await client.closed() == 1009  # message too big


async def test_too_many_frames_per_second_are_rate_limited(make_gateway: GatewayFactory) -> None:
    server = await make_gateway(gateway_max_frames_per_second=5)
    client = await server.connect()
    for i in range(20):
        await client.send_frame("ping", id=100 + i)
    limited = await client.next_where(
        lambda f: f["type"] == "error" and f["payload"]["code"] == "rate_limited"
    )
    assert limited["id"] >= 100
    assert len([f for f in client.received if f["type"] == "pong"]) <= 20


async def test_no_gateway_serves_grpc_alone(make_gateway: GatewayFactory) -> None:
    server = await make_gateway(gateway=False)
    assert "gateway" not in server.app.components
    assert await server.grpc.ok("REMEMBER", {"name": "gateway", "text": "off"})


async def test_a_connection_that_says_nothing_is_closed(make_gateway: GatewayFactory) -> None:
    server = await make_gateway(gateway_hello_timeout_s=0.2)
    client = await server.open()
    error = await client.next("error")
    assert error["payload"]["code"] == "auth"
    assert await client.closed() == CLOSE_POLICY


@pytest.mark.parametrize("min_protocol", [2, "1", None])
async def test_an_app_that_needs_a_newer_protocol_is_told_and_closed(
    gateway_server: GatewayServer, min_protocol: object
) -> None:
    client = await gateway_server.open()
    answer = await client.hello(gateway_server.pair().token, caps={"min_protocol": min_protocol})
    assert answer["payload"]["code"] == "unsupported"
    assert "protocol version 1" in answer["payload"]["message"]
    assert await client.closed() == CLOSE_POLICY


async def test_an_app_that_speaks_version_1_is_served(gateway_server: GatewayServer) -> None:
    client = await gateway_server.open()
    ack = await client.hello(gateway_server.pair().token, caps={"min_protocol": 1, "media": True})
    assert ack["type"] == "hello.ack"
