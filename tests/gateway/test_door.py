"""The gateway's door as the owner means it: random app tokens pass the entropy rule, a listed Origin
is served, the longest names allowed are taken, a token is found without a scan, an older store
migrates (the attacks on the door: tests/redteam/test_iris_door.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from phoneuse_runtime.gateway.db import connect as db_connect
from phoneuse_runtime.gateway.db import db_path
from phoneuse_runtime.gateway.limits import DEVICE_ID_CHARS, DEVICE_NAME_CHARS
from phoneuse_runtime.gateway.pairing import PairingStore, token_problem

from ..redteam.shared import CODE, hello
from ..redteam.test_iris_door import VICTIM_TOKEN, approve
from .conftest import GatewayFactory, GatewayServer, IrisClient


def _ops(store: PairingStore, token: str) -> int:
    """How many SQLite VM steps (in thousands) one authenticate takes."""
    count = [0]

    def tick() -> int:
        count[0] += 1
        return 0

    store.conn.set_progress_handler(tick, 1000)
    try:
        store.authenticate(token, device_id="d")
    finally:
        store.conn.set_progress_handler(None, 1000)
    return count[0]


OLD_DDL = """
CREATE TABLE pairings (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, device_id TEXT NOT NULL DEFAULT '',
    salt BLOB NOT NULL, token_hash BLOB NOT NULL, created_ms INTEGER NOT NULL,
    permanent INTEGER NOT NULL DEFAULT 0, expires_ms INTEGER, revoked_ms INTEGER, last_seen_ms INTEGER
);
CREATE TABLE pairing_requests (
    code TEXT PRIMARY KEY, device_id TEXT NOT NULL UNIQUE, name TEXT NOT NULL, salt BLOB NOT NULL,
    token_hash BLOB NOT NULL, created_ms INTEGER NOT NULL, expires_ms INTEGER NOT NULL
);
"""


def test_random_tokens_pass_the_entropy_rule() -> None:
    import secrets

    for _ in range(200):
        assert token_problem(secrets.token_urlsafe(16)) is None  # 22 characters, 128 bits
        assert token_problem(secrets.token_urlsafe(32)) is None
        assert token_problem(secrets.token_hex(16)) is None
        assert token_problem(secrets.token_hex(16).upper()) is None


async def test_a_listed_origin_is_served(make_gateway: GatewayFactory) -> None:
    server = await make_gateway(gateway_allowed_origins=frozenset({"https://iris.example"}))
    ws = await connect(server.url, origin="https://iris.example")  # type: ignore[arg-type]
    client = IrisClient(ws)
    server.clients.append(client)
    assert (await client.hello(server.pair().token))["type"] == "hello.ack"
    with pytest.raises(InvalidStatus) as caught:
        await connect(server.url, origin="https://evil.example")  # type: ignore[arg-type]
    assert caught.value.response.status_code == 403


async def test_the_longest_names_are_taken(gateway_server: GatewayServer) -> None:
    answer = await hello(
        gateway_server, VICTIM_TOKEN, device_id="d" * DEVICE_ID_CHARS, device_name="n" * DEVICE_NAME_CHARS
    )
    assert CODE.search(answer["payload"]["message"]), answer


def test_a_token_is_found_without_scanning_the_rows(tmp_path: Path) -> None:
    conn = db_connect(db_path(tmp_path))
    PairingStore.create_tables(conn)
    store = PairingStore(conn, max_pending=100_000)
    few = _ops(store, store.issue("phone").token)
    for i in range(3000):
        store.issue(f"other {i}")
    for i in range(3000):
        with pytest.raises(Exception, match="pairing code"):
            store.authenticate(f"{VICTIM_TOKEN}-{i}", device_id=f"phone-{i}")
    assert _ops(store, store.issue("the newest").token) <= few + 2
    count = [0]
    store.conn.set_progress_handler(lambda: count.__setitem__(0, count[0] + 1) or 0, 1000)
    with pytest.raises(Exception, match="waiting for the owner"):
        store.authenticate(f"{VICTIM_TOKEN}-2999", device_id="phone-2999")
    assert count[0] <= few + 2
    conn.close()


async def test_a_store_of_an_older_version_keeps_its_pairings_and_requests(
    make_gateway: GatewayFactory, tmp_path: Path
) -> None:
    import hashlib
    import secrets

    from phoneuse_runtime.kernel.events import now_ms

    data_dir = tmp_path / "old"
    data_dir.mkdir()
    conn = db_connect(db_path(data_dir))
    conn.executescript(OLD_DDL)
    token, salt = secrets.token_urlsafe(32), secrets.token_bytes(16)
    old_hash = hashlib.sha256(salt + token.encode()).digest()
    conn.execute(
        "INSERT INTO pairings (id, name, salt, token_hash, created_ms, permanent) VALUES (?, ?, ?, ?, ?, 1)",
        ("old1", "old phone", salt, old_hash, now_ms()),
    )
    req_salt = secrets.token_bytes(16)
    conn.execute(
        "INSERT INTO pairing_requests VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            "ACDE-FGHJ",
            "pixel-old",
            "Old Pixel",
            req_salt,
            hashlib.sha256(req_salt + VICTIM_TOKEN.encode()).digest(),
            now_ms(),
            now_ms() + 600_000,
        ),
    )
    conn.close()
    server = await make_gateway(data_dir=data_dir)
    assert (await hello(server, token, device_id="old"))["type"] == "hello.ack"
    waiting = await hello(server, VICTIM_TOKEN, device_id="pixel-old")
    assert "ACDE-FGHJ" in waiting["payload"]["message"]
    approve(data_dir, "ACDE-FGHJ")
    assert (await hello(server, VICTIM_TOKEN, device_id="pixel-old"))["type"] == "hello.ack"
    assert (await hello(server, token, device_id="old"))["type"] == "hello.ack"  # again, migrated
