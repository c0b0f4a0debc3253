"""L1 fixtures: the runtime served with `--device termux` (the production factory), with the fake
`termux-*` commands first on PATH, backed by a state file the test reads and writes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from phoneuse_runtime.config.settings import Settings
from phoneuse_runtime.device.backends import make_device
from tests.conftest import Client, ServerFactory
from tests.fakes.adb_server import adb_server, fake_device_factory
from tests.fakes.termux.state import FakeTermux

__all__ = ["adb_server", "fake_device_factory"]

TermuxServe = Callable[..., Awaitable[Client]]


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
