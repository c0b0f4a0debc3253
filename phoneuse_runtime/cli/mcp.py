"""`phoneuse-runtime mcp`: the MCP face over stdio, for clients that spawn their servers.

It attaches to the running server of its data dir (one runtime per phone, however many front
ends): it is then a gRPC client of that server (found as the client commands find it:
auth/client.py), and lists what that server serves (the device and the names its `server.json`
records). When no server runs, it serves the data dir itself with the given `--device` and
settings, exactly as `serve` does (`app.serving`: its socket and record included, so that other
front ends attach to it while it runs), until the stdio client goes or SIGINT/SIGTERM comes.
Logs go to stderr; stdout carries only MCP.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from phoneuse_runtime.cli.options import DEVICE_HELP, add_log_level, data_dir_parent, device_settings
from phoneuse_runtime.config.settings import ConfigError, Settings, default_data_dir
from phoneuse_runtime.mcp import INSTALL_HINT, McpMissing, require_sdk
from phoneuse_runtime.util.display import printable
from phoneuse_runtime.util.endpoint import NoEndpoint, NoServer
from phoneuse_runtime.util.tasks import cancel_and_wait

if TYPE_CHECKING:
    from phoneuse_runtime.mcp.backends import GrpcBackend

log = logging.getLogger(__name__)


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
    from phoneuse_runtime.cli.mcp_config import add_parser as add_config_parser

    add_config_parser(cmd.add_subparsers(dest="mcp_command", metavar="config"))


def main(args: argparse.Namespace) -> int:
    if getattr(args, "mcp_command", None) == "config":
        from phoneuse_runtime.cli.mcp_config import main as config_main

        return config_main(args)
    try:
        require_sdk()
    except McpMissing:
        return _cannot_serve(INSTALL_HINT)
    from phoneuse_runtime.util.display import PrintableFormatter

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(PrintableFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=args.log_level, handlers=[handler], force=True)
    from phoneuse_runtime.mcp.http import quiet_libraries

    quiet_libraries()
    flags = {"device": args.device, "data_dir": args.data_dir, "sim_state": args.sim_state}
    began: list[bool] = []  # not empty once the MCP session runs
    try:
        settings = device_settings(flags, config_file=args.config)
        given = args.device is not None
        return asyncio.run(_run(settings, standalone=args.standalone, device_given=given, began=began))
    except (ConfigError, NoEndpoint, OSError) as exc:
        if began:
            print(f"phoneuse-runtime: {printable(str(exc))}", file=sys.stderr)
            return 2
        return _cannot_serve(str(exc))
    except KeyboardInterrupt:
        return 0


def _cannot_serve(reason: str) -> int:
    """Says why on stderr, and to the client too (its requests answered with the reason) unless
    stdin is a terminal: a client shows its user what the server answered, not its stderr."""
    print(f"phoneuse-runtime: {printable(reason)}", file=sys.stderr)
    if not sys.stdin.isatty():
        from phoneuse_runtime.mcp.unserved import refuse_stdio

        refuse_stdio(printable(reason), stdin=sys.stdin.buffer, stdout=sys.stdout.buffer)
    return 2


async def _run(settings: Settings, *, standalone: bool, device_given: bool, began: list[bool]) -> int:
    from phoneuse_runtime.mcp.stdio import serve_stdio
    from phoneuse_runtime.spec.document import render_spec

    attached = None if standalone else _attach(settings, device_given=device_given)
    if attached is not None:
        began.append(True)
        try:
            owner = settings.mcp.client_is_owner  # its user answers through the approval store
            await serve_stdio(attached, render_spec=render_spec, client_is_owner=owner)
        finally:
            await attached.close()
        return 0
    from phoneuse_runtime.app import serving
    from phoneuse_runtime.mcp.backends import LocalBackend

    async with serving(settings) as served:
        log.info(
            "no server ran for %s: serving the phone (%s) in this process", settings.data_dir, settings.device
        )
        began.append(True)
        loop = asyncio.get_running_loop()
        backend = LocalBackend(served.app.runtime)
        owner = settings.mcp.client_is_owner
        speaking = loop.create_task(serve_stdio(backend, render_spec=render_spec, client_is_owner=owner))
        stopped = loop.create_task(served.stop.wait())
        await asyncio.wait({speaking, stopped}, return_when=asyncio.FIRST_COMPLETED)
        if speaking.done():  # the client went
            await cancel_and_wait(speaking, stopped)
            return 0
    # A signal came, and the server is stopped and its record gone; the stdio reader is a thread
    # blocked on stdin, which nothing interrupts, so the process ends here.
    logging.shutdown()
    os._exit(0)


def _attach(settings: Settings, *, device_given: bool) -> GrpcBackend | None:
    """A backend over the live server of the data dir, or None when none runs."""
    from phoneuse_runtime.app import served_registry
    from phoneuse_runtime.auth.client import find_endpoint
    from phoneuse_runtime.device.backends import make_device
    from phoneuse_runtime.mcp.backends import GrpcBackend
    from phoneuse_runtime.owner.paths import FILES_DIR
    from phoneuse_runtime.util.endpoint import served_by_live_server

    data_dir = settings.data_dir or default_data_dir()
    try:
        endpoint = find_endpoint(data_dir)
        device, served = served_by_live_server(data_dir)
    except NoServer as exc:
        log.info("%s", exc)
        return None
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
    log.info("attached to the server of %s at %s", data_dir, endpoint.address)
    return GrpcBackend(
        endpoint.address,
        endpoint.token,
        registry=registry,
        capabilities=capabilities,
        device=served_settings.device,
        files_dir=data_dir / FILES_DIR,
        data_dir=data_dir,
    )
