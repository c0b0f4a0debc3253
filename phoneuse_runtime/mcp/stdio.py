"""The MCP face over stdio: one face on this process's stdin and stdout (logs go to stderr).

`phoneuse-runtime mcp` (cli/mcp.py) chooses its backend: the running server over gRPC, or the
runtime it serves itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from phoneuse_runtime.mcp.backends import Backend

if TYPE_CHECKING:
    from phoneuse_runtime.mcp.face import RenderSpec

PRINCIPAL = "agent"  # the principal of a stdio client: it is the user's own process


async def serve_stdio(backend: Backend, *, render_spec: RenderSpec, client_is_owner: bool = False) -> None:
    """Serves MCP over stdio on `backend` until the client closes its end; its user is asked to
    approve held calls only with `client_is_owner` (the owner's `mcp_client_is_owner`)."""
    from mcp.server.stdio import stdio_server

    from phoneuse_runtime.mcp.face import McpFace

    face = McpFace(
        backend,
        principal_of=lambda _ctx: PRINCIPAL,
        render_spec=render_spec,
        principal=PRINCIPAL,
        client_is_owner=client_is_owner,
    )
    try:
        async with stdio_server() as (read_stream, write_stream):
            await face.server.run(read_stream, write_stream, face.server.create_initialization_options())
    finally:
        await face.close()
