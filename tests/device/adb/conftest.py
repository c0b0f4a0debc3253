"""L2 fixtures: the runtime served with `--device adb:127.0.0.1:PORT` (the production factory)
against the fake adbd and fake phone, through the session's isolated real adb server."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from phoneuse_runtime.config.settings import Settings
from phoneuse_runtime.device.backends import make_device
from tests.conftest import Client, ServerFactory
from tests.fakes.adb_server import FakeDevice, FakeDeviceFactory, adb_server, fake_device_factory
from tests.fakes.adbd import DEFAULT_FEATURES
from tests.fakes.phone import FakePhone
from tests.fakes.state import PhoneState

__all__ = ["adb_server", "fake_device_factory"]


@dataclass
class Served:
    """A served runtime, the fake phone it drives, and the daemon in front of that phone."""

    client: Client
    phone: FakePhone
    device: FakeDevice

    @property
    def state(self) -> PhoneState:
        return self.phone.state

    def opened(self) -> list[str]:
        return list(self.device.adbd.opened)


AdbServe = Callable[..., Awaitable[Served]]


@pytest.fixture
def serve_adb(make_client: ServerFactory, fake_device_factory: FakeDeviceFactory) -> AdbServe:
    """`await serve_adb(phone=None, features=..., host=..., **settings)`: the app on `adb:SERIAL`
    (`host`: the address the fake phone listens on, 127.0.0.1 unless a test needs another)."""

    async def start(
        phone: FakePhone | None = None,
        *,
        features: Sequence[str] = DEFAULT_FEATURES,
        host: str = "127.0.0.1",
        **settings: Any,
    ) -> Served:
        phone = phone or FakePhone()
        phone.state.features = list(features)
        device = fake_device_factory(phone, features=features, host=host)
        settings.setdefault("poll_ms", 100)
        settings.setdefault("allow_shell", True)
        # make_client's `device` is a Device object, so the production factory builds it here
        # from the same settings `serve --device adb:SERIAL` would have.
        chosen = Settings(
            device=f"adb:{device.serial}",
            adb_server=f"127.0.0.1:{device.adb_port}",
            poll_ms=settings.pop("poll_ms"),
            keep_awake=settings.pop("keep_awake", False),
        )
        client = await make_client(
            device=make_device(chosen), adb_server=chosen.adb_server, poll_ms=chosen.poll_ms, **settings
        )
        return Served(client, phone, device)

    return start
