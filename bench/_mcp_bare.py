"""The bare peer of bench_mcp.py: the MCP SDK's own low-level Server with one tool that answers a
constant, over Streamable HTTP (uvicorn, port 0; the port is printed on stdout) or over stdio.

    python bench/_mcp_bare.py http | stdio
"""

from __future__ import annotations

import asyncio
import socket
import sys
from typing import Any

import mcp_types as types
import uvicorn
from mcp.server import Server
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecuritySettings

ANSWER = {"via": "bare", "length": 1, "verified": True}
TOOL = types.Tool(
    name="set_clipboard",
    description="Put text on the clipboard.",
    input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
)


async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[TOOL])


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text='{"via": "bare", "length": 1, "verified": true}')],
        structured_content=dict(ANSWER),
    )


def server() -> Server[Any]:
    return Server("bare", on_list_tools=list_tools, on_call_tool=call_tool)


async def http() -> None:
    app = server().streamable_http_app(
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False)
    )
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    print(sock.getsockname()[1], flush=True)
    config = uvicorn.Config(app, log_level="warning", lifespan="on", ws="none")
    await uvicorn.Server(config).serve(sockets=[sock])


async def stdio() -> None:
    bare = server()
    async with stdio_server() as (read_stream, write_stream):
        await bare.run(read_stream, write_stream, bare.create_initialization_options())


if __name__ == "__main__":
    asyncio.run(http() if sys.argv[1] == "http" else stdio())
