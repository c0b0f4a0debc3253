"""mobile-mcp (npm `@mobilenext/mobile-mcp`, its adb mode) for the benches that drive it: installed
with npm, started as the MCP stdio server it is, and talked to with the official `mcp` SDK client,
its adb CLI calls pointed at an isolated real adb server that the fake phone's daemon is connected
to (tests/fakes). Imported when called, as _fake_adb is."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def install_mobile_mcp(modules: Path | None, scratch: Path) -> Path | None:
    """The node_modules holding mobile-mcp (`modules`, else npm-installed into `scratch`); None,
    saying why, without node or npm."""
    if shutil.which("node") is None:
        print("node is not installed: the mobile-mcp columns are skipped")
        return None
    if modules is None:
        npm = shutil.which("npm")
        if npm is None:
            print("npm is not installed: the mobile-mcp columns are skipped")
            return None
        subprocess.run(
            [npm, "install", "--silent", "--prefix", str(scratch), "@mobilenext/mobile-mcp"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        modules = scratch / "node_modules"
    return modules


def version(modules: Path) -> str:
    package = json.loads((modules / "@mobilenext" / "mobile-mcp" / "package.json").read_text())
    return str(package["version"])


@dataclass
class McpRig:
    tool: Callable[[str, dict[str, Any]], Awaitable[tuple[str, bool]]]  # (text, is_error)
    call: Callable[[str, dict[str, Any]], Awaitable[Any]]  # the whole CallToolResult
    adbd: Any  # tests.fakes.adb_server.BackgroundAdbd: its `opened` streams
    phone: Any  # tests.fakes.phone.FakePhone
    serial: str


@contextlib.asynccontextmanager
async def mobile_mcp(modules: Path, phone: Any) -> AsyncIterator[McpRig]:
    """mobile-mcp serving `phone` (a FakePhone) over a fake adbd behind an isolated adb server;
    `tool(name, args)` calls one of its tools for that device."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from tests.fakes.adb_server import AdbServer, BackgroundAdbd, find_adb

    adb = find_adb()
    if adb is None:
        raise SystemExit("no adb binary")
    server = AdbServer(adb, Path(tempfile.mkdtemp(prefix="bench-mobile-mcp-adb-")))
    server.start()
    adbd = BackgroundAdbd(phone)
    server.connect(adbd.serial)
    env = server.env()  # its adb CLI calls reach the isolated server (ANDROID_ADB_SERVER_PORT)
    env["PATH"] = os.path.dirname(adb) + os.pathsep + env.get("PATH", "")
    script = modules / "@mobilenext" / "mobile-mcp" / "lib" / "index.js"
    params = StdioServerParameters(command="node", args=[str(script)], env=env)
    try:
        with open(os.devnull, "w") as quiet:  # its log lines, on stderr
            async with (
                stdio_client(params, errlog=quiet) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()

                async def call(name: str, args: dict[str, Any]) -> Any:
                    return await session.call_tool(name, {"device": adbd.serial, **args})

                async def tool(name: str, args: dict[str, Any]) -> tuple[str, bool]:
                    result = await call(name, args)
                    text = "\n".join(c.text for c in result.content if hasattr(c, "text"))
                    return text, bool(result.is_error)

                yield McpRig(tool, call, adbd, phone, adbd.serial)
    finally:
        server.disconnect(adbd.serial)
        await asyncio.to_thread(adbd.stop)
        server.stop()
