"""Every file the server keeps in its data dir is 0600 and every directory 0700, whatever the
umask it was started with: the gateway's store, the memory (with their -wal and -shm files),
the token, the endpoint record, the sim's state, uploaded and stored media."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import stat
import subprocess
import sys
import uuid
from pathlib import Path

import grpc
import pytest
from websockets.asyncio.client import connect

from phoneuse_runtime.rpc import protocol_pb2 as pb
from phoneuse_runtime.rpc import protocol_pb2_grpc as pb_grpc

from ..serving import serve

WAIT_S = 10.0


def listening_ports(pid: int) -> set[int]:
    """The TCP ports process `pid` listens on (its sockets' inodes in /proc/net/tcp)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        target = os.readlink(fd) if fd.is_symlink() else ""
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports = set()
    for line in Path(f"/proc/{pid}/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[3] == "0A" and fields[9] in inodes:  # LISTEN
            ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def modes(data_dir: Path) -> dict[str, str]:
    """Every entry under the data dir (itself included) whose mode is not private: path -> mode."""
    wrong = {}
    for path in [data_dir, *data_dir.rglob("*")]:
        info = path.lstat()
        mode = stat.S_IMODE(info.st_mode)
        want = 0o700 if stat.S_ISDIR(info.st_mode) else 0o600
        if mode != want:
            wrong[str(path.relative_to(data_dir))] = f"{mode:04o}"
    return wrong


async def exercise(data_dir: Path, grpc_port: int, gateway_port: int) -> None:
    """What makes the server write every kind of file it keeps: SMSs (memory), REMEMBER, a
    chat message and an upload (gateway store, outbox, media), a sim change (its state)."""
    token = (data_dir / "token").read_text().strip()
    auth = (("authorization", f"Bearer {token}"),)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{grpc_port}") as channel:
        stub = pb_grpc.AndroidRuntimeStub(channel)
        for action, params in (
            ("SIM_RECEIVE_SMS", {"from": "+15550001", "body": "Your code is 482913"}),
            ("REMEMBER", {"kind": "fact", "name": "door", "text": "blue"}),
        ):
            call = pb.ActionRequest(
                action_type=action, params=params, request_id=uuid.uuid4().hex, timeout_ms=10_000
            )
            response = await stub.Execute(call, metadata=auth, timeout=WAIT_S)
            assert response.success, response.error
    pairing = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os, sys\nos.umask(0)\nfrom phoneuse_runtime.cli.main import main\n"
            "sys.exit(main(sys.argv[1:]))",
            "pair",
            "new",
            "--name",
            "phone",
            "--json",
            "--data-dir",
            str(data_dir),
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    paired = json.loads(pairing.stdout)["token"]
    async with connect(f"ws://127.0.0.1:{gateway_port}/ws") as ws:

        async def request(frame_type: str, payload: dict[str, object], id: int) -> dict[str, object]:
            await ws.send(json.dumps({"v": 1, "id": id, "type": frame_type, "payload": payload}))
            while True:
                frame = json.loads(await asyncio.wait_for(ws.recv(), WAIT_S))
                if frame.get("id") == id:
                    return dict(frame)

        ack = await request("hello", {"token": paired, "device_id": "modes"}, 1)
        assert ack["type"] == "hello.ack", ack
        sent = await request("message.send", {"text": "hello"}, 2)
        assert sent["type"] == "message", sent
        data = b"picture bytes"
        await ws.send(
            json.dumps(
                {
                    "v": 1,
                    "type": "media.upload.start",
                    "payload": {"media_ref": "r", "size": len(data), "mime": "image/png"},
                }
            )
        )
        await ws.send(data)
        offer = await request(
            "media.upload.end", {"media_ref": "r", "sha256": hashlib.sha256(data).hexdigest()}, 3
        )
        assert offer["type"] == "media.offer", offer


@pytest.mark.parametrize("umask", [0o000, 0o022])
async def test_every_file_is_private_whatever_the_umask(tmp_path: Path, umask: int) -> None:
    """Another user of the machine reads the data dir of a serve started under a loose umask."""
    data_dir = tmp_path / "data"
    env = {"PHONEUSE_TOKEN": "", "PHONEUSE_SIM_STATE": str(data_dir / "sim-state.json")}
    with serve(data_dir, env=env, umask=umask) as served:
        assert modes(data_dir) == {}  # at start: the stores, the token, the endpoint record
        gateway_port = (listening_ports(served.pid) - {served.port}).pop()
        await exercise(data_dir, served.port, gateway_port)
        names = {p.name for p in data_dir.rglob("*")}
        for expected in (
            "gateway.sqlite3",
            "gateway.sqlite3-wal",
            "memory.db",
            "memory.db-wal",
            "memory.db-shm",
            "token",
            "server.json",
            "sim-state.json",
        ):
            assert expected in names, sorted(names)
        assert any(name.startswith("med_") for name in names), sorted(names)
        assert modes(data_dir) == {}
