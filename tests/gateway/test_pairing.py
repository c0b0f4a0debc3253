"""The whole pairing lifecycle: `pair new`, an app's own token, approve / deny, list, update,
revoke (which closes the device's connection at once), and how failures are told apart."""

from __future__ import annotations

import json
import logging
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from phoneuse_runtime.cli.main import main
from phoneuse_runtime.gateway.db import connect, db_path
from phoneuse_runtime.gateway.pairing import (
    CODE_ALPHABET,
    DAY_MS,
    PENDING_TTL_MS,
    PairingNotFound,
    PairingStore,
)
from phoneuse_runtime.gateway.server import CLOSE_POLICY
from phoneuse_runtime.kernel.events import now_ms

from .conftest import GatewayFactory, GatewayServer, IrisClient

CODE = re.compile(rf"pairing code: ([{CODE_ALPHABET}]{{4}}-[{CODE_ALPHABET}]{{4}})")
APP_TOKEN = "an-app-brings-its-own-token-0123456789"


def pair(capsys: pytest.CaptureFixture[str], data_dir: Path, *argv: str) -> tuple[int, str, str]:
    """Runs `phoneuse-runtime pair ...` on the data dir, in this process; (status, stdout, stderr)."""
    capsys.readouterr()
    status = main(["pair", *argv, "--data-dir", str(data_dir)])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def listed(capsys: pytest.CaptureFixture[str], data_dir: Path) -> dict[str, dict[str, Any]]:
    status, out, _ = pair(capsys, data_dir, "list", "--json")
    assert status == 0
    return {row["id"]: row for row in json.loads(out)}


async def ask_to_pair(server: GatewayServer, token: str = APP_TOKEN, device_id: str = "pixel-7") -> str:
    """An app says hello with a token of its own; returns the pairing code it is shown."""
    client = await server.open()
    answer = await client.hello(token, device_id=device_id, device_name="Pixel 7")
    assert answer["payload"]["code"] == "auth"
    assert await client.closed() == CLOSE_POLICY
    found = CODE.search(answer["payload"]["message"])
    assert found, answer
    return found.group(1)


async def test_pair_new_json_prints_one_object_and_the_qr_on_stderr(
    gateway_server: GatewayServer, capsys: pytest.CaptureFixture[str]
) -> None:
    before = now_ms()
    status, out, err = pair(capsys, gateway_server.data_dir, "new", "--name", "tablet", "--json")
    assert status == 0
    issued = json.loads(out)  # exactly one JSON object: anything else would not parse
    assert set(issued) == {"pairing_id", "token", "expires_at"}
    assert len(issued["token"]) >= 43  # 256 bits, url-safe base64
    assert before + 30 * DAY_MS <= issued["expires_at"] <= now_ms() + 30 * DAY_MS
    assert "█" in err or "▀" in err
    client = await gateway_server.open()
    assert (await client.hello(issued["token"], device_id="tablet-1"))["type"] == "hello.ack"
    row = listed(capsys, gateway_server.data_dir)[issued["pairing_id"]]
    assert (row["device_id"], row["state"]) == ("tablet-1", "paired")
    assert row["last_seen"] >= before


@pytest.mark.parametrize(("flags", "days"), [(["--permanent"], None), (["--ttl-days", "2"], 2)])
async def test_pair_new_permanent_or_with_a_ttl(
    gateway_server: GatewayServer, capsys: pytest.CaptureFixture[str], flags: list[str], days: int | None
) -> None:
    status, out, _ = pair(capsys, gateway_server.data_dir, "new", "--name", "x", "--json", *flags)
    assert status == 0
    expires = json.loads(out)["expires_at"]
    if days is None:
        assert expires is None
    else:
        assert abs(expires - (now_ms() + days * DAY_MS)) < 60_000


async def test_pair_new_shows_the_token_and_a_qr_code(
    gateway_server: GatewayServer, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = pair(capsys, gateway_server.data_dir, "new", "--name", "phone")
    assert status == 0
    assert err == ""
    token = out.split("shown only this once:")[1].split()[0]
    assert "▀" in out or "█" in out
    client = await gateway_server.open()
    assert (await client.hello(token))["type"] == "hello.ack"


@pytest.mark.parametrize(
    "argv",
    [
        ["new", "--name", "x", "--permanent", "--ttl-days", "3"],
        ["new", "--name", "x", "--ttl-days", "0"],
        ["new", "--name", "x", "--ttl-days", "soon"],
        ["new"],
        ["update", "abc"],
    ],
)
def test_bad_usage_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["pair", *argv, "--data-dir", str(tmp_path)])
    assert exited.value.code == 2


async def test_an_app_token_is_pending_until_approved(
    gateway_server: GatewayServer, capsys: pytest.CaptureFixture[str]
) -> None:
    code = await ask_to_pair(gateway_server)
    assert await ask_to_pair(gateway_server) == code  # idempotent per token, across disconnects
    # Another token with the same device_id is another request: it never sees this code.
    other = await ask_to_pair(gateway_server, token=APP_TOKEN + "-new")
    assert other != code
    rows = listed(capsys, gateway_server.data_dir)
    assert rows[code]["kind"] == "pending"
    assert rows[code]["device_id"] == "pixel-7"
    status, out, _ = pair(capsys, gateway_server.data_dir, "approve", code.lower().replace("-", ""))
    assert status == 0, out
    client = await gateway_server.open()
    ack = await client.hello(APP_TOKEN, device_id="pixel-7")  # the token that made the request
    assert ack["type"] == "hello.ack"
    rows = listed(capsys, gateway_server.data_dir)
    assert code not in rows
    (paired,) = [r for r in rows.values() if r["kind"] == "paired"]
    assert paired["state"] == "paired"
    assert paired["last_seen"] is not None
    assert paired["name"] == "Pixel 7"
    assert rows[other]["kind"] == "pending"  # the other token's request waits on, unpaired


async def test_a_denied_request_is_gone_and_its_token_still_opens_nothing(
    gateway_server: GatewayServer, capsys: pytest.CaptureFixture[str]
) -> None:
    code = await ask_to_pair(gateway_server)
    assert pair(capsys, gateway_server.data_dir, "deny", code)[0] == 0
    assert listed(capsys, gateway_server.data_dir) == {}
    assert pair(capsys, gateway_server.data_dir, "approve", code)[0] == 3


async def test_approve_permanent(gateway_server: GatewayServer, capsys: pytest.CaptureFixture[str]) -> None:
    code = await ask_to_pair(gateway_server)
    assert pair(capsys, gateway_server.data_dir, "approve", code, "--permanent")[0] == 0
    (row,) = listed(capsys, gateway_server.data_dir).values()
    assert (row["permanent"], row["expires_at"]) == (True, None)


def test_a_pending_request_expires_after_ten_minutes(tmp_path: Path) -> None:
    conn = connect(db_path(tmp_path))
    PairingStore.create_tables(conn)
    store = PairingStore(conn)
    with pytest.raises(Exception, match="pairing code: ") as refused:
        store.authenticate(APP_TOKEN, device_id="d", now=1_000)
    code = CODE.search(str(refused.value))
    assert code
    with pytest.raises(PairingNotFound):
        store.approve(code.group(1), now=1_000 + PENDING_TTL_MS)
    # The app asks again after the expiry: a new request, with a new deadline.
    with pytest.raises(Exception, match="pairing code: ") as again:
        store.authenticate(APP_TOKEN, device_id="d", now=2_000 + PENDING_TTL_MS)
    renewed = CODE.search(str(again.value))
    assert renewed
    assert store.approve(renewed.group(1), now=3_000 + PENDING_TTL_MS).device_id == "d"


async def test_a_short_app_token_is_refused_without_a_request(
    gateway_server: GatewayServer, capsys: pytest.CaptureFixture[str]
) -> None:
    client = await gateway_server.open()
    answer = await client.hello("short", device_id="d")
    assert "at least" in answer["payload"]["message"]
    assert listed(capsys, gateway_server.data_dir) == {}


async def test_revoking_closes_the_live_connection_at_once(
    gateway_server: GatewayServer, capsys: pytest.CaptureFixture[str]
) -> None:
    issued = gateway_server.pair()
    client = await gateway_server.connect(issued.token)
    other = await gateway_server.connect()
    assert pair(capsys, gateway_server.data_dir, "revoke", issued.pairing_id)[0] == 0
    error = await client.next("error")
    assert error["payload"]["code"] == "auth"
    assert await client.closed() == CLOSE_POLICY
    assert (await other.request("ping"))["type"] == "pong"
    again = await gateway_server.open()
    assert "revoked" in (await again.hello(issued.token))["payload"]["message"]
    assert listed(capsys, gateway_server.data_dir)[issued.pairing_id]["state"] == "revoked"


async def test_update_makes_a_pairing_permanent_or_gives_it_a_ttl(
    gateway_server: GatewayServer, capsys: pytest.CaptureFixture[str]
) -> None:
    issued = gateway_server.pair(ttl_days=1, now=0)  # long expired
    client = await gateway_server.open()
    assert (await client.hello(issued.token))["payload"]["code"] == "auth"
    assert pair(capsys, gateway_server.data_dir, "update", issued.pairing_id, "--permanent")[0] == 0
    row = listed(capsys, gateway_server.data_dir)[issued.pairing_id]
    assert (row["state"], row["permanent"], row["expires_at"]) == ("paired", True, None)
    await gateway_server.connect(issued.token)
    assert pair(capsys, gateway_server.data_dir, "update", issued.pairing_id, "--ttl-days", "3")[0] == 0
    row = listed(capsys, gateway_server.data_dir)[issued.pairing_id]
    assert row["permanent"] is False
    assert abs(row["expires_at"] - (now_ms() + 3 * DAY_MS)) < 60_000


@pytest.mark.parametrize(
    "argv",
    [["revoke", "nope"], ["update", "nope", "--permanent"], ["approve", "AAAA-AAAA"], ["deny", "AAAA-AAAA"]],
)
async def test_a_missing_id_is_not_found_exit_3(
    gateway_server: GatewayServer, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    status, _, err = pair(capsys, gateway_server.data_dir, *argv)
    assert status == 3
    assert err.startswith("NOT_FOUND: ")


@pytest.mark.parametrize(
    "argv", [["list"], ["revoke", "nope"], ["new", "--name", "x"], ["deny", "AAAA-AAAA"]]
)
def test_a_store_failure_is_internal_exit_1_never_not_found(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    db_path(tmp_path).write_bytes(b"this is not a database, it is a sandwich" * 100)
    status, _, err = pair(capsys, tmp_path, *argv)
    assert status == 1
    assert err.startswith("INTERNAL: ")
    assert "NOT_FOUND" not in err


async def test_an_unreadable_expiry_counts_as_expired_never_permanent(
    gateway_server: GatewayServer, capsys: pytest.CaptureFixture[str]
) -> None:
    issued = gateway_server.pair()
    conn = sqlite3.connect(db_path(gateway_server.data_dir))
    with conn:
        conn.execute("UPDATE pairings SET expires_ms = 'next tuesday' WHERE id = ?", (issued.pairing_id,))
    conn.close()
    row = listed(capsys, gateway_server.data_dir)[issued.pairing_id]
    assert (row["state"], row["permanent"]) == ("expired", False)
    client = await gateway_server.open()
    assert "expired" in (await client.hello(issued.token))["payload"]["message"]


async def test_tokens_are_stored_hashed_and_never_logged(
    gateway_server: GatewayServer, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    issued = gateway_server.pair()
    await gateway_server.connect(issued.token)
    await ask_to_pair(gateway_server)
    stored = b"".join(p.read_bytes() for p in gateway_server.data_dir.glob("gateway.sqlite3*"))
    for token in (issued.token, APP_TOKEN):
        assert token.encode() not in stored
        assert token not in caplog.text
    assert db_path(gateway_server.data_dir).stat().st_mode & 0o077 == 0


async def test_repeated_auth_failures_are_rate_limited_but_never_a_paired_token(
    make_gateway: GatewayFactory,
) -> None:
    server = await make_gateway(gateway_auth_failures=3)
    for i in range(3):
        client = await server.open()
        answer = await client.request("hello", {"token": f"wrong-token-{i}"})
        assert answer["payload"]["code"] == "auth"
    client = await server.open()
    answer = await client.request("hello", {"token": "wrong-token-again"})
    assert answer["payload"]["code"] == "rate_limited"
    assert await client.closed() == CLOSE_POLICY
    assert (await (await server.open()).hello(server.pair().token))["type"] == "hello.ack"


async def test_an_app_waiting_for_approval_may_ask_again_and_again(make_gateway: GatewayFactory) -> None:
    server = await make_gateway(gateway_auth_failures=2)
    codes = {await ask_to_pair(server) for _ in range(6)}
    assert len(codes) == 1
    client: IrisClient = await server.connect()  # the address is not blocked
    assert (await client.request("ping"))["type"] == "pong"


async def test_a_pairing_that_expires_while_connected_is_closed(gateway_server: GatewayServer) -> None:
    issued = gateway_server.pair()
    client = await gateway_server.connect(issued.token)
    conn = sqlite3.connect(db_path(gateway_server.data_dir))
    with conn:
        conn.execute("UPDATE pairings SET expires_ms = 1 WHERE id = ?", (issued.pairing_id,))
    conn.close()
    assert (await client.next("error"))["payload"]["code"] == "auth"
    assert await client.closed() == CLOSE_POLICY
