"""The composition root: settings in, a running app out. `serve` and the tests both use it.

It assembles the device, the registry (plug-ins plus what each component contributes), the
policy chain (the configuration's lists, then the components', then the caller's own) and
the components, which start in order after the runtime and stop in reverse.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .components import Component
from .config import SERVER_FILE, ConfigError, Settings
from .device.base import Device
from .events import EventBus
from .memory import MemoryStore
from .policies import ListPolicy, Policy
from .registry import build_registry
from .rpc.server import GrpcLimits, GrpcServer
from .runtime import Runtime
from .tokens import load_or_create_token, token_path

log = logging.getLogger(__name__)

AGENT = "agent"  # the principal of the token `serve` is given or generates


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
    components: dict[str, Component]

    def component(self, name: str) -> Component:
        return self.components[name]

    @property
    def port(self) -> int:
        """The gRPC server's port (the first front end's)."""
        grpc_server = self.components["grpc"]
        assert isinstance(grpc_server, GrpcServer)
        return grpc_server.port

    async def stop(self, *, grace_s: float) -> None:
        """Refuses new calls, lets in-flight ones finish within the grace period, ends streams."""
        # Components begin stopping in reverse order and get a little longer than the actions,
        # so that the calls waiting on those actions can still answer, and streams, ended by
        # runtime.close, finish cleanly.
        stopping = [
            asyncio.ensure_future(c.stop(grace_s=grace_s + 1.0)) for c in reversed(self.components.values())
        ]
        await self.runtime.close(grace_s=grace_s)
        await asyncio.gather(*stopping)


def default_components(settings: Settings, *, token: str) -> list[Component]:
    """What `serve` runs: the gRPC server today, the Iris gateway next."""
    return [
        GrpcServer(settings.grpc_listen, tokens={AGENT: token}, limits=GrpcLimits.from_settings(settings))
    ]


async def build_app(
    settings: Settings,
    *,
    token: str,
    device: Device | None = None,
    policies: Sequence[Policy] = (),
    components: Sequence[Component] | None = None,
) -> App:
    """Builds and starts the app for `settings`. `components` defaults to `default_components`;
    `policies` run after the configuration's lists and the components' own."""
    device = device or make_device(settings)
    parts = list(default_components(settings, token=token) if components is None else components)
    names = [c.name for c in parts]
    if len(set(names)) != len(names):
        raise ConfigError(f"component names must be unique, got {', '.join(names)}")
    registry = build_registry(parts)
    chain: list[Policy] = []
    if settings.allow_actions or settings.deny_actions:  # empty lists allow everything: no link
        chain.append(ListPolicy(allow=settings.allow_actions, deny=settings.deny_actions))
    for part in parts:
        chain += part.contribution().policies
    chain += policies
    runtime = Runtime(
        device=device,
        registry=registry,
        settings=settings,
        memory=MemoryStore(settings.data_dir / "memory.json"),
        bus=EventBus(queue_size=settings.event_queue_size),
        policies=chain,
        components={c.name: c for c in parts},
    )
    await runtime.start()
    started: list[Component] = []
    try:
        for part in parts:
            await part.start(runtime)
            started.append(part)
    except BaseException:
        for part in reversed(started):
            await part.stop(grace_s=0)
        await runtime.close()
        raise
    return App(runtime, {c.name: c for c in parts})


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
    app = await build_app(settings, token=token)
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
