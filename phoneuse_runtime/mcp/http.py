"""`serve --mcp-listen HOST:PORT`: the MCP face over Streamable HTTP at /mcp, as a component.

Before the SDK sees a request, `Guard` checks it: `Authorization: Bearer <token>` (the same token
as gRPC, checked against its hash; never in the URL) or 401 and nothing runs, then `Origin`: a
request with none (a native client) is served, one that `mcp_allowed_origins` does not list is
refused with 403 (the MCP spec asks this against DNS rebinding). A body past
`grpc_max_receive_bytes` is refused with 413. At most `mcp_max_sessions` sessions are open at once
(a new one past it gets 503), and one idle for `mcp_session_idle_s` is closed: a phone's memory
and every event's fan-out stay bounded. Runs uvicorn in the app's own loop, without its
signal handlers (the app's own stop it).
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from phoneuse_runtime.config.sections import McpSettings
from phoneuse_runtime.kernel.registry import Contribution
from phoneuse_runtime.kernel.runtime import Runtime
from phoneuse_runtime.mcp import MCP_PATH
from phoneuse_runtime.util.listen import listening_socket, split_address

if TYPE_CHECKING:
    from phoneuse_runtime.mcp.face import RenderSpec

log = logging.getLogger(__name__)

PRINCIPAL_KEY = "phoneuse.principal"


class Guard:
    """ASGI middleware: the token, then the Origin; the principal goes into the scope."""

    def __init__(self, app: Any, *, tokens: Mapping[str, str], allowed_origins: frozenset[str]) -> None:
        from phoneuse_runtime.rpc.auth import BearerAuth

        self.app = app
        self.auth = BearerAuth(tokens)
        self.allowed_origins = allowed_origins

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers", [])}
        caller = self.auth.check([("authorization", headers.get("authorization", ""))])
        if isinstance(caller, str):
            self.auth.refusals.refused(f"MCP {scope.get('method', '')} {scope.get('path', '')}", caller)
            await _refuse(send, 401, caller, {"www-authenticate": 'Bearer realm="phoneuse-runtime"'})
            return
        origin = headers.get("origin")
        if origin is not None and origin not in self.allowed_origins:
            self.auth.refusals.refused("MCP", f"Origin {origin[:100]!r} is not allowed")
            await _refuse(send, 403, f"Origin {origin[:100]!r} is not allowed (mcp_allowed_origins)", {})
            return
        scope.setdefault("state", {})[PRINCIPAL_KEY] = caller.principal
        await self.app(scope, receive, send)


async def _refuse(send: Any, status: int, message: str, extra: Mapping[str, str]) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": message}}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    headers += [(k.encode(), v.encode()) for k, v in extra.items()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def quiet_libraries() -> None:
    """uvicorn's and the SDK's INFO lines (a line per session, startup twice over) only at DEBUG."""
    if log.isEnabledFor(logging.DEBUG):
        return
    for name in ("uvicorn", "mcp"):
        library = logging.getLogger(name)
        if library.level == logging.NOTSET:
            library.setLevel(logging.WARNING)


def principal_of_request(ctx: Any) -> str:
    request = getattr(ctx, "request", None)
    state = getattr(request, "scope", {}).get("state", {}) if request is not None else {}
    principal = state.get(PRINCIPAL_KEY)
    if not isinstance(principal, str):  # every request passed the Guard
        raise RuntimeError("an MCP request without a principal")
    return principal


class McpHttpServer:
    """The MCP face over Streamable HTTP on `address` ("HOST:PORT"; port 0 picks one, see `port`)."""

    name = "mcp"

    def __init__(
        self,
        address: str,
        *,
        tokens: Mapping[str, str],
        render_spec: RenderSpec,
        allowed_origins: frozenset[str] = frozenset(),
        max_body_bytes: int = 4 * 1024 * 1024,
        client_is_owner: bool = False,
        max_sessions: int = 16,
        session_idle_s: float = 300.0,
    ) -> None:
        self.address = address
        self.render_spec = render_spec
        self.tokens = dict(tokens)
        self.allowed_origins = allowed_origins
        self.max_body_bytes = max_body_bytes
        self.client_is_owner = client_is_owner
        self.max_sessions = max_sessions
        self.session_idle_s = session_idle_s
        self.port = 0
        self._server: Any = None
        self._task: asyncio.Task[None] | None = None
        self._face: Any = None

    @classmethod
    def from_settings(
        cls, mcp: McpSettings, *, tokens: Mapping[str, str], max_body_bytes: int, render_spec: RenderSpec
    ) -> McpHttpServer:
        """The server of the `mcp` section; a request body is held to `max_body_bytes` (the
        gRPC server's `grpc_max_receive_bytes`: the same params either way)."""
        return cls(
            mcp.listen,
            tokens=tokens,
            render_spec=render_spec,
            allowed_origins=mcp.allowed_origins,
            max_body_bytes=max_body_bytes,
            client_is_owner=mcp.client_is_owner,
            max_sessions=mcp.max_sessions,
            session_idle_s=mcp.session_idle_s,
        )

    def contribution(self) -> Contribution:
        return Contribution()

    async def start(self, runtime: Runtime) -> None:
        import uvicorn
        from mcp.server.transport_security import TransportSecuritySettings

        from phoneuse_runtime.mcp.backends import LocalBackend
        from phoneuse_runtime.mcp.face import McpFace

        quiet_libraries()
        self._face = McpFace(
            LocalBackend(runtime),
            principal_of=principal_of_request,
            render_spec=self.render_spec,
            client_is_owner=self.client_is_owner,
        )
        starlette = self._face.server.streamable_http_app(
            streamable_http_path=MCP_PATH,
            # The Guard checks Origin (and the token, which a rebound page cannot have).
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
            max_request_body_size=self.max_body_bytes,
            max_sessions=self.max_sessions,
            session_idle_timeout=self.session_idle_s,
        )
        app = Guard(starlette, tokens=self.tokens, allowed_origins=self.allowed_origins)
        host, port = split_address(self.address)
        sock = listening_socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
        try:
            sock.bind((host, port))
        except OSError as exc:
            sock.close()
            raise OSError(f"cannot listen for MCP on {self.address}: {exc.strerror or exc}") from exc
        sock.listen(128)
        sock.setblocking(False)
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            app, log_config=None, access_log=False, lifespan="on", timeout_graceful_shutdown=1, ws="none"
        )
        self._server = _Uvicorn(config)
        self._task = asyncio.get_running_loop().create_task(self._server.serve(sockets=[sock]))
        while not self._server.started:  # bounded: uvicorn's startup is the lifespan's, at once
            if self._task.done():
                self._task.result()
                raise RuntimeError("the MCP server stopped while starting")
            await asyncio.sleep(0.01)
        log.debug("serving MCP (Streamable HTTP) on http://%s:%d%s", host, self.port, MCP_PATH)

    @property
    def url(self) -> str:
        host = self.address.rpartition(":")[0] or "127.0.0.1"
        return f"http://{host}:{self.port}{MCP_PATH}"

    def connection_sockets(self) -> list[socket.socket]:
        """The sockets of the connections open now (what their options are: tests/mcp/test_http.py)."""
        state = getattr(self._server, "server_state", None)
        found = []
        for connection in getattr(state, "connections", ()):
            transport = getattr(connection, "transport", None)
            sock = transport.get_extra_info("socket") if transport is not None else None
            if sock is not None:
                found.append(sock)
        return found

    async def stop(self, *, grace_s: float) -> None:
        if self._server is None or self._task is None:
            return
        if self._face is not None:  # first: its listen streams end with their graceful last frame
            await self._face.close()
        self._server.should_exit = True
        try:
            await asyncio.wait_for(asyncio.shield(self._task), timeout=grace_s + 1)
        except asyncio.TimeoutError:
            self._server.force_exit = True
            await asyncio.gather(self._task, return_exceptions=True)


def _uvicorn_class() -> type:
    import contextlib

    import uvicorn

    class Quiet(uvicorn.Server):
        """uvicorn without its signal handlers: the app's own (SIGINT, SIGTERM) stop it."""

        @contextlib.contextmanager
        def capture_signals(self) -> Any:
            yield

    return Quiet


def _Uvicorn(config: Any) -> Any:
    return _uvicorn_class()(config)
