"""The Iris gateway as a component: a websockets asyncio server at `/ws`, beside the gRPC server,
over the same runtime. It authenticates each connection's `hello`, keeps one live session per
paired device, and dispatches frames to the handlers of its core and of its parts.

The door: an upgrade that carries an `Origin` (a web page's) is refused with 403 unless
`gateway_allowed_origins` lists it; until its hello is accepted a connection's frames are held
to `max_frame_bytes` (after it, to `OVERSIZE_TOLERANCE` times that); a token is looked up
before any budget is consulted, so a paired app always gets in, and the guesses of the whole
gateway are bounded (`pairing.GuessBudget`). Every frame after hello counts against the
connection's rate limit, and is handled only while the device is still paired: after a `pair
revoke`, not one more of its frames is handled, however long its close takes."""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import sqlite3
import time
from collections.abc import Coroutine, Sequence
from http import HTTPStatus
from typing import Any

from pydantic import ValidationError
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request as HttpRequest
from websockets.http11 import Response as HttpResponse
from websockets.typing import Origin

from phoneuse_runtime.config.settings import Settings
from phoneuse_runtime.gateway import core, outbox, push
from phoneuse_runtime.gateway.chat.channels import channel_list
from phoneuse_runtime.gateway.db import GatewayDb, db_path
from phoneuse_runtime.gateway.dispatch import Handlers, dispatch, dispatch_binary, payload_problem
from phoneuse_runtime.gateway.errors import ErrorCode, GatewayError
from phoneuse_runtime.gateway.limits import OVERSIZE_TOLERANCE, GatewayLimits
from phoneuse_runtime.gateway.pairing import AuthRefused, GuessBudget, Pairing, PairingStore
from phoneuse_runtime.gateway.parts import Part
from phoneuse_runtime.gateway.protocol import PROTOCOL_VERSION, encode_frame, never_dropped, parse_request
from phoneuse_runtime.gateway.session import Session, coalescing_key
from phoneuse_runtime.kernel.registry import Contribution
from phoneuse_runtime.kernel.runtime import Runtime

log = logging.getLogger(__name__)

WS_PATH = "/ws"
GATEWAY_LISTEN_HINT = (
    "choose another with `serve --gateway-listen HOST:PORT` (gateway_listen), or --no-gateway"
)
CLOSE_POLICY = 1008  # after an auth error
CLOSE_REPLACED = 4000  # a newer connection of the same device took over
PAIRING_POLL_S = 0.25  # how soon a `pair revoke` in another process closes the device's connection
EXPIRY_CHECK_S = 5.0  # how often live connections are checked against their pairing's expiry
PRUNE_EVERY_S = 600.0
TOO_FAST = GatewayError("rate_limited", "too many frames per second")


def default_parts() -> list[Part]:
    from phoneuse_runtime.gateway.agent import AgentPart
    from phoneuse_runtime.gateway.chat import ChatPart

    return [ChatPart(), AgentPart()]


class _Bucket:
    """Frames per second for one connection: a token bucket, so a burst of one second's worth
    passes and a steady flood does not."""

    def __init__(self, rate: int) -> None:
        self.rate = float(rate)
        self.tokens = float(rate)
        self.at = time.monotonic()

    def take(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.rate, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens < 1.0:
            return False
        self.tokens -= 1.0
        return True


class _LivePairings:
    """The pairings whose tokens work, used on the database thread only. Looked up again when
    another process changed the database (SQLite's data_version: `pair` in a shell) or every
    EXPIRY_CHECK_S (expiries), else taken from memory: a broadcast does not scan the pairings."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self.version = -1
        self.checked = 0.0
        self.ids: frozenset[str] = frozenset()

    def get(self, conn: sqlite3.Connection) -> frozenset[str]:
        version = _data_version(conn)
        now = time.monotonic()
        if version != self.version or now - self.checked >= EXPIRY_CHECK_S:
            self.ids = frozenset(self.gateway.pairing_store(conn).live_ids())
            self.version, self.checked = version, now
        return self.ids


class Gateway:
    """Serves the Iris wire protocol on `address` ("HOST:PORT"; port 0 picks one, see `port`).

    Handlers reach it as `session.gateway`, actions as `ctx.component(Gateway)`."""

    name = "gateway"

    def __init__(
        self,
        settings: Settings,
        *,
        address: str | None = None,
        parts: Sequence[Part] | None = None,
        name: str = "gateway",
    ) -> None:
        self.name = name
        self.settings = settings
        self.address = address or settings.gateway_listen
        self.limits = GatewayLimits.from_settings(settings.gateway_section)
        self.waker = push.Waker(settings.ntfy_url) if settings.ntfy_url else None
        self._guesses = GuessBudget(self.limits.auth_failures, self.limits.auth_window_s)
        self.parts: list[Part] = list(default_parts() if parts is None else parts)
        self.handlers = Handlers.merged([core.HANDLERS, *(p.handlers for p in self.parts)])
        self.db = GatewayDb(db_path(settings.data_dir))
        self.sessions: dict[str, Session] = {}  # pairing_id -> its one live session
        self._live = _LivePairings(self)  # who a broadcast's outbox frames are for
        self._appends = 0  # outbox appends, on the database thread: trims every so many
        self.port = 0
        self._runtime: Runtime | None = None
        self._server: Server | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    @property
    def runtime(self) -> Runtime:
        if self._runtime is None:
            raise RuntimeError("the gateway has not started")
        return self._runtime

    def contribution(self) -> Contribution:
        parts = [p.contribution() for p in self.parts]
        return Contribution(
            actions=[a for c in parts for a in c.actions],
            queries=[q for c in parts for q in c.queries],
            events=[e for c in parts for e in c.events],
            policies=[p for c in parts for p in c.policies],
        )

    def network_links(self) -> list[str]:
        """The paired apps connected over the network (not from this machine's loopback): turning
        the phone's Wi-Fi off could cut them (kernel/links.py), whichever phone the app runs on."""
        return [
            f"the Iris app {session.device_name or session.pairing_id!r} connected from {session.remote}"
            for session in self.sessions.values()
            if not session.closed and session.remote and not _is_loopback(session.remote)
        ]

    def pairing_store(self, conn: Any) -> PairingStore:
        """The pairings on the database thread's connection, with the gateway's guess budget."""
        return PairingStore(
            conn,
            default_ttl_days=self.settings.pairing_ttl_days,
            max_pending=self.limits.max_pending_requests,
            guesses=self._guesses,
        )

    async def start(self, runtime: Runtime) -> None:
        self._runtime = runtime
        started: list[Part] = []
        try:
            await self.db.run(_create_tables)
            await self.prune()
            for part in self.parts:
                await part.start(self)
                started.append(part)
            host, _, port = self.address.rpartition(":")
            from phoneuse_runtime.util.listen import bind_problem

            problem = bind_problem(self.address)
            if problem:
                raise OSError(f"cannot listen on {self.address}: {problem}; {GATEWAY_LISTEN_HINT}")
            try:
                self._server = await serve(
                    self._connection,
                    host or "127.0.0.1",
                    int(port),
                    process_request=_only_ws_path,
                    # No Origin (a native app), or one the owner listed: a web page gets 403.
                    origins=[None, *(Origin(o) for o in sorted(self.settings.gateway_allowed_origins))],
                    # Until hello is accepted; then OVERSIZE_TOLERANCE times it (see _hello).
                    max_size=self.limits.max_frame_bytes,
                    server_header=None,
                )
            except (OSError, ValueError) as exc:
                raise OSError(f"cannot listen on {self.address}: {exc}; {GATEWAY_LISTEN_HINT}") from exc
        except BaseException:
            for part in reversed(started):  # the app stops only the components that started
                await part.stop()
            await self.db.close()
            raise
        self.port = self._server.sockets[0].getsockname()[1] if self._server.sockets else 0
        self.spawn(self._watch_pairings())
        self.spawn(self._prune_now_and_then())

    async def stop(self, *, grace_s: float) -> None:
        if self._server is not None:
            self._server.close(close_connections=True)
            try:
                await asyncio.wait_for(self._server.wait_closed(), timeout=max(grace_s, 0.1))
            except TimeoutError:
                log.warning("gateway connections did not close within %.1f s", grace_s)
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(set(self._tasks))
        for part in reversed(self.parts):
            await part.stop()
        await self.db.close()

    def spawn(self, work: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Runs `work` beside the connection's frame loop (which handles one frame at a time),
        e.g. a slash command that drives the phone; cancelled when the gateway stops."""
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._settle)
        return task

    def _settle(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("a gateway task failed", exc_info=task.exception())

    async def broadcast(
        self,
        frame_type: str,
        payload: dict[str, Any],
        *,
        chat_id: str | None = None,
        thread_id: str | None = None,
        exclude: Session | None = None,
    ) -> None:
        """Sends a frame to every one of the owner's paired devices but `exclude`'s.

        A frame the schema never drops first goes into each device's outbox (a device that is
        offline gets it on `sync`, and an ntfy wake-up if it has a topic); any other frame
        reaches the devices that are connected, and no others."""
        text = encode_frame(frame_type, payload, chat_id=chat_id, thread_id=thread_id)
        skip = exclude.pairing_id if exclude is not None else None
        if never_dropped(frame_type):
            queued = await self.db.run(lambda c: self._outbox_append(c, text, skip))
            offline = [p for p in queued if p not in self.sessions]
            if offline and self.waker is not None:
                await self._wake(offline)
        key = coalescing_key(frame_type, payload, chat_id)
        for session in list(self.sessions.values()):
            if session is not exclude and session.pairing_id != skip:
                session.enqueue(text, key)

    def _outbox_append(self, conn: sqlite3.Connection, text: str, skip: str | None) -> list[str]:
        pairing_ids = sorted(self._live.get(conn) - {skip})
        if not pairing_ids:
            return []
        outbox.append(conn, text, pairing_ids, max_bytes=self.limits.outbox_max_bytes)
        self._appends += 1
        max_frames = self.limits.outbox_max_frames
        if self._appends % min(max_frames, outbox.TRIM_EVERY) == 0:
            outbox.trim(conn, max_frames=max_frames)
        return pairing_ids

    async def _wake(self, offline: list[str]) -> None:
        assert self.waker is not None
        waker = self.waker
        due = [p for p in offline if waker.due(p)]
        if not due:
            return
        targets = await self.db.run(lambda c: push.topics(c, due))
        for pairing_id, topic in targets.items():
            self.spawn(waker.wake(pairing_id, topic))

    async def cursor_of(self, pairing_id: str) -> int:
        """The device's sync cursor: the newest frame in its outbox."""
        return await self.db.run(lambda c: outbox.newest(c, pairing_id))

    async def paired_devices(self) -> set[str]:
        """The pairing ids whose tokens work now (connected or not)."""
        return await self.db.run(lambda c: self.pairing_store(c).live_ids())

    async def prune(self) -> int:
        """Drops outbox frames past retention, and those of devices no longer paired."""
        retention_ms = int(self.limits.outbox_retention_s * 1000)
        max_frames = self.limits.outbox_max_frames

        def prune(conn: sqlite3.Connection) -> int:
            live = self.pairing_store(conn).live_ids()
            return outbox.prune(conn, retention_ms=retention_ms, live=live) + outbox.trim(
                conn, max_frames=max_frames
            )

        return await self.db.run(prune)

    async def _prune_now_and_then(self) -> None:
        while True:
            await asyncio.sleep(PRUNE_EVERY_S)
            try:
                await self.prune()
            except sqlite3.Error:
                log.exception("pruning the outbox failed")

    async def _watch_pairings(self) -> None:
        """Closes the connections of devices whose pairing was revoked (by `pair revoke`, in
        another process) or has expired."""
        while True:
            await asyncio.sleep(PAIRING_POLL_S)
            if not self.sessions:
                continue
            try:
                live = await self.db.run(self._live.get)
            except sqlite3.Error:
                log.exception("checking the pairings failed")
                continue
            for pairing_id, session in list(self.sessions.items()):
                if pairing_id not in live:
                    await self._unpaired(session)

    async def _unpaired(self, session: Session) -> None:
        """Ends the session of a device no longer paired: its frames are dropped from now on,
        and its connection closes after the error that says why (which may take a while)."""
        if session.revoked:
            return
        log.info("device %s is no longer paired; its connection is closed", session.pairing_id)
        await session.error(GatewayError("auth", "this device's pairing was revoked or expired"), None)
        session.revoked = True
        self.spawn(session.close(CLOSE_POLICY, "auth"))
        if self.sessions.get(session.pairing_id) is session:
            del self.sessions[session.pairing_id]

    async def _still_paired(self, session: Session) -> bool:
        """Whether the device's pairing still works, as of now (a revoke in another process is
        seen at once: SQLite's data_version)."""
        if session.revoked:
            return False
        if session.pairing_id in await self.db.run(self._live.get):
            return True
        await self._unpaired(session)
        return False

    async def server_caps(self) -> dict[str, Any]:
        return {
            "streaming": True,
            "reasoning": True,
            "tools": True,
            "media": True,
            "search": True,
            "pickers": True,
            "push": "ntfy" if self.settings.ntfy_url else "none",
            **self.limits.caps(),
        }

    # The connection's life: hello, then frames until it closes.

    async def _connection(self, ws: ServerConnection) -> None:
        session = await self._hello(ws)
        if session is None:
            return
        try:
            for part in self.parts:
                await part.session_opened(session)
            await self._frames(session)
        finally:
            await session.stop_writer()
            if self.sessions.get(session.pairing_id) is session:
                del self.sessions[session.pairing_id]
            for part in self.parts:
                await part.session_closed(session)

    async def _refuse(
        self, ws: ServerConnection, message: str, request_id: int | None, *, code: ErrorCode = "auth"
    ) -> None:
        frame = encode_frame("error", {"code": code, "message": message}, id=request_id)
        try:
            await ws.send(frame)
            await ws.close(CLOSE_POLICY, "auth")
        except ConnectionClosed:
            pass

    async def _hello(self, ws: ServerConnection) -> Session | None:
        session = await self._authenticate(ws)
        if session is None:
            return None
        # Authenticated: frames up to OVERSIZE_TOLERANCE times the limit are read (and refused).
        ws.protocol.max_message_size = self.limits.max_frame_bytes * OVERSIZE_TOLERANCE
        previous = self.sessions.get(session.pairing_id)
        self.sessions[session.pairing_id] = session
        session.start()
        if previous is not None:
            log.info("device %s connected again; its previous connection is closed", session.pairing_id)
            self.spawn(previous.close(CLOSE_REPLACED, "replaced by a newer connection of this device"))
        return session

    async def _authenticate(self, ws: ServerConnection) -> Session | None:
        """The session of a good hello, its hello.ack sent; None after refusing a bad one."""
        try:
            first = await asyncio.wait_for(ws.recv(), timeout=self.limits.hello_timeout_s)
        except TimeoutError:
            await self._refuse(ws, "no hello in time", None)
            return None
        except ConnectionClosed:
            return None
        if isinstance(first, bytes):
            await self._refuse(ws, "the first frame must be hello", None)
            return None
        try:
            request = parse_request(first)
        except GatewayError as exc:
            await self._refuse(ws, f"the first frame must be hello ({exc.message})", exc.request_id)
            return None
        if request.type != "hello":
            await self._refuse(ws, "the first frame must be hello", request.id)
            return None
        try:
            hello = core.HelloPayload.model_validate(request.payload)
        except ValidationError as exc:
            await self._refuse(ws, f"bad hello payload: {payload_problem(exc)}", request.id)
            return None
        problem = push.topic_problem(hello.ntfy_topic or "") or push.fcm_problem(hello.fcm_token or "")
        if problem:
            await self._refuse(ws, f"bad hello payload: {problem}", request.id)
            return None
        wanted = (hello.caps or {}).get("min_protocol", PROTOCOL_VERSION)
        if not isinstance(wanted, int) or isinstance(wanted, bool) or wanted > PROTOCOL_VERSION:
            message = f"this server speaks protocol version {PROTOCOL_VERSION}; the app asks for {wanted!r}"
            await self._refuse(ws, message, request.id, code="unsupported")
            return None
        try:
            pairing: Pairing = await self.db.run(
                lambda c: self.pairing_store(c).authenticate(
                    hello.token, device_id=hello.device_id, device_name=hello.device_name
                )
            )
        except AuthRefused as exc:
            await self._refuse(ws, str(exc), request.id, code=exc.code)
            return None
        if hello.fcm_token is not None or hello.ntfy_topic is not None:
            await self.db.run(
                lambda c: push.register(c, pairing.id, fcm_token=hello.fcm_token, ntfy_topic=hello.ntfy_topic)
            )
        session = Session(self, ws, pairing, request.payload, send_queue_bytes=self.limits.send_queue_bytes)
        ack = {
            "server_caps": await self.server_caps(),
            "sync_cursor": await self.cursor_of(pairing.id),
            "channels": await channel_list(self),
        }
        await session.reply(request, "hello.ack", ack)
        return session

    async def _frames(self, session: Session) -> None:
        bucket = _Bucket(self.limits.max_frames_per_second)
        limit = self.limits.max_frame_bytes
        try:
            async for message in session.ws:
                allowed = bucket.take()  # every frame counts: oversized and malformed ones too
                size = len(message) if isinstance(message, bytes) else len(message.encode())
                if size > limit:
                    problem = f"a frame of {size} bytes is over max_frame_bytes ({limit})"
                    await session.error(GatewayError("unsupported", problem) if allowed else TOO_FAST, None)
                    continue
                if isinstance(message, bytes):
                    if not allowed:
                        await session.error(TOO_FAST, None)
                    elif await self._still_paired(session):
                        await dispatch_binary(self.handlers, session, message)
                    continue
                try:
                    request = parse_request(message)
                except GatewayError as exc:
                    await session.error(exc if allowed else TOO_FAST, exc.request_id)
                    continue
                if not allowed:
                    await session.error(TOO_FAST, request.id)
                elif await self._still_paired(session):  # else dropped: the connection is closing
                    await dispatch(self.handlers, session, request)
        except ConnectionClosed:
            pass


def _create_tables(conn: sqlite3.Connection) -> None:
    PairingStore.create_tables(conn)
    outbox.create_tables(conn)
    push.create_tables(conn)


def _data_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA data_version").fetchone()[0])


def _only_ws_path(connection: ServerConnection, request: HttpRequest) -> HttpResponse | None:
    if request.path.split("?", 1)[0] != WS_PATH:
        return connection.respond(HTTPStatus.NOT_FOUND, f"the Iris gateway serves {WS_PATH}\n")
    return None


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.removeprefix("::ffff:")).is_loopback
    except ValueError:
        return host == "localhost"
