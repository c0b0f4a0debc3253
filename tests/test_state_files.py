"""The files the server keeps state in (memory.json, --sim-state): what a REMEMBER's success
promises about the disk, writes that never stall the server, and what a crash leaves behind."""

from __future__ import annotations

import asyncio
import errno
import json
import os
import threading
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

import grpc
import pytest

from phoneuse_runtime import files, memory
from phoneuse_runtime.app import build_app, default_components
from phoneuse_runtime.config import Settings
from phoneuse_runtime.device.sim import SimDevice
from phoneuse_runtime.device.sim import state as sim_state
from phoneuse_runtime.rpc import protocol_pb2 as pb
from phoneuse_runtime.rpc import protocol_pb2_grpc as pb_grpc

from .conftest import AUTH, TOKEN, Client, ServerFactory

WAIT_S = 5.0  # bounds a wait that must not happen; the tests never sleep


def _stored(path: Path) -> dict[str, str]:
    """memory.json's items as id -> name."""
    return {item["id"]: item["name"] for item in json.loads(path.read_text(encoding="utf-8"))["items"]}


def _item(item_id: str, name: str) -> dict[str, Any]:
    return {"id": item_id, "kind": "fact", "name": name}


class StuckWrite:
    """Holds every write of one file in its thread until released, as a slow disk would."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        real = files.atomic_write_text

        def write(path: Path, text: str | Iterable[str]) -> None:
            if path.name == name:
                self.entered.set()
                self.release.wait(WAIT_S)
            real(path, text)

        monkeypatch.setattr(files, "atomic_write_text", write)
        # Before the writes left the event loop, the stores called it from their own modules.
        monkeypatch.setattr(memory, "atomic_write_text", write, raising=False)
        monkeypatch.setattr(sim_state, "atomic_write_text", write, raising=False)

    async def started(self) -> None:
        assert await asyncio.to_thread(self.entered.wait, WAIT_S), "no write started"


@pytest.mark.parametrize(
    "content",
    [
        pytest.param({"items": [_item("mem-2", "two"), _item("mem-3", "three")]}, id="no next_id"),
        pytest.param({"next_id": 1, "items": [_item("mem-1", "one"), _item("mem-3", "three")]}, id="stale"),
    ],
)
async def test_remember_never_reuses_an_id_the_file_holds(
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
    assert _stored(data_dir / "memory.json") == {**before, "mem-4": "new"}


async def test_a_remember_that_answered_is_on_disk(client: Client) -> None:
    """Concurrent REMEMBERs share writes, and each answers once a write with its item is on disk."""
    answers = await asyncio.gather(*(client.ok("REMEMBER", {"name": f"n{i}"}) for i in range(50)))
    stored = _stored(client.app.runtime.settings.data_dir / "memory.json")  # read before any stop
    assert {a["id"]: f"n{i}" for i, a in enumerate(answers)} == stored


async def test_remember_writes_off_the_event_loop(client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    stuck = StuckWrite(monkeypatch, "memory.json")
    remember = asyncio.ensure_future(client.ok("REMEMBER", {"name": "slow disk"}))
    await stuck.started()
    # The write is stuck in its thread, and the server still answers everything else.
    found, _, _ = await client.query(pb.CONTACTS, {"name": "alice"})
    assert [c["name"] for c in found] == ["Alice Johnson"]
    assert not remember.done()  # a REMEMBER answers once its item is on disk
    stuck.release.set()
    added = await remember
    assert _stored(client.app.runtime.settings.data_dir / "memory.json") == {added["id"]: "slow disk"}


async def test_stopping_saves_a_remember_that_shutdown_cut_short(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings(data_dir=tmp_path / "data", grpc_listen="127.0.0.1:0")
    app = await build_app(settings, token=TOKEN, components=default_components(settings, token=TOKEN))
    stuck = StuckWrite(monkeypatch, "memory.json")
    async with grpc.aio.insecure_channel(f"127.0.0.1:{app.port}") as channel:
        stub = pb_grpc.AndroidRuntimeStub(channel)
        request = pb.ActionRequest(
            action_type="REMEMBER", params={"name": "kept"}, request_id="r1", timeout_ms=10_000
        )
        call = asyncio.ensure_future(stub.Execute(request, metadata=AUTH, timeout=WAIT_S * 2))
        await stuck.started()
        stopping = asyncio.ensure_future(app.stop(grace_s=0))  # cancels the REMEMBER mid-write
        answer: object = (await asyncio.gather(call, return_exceptions=True))[0]
        assert not isinstance(answer, pb.ActionResponse) or not answer.success  # cut short
        assert not stopping.done()  # stopping waits for the write
        stuck.release.set()
        await stopping
    assert _stored(settings.data_dir / "memory.json") == {"mem-1": "kept"}


async def test_a_failed_write_leaves_no_temporary_file_and_the_next_saves_all(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    data_dir = client.app.runtime.settings.data_dir
    real_replace = os.replace

    def disk_full(*_args: object, **_kw: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "replace", disk_full)
    failed = await client.execute("REMEMBER", {"name": "first"})
    assert failed.error.startswith("INTERNAL: the change is made but could not be saved"), failed.error
    assert "No space left on device" in failed.error
    assert sorted(p.name for p in data_dir.iterdir()) == []
    monkeypatch.setattr(os, "replace", real_replace)
    await client.ok("REMEMBER", {"name": "second"})
    assert sorted(p.name for p in data_dir.iterdir()) == ["memory.json"]
    assert _stored(data_dir / "memory.json") == {"mem-1": "first", "mem-2": "second"}


async def test_writes_reach_the_disk_file_and_directory(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced.append(os.fstat(fd).st_ino)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    await client.ok("REMEMBER", {"name": "durable"})
    data_dir = client.app.runtime.settings.data_dir
    assert (data_dir / "memory.json").stat().st_ino in synced  # the content, before the rename
    assert data_dir.stat().st_ino in synced  # the rename itself, in the directory


def _crash_leftover(path: Path) -> Path:
    """A temporary file as a crash in the middle of a write leaves it (tempfile's naming)."""
    leftover = path.parent / f".{path.name}.k3x9_q2z.tmp"
    leftover.write_text('{"half": ', encoding="utf-8")
    return leftover


async def test_leftovers_of_a_crash_are_removed_at_start(make_client: ServerFactory, tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    phone = tmp_path / "phone.json"
    leftovers = [_crash_leftover(data_dir / "memory.json"), _crash_leftover(phone)]
    someone_elses = data_dir / ".memory.json.backup.tmp"  # not a name our writes use
    someone_elses.write_text("keep", encoding="utf-8")
    client = await make_client(data_dir=data_dir, sim_state=phone)
    assert not any(p.exists() for p in leftovers)
    assert someone_elses.read_text(encoding="utf-8") == "keep"
    await client.ok("REMEMBER", {"name": "after the crash"})
    await client.ok("SET_CLIPBOARD", {"text": "after the crash"})
    device = client.app.runtime.device
    assert isinstance(device, SimDevice)
    await device.flush()
    assert sorted(p.name for p in data_dir.iterdir()) == [".memory.json.backup.tmp", "memory.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "phone.json"]


async def test_the_sim_writes_its_state_off_the_event_loop_and_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "phone.json"
    device = SimDevice(state_file=path)
    await device.start(lambda _e: None)
    stuck = StuckWrite(monkeypatch, "phone.json")
    await device.set_clipboard("one")
    await stuck.started()
    # The write of "one" is stuck in its thread; the phone goes on, and its changes queue up.
    await device.set_clipboard("two")
    await device.set_clipboard("three")
    assert await device.get_clipboard() == "three"
    flushed: asyncio.Future[None] = asyncio.ensure_future(device.flush())
    await asyncio.sleep(0)
    assert not flushed.done()
    stuck.release.set()
    await flushed
    assert json.loads(path.read_text(encoding="utf-8"))["clipboard"] == "three"
    await device.set_clipboard("four")
    await device.close()  # waits for the last write
    assert json.loads(path.read_text(encoding="utf-8"))["clipboard"] == "four"


async def test_the_state_file_keeps_what_the_sim_holds(tmp_path: Path) -> None:
    """The quick snapshot written behind the changes holds exactly the stores (no field lost)."""
    from dataclasses import asdict

    from phoneuse_runtime.device.sim.seed import seed_state

    state = seed_state()
    state.add_notification("com.whatsapp", "Bob", "hi", target="chat:14155550102@s.whatsapp.net")
    expected = {k: v for k, v in asdict(state).items() if k not in ("dirty", "_thread_keys")}
    assert json.loads(state.to_json()) == {"version": 1, **expected}
    again = sim_state.SimState.from_json(state.to_json())
    assert asdict(again) == asdict(replace(state, dirty=False))
