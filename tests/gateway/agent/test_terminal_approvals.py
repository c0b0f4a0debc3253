"""The owner answers from the terminal (issue 16, finding 11): `phoneuse-runtime approvals ...`
as a subprocess on the data dir of a running server (the production factory, gRPC on port 0),
with a pairing issued as `pair new` does and no app ever connected."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import stat
import sys
from pathlib import Path

import pytest

from phoneuse_runtime.owner.approval_store import store_path
from phoneuse_runtime.rpc import protocol_pb2 as pb

from ..conftest import GatewayFactory, GatewayServer

EXE = [sys.executable, "-m", "phoneuse_runtime"]
SMS = {"to": "+15551234", "body": "on my way"}
EXIT_NOT_FOUND = 3


async def cli(data_dir: Path, *args: str) -> tuple[int, str, str]:
    """The CLI as a subprocess, awaited without blocking the server in this process."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PHONEUSE_")}
    env["PHONEUSE_DATA_DIR"] = str(data_dir)
    # Port 0: `doctor` checks that `serve` could listen, and the default ports may be taken.
    env.update(PHONEUSE_GRPC_LISTEN="127.0.0.1:0", PHONEUSE_GATEWAY_LISTEN="127.0.0.1:0")
    proc = await asyncio.create_subprocess_exec(
        *EXE, *args, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None, proc
    return proc.returncode, out.decode(), err.decode()


async def held(
    server: GatewayServer, params: dict[str, str] = SMS
) -> tuple[asyncio.Future[pb.ActionResponse], str]:
    """Starts a held SEND_MESSAGE; returns it and its approval id, as `approvals list --json` shows it."""
    call = asyncio.ensure_future(server.grpc.execute("SEND_MESSAGE", params, timeout_ms=20_000))
    while True:  # the hold is announced on the bus before it is mirrored: read until it is listed
        code, out, _ = await cli(server.data_dir, "approvals", "list", "--json")
        assert code == 0
        rows = json.loads(out)
        if rows:
            return call, rows[0]["approval_id"]


async def paired(make_gateway: GatewayFactory) -> GatewayServer:
    server = await make_gateway()
    server.pair()  # `pair new`: paired, but no app has ever connected
    return server


async def test_the_owner_approves_from_the_terminal(make_gateway: GatewayFactory) -> None:
    server = await paired(make_gateway)
    call, approval_id = await held(server, {"body": "x" * 300 + "\u202e", "to": "+19005550199"})
    code, out, _ = await cli(server.data_dir, "approvals", "list")
    assert code == 0
    assert out.startswith(f"{approval_id}  SEND_MESSAGE to=+19005550199 body=xxx")
    assert "\u202e" not in out
    path = store_path(server.data_dir)
    for name in (path.name, path.name + "-wal", path.name + "-shm"):
        assert stat.S_IMODE((path.parent / name).stat().st_mode) == 0o600, name
    code, out, err = await cli(server.data_dir, "approvals", "approve", approval_id[:8])
    assert code == 0, err
    response = await call
    assert response.success, response.error
    assert out.startswith(f"approved {approval_id}: SEND_MESSAGE to=+19005550199")
    code, out, _ = await cli(server.data_dir, "approvals", "list")
    assert out.strip() == "no call is held for an approval"


async def test_the_owner_denies_from_the_terminal(make_gateway: GatewayFactory) -> None:
    server = await paired(make_gateway)
    call, approval_id = await held(server)
    code, _, err = await cli(server.data_dir, "approvals", "deny", approval_id)
    assert code == 0, err
    response = await call
    assert response.error.startswith("DENIED: SEND_MESSAGE was declined by terminal (")


async def test_an_unknown_id_is_not_found_apart_from_errors(make_gateway: GatewayFactory) -> None:
    server = await paired(make_gateway)
    code, _, err = await cli(server.data_dir, "approvals", "approve", "0123456789abcdef")
    assert code == EXIT_NOT_FOUND
    assert err.startswith("NOT_FOUND: no pending approval '0123456789abcdef'")
    call, approval_id = await held(server)
    code, _, _ = await cli(server.data_dir, "approvals", "deny", approval_id)
    assert code == 0
    await call
    code, _, err = await cli(server.data_dir, "approvals", "approve", approval_id)  # answered already
    assert code == EXIT_NOT_FOUND and err.startswith("NOT_FOUND: ")
    path = store_path(server.data_dir)
    for side in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        side.unlink(missing_ok=True)
    path.mkdir()  # a store that cannot be opened is an error, never "not found"
    code, _, err = await cli(server.data_dir, "approvals", "list")
    assert code == 1 and err.startswith("INTERNAL: the approval store failed")


async def test_a_terminal_answer_is_taken_while_the_server_stops(make_gateway: GatewayFactory) -> None:
    """The terminal is a component (`terminal`, one of default_components): while the app stops,
    within its grace, it still answers what is held, as the runtime still lets held calls finish."""
    server = await paired(make_gateway)
    assert "terminal" in server.app.components
    call, approval_id = await held(server)
    server.stopped = True
    stopping = asyncio.ensure_future(server.app.stop(grace_s=30))
    code, _, err = await cli(server.data_dir, "approvals", "approve", approval_id)
    assert code == 0, err
    response = await call
    assert response.success, response.error
    await server.grpc.channel.close()
    await stopping
    assert not (store_path(server.data_dir).exists() and still_listed(server.data_dir))


def still_listed(data_dir: Path) -> bool:
    from phoneuse_runtime.owner.approval_store import connect, pending

    conn = connect(store_path(data_dir))
    try:
        return bool(pending(conn))
    finally:
        conn.close()


async def test_the_timeout_names_the_approval_and_how_to_answer(make_gateway: GatewayFactory) -> None:
    server = await paired(make_gateway)
    response = await server.grpc.execute("SEND_MESSAGE", SMS, timeout_ms=300)
    assert response.error.startswith("TIMEOUT: no answer came to approval ")
    approval_id = json.loads(response.result_json)["approval_id"]
    assert f"`phoneuse-runtime approvals approve {approval_id}`" in response.error
    assert 'approvals = "off"' in response.error


def expire_all(data_dir: Path) -> None:
    """Every pairing's lifetime ends now (as 30 days passing would)."""
    import sqlite3

    conn = sqlite3.connect(data_dir / "gateway.sqlite3")
    with conn:
        conn.execute("UPDATE pairings SET permanent = 0, expires_ms = 1")
    conn.close()


@pytest.mark.usefixtures("default_ports_taken")  # as when the quick start's own `serve` runs beside
async def test_doctor_says_when_the_last_pairing_expired(make_gateway: GatewayFactory) -> None:
    server = await paired(make_gateway)
    code, out, err = await cli(server.data_dir, "doctor", "--json")
    assert code == 0, f"doctor exited {code}: {out}{err}"
    [check] = [c for c in json.loads(out)["checks"] if c["name"] == "approvals"]
    assert check["status"] == "ok" and "an app is paired" in check["detail"], check
    expire_all(server.data_dir)
    code, out, err = await cli(server.data_dir, "doctor", "--json")
    assert code == 0, f"a warning, not a failure; doctor exited {code}: {out}{err}"
    [check] = [c for c in json.loads(out)["checks"] if c["name"] == "approvals"]
    assert check["status"] == "warn", check
    assert check["detail"].startswith("the last app pairing expired on 1970-01-01 00:00 UTC"), check
    assert "nothing is held any more" in check["detail"] and "pair new" in check["fix"], check


async def test_the_log_says_when_the_last_pairing_expired(
    make_gateway: GatewayFactory, caplog: pytest.LogCaptureFixture
) -> None:
    server = await paired(make_gateway)
    first = await server.grpc.execute("SEND_MESSAGE", SMS, timeout_ms=200)
    assert first.error.startswith("TIMEOUT")  # held while paired
    expire_all(server.data_dir)
    with caplog.at_level(logging.WARNING, logger="phoneuse_runtime.gateway.agent.approvals"):
        await server.grpc.ok("SEND_MESSAGE", SMS)  # nothing is held any more
    [warning] = [r.getMessage() for r in caplog.records if "last app pairing" in r.getMessage()]
    assert 'with approvals = "paired" nothing is held any more (SEND_MESSAGE runs unasked)' in warning
