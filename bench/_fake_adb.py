"""What the adb benches share: the fake phone behind the real adb server, and an app on it built
by the production factory, stopped in the order that leaves no redial behind.

Everything is imported when called, so that `bench_idle.py --tree DIR` measures the tree on
sys.path, not this checkout's."""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class AdbRig:
    server: Any  # tests.fakes.adb_server.AdbServer
    adbd: Any  # tests.fakes.adb_server.BackgroundAdbd
    phone: Any  # tests.fakes.phone.FakePhone
    app: Any  # phoneuse_runtime.app.App


@contextlib.asynccontextmanager
async def adb_app(
    prefix: str,
    *,
    token: str,
    phone: Any = None,
    make_settings: Callable[..., Any] | None = None,
    **values: Any,
) -> AsyncIterator[AdbRig]:
    """The app serving `phone` (default: a new FakePhone) over a fake adbd. Its settings are
    `make_settings(device=..., adb_server=..., data_dir=...)`, by default `Settings` with the
    gRPC server on port 0 and `values`."""
    from phoneuse_runtime.app import build_app, default_components
    from phoneuse_runtime.config.settings import Settings
    from phoneuse_runtime.device.backends import make_device
    from tests.fakes.adb_server import AdbServer, BackgroundAdbd, find_adb
    from tests.fakes.phone import FakePhone

    adb_path = find_adb()
    if adb_path is None:
        raise SystemExit("no adb binary")
    server = AdbServer(adb_path, Path(tempfile.mkdtemp(prefix=f"{prefix}-adb-")))
    server.start()
    phone = FakePhone() if phone is None else phone
    adbd = BackgroundAdbd(phone)
    server.connect(adbd.serial)
    app = None
    try:
        where: dict[str, Any] = {
            "device": f"adb:{adbd.serial}",
            "adb_server": f"127.0.0.1:{server.port}",
            "data_dir": Path(tempfile.mkdtemp(prefix=f"{prefix}-data-")),
        }
        settings = (
            make_settings(**where)
            if make_settings is not None
            else Settings(grpc_listen="127.0.0.1:0", **where, **values)
        )
        app = await build_app(
            settings,
            token=token,
            device=make_device(settings),
            components=default_components(settings, token=token),
        )
        yield AdbRig(server, adbd, phone, app)
    finally:
        if app is not None:
            await app.stop(grace_s=0)
        server.disconnect(adbd.serial)  # first, or the server redials the daemon while it stops
        await asyncio.to_thread(adbd.stop)
        server.stop()
