"""The gateway's door, tried as a hostile app on the same phone and as a web page in its browser
(issue 16: 1-4, 6, 18): pending requests bound to their token, a valid token that always gets
in, a gateway-wide guess budget, token entropy, the Origin check, caps on what an
unauthenticated hello can store, and revocation that stops a device's frames at once."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from phoneuse_runtime.cli.main import main
from phoneuse_runtime.gateway.db import connect as db_connect
from phoneuse_runtime.gateway.db import db_path
from phoneuse_runtime.gateway.limits import DEVICE_ID_CHARS, DEVICE_NAME_CHARS
from phoneuse_runtime.gateway.pairing import PairingStore
from phoneuse_runtime.gateway.server import CLOSE_POLICY

from ..gateway.conftest import GatewayFactory, GatewayServer, IrisClient
from .shared import CODE, hello, pending_rows

VICTIM_TOKEN = "nxn6Q4Tajr6UhwM3sJO-fr3dG0vI8jun"  # random, as an app makes them
ATTACKER_TOKEN = "xnxK68UgDI2jiXXQOFapG-qvtMWNJ_uq"


def approve(data_dir: Path, code: str) -> None:
    assert main(["pair", "approve", code, "--data-dir", str(data_dir)]) == 0


# 1. A pending request is bound to the token that made it.


async def test_a_pending_request_cannot_be_taken_over_with_the_same_device_id(
    gateway_server: GatewayServer,
) -> None:
    """Another app says hello with the real app's device_id to take over its pending pairing."""
    victim = await hello(gateway_server, VICTIM_TOKEN, device_id="pixel-7", device_name="Pixel 7")
    found = CODE.search(victim["payload"]["message"])
    assert found, victim
    code = found.group(1)
    attacker = await hello(gateway_server, ATTACKER_TOKEN, device_id="pixel-7", device_name="Pixel 7")
    assert attacker["type"] == "error"
    assert code not in attacker["payload"]["message"]  # the attacker never sees the victim's code
    again = await hello(gateway_server, VICTIM_TOKEN, device_id="pixel-7")
    assert code in again["payload"]["message"]  # and the victim's request is still its own
    approve(gateway_server.data_dir, code)
    ack = await hello(gateway_server, VICTIM_TOKEN, device_id="pixel-7")
    assert ack["type"] == "hello.ack"
    refused = await hello(gateway_server, ATTACKER_TOKEN, device_id="pixel-7")
    assert refused["type"] == "error" and refused["payload"]["code"] in ("auth", "rate_limited")


# 2. A valid token always gets in; guessing is bounded for the whole gateway.


async def test_a_paired_token_gets_in_however_many_hellos_failed(make_gateway: GatewayFactory) -> None:
    """Another app spends failed hellos to lock the paired app out."""
    server = await make_gateway(gateway_auth_failures=3)
    token = server.pair().token
    for i in range(10):
        await hello(server, f"wrong-token-{i}")
    assert (await hello(server, token))["type"] == "hello.ack"


async def test_the_guess_budget_is_for_the_whole_gateway_not_per_address(
    make_gateway: GatewayFactory,
) -> None:
    """Another app guesses tokens from many 127/8 source addresses to multiply its allowance."""
    server = await make_gateway(gateway_auth_failures=3)
    for i in range(3):
        answer = await hello(server, f"wrong-token-{i}")
        assert answer["payload"]["code"] == "auth"
    # Another 127/8 source address gets no allowance of its own.
    ws = await connect(server.url, local_addr=("127.0.0.2", 0))
    client = IrisClient(ws)
    server.clients.append(client)
    answer = await client.request("hello", {"token": "wrong-token-from-elsewhere"})
    assert answer["payload"]["code"] == "rate_limited"
    assert await client.closed() == CLOSE_POLICY
    # Past the budget, no pairing request is made either.
    late = await hello(server, VICTIM_TOKEN, device_id="late-phone")
    assert late["payload"]["code"] == "rate_limited"
    assert pending_rows(server.data_dir) == []


@pytest.mark.parametrize(
    "token",
    [
        "a" * 22,
        "a" * 200,
        "ab" * 30,
        "0123456789" * 4,
        "abcdefghijklmnopqrstu",  # 21 characters: under 128 bits even if random
        "has spaces and is long enough for it",
        "ünïcödé-tökën-ünïcödé-tökën",
    ],
)
async def test_a_low_entropy_app_token_is_refused_and_makes_no_request(
    gateway_server: GatewayServer, token: str
) -> None:
    """An app asks to pair with a guessable token (22 times "a")."""
    answer = await hello(gateway_server, token, device_id="pixel-7")
    assert answer["payload"]["code"] == "auth"
    assert "128 bits" in answer["payload"]["message"]
    assert pending_rows(gateway_server.data_dir) == []


# 3. The Origin check.


async def test_an_upgrade_with_an_origin_is_refused(gateway_server: GatewayServer) -> None:
    """A web page in the phone's browser opens the gateway's WebSocket."""
    with pytest.raises(InvalidStatus) as caught:
        await connect(gateway_server.url, origin="https://evil.example")  # type: ignore[arg-type]
    assert caught.value.response.status_code == 403
    assert pending_rows(gateway_server.data_dir) == []


# 4. What an unauthenticated hello can make the server store and do.


async def test_pending_requests_are_capped_and_the_existing_ones_kept(make_gateway: GatewayFactory) -> None:
    """Another app floods the door with pending pairing requests."""
    server = await make_gateway(gateway_max_pending_requests=3)
    codes = []
    for i in range(3):
        answer = await hello(server, f"{VICTIM_TOKEN}-{i}", device_id=f"phone-{i}")
        found = CODE.search(answer["payload"]["message"])
        assert found, answer
        codes.append(found.group(1))
    over = await hello(server, ATTACKER_TOKEN, device_id="one-too-many")
    assert over["payload"]["code"] == "rate_limited"
    assert "3 pairing requests" in over["payload"]["message"]
    assert CODE.search(over["payload"]["message"]) is None
    assert sorted(r["code"] for r in pending_rows(server.data_dir)) == sorted(codes)
    again = await hello(server, f"{VICTIM_TOKEN}-0", device_id="phone-0")  # still its own code
    assert codes[0] in again["payload"]["message"]
    approve(server.data_dir, codes[1])
    assert (await hello(server, f"{VICTIM_TOKEN}-1", device_id="phone-1"))["type"] == "hello.ack"


@pytest.mark.parametrize(
    "fields",
    [
        {"device_id": "d" * (DEVICE_ID_CHARS + 1)},
        {"device_id": "pixel-7", "device_name": "n" * (DEVICE_NAME_CHARS + 1)},
        {"device_id": "pixel-7", "token": "t" * 1000},
    ],
)
async def test_over_long_hello_fields_are_refused_and_nothing_is_stored(
    gateway_server: GatewayServer, fields: dict[str, str]
) -> None:
    """Another app sends hello fields past their caps to fill the store."""
    fields = dict(fields)
    answer = await hello(gateway_server, fields.pop("token", VICTIM_TOKEN), **fields)
    assert answer["payload"]["code"] == "auth"
    assert "bad hello payload" in answer["payload"]["message"]
    assert "at most" in answer["payload"]["message"]
    assert pending_rows(gateway_server.data_dir) == []


async def test_a_hello_over_max_frame_bytes_closes_the_connection_unread(
    make_gateway: GatewayFactory,
) -> None:
    """Another app sends a hello of a megabyte before it is authenticated."""
    server = await make_gateway(gateway_max_frame_bytes=1024)
    client = await server.open()
    frame = {"v": 1, "id": 1, "type": "hello", "payload": {"token": server.pair().token, "pad": "x" * 2000}}
    await client.send_raw(json.dumps(frame))
    assert await client.closed() == 1009  # message too big: no hello.ack, nothing read whole
    assert not [f for f in client.received if f["type"] == "hello.ack"]
    ok = await server.connect()  # the limit after hello is the advertised one, as before
    await ok.send_raw(json.dumps({"v": 1, "id": 2, "type": "ping", "payload": {"pad": "x" * 2000}}))
    assert (await ok.next("error"))["payload"]["code"] == "unsupported"


# 6. After a revoke, not one more frame of the device is handled.


async def test_a_revoked_devices_approval_sent_after_the_revoke_does_not_run_the_call(
    gateway_server: GatewayServer,
) -> None:
    """A revoked device answers a held call after the revoke."""
    issued = gateway_server.pair()
    app = await gateway_server.connect(issued.token)
    owner = await gateway_server.connect()
    call = asyncio.ensure_future(
        gateway_server.grpc.execute("SEND_MESSAGE", {"to": "+15551234", "body": "on my way"})
    )
    picker = await app.next("picker.approval")
    picker_id = picker["payload"]["picker_id"]
    conn = db_connect(db_path(gateway_server.data_dir))  # what `pair revoke` does, beside the server
    PairingStore(conn).revoke(issued.pairing_id)
    conn.close()
    await app.send_frame("picker.select", {"picker_id": picker_id, "value": "approve"}, id=77)
    assert await app.closed() == CLOSE_POLICY  # every frame it sent is behind the server now
    assert not [f for f in app.received if f.get("id") == 77 and f["type"] != "error"]
    assert not call.done()
    await owner.send_frame("picker.select", {"picker_id": picker_id, "value": "deny"})
    response = await call
    assert response.error.startswith("DENIED"), response


# 18 (part). Every frame counts against the rate limit, oversized ones too.


async def test_a_flood_of_oversized_frames_is_rate_limited(make_gateway: GatewayFactory) -> None:
    """A paired app floods frames between 256 KiB and 1 MiB to get past the rate limit."""
    server = await make_gateway(gateway_max_frame_bytes=1024, gateway_max_frames_per_second=2)
    client = await server.connect()
    for _ in range(20):
        await client.send_raw("x" * 3000)  # over max_frame_bytes, under the tolerance
    codes = [(await client.next("error"))["payload"]["code"] for _ in range(20)]
    assert "rate_limited" in codes
    assert codes.count("unsupported") <= 3


@pytest.mark.parametrize(
    "payload",
    [
        {"token": VICTIM_TOKEN, "device_id": 7},
        {"token": VICTIM_TOKEN, "device_id": "pixel-7", "device_name": ["a"]},
        {"token": [VICTIM_TOKEN], "device_id": "pixel-7"},
        {"token": VICTIM_TOKEN, "device_id": "pixel-7", "caps": "all"},
    ],
)
async def test_a_malformed_hello_is_refused_and_nothing_is_stored(
    gateway_server: GatewayServer, payload: dict[str, Any]
) -> None:
    """Another app sends malformed hellos to store junk."""
    answer = await hello(gateway_server, **payload)
    assert answer["payload"]["code"] == "auth"
    assert answer["payload"]["message"].startswith("bad hello payload")
    assert pending_rows(gateway_server.data_dir) == []


async def test_bad_tokens_spend_the_budget_and_a_pending_token_does_not(make_gateway: GatewayFactory) -> None:
    """Another app's bad tokens spend the guess budget, and must not make a pending app's hello spend it."""
    server = await make_gateway(gateway_auth_failures=2)
    first = await hello(server, VICTIM_TOKEN, device_id="pixel-7")  # one guess: a new request
    code = CODE.search(first["payload"]["message"])
    assert code
    for _ in range(5):  # asking again with the same token costs nothing
        assert code.group(1) in (await hello(server, VICTIM_TOKEN, device_id="pixel-7"))["payload"]["message"]
    assert (await hello(server, "no-such-token"))["payload"]["code"] == "auth"  # the second guess
    assert (await hello(server, "no-such-token-either"))["payload"]["code"] == "rate_limited"
    assert code.group(1) in (await hello(server, VICTIM_TOKEN, device_id="pixel-7"))["payload"]["message"]


async def test_a_revoked_device_that_stopped_reading_gets_no_frame_handled(
    gateway_server: GatewayServer,
) -> None:
    """A revoked device that stopped reading has its frames handled while its close waits."""
    issued = gateway_server.pair()
    slow = await gateway_server.slow(issued.token)  # reads only when told
    owner = await gateway_server.connect()
    call = asyncio.ensure_future(
        gateway_server.grpc.execute("SEND_MESSAGE", {"to": "+15551234", "body": "on my way"})
    )
    picker_id = (await owner.next("picker.approval"))["payload"]["picker_id"]
    conn = db_connect(db_path(gateway_server.data_dir))
    PairingStore(conn).revoke(issued.pairing_id)
    conn.close()
    for _ in range(3):  # sent without reading anything the server writes meanwhile
        await slow.send_frame("picker.select", {"picker_id": picker_id, "value": "approve"})
    await slow.read_until(lambda f: False)  # until the server has closed it: all its frames are in
    assert slow.close_code is not None
    assert not call.done()
    await owner.send_frame("picker.select", {"picker_id": picker_id, "value": "deny"})
    assert (await call).error.startswith("DENIED")
