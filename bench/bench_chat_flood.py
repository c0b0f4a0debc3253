"""The chat flood: what 200 messages of 200 KB cost the server, with 3 pairings (the sender and
two devices that are offline, so that each gets a copy of every message in its outbox).

For each variant a fresh `phoneuse-runtime serve` (device sim); the sender says hello and sends
the messages one after the other (each answered before the next); then the server's RSS and the
gateway store's size on disk (gateway.sqlite3 and its -wal), with the bytes of message text kept
and each outbox's bytes, read from the file.

- bounded: the defaults (gateway_chat_max_bytes 32 MiB, gateway_outbox_max_bytes 8 MiB a device);
- unbounded: both quotas set past the flood, as before they existed.

    python bench/bench_chat_flood.py [--messages 200] [--kib 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sqlite3
import time
from pathlib import Path

import psutil
from _common import ServeProcess, machine, table
from websockets.asyncio.client import connect

from phoneuse_runtime.gateway.db import connect as db_connect
from phoneuse_runtime.gateway.db import db_path
from phoneuse_runtime.gateway.pairing import PairingStore

MIB = 1024 * 1024
HUGE = str(1 << 40)


def listening_ports(pid: int) -> set[int]:
    """The TCP ports process `pid` listens on (the gateway's is the one that is not gRPC's)."""
    inodes = {
        os.readlink(fd)[8:-1]
        for fd in Path(f"/proc/{pid}/fd").iterdir()
        if fd.is_symlink() and os.readlink(fd).startswith("socket:[")
    }
    ports = set()
    for line in Path(f"/proc/{pid}/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[3] == "0A" and fields[9] in inodes:
            ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def stored(data_dir: Path) -> tuple[int, int, list[int]]:
    path = db_path(data_dir)
    on_disk = sum(p.stat().st_size for p in (path, path.with_name(path.name + "-wal")) if p.exists())
    conn = sqlite3.connect(path)
    try:
        text = conn.execute(
            "SELECT coalesce(sum(length(CAST(text AS BLOB))), 0) FROM chat_messages"
        ).fetchone()[0]
        outboxes = [
            int(r[0])
            for r in conn.execute("SELECT sum(length(CAST(frame AS BLOB))) FROM outbox GROUP BY pairing_id")
        ]
    finally:
        conn.close()
    return on_disk, int(text), outboxes


async def flood(port: int, token: str, messages: int, size: int) -> float:
    async with connect(f"ws://127.0.0.1:{port}/ws", max_size=None) as ws:
        await ws.send(
            json.dumps({"v": 1, "id": 1, "type": "hello", "payload": {"token": token, "device_id": "flood"}})
        )
        assert json.loads(await ws.recv())["type"] == "hello.ack"
        started = time.monotonic()
        for i in range(messages):
            text = f"m{i:04d} " + "x" * (size - 6)
            await ws.send(
                json.dumps({"v": 1, "id": i + 2, "type": "message.send", "payload": {"text": text}})
            )
            while json.loads(await ws.recv()).get("id") != i + 2:
                pass
        return time.monotonic() - started


def run(variant: str, messages: int, size: int) -> list[str]:
    env = {"PHONEUSE_GATEWAY_LISTEN": "127.0.0.1:0", "PHONEUSE_GATEWAY_MAX_FRAMES_PER_SECOND": "10000"}
    if variant == "unbounded":
        env.update(PHONEUSE_GATEWAY_CHAT_MAX_BYTES=HUGE, PHONEUSE_GATEWAY_OUTBOX_MAX_BYTES=HUGE)
    where: list[Path] = []
    with ServeProcess(prepare=where.append, env=env) as served:
        data_dir = where[0]
        conn = db_connect(db_path(data_dir))
        try:
            PairingStore.create_tables(conn)
            tokens = [PairingStore(conn).issue(f"device {i}").token for i in range(3)]
        finally:
            conn.close()
        gateway = (listening_ports(served.pid) - {served.port}).pop()
        before = psutil.Process(served.pid).memory_info().rss
        elapsed = asyncio.run(flood(gateway, tokens[0], messages, size))
        rss = psutil.Process(served.pid).memory_info().rss
        on_disk, text, outboxes = stored(data_dir)
    return [
        variant,
        f"{before / MIB:.0f}",
        f"{rss / MIB:.0f}",
        f"{on_disk / MIB:.1f}",
        f"{text / MIB:.1f}",
        " + ".join(f"{o / MIB:.1f}" for o in outboxes) or "0",
        f"{elapsed:.1f}",
    ]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument("--kib", type=int, default=200, help="KB (1000 bytes) of text a message")
    args = parser.parse_args()
    size = args.kib * 1000
    print(machine())
    print(
        f"{args.messages} messages of {size} bytes ({args.messages * size / MIB:.1f} MiB of text), 3 pairings"
    )
    rows = [run(variant, args.messages, size) for variant in ("bounded", "unbounded")]
    headers = [
        "variant",
        "RSS before MiB",
        "RSS after MiB",
        "store MiB",
        "chat text MiB",
        "outboxes MiB",
        "flood s",
    ]
    print(table(headers, rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
