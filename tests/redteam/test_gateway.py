"""The Iris gateway's door and its loop, attacked (issue 25: 10, 11, 18): a token shape real
apps use refused, one device's huge messages stalling every other device, a local flood of
hellos keeping a new app from its pairing code. Each asserts that the owner's pairings and
the other devices' service were not touched."""

from __future__ import annotations

import asyncio
import json
import secrets
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from phoneuse_runtime.cli.main import main
from phoneuse_runtime.gateway.db import connect as db_connect
from phoneuse_runtime.gateway.db import db_path
from phoneuse_runtime.gateway.pairing import token_problem

from ..gateway.conftest import GatewayFactory, GatewayServer
from .shared import CODE, hello, pending_rows

# 11. The app's own token, in the shapes real apps make it.

SHAPES: dict[str, Callable[[], str]] = {
    "uuid4": lambda: str(uuid.uuid4()),
    "UUID4": lambda: str(uuid.uuid4()).upper(),
    "app- + 40 hex": lambda: "app-" + secrets.token_hex(20),
    "sk_live_ + 32 hex": lambda: "sk_live_" + secrets.token_hex(16),
    "app_ + base64url": lambda: "app_" + secrets.token_urlsafe(24),
    "iris: + uuid4": lambda: "iris:" + str(uuid.uuid4()),
    "base64url 22": lambda: secrets.token_urlsafe(16),
    "hex 32": lambda: secrets.token_hex(16),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
async def test_an_app_token_of_a_common_shape_pairs(gateway_server: GatewayServer, shape: str) -> None:
    """An Iris app whose own token is a UUID4 or a prefix and a random body asks to pair: it
    gets a pairing code (and no one else's pairing is made or changed)."""
    token = SHAPES[shape]()
    answer = await hello(gateway_server, token, device_id="pixel-7")
    found = CODE.search(answer["payload"]["message"])
    assert found, answer
    assert [r["code"] for r in pending_rows(gateway_server.data_dir)] == [found.group(1)]
    assert main(["pair", "approve", found.group(1), "--data-dir", str(gateway_server.data_dir)]) == 0
    ack = await hello(gateway_server, token, device_id="pixel-7")
    assert ack["type"] == "hello.ack"


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_ten_thousand_tokens_of_each_shape_pass_the_screen(shape: str) -> None:
    """The screen refuses not one of 10,000 random tokens of a shape real apps make."""
    make = SHAPES[shape]
    refused = [t for t in (make() for _ in range(10_000)) if token_problem(t) is not None]
    assert refused == []


@pytest.mark.parametrize(
    "token",
    [
        "a" * 22,
        "ab" * 30,
        "0123456789" * 4,
        "app-" + "0" * 40,
        "app-" + "0123456789abcdef" * 3,
        "app-" + "correcthorsebatterystaple",
        "correct-horse-battery-staple",
        "00000000-0000-4000-8000-000000000000",
        "12345678-1234-1234-1234-123456789abc",
        "sk_live_" + "abcdef" * 6,
        "Password1Password1Password1",
        "iris:has spaces and is long enough for it",
    ],
)
async def test_a_typed_constant_or_patterned_token_is_still_refused(
    gateway_server: GatewayServer, token: str
) -> None:
    """A typed, constant or patterned token, bare or behind a prefix, is refused with the rule
    and makes no pending request."""
    answer = await hello(gateway_server, token, device_id="pixel-7")
    assert answer["payload"]["code"] == "auth"
    assert "128 bits" in answer["payload"]["message"]
    assert pending_rows(gateway_server.data_dir) == []


# 10. One paired device floods the chat with huge messages.

FLOOD = 40  # 8 MB: far more work than one round trip of the other device
LINE = "[12:30] alice: see you at the station, platform 4, the 17:05 train costs $12.50\n"
HUGE = (LINE * 2400)[:190_000] + "Your verification code is 839201\n"


def _answers(request_id: int) -> Callable[[dict[str, Any]], bool]:
    return lambda frame: frame.get("id") == request_id


async def test_one_device_flooding_huge_messages_does_not_stall_the_others(
    make_gateway: GatewayFactory,
) -> None:
    """A paired device sends 200 KB chat messages back to back: once the flood is under way
    (its first message answered), another device's ping and its own message are answered, and
    its message is stored before the flood's last one; the flood's code is kept masked."""
    server = await make_gateway(gateway_max_frames_per_second=1000)
    flooder = await server.connect()
    other = await server.connect()
    ids = list(range(flooder.next_id, flooder.next_id + FLOOD))
    flooder.next_id += FLOOD

    async def flood() -> None:
        for request_id in ids:
            await flooder.send_frame("message.send", {"text": HUGE}, id=request_id)

    sending = asyncio.create_task(flood())
    first = await flooder.next_where(_answers(ids[0]))
    assert first["type"] != "error", first
    pong = await other.request("ping", {"ts": 1})
    sent = await other.request("message.send", {"text": "still here?"})
    assert pong["type"] == "pong" and sent["type"] != "error", sent
    await sending
    answered = [await flooder.next_where(_answers(request_id)) for request_id in ids[1:]]
    assert all(a["type"] != "error" for a in answered), answered
    # In the order the store took them: the other device's message before the flood's last.
    conn = db_connect(db_path(server.data_dir))
    try:
        rows = [
            (str(r[0]), int(r[1]))
            for r in conn.execute("SELECT substr(text, -40), length(text) FROM chat_messages ORDER BY rowid")
        ]
    finally:
        conn.close()
    order = [text for text, _ in rows]
    assert order.index("still here?") < len(order) - 1, order
    flood_texts = [text for text, size in rows if size > 1000]
    assert len(flood_texts) == FLOOD
    assert all(t.endswith("Your verification code is [code]\n") for t in flood_texts)


# 18. A local flood of hellos against the gateway-wide budget and the pending cap.


async def test_a_hello_flood_leaves_the_owners_ways_in(
    make_gateway: GatewayFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    """Another app on the phone spends the gateway's failed-hello budget and fills the pending
    cap: an app already waiting is still told its own code, a paired app still gets in, and the
    owner's own `pair new` gets a new app in at once; no request of the flood's is paired."""
    server = await make_gateway(gateway_auth_failures=4, gateway_max_pending_requests=2)
    paired = server.pair("the owner's phone")
    tablet = "app-" + secrets.token_hex(20)
    waiting = await hello(server, tablet, device_id="owners-tablet")
    found = CODE.search(waiting["payload"]["message"])
    assert found, waiting
    flood = [await hello(server, secrets.token_urlsafe(24), device_id=f"flood-{i}") for i in range(8)]
    assert {f["payload"]["code"] for f in flood[-4:]} == {"rate_limited"}
    assert all("phoneuse-runtime pair new" in f["payload"]["message"] for f in flood[-4:])  # the way out
    again = await hello(server, tablet, device_id="owners-tablet")
    assert found.group(1) in again["payload"]["message"]  # its own code, whatever the flood spent
    assert (await server.connect(paired.token)) is not None
    capsys.readouterr()
    assert main(["pair", "new", "--name", "new phone", "--json", "--data-dir", str(server.data_dir)]) == 0
    issued = json.loads(capsys.readouterr().out)
    assert (await server.connect(issued["token"])) is not None
    conn = db_connect(db_path(server.data_dir))
    try:
        names = sorted(str(r[0]) for r in conn.execute("SELECT name FROM pairings"))
    finally:
        conn.close()
    assert names == ["new phone", "the owner's phone"]
