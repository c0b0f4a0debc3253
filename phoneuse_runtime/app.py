"""The composition root: settings in, a running app out. `serve` and the tests both use it.

It assembles the device, the registry (plug-ins plus what each component contributes), the
policy chain (the configuration's lists, then the components', then the caller's own) and
the components, which start in order after the runtime and stop in reverse.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from phoneuse_runtime.auth.tokens import load_or_create_token, token_path
from phoneuse_runtime.config.settings import ConfigError, Settings
from phoneuse_runtime.device.backends import make_device
from phoneuse_runtime.device.base import Device
from phoneuse_runtime.kernel.components import Component
from phoneuse_runtime.kernel.events import EventBus
from phoneuse_runtime.kernel.policies import ListPolicy, Policy
from phoneuse_runtime.kernel.registry import Contribution, Registry, build_registry
from phoneuse_runtime.kernel.runtime import Runtime
from phoneuse_runtime.memory import Memory
from phoneuse_runtime.owner.approval_store import TerminalAnswers
from phoneuse_runtime.owner.error_dialogs import ErrorDialogAnswers
from phoneuse_runtime.rpc.server import GrpcLimits, GrpcServer
from phoneuse_runtime.util.endpoint import Record, claim_socket, socket_path, warn_if_shared, write_record
from phoneuse_runtime.util.files import private_dir

log = logging.getLogger(__name__)

AGENT = "agent"  # the principal of the token `serve` is given or generates


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
        """Refuses new calls, lets in-flight ones finish within the grace period and ends the
        streams (the runtime's drain), then stops the components in the reverse order of their
        start (the front ends first, the phone's memory, which started first, last: every
        REMEMBER the grace let finish is on disk), then closes the device."""
        await self.runtime.drain(grace_s=grace_s)
        for part in reversed(self.components.values()):
            await part.stop(grace_s=grace_s)
        await self.runtime.close()


def _check_listed_names(settings: Settings, registry: Registry) -> None:
    """A name in allow_actions or deny_actions that names nothing is a mistake, never ignored:
    a misspelt deny list would silently allow what it meant to stop."""
    known = {*registry.actions, *registry.queries}
    for setting, names in (
        ("allow_actions", settings.allow_actions),
        ("deny_actions", settings.deny_actions),
        ("owner_actions", settings.owner_actions),  # held with the gateway or without it
    ):
        unknown = sorted(names - known)
        if unknown:
            import difflib

            hints = []
            for name in unknown:
                close = difflib.get_close_matches(name.upper(), known, n=1)
                hints.append(f"{name!r}" + (f" (did you mean {close[0]}?)" if close else ""))
            listed = "`phoneuse-runtime actions` lists them"
            raise ConfigError(f"{setting} names no action or query: {', '.join(hints)}; {listed}")


def default_components(settings: Settings, *, token: str, unix_socket: Path | None = None) -> list[Component]:
    """What `serve` runs: the gRPC server (also on `unix_socket`), the Iris gateway unless
    `settings.gateway` is off, the terminal's answers to approvals (`phoneuse-runtime approvals`,
    through the data dir), and the MCP and NATS front ends when asked for."""
    also = [f"unix:{unix_socket}"] if unix_socket else []
    limits = GrpcLimits.from_settings(settings.grpc)
    parts: list[Component] = [
        GrpcServer(
            settings.grpc_listen,
            tokens={AGENT: token},
            also=also,
            limits=limits,
            tokens_file=settings.tokens_file,
        )
    ]
    if settings.gateway:
        from phoneuse_runtime.gateway.server import Gateway

        parts.append(Gateway(settings))
    # The owner answers holds from the terminal too; without the gateway (whose policy holds the
    # owner_actions otherwise) it holds those itself, unless approvals are off.
    held = settings.owner_actions if not settings.gateway and settings.approvals != "off" else frozenset()
    parts.append(TerminalAnswers(settings.data_dir, holds=held))
    if settings.owner.error_dialogs != "report":  # the runtime answers ANR and crash dialogs itself
        parts.append(ErrorDialogAnswers(settings.owner.error_dialogs))
    if settings.mcp_listen:  # the MCP front end over Streamable HTTP, off unless asked for
        from phoneuse_runtime.mcp import require_sdk

        require_sdk()
        from phoneuse_runtime.mcp.http import McpHttpServer
        from phoneuse_runtime.spec.document import render_spec

        parts.append(
            McpHttpServer.from_settings(
                settings.mcp,
                tokens={AGENT: token},
                max_body_bytes=settings.grpc.max_receive_bytes,
                render_spec=render_spec,
            )
        )
    from phoneuse_runtime.nats.components import nats_components

    parts += nats_components(settings.nats, data_dir=settings.data_dir)
    return parts


def _with_memory(settings: Settings, components: Sequence[Component]) -> list[Component]:
    """The app's components: those given, their names unique, and the phone's memory first
    unless one of them is a memory."""
    parts = list(components)
    names = [c.name for c in parts]
    if len(set(names)) != len(names):
        raise ConfigError(f"component names must be unique, got {', '.join(names)}")
    if not any(isinstance(c, Memory) for c in parts):  # the phone's memory is always there
        parts.insert(0, Memory.from_settings(settings.memory, data_dir=settings.data_dir))
    return parts


def _registry_of(contributions: Sequence[tuple[str, Contribution]]) -> Registry:
    """Every plug-in (built-ins included), then each component's share."""
    registry = build_registry()
    for name, contribution in contributions:
        registry.add(contribution, f"component {name}")
    return registry


def served_registry(settings: Settings) -> Registry:
    """What `serve` with these settings serves, its components' actions, queries and event types
    included, assembled as `build_app` does but with nothing started (for `actions`)."""
    import secrets

    # The gRPC server contributes nothing; it is built only so that the list is serve's own.
    # Its token is never served: nothing here listens.
    parts = _with_memory(settings, default_components(settings, token=secrets.token_urlsafe(32)))
    return _registry_of([(part.name, part.contribution()) for part in parts])


def served_spec() -> str:
    """docs/protocol_spec.md: the spec of what `serve` serves, with the default settings' figures."""
    from phoneuse_runtime.spec.document import render_spec

    return render_spec(served_registry(Settings()))


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
    device.find_poll_ms = settings.wait_poll_ms
    given = default_components(settings, token=token) if components is None else components
    parts = _with_memory(settings, given)
    contributions = [(part.name, part.contribution()) for part in parts]  # asked once each
    registry = _registry_of(contributions)
    _check_listed_names(settings, registry)
    refusals: list[Policy] = []
    if settings.allow_actions or settings.deny_actions:  # empty lists allow everything: no link
        refusals.append(ListPolicy(allow=settings.allow_actions, deny=settings.deny_actions))
    refusals += registry.refusals  # those that need no person come first: no refusal waits on a hold
    chain = [*refusals, *registry.policies, *policies]  # the components', in their order
    runtime = Runtime(
        device=device,
        registry=registry,
        settings=settings,
        bus=EventBus(queue_size=settings.event_queue_size, queue_bytes=settings.event_queue_bytes),
        policies=chain,
        refusals=refusals,
        components={c.name: c for c in parts},
    )
    await runtime.start()
    started: list[Component] = []
    try:
        for part in parts:
            await part.start(runtime)
            started.append(part)
    except BaseException:
        await runtime.drain(grace_s=0)
        for part in reversed(started):
            await part.stop(grace_s=0)
        await runtime.close()
        raise
    return App(runtime, {c.name: c for c in parts})


def _mcp_url(app: App) -> str | None:
    """The MCP front end's URL as bound (its real port), or None when `serve` runs none."""
    part = app.components.get("mcp")
    if part is None:
        return None
    from phoneuse_runtime.mcp.http import McpHttpServer

    assert isinstance(part, McpHttpServer)
    return part.url


def _release_startup_memory() -> None:
    """Hands the heap that imports and start-up freed back to the OS (glibc only).
    A phone runs this next to everything else; a megabyte there is worth a syscall here."""
    import ctypes

    try:
        trim = ctypes.CDLL(None).malloc_trim  # the process's own symbols include libc's
    except (OSError, AttributeError):  # a libc without malloc_trim
        return
    trim(0)


@dataclass
class Serving:
    """A running app as `serving` gives it: the app, its record, and the event SIGINT or SIGTERM
    sets (the one stop of `serve` and of the standalone `mcp`)."""

    app: App
    record: Record
    stop: asyncio.Event


@asynccontextmanager
async def serving(settings: Settings) -> AsyncIterator[Serving]:
    """Serves the data dir as `serve` does, for as long as the block runs: the shared-directory
    warnings, the token (given, stored or generated), the Unix socket, the app, its record
    (gRPC, socket, gateway and MCP addresses as bound, device, names served) and the log lines;
    then stops the app and removes its record and socket."""
    started = time.monotonic()
    # Before anything is recorded or announced: a SIGTERM right after the "serving" line (a
    # supervisor's, a test's) must stop the server cleanly, not kill it and leave its record.
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        async with _served_app(settings, started) as (app, record):
            yield Serving(app, record, stop)
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


@asynccontextmanager
async def _served_app(settings: Settings, started: float) -> AsyncIterator[tuple[App, Record]]:
    warn_if_shared(settings.data_dir)  # before it is made private: the owner should know it was open
    private_dir(settings.data_dir)
    warn_if_shared(token_path(settings.data_dir))
    token = settings.token
    if not token:
        token, created = load_or_create_token(settings.data_dir)
        if created:
            log.info("generated a token; it is stored in %s (mode 0600)", token_path(settings.data_dir))
        else:
            log.info("using the token stored in %s", token_path(settings.data_dir))
    # The client commands prefer this socket: no other app can reach it, nor take it over.
    sock = socket_path(settings.data_dir)
    if sock:
        claim_socket(sock, settings.data_dir)
    app = await build_app(
        settings, token=token, components=default_components(settings, token=token, unix_socket=sock)
    )
    record_path: Path | None = None
    try:
        if sock:
            os.chmod(sock, 0o600)
        record = _record_of(settings, app, sock)
        record_path = write_record(settings.data_dir, record)
        _release_startup_memory()
        _announce(settings, app, record, started)
        yield app, record
    finally:
        log.info("shutting down (grace %.1f s)", settings.shutdown_grace_s)
        await app.stop(grace_s=settings.shutdown_grace_s)
        if record_path is not None:
            record_path.unlink(missing_ok=True)
        if sock:
            sock.unlink(missing_ok=True)  # grpc removes it too; a killed server leaves it to the next
        log.info("stopped")


def _record_of(settings: Settings, app: App, sock: Path | None) -> Record:
    """What `server.json` says of this app: every address as bound, the device, the names served."""
    host = settings.grpc_listen.rsplit(":", 1)[0]
    gateway, dial = app.components.get("gateway"), None
    if gateway is not None:
        from phoneuse_runtime.gateway.server import Gateway

        assert isinstance(gateway, Gateway)
        # The gateway's address as bound (its real port): what `pair new` puts in the QR code.
        dial = f"{gateway.address.rsplit(':', 1)[0]}:{gateway.port}"
    return replace(
        Record.of_this_process(f"{host}:{app.port}", f"unix:{sock}" if sock else None, gateway=dial),
        mcp=_mcp_url(app),
        device=settings.device,
        served=sorted([*app.runtime.registry.actions, *app.runtime.registry.queries]),
    )


def _announce(settings: Settings, app: App, record: Record, started: float) -> None:
    log.info(
        "serving AndroidRuntime on %s%s (device %s, %d actions) in %.0f ms",
        record.address,
        f" and {record.unix}" if record.unix else "",
        settings.device,
        len(app.runtime.registry.actions),
        (time.monotonic() - started) * 1000,
    )
    if record.gateway is not None:
        from phoneuse_runtime.gateway.server import WS_PATH

        log.info("serving the Iris gateway on ws://%s%s", record.gateway, WS_PATH)
    if record.mcp is not None:
        log.info("serving MCP (Streamable HTTP) on %s", record.mcp)


async def serve(settings: Settings) -> int:
    """Runs until SIGINT/SIGTERM. Returns the process exit code."""
    from phoneuse_runtime.util.heap import return_large_buffers

    return_large_buffers()  # a caller's megabyte params go back to the system once answered
    async with serving(settings) as served:
        await served.stop.wait()
    return 0
