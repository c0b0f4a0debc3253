"""What several of the red team's files use: the phone in front on the sim behind a gateway
server, the swipe that pulls the shade down, and the Iris door's pairing store and hello."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

from phoneuse_runtime.device.sim.device import SimDevice
from phoneuse_runtime.gateway.db import connect as db_connect
from phoneuse_runtime.gateway.db import db_path
from phoneuse_runtime.gateway.pairing import CODE_ALPHABET, PairingStore
from phoneuse_runtime.gateway.server import CLOSE_POLICY

from ..gateway.conftest import GatewayServer

LAUNCHER = "com.google.android.apps.nexuslauncher"
SHADE = {"x1": "540", "y1": "10", "x2": "540", "y2": "1400", "duration_ms": "20"}
CODE = re.compile(rf"pairing code: ([{CODE_ALPHABET}]{{4}}-[{CODE_ALPHABET}]{{4}})")


def sim(server: GatewayServer) -> SimDevice:
    device = server.app.runtime.device
    assert isinstance(device, SimDevice)
    return device


async def front(server: GatewayServer) -> str:
    return (await sim(server).foreground()).package


def pending_rows(data_dir: Path) -> list[sqlite3.Row]:
    conn = db_connect(db_path(data_dir))
    try:
        PairingStore.create_tables(conn)
        return list(conn.execute("SELECT * FROM pairing_requests"))
    finally:
        conn.close()


async def hello(server: GatewayServer, token: object, **fields: Any) -> dict[str, Any]:
    """One connection's hello; the answer (and, when refused, the close that follows)."""
    client = await server.open()
    answer = await client.request("hello", {"token": token, **fields})
    if answer["type"] == "error":
        assert await client.closed() == CLOSE_POLICY
    return answer
