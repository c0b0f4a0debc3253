"""The MCP tests' shared pieces: an app with the MCP front end over Streamable HTTP (the production
component, built by app.build_app on port 0), and the official SDK's client for it."""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from phoneuse_runtime.app import App, build_app, default_components
from phoneuse_runtime.config.settings import Settings
from phoneuse_runtime.mcp.http import McpHttpServer

from ..serving import cli_env

TOKEN = "mcp-test-" + uuid.uuid4().hex
MODES = ("auto", "legacy")  # the SDK's own revision (2026-07-28), and the previous one's handshake


def settings_for(data_dir: Path, **overrides: Any) -> Settings:
    base = Settings(
        data_dir=data_dir,
        grpc_listen="127.0.0.1:0",
        mcp_listen="127.0.0.1:0",
        gateway=False,
        memory_ingest=False,
    )
    return replace(base, **overrides)


async def start_app(data_dir: Path, **overrides: Any) -> App:
    settings = settings_for(data_dir, **overrides)
    return await build_app(settings, token=TOKEN, components=default_components(settings, token=TOKEN))


def url_of(app: App) -> str:
    part = app.components["mcp"]
    assert isinstance(part, McpHttpServer)
    return part.url


@asynccontextmanager
async def connect(
    url: str,
    *,
    mode: str = "auto",
    token: str | None = TOKEN,
    headers: dict[str, str] | None = None,
    **kw: Any,
) -> AsyncIterator[Client]:
    """The SDK's Client over Streamable HTTP, with `Authorization: Bearer <token>`."""
    sent = dict(headers or {})
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    http = create_mcp_http_client(headers=sent)
    async with http, Client(streamable_http_client(url, http_client=http), mode=mode, **kw) as client:
        yield client


async def raw_post(url: str, body: dict[str, Any], headers: dict[str, str]) -> httpx2.Response:
    """One JSON-RPC POST, as a client (or a web page) would send it, without the SDK."""
    sent = {"content-type": "application/json", "accept": "application/json, text/event-stream", **headers}
    async with httpx2.AsyncClient() as http:
        answer: httpx2.Response = await http.post(url, json=body, headers=sent)
        return answer


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}


def subprocess_env(data_dir: Path) -> dict[str, str]:
    """The environment of a console-script subprocess: this checkout's code, the test's data dir."""
    env = cli_env(data_dir)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def attached_mcp(data_dir: Path, *, owner: bool) -> StdioServerParameters:
    """`phoneuse-runtime mcp` as a client spawns it beside the `serve` of `data_dir` (it attaches),
    with the owner's `mcp_client_is_owner` on or off in its environment."""
    env = {**subprocess_env(data_dir), "PHONEUSE_MCP_CLIENT_IS_OWNER": "true" if owner else "false"}
    return StdioServerParameters(command=sys.executable, args=["-m", "phoneuse_runtime", "mcp"], env=env)
