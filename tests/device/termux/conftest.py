"""L1 fixtures: the runtime served with `--device termux` (the production factory), with the fake
`termux-*` commands first on PATH, backed by a state file the test reads and writes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from phoneuse_runtime.config.settings import Settings
from phoneuse_runtime.device.backends import make_device
from phoneuse_runtime.device.termux.device import TermuxDevice
from phoneuse_runtime.kernel.capabilities import UI
from tests.conftest import Client, ServerFactory
from tests.fakes.adb_server import FakeDevice, FakeDeviceFactory, adb_server, fake_device_factory
from tests.fakes.phone import FakePhone
from tests.fakes.termux.state import FakeTermux
from tests.waiting import wait_until

__all__ = ["adb_server", "fake_device_factory"]

TermuxServe = Callable[..., Awaitable[Client]]


def own_adb_device(fake: FakeDevice, *, self_adb: str | None = None, **options: Any) -> TermuxDevice:
    """A Termux backend whose own adb is the fake phone `fake` behind the tests' adb server (its
    serial unless `self_adb` says otherwise), polling every 100 ms and looking again every 0.2 s."""
    options = {"poll_ms": 100, "self_adb_retry_s": 0.2, **options}
    return TermuxDevice(
        self_adb=fake.serial if self_adb is None else self_adb,
        adb_server=f"127.0.0.1:{fake.adb_port}",
        **options,
    )


@pytest.fixture
def termux(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeTermux:
    phone = FakeTermux(tmp_path / "termux.json")
    phone.export(monkeypatch)
    return phone


@pytest.fixture
def serve_termux(make_client: ServerFactory, termux: FakeTermux) -> TermuxServe:
    """`await serve_termux(self_adb="off", **settings)`: the app on `--device termux`."""

    async def start(*, self_adb: str = "off", poll_ms: int = 100, **settings: Any) -> Client:
        chosen = Settings(device="termux", self_adb=self_adb, poll_ms=poll_ms)
        return await make_client(device=make_device(chosen), self_adb=self_adb, poll_ms=poll_ms, **settings)

    return start


@dataclass
class OwnAdb:
    """A Termux server whose own adb has come up: its client, its backend, the fake phone's adbd."""

    client: Client
    device: TermuxDevice
    fake: FakeDevice


ServeOwnAdb = Callable[..., Awaitable[OwnAdb]]


@pytest.fixture
def serve_own_adb(
    make_client: ServerFactory, fake_device_factory: FakeDeviceFactory, termux: FakeTermux
) -> ServeOwnAdb:
    """`await serve_own_adb(phone, device={...}, **settings)`: the app on a Termux backend whose own
    adb is `phone` (own_adb_device, with `device`'s options), once its UI capability is there."""

    async def start(phone: FakePhone, *, device: dict[str, Any] | None = None, **settings: Any) -> OwnAdb:
        fake = fake_device_factory(phone)
        backend = own_adb_device(fake, **(device or {}))
        client = await make_client(device=backend, poll_ms=100, **settings)
        await wait_until(lambda: UI in backend.capabilities, within_s=30, what="the phone's own adb")
        return OwnAdb(client, backend, fake)

    return start
