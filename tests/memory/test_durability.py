"""The memory's file: what an acknowledged REMEMBER promises (kill -9 loses nothing), writes
that never stall the server, a damaged file that stops start-up with one line, and the JSON
store of earlier versions moved in on first start."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import grpc
import pytest

from phoneuse_runtime.rpc import protocol_pb2 as pb
from phoneuse_runtime.rpc import protocol_pb2_grpc as pb_grpc

from ..conftest import AUTH, Client, ServerFactory
from ..serving import serve


def stored(data_dir: Path) -> dict[str, str]:
    """The nodes in the data dir's memory.db as id -> name, read by a connection of our own."""
    conn = sqlite3.connect(data_dir / "memory.db")
    try:
        return {f"mem-{n}": name for n, name in conn.execute("SELECT id, name FROM nodes")}
    finally:
        conn.close()


def test_kill_9_loses_nothing_that_was_acknowledged(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    acknowledged: dict[str, str] = {}
    with serve(data_dir, env={"PHONEUSE_MEMORY_INGEST": "false"}) as served:
        channel = grpc.insecure_channel(f"127.0.0.1:{served.port}")
        stub = pb_grpc.AndroidRuntimeStub(channel)
        for i in range(40):
            name = f"kept {i}"
            request = pb.ActionRequest(
                action_type="REMEMBER", params={"name": name}, request_id=uuid.uuid4().hex, timeout_ms=10_000
            )
            response = stub.Execute(request, metadata=AUTH, timeout=20)
            assert response.success, response.error
            acknowledged[json.loads(response.result_json)["id"]] = name
        os.kill(served.pid, signal.SIGKILL)  # no shutdown, no checkpoint, no close
        channel.close()
    assert stored(data_dir) == acknowledged


async def test_a_remember_that_answered_is_on_disk(client: Client) -> None:
    answers = await asyncio.gather(*(client.ok("REMEMBER", {"name": f"n{i}"}) for i in range(50)))
    on_disk = stored(client.app.runtime.settings.data_dir)  # read before any stop
    assert {a["id"]: f"n{i}" for i, a in enumerate(answers)} == on_disk


async def test_a_blocked_write_stalls_nothing_else(client: Client) -> None:
    """Another process holds the write lock (a `memory import`, a slow disk): REMEMBER waits in
    the writer's thread, and the server answers everything else meanwhile."""
    data_dir = client.app.runtime.settings.data_dir
    await client.ok("REMEMBER", {"name": "before"})
    holder = sqlite3.connect(data_dir / "memory.db", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        remember = asyncio.ensure_future(client.ok("REMEMBER", {"name": "while locked"}))
        found, _, _ = await client.query(pb.CONTACTS, {"name": "alice"})
        assert [c["name"] for c in found] == ["Alice Johnson"]
        memory, _, _ = await client.query(pb.MEMORY, {"q": "before"})  # WAL: readers go on
        assert [m["name"] for m in memory] == ["before"]
        assert not remember.done()  # a REMEMBER answers once its item is on disk
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    added = await remember
    assert stored(data_dir)[added["id"]] == "while locked"


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        pytest.param(
            b"this is not a database at all, just some text " * 100, "not a memory database", id="text"
        ),
        pytest.param(
            b"SQLite format 3\x00" + b"\x10\x00\x01\x01\x00\x40\x20\x20" + b"\xff" * 4000,
            "memory database",
            id="damaged",
        ),
    ],
)
def test_a_corrupt_memory_file_stops_serve_with_one_line_and_exit_2(
    tmp_path: Path, content: bytes, problem: str
) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir(mode=0o700)
    path = data_dir / "memory.db"
    path.write_bytes(content)
    path.chmod(0o600)
    environ = {k: v for k, v in os.environ.items() if not k.startswith("PHONEUSE_")}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "phoneuse_runtime",
            "serve",
            "--data-dir",
            str(data_dir),
            "--grpc-listen",
            "127.0.0.1:0",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={**environ, "PHONEUSE_TOKEN": "t" * 32},
    )
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith(f"phoneuse-runtime: {path}: ") and problem in line, line
    assert "move it aside" in line and "Traceback" not in done.stderr
    assert path.read_bytes() == content  # never reset


def _item(item_id: str, name: str, **extra: Any) -> dict[str, Any]:
    return {"id": item_id, "kind": "fact", "name": name, **extra}


@pytest.mark.parametrize(
    "content",
    [
        pytest.param({"items": [_item("mem-2", "two"), _item("mem-3", "three")]}, id="no next_id"),
        pytest.param({"next_id": 1, "items": [_item("mem-1", "one"), _item("mem-3", "three")]}, id="stale"),
    ],
)
async def test_the_json_store_is_migrated_and_its_ids_never_reused(
    make_client: ServerFactory, tmp_path: Path, content: dict[str, Any]
) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    (data_dir / "memory.json").write_text(json.dumps(content), encoding="utf-8")
    before = {item["id"]: item["name"] for item in content["items"]}
    client = await make_client(data_dir=data_dir)
    added = await client.ok("REMEMBER", {"name": "new"})
    assert added["id"] == "mem-4"
    found, _, _ = await client.query(pb.MEMORY)
    assert {r["id"]: r["name"] for r in found} == {**before, "mem-4": "new"}
    assert stored(data_dir) == {**before, "mem-4": "new"}
    assert not (data_dir / "memory.json").exists()
    assert json.loads((data_dir / "memory.json.migrated").read_text(encoding="utf-8")) == content


async def test_migration_keeps_fields_links_and_ids_written_by_hand(
    make_client: ServerFactory, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    items = [
        _item(
            "mem-5",
            "Alice",
            kind="person",
            text="likes tea",
            tags=["friend"],
            created_ms=1000,
            updated_ms=2000,
        ),
        _item("custom", "Tea house", kind="place", related_to=["mem-5"], created_ms=3000, updated_ms=3000),
    ]
    (data_dir / "memory.json").write_text(json.dumps({"next_id": 9, "items": items}), encoding="utf-8")
    client = await make_client(data_dir=data_dir)
    found, _, _ = await client.query(pb.MEMORY)
    by_name = {r["name"]: r for r in found}
    alice, house = by_name["Alice"], by_name["Tea house"]
    assert (alice["id"], alice["kind"], alice["text"], alice["tags"]) == (
        "mem-5",
        "person",
        "likes tea",
        ["friend"],
    )
    assert (alice["created_ms"], alice["updated_ms"], alice["sources"]) == (1000, 2000, ["agent"])
    assert house["id"] == "mem-9" and house["related_to"] == ["mem-5"]  # a new id for "custom", after next_id
    assert (await client.ok("REMEMBER", {"name": "later"}))["id"] == "mem-10"
    linked, _, _ = await client.query(pb.MEMORY, {"related_to": "mem-5"})
    assert [r["name"] for r in linked] == ["Tea house"]
