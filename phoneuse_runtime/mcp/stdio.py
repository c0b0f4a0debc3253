"""`phoneuse-runtime mcp`: the MCP face over stdio, for clients that spawn their servers.

It attaches to the running server of its data dir (one runtime per phone, however many front
ends): it is then a gRPC client of that server, over its Unix socket, with the data dir's token,
and lists what that server serves (the device and the names its `server.json` records). When no
server runs, it runs one in its own process with the given `--device` and settings, as `serve`
would (its socket and record included, so that other front ends attach to it while it runs).
Logs go to stderr; stdout carries only MCP.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from phoneuse_runtime.cli.options import DEVICE_HELP, add_log_level, data_dir_parent, device_settings
from phoneuse_runtime.config.settings import ConfigError, Settings, default_data_dir
from phoneuse_runtime.mcp import INSTALL_HINT, McpMissing, require_sdk
from phoneuse_runtime.util.display import printable

if TYPE_CHECKING:
    from phoneuse_runtime.app import App

log = logging.getLogger(__name__)

PRINCIPAL = "agent"  # the principal of a stdio client: it is the user's own process


def add_parser(sub: Any) -> None:
    cmd = sub.add_parser(
        "mcp",
        parents=[data_dir_parent()],
        help="serve MCP over stdio (for Claude Desktop, Claude Code, Cursor...): attaches to the running "
        "server of the data dir, else runs the phone's runtime itself",
    )
    cmd.add_argument("--device", help=f"when no server runs: {DEVICE_HELP}")
    cmd.add_argument("--sim-state", type=Path, help="when no server runs: the simulated phone's state file")
    cmd.add_argument(
        "--standalone",
        action="store_true",
        help="never attach: run the runtime in this process even if a server runs",
    )
    add_log_level(cmd, default="WARNING")


def main(args: argparse.Namespace) -> int:
    try:
        require_sdk()
    except McpMissing:
        print(f"phoneuse-runtime: {INSTALL_HINT}", file=sys.stderr)
        return 2
    from phoneuse_runtime.util.display import PrintableFormatter

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(PrintableFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=args.log_level, handlers=[handler], force=True)
    from phoneuse_runtime.mcp.http import quiet_libraries

    quiet_libraries()
    flags = {"device": args.device, "data_dir": args.data_dir, "sim_state": args.sim_state}
    try:
        settings = device_settings(flags, config_file=args.config)
        return asyncio.run(_serve(settings, standalone=args.standalone, device_given=args.device is not None))
    except (ConfigError, OSError) as exc:
        print(f"phoneuse-runtime: {printable(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0


async def _serve(settings: Settings, *, standalone: bool, device_given: bool) -> int:
    from phoneuse_runtime.mcp.face import McpFace

    attached = None if standalone else _attach(settings, device_given=device_given)
    if attached is not None:
        face = McpFace(attached, principal_of=lambda _ctx: PRINCIPAL, principal=PRINCIPAL)
        try:
            await _speak(face)
        finally:
            await face.close()
            await attached.close()
        return 0
    from phoneuse_runtime.mcp.backends import LocalBackend

    async with _server_of_its_own(settings) as app:
        face = McpFace(LocalBackend(app.runtime), principal_of=lambda _ctx: PRINCIPAL, principal=PRINCIPAL)
        try:
            await _speak(face)
        finally:
            await face.close()
    return 0


async def _speak(face: Any) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await face.server.run(read_stream, write_stream, face.server.create_initialization_options())


@asynccontextmanager
async def _server_of_its_own(settings: Settings) -> AsyncIterator[App]:
    """What `serve` runs for the data dir (its token, Unix socket, record and components), in this
    process, for as long as the stdio client stays: other front ends attach to it meanwhile."""
    from phoneuse_runtime.app import build_app, default_components
    from phoneuse_runtime.auth.tokens import load_or_create_token
    from phoneuse_runtime.util.endpoint import Record, claim_socket, socket_path, write_record
    from phoneuse_runtime.util.files import private_dir

    private_dir(settings.data_dir)
    token = settings.token or load_or_create_token(settings.data_dir)[0]
    sock = socket_path(settings.data_dir)
    if sock:
        claim_socket(sock, settings.data_dir)
    app = await build_app(
        settings, token=token, components=default_components(settings, token=token, unix_socket=sock)
    )
    record_path = None
    try:
        if sock:
            os.chmod(sock, 0o600)
        host = settings.grpc_listen.rsplit(":", 1)[0]
        record = replace(
            Record.of_this_process(f"{host}:{app.port}", f"unix:{sock}" if sock else None),
            device=settings.device,
            served=sorted([*app.runtime.registry.actions, *app.runtime.registry.queries]),
        )
        record_path = write_record(settings.data_dir, record)
        log.info(
            "no server ran for %s: serving the phone (%s) in this process", settings.data_dir, settings.device
        )
        yield app
    finally:
        await app.stop(grace_s=settings.shutdown_grace_s)
        if record_path is not None:
            record_path.unlink(missing_ok=True)
        if sock:
            sock.unlink(missing_ok=True)


def _attach(settings: Settings, *, device_given: bool) -> Any:
    """A backend over the live server of the data dir, or None when none runs."""
    from phoneuse_runtime.app import served_registry
    from phoneuse_runtime.auth.tokens import read_token_file
    from phoneuse_runtime.device.backends import make_device
    from phoneuse_runtime.mcp.backends import GrpcBackend
    from phoneuse_runtime.util.endpoint import NoServer, find_server, served_by_live_server

    data_dir = settings.data_dir or default_data_dir()
    try:
        address = os.environ.get("PHONEUSE_SERVER") or find_server(data_dir)
        device, served = served_by_live_server(data_dir)
    except NoServer as exc:
        log.info("%s", exc)
        return None
    token = os.environ.get("PHONEUSE_TOKEN") or read_token_file(data_dir)
    if not token:
        raise ConfigError(f"a server runs for {data_dir} but there is no token in it to call it with")
    if device and device_given and device != settings.device:
        log.warning(
            "a server for %s already serves %s; --device %s is not used", data_dir, device, settings.device
        )
    served_settings = replace(settings, device=device or settings.device)
    registry = served_registry(served_settings)
    if served is not None:  # exactly what the server serves
        names = set(served)
        registry.actions = {k: v for k, v in registry.actions.items() if k in names}
        registry.queries = {k: v for k, v in registry.queries.items() if k in names}
        unknown = sorted(names - {*registry.actions, *registry.queries})
        if unknown:
            log.warning(
                "the server serves %s, which this install lacks: no tool for them", ", ".join(unknown)
            )
    capabilities = make_device(served_settings).capabilities
    log.info("attached to the server of %s at %s", data_dir, address)
    return GrpcBackend(
        address, token, registry=registry, capabilities=capabilities, device=served_settings.device
    )
