"""The production factory: settings in, a running server out. `serve` and the tests both use it."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

import grpc

from .config import SERVER_FILE, ConfigError, Settings
from .device.base import Device
from .registry import build_registry
from .rpc.server import start_server
from .runtime import Runtime
from .tokens import load_or_create_token, token_path

log = logging.getLogger(__name__)


def make_device(settings: Settings) -> Device:
    kind = settings.device_kind
    if kind == "sim":
        from .device.sim import SimDevice

        return SimDevice(state_file=settings.sim_state)
    if kind in ("adb", "termux"):
        raise ConfigError(f"the {kind} backend is not available in this version; use --device sim")
    raise ConfigError(f"unknown device {settings.device!r}; use sim, adb[:SERIAL] or termux")


@dataclass
class App:
    runtime: Runtime
    server: grpc.aio.Server
    port: int

    async def stop(self, *, grace_s: float) -> None:
        """Refuses new calls, lets in-flight ones finish within the grace period, ends streams."""
        # The server gets a little longer than the actions, so that the Execute calls
        # waiting on them can still answer, and streams, ended by runtime.close, finish cleanly.
        stopping = asyncio.ensure_future(self.server.stop(grace_s + 1.0))
        await self.runtime.close(grace_s=grace_s)
        await stopping


async def start_app(settings: Settings, *, token: str, device: Device | None = None) -> App:
    """Builds the runtime for `settings` and serves it on settings.grpc_listen."""
    device = device or make_device(settings)
    registry = build_registry(device.kind)
    runtime = Runtime.create(device, registry, settings)
    await runtime.start()
    try:
        server, port = await start_server(runtime, settings.grpc_listen, token=token)
    except BaseException:
        await runtime.close()
        raise
    return App(runtime, server, port)


def _record_address(data_dir: Path, host: str, port: int) -> Path:
    path = data_dir / SERVER_FILE
    path.write_text(json.dumps({"address": f"{host}:{port}", "pid": os.getpid()}))
    return path


def _release_startup_memory() -> None:
    """Hands the heap that imports and start-up freed back to the OS (glibc only).
    A phone runs this next to everything else; a megabyte there is worth a syscall here."""
    import ctypes

    try:
        trim = ctypes.CDLL(None).malloc_trim  # the process's own symbols include libc's
    except (OSError, AttributeError):  # a libc without malloc_trim
        return
    trim(0)


async def serve(settings: Settings) -> int:
    """Runs until SIGINT/SIGTERM. Returns the process exit code."""
    started = time.monotonic()
    settings.data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    token = settings.token
    if not token:
        token, created = load_or_create_token(settings.data_dir)
        if created:
            log.info("generated a token; it is stored in %s (mode 0600)", token_path(settings.data_dir))
        else:
            log.info("using the token stored in %s", token_path(settings.data_dir))
    app = await start_app(settings, token=token)
    host = settings.grpc_listen.rsplit(":", 1)[0]
    record = _record_address(settings.data_dir, host, app.port)
    _release_startup_memory()
    log.info(
        "serving AndroidRuntime on %s:%d (device %s, %d actions) in %.0f ms",
        host,
        app.port,
        settings.device,
        len(app.runtime.registry.actions),
        (time.monotonic() - started) * 1000,
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    log.info("shutting down (grace %.1f s)", settings.shutdown_grace_s)
    await app.stop(grace_s=settings.shutdown_grace_s)
    record.unlink(missing_ok=True)
    log.info("stopped")
    return 0
