"""The files the server keeps state in (--sim-state; the memory's SQLite file has its own tests in
tests/memory/): writes that never stall the server, and what a crash leaves behind."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from phoneuse_runtime.device.sim import state as sim_state
from phoneuse_runtime.device.sim.device import SimDevice
from phoneuse_runtime.util import files

from .conftest import ServerFactory

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
        monkeypatch.setattr(sim_state, "atomic_write_text", write, raising=False)

    async def started(self) -> None:
        assert await asyncio.to_thread(self.entered.wait, WAIT_S), "no write started"


def _crash_leftover(path: Path) -> Path:
    """A temporary file as a crash in the middle of a write leaves it (tempfile's naming)."""
    leftover = path.parent / f".{path.name}.k3x9_q2z.tmp"
    leftover.write_text('{"half": ', encoding="utf-8")
    return leftover


async def test_leftovers_of_a_crash_are_removed_at_start(make_client: ServerFactory, tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    phone = tmp_path / "phone.json"
    # memory.json: the JSON store of earlier versions, migrated (tests/memory/test_durability.py)
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
    assert sorted(p.name for p in data_dir.iterdir() if not p.name.startswith("memory.db")) == [
        ".memory.json.backup.tmp"
    ]
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
