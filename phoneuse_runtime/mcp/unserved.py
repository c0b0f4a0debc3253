"""`phoneuse-runtime mcp` when it cannot serve (no server to attach to and no phone, a bad
setting, no MCP SDK): the client is answered, not left with a closed connection.

An MCP client reads only stdout: the reason on stderr alone shows it nothing but a server that
closed. So every request it sends, until its `initialize` (the SDK's client sends
`server/discover` first, then falls back to `initialize`), gets a JSON-RPC error whose message
says why, and then the process ends. No SDK is needed: stdio's messages are one JSON object a
line. Bounded: at most MAX_REQUESTS lines of at most MAX_LINE_BYTES are read.
"""

from __future__ import annotations

import json
from typing import BinaryIO

CANNOT_SERVE = -32603  # JSON-RPC's internal error: the server, not the request, is at fault
MAX_REQUESTS = 8
MAX_LINE_BYTES = 1 << 20


def refuse_stdio(reason: str, *, stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Answers each request read from `stdin` with an error saying `reason`, until an `initialize`
    is answered, the input ends, or MAX_REQUESTS lines were read."""
    message = f"phoneuse-runtime cannot serve: {reason}"
    for _ in range(MAX_REQUESTS):
        line = stdin.readline(MAX_LINE_BYTES)
        if not line:
            return
        try:
            request = json.loads(line)
        except ValueError:
            continue
        if not isinstance(request, dict) or "method" not in request or request.get("id") is None:
            continue  # a notification (or no JSON-RPC at all): nothing to answer
        answer = {"jsonrpc": "2.0", "id": request["id"], "error": {"code": CANNOT_SERVE, "message": message}}
        stdout.write(json.dumps(answer, ensure_ascii=False).encode() + b"\n")
        stdout.flush()
        if request["method"] == "initialize":
            return
