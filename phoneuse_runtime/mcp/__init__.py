"""The MCP front end: every action and query as an MCP tool, over stdio and Streamable HTTP.

The SDK is the `mcp` extra (`pip install '.[mcp]'` in a checkout); nothing here imports it at
the package level, so the runtime runs without it and only `mcp` and `--mcp-listen` need it.
"""

from __future__ import annotations

from phoneuse_runtime.util.extras import WHEEL

MCP_PATH = "/mcp"  # where the Streamable HTTP face answers
EVENTS_URI = "phoneuse://events"
EVENTS_KEPT = 256  # the recent events the events resource holds
EVENTS_PAGE = 100  # at most this many per read of it
ANNOUNCE_GAP_S = 0.1  # its subscribers are told of new events at most this often (the first at once)
# The package is not on PyPI: what works is the checkout's or a built wheel's extra.
INSTALL_HINT = (
    "the MCP front end needs the MCP SDK, the mcp extra: in a checkout, pip install '.[mcp]'; "
    f"from a built wheel, pip install '{WHEEL}[mcp]'"
)


class McpMissing(Exception):
    """The MCP SDK is not installed; the message says how to get it."""


def require_sdk() -> None:
    """Raises McpMissing when the SDK (or the ASGI server it runs on) cannot be imported."""
    try:
        import mcp.server  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        raise McpMissing(INSTALL_HINT) from None
