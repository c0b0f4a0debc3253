"""One app connection after a good `hello`: the device it is, and its queue of frames to write.

A frame is written at once while nothing waits before it and the connection's transport has
room (as `websockets.broadcast` writes: no task switch per frame and device, which is what
fanning a streamed answer out to many devices costs). Otherwise it waits in the connection's
queue, which one writer task per connection writes in order, so a slow app never holds up
whoever sends to it (a handler, a broadcast, the agent). While the app is slow, frames wait in
the queue, where a `message.update` or `tool.progress` replaces the one still waiting for the
same message or tool: the app gets the latest text, always before the `message.stop` that
follows it. Never-dropped frames are never replaced or dropped; when the queue holds more than
`send_queue_bytes`, the app cannot keep up, and its connection is closed: it reconnects and
`sync`s from its outbox.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from websockets.asyncio.server import ServerConnection, broadcast
from websockets.exceptions import ConnectionClosed

from phoneuse_runtime.gateway.errors import GatewayError
from phoneuse_runtime.gateway.protocol import COALESCABLE, Request, encode_frame
from phoneuse_runtime.util.tasks import cancel_and_wait

if TYPE_CHECKING:
    from phoneuse_runtime.gateway.pairing import Pairing
    from phoneuse_runtime.gateway.server import Gateway

log = logging.getLogger(__name__)

CLOSE_TOO_SLOW = 1013  # "try again later": the app reconnects and syncs
# A frame is written at once only while the transport holds at most this much unsent: past it,
# the app is behind, and frames queue (and coalesce) instead.
WRITE_AT_ONCE_BYTES = 64 * 1024


@dataclass(eq=False)
class _Queued:
    data: str | bytes
    key: tuple[Any, ...] | None  # the coalescing key of a message.update / tool.progress


def coalescing_key(frame_type: str, payload: dict[str, Any], chat_id: str | None) -> tuple[Any, ...] | None:
    """What a coalescable frame is the latest of: its message, or its tool."""
    if frame_type not in COALESCABLE:
        return None
    if frame_type == "message.update":
        return (frame_type, chat_id, payload.get("message_id"))
    return (frame_type, chat_id, payload.get("index"), payload.get("name"))


class Session:
    """A paired app device's live connection.

    `pairing_id` is the device as the gateway knows it (one pairing, one token): outboxes, read
    state and principals are keyed by it. `device_id` is what the app calls itself in `hello`.
    `state` holds what a part keeps per connection (an upload in progress, ...), under the
    part's own key."""

    def __init__(
        self,
        gateway: Gateway,
        ws: ServerConnection,
        pairing: Pairing,
        hello: dict[str, Any],
        *,
        send_queue_bytes: int,
    ) -> None:
        self.gateway = gateway
        self.ws = ws
        self.pairing = pairing
        self.pairing_id = pairing.id
        self.device_id = str(hello.get("device_id") or pairing.device_id or "")
        self.device_name = str(hello.get("device_name") or pairing.name)
        self.remote = ws.remote_address[0] if ws.remote_address else ""
        self.state: dict[str, Any] = {}
        self.closed = False
        # No longer paired (revoked or expired): none of its frames is handled any more, and
        # nothing more is queued for it, while its connection closes.
        self.revoked = False
        self._limit = send_queue_bytes
        self._queue: collections.deque[_Queued] = collections.deque()
        self._waiting: dict[tuple[Any, ...], _Queued] = {}  # coalescable frames not yet written
        self._queued_bytes = 0
        self._wake = asyncio.Event()
        self._drained = asyncio.Event()
        self._drained.set()
        self._writer: asyncio.Task[None] | None = None
        self._writing = False  # the writer is in the middle of a send

    @property
    def principal(self) -> str:
        """The runtime's principal for calls this device makes."""
        return f"device:{self.pairing_id}"

    def start(self) -> None:
        self._writer = asyncio.get_running_loop().create_task(self._write_all())

    async def send(
        self,
        frame_type: str,
        payload: dict[str, Any],
        *,
        chat_id: str | None = None,
        thread_id: str | None = None,
        id: int | None = None,
    ) -> None:
        """Queues one frame for this connection. A connection that is gone drops it: frames that
        must reach the device even so are sent with `Gateway.broadcast` (the outbox)."""
        text = encode_frame(frame_type, payload, id=id, chat_id=chat_id, thread_id=thread_id)
        self.enqueue(text, coalescing_key(frame_type, payload, chat_id))

    async def reply(self, request: Request, frame_type: str, payload: dict[str, Any]) -> None:
        """The natural response to `request`: its id, and its chat and thread scope."""
        await self.send(
            frame_type, payload, id=request.id, chat_id=request.chat_id, thread_id=request.thread_id
        )

    async def error(self, exc: GatewayError, request_id: int | None) -> None:
        await self.send("error", {"code": exc.code, "message": exc.message}, id=request_id)

    async def send_bytes(self, data: bytes) -> None:
        """Queues one binary frame (media), first waiting while the queue is over half full, so
        that a large pull moves at the app's pace instead of closing its connection."""
        await self.drained()
        self.enqueue(data, None)

    async def drained(self) -> None:
        """Returns once the queue is at most half full (at once when it is)."""
        while not self.closed and self._queued_bytes > self._limit // 2:
            self._drained.clear()
            await self._drained.wait()

    def enqueue(self, data: str | bytes, key: tuple[Any, ...] | None) -> None:
        """Queues already encoded frame text (or media bytes); `key` coalesces it (see above)."""
        if self.closed or self.revoked:
            return
        if not self._queue and not self._writing and self._writer is not None:
            transport = self.ws.transport
            if transport is not None and transport.get_write_buffer_size() <= WRITE_AT_ONCE_BYTES:
                broadcast((self.ws,), data)  # nothing before it, room for it: in order, now
                return
        if key is not None:
            waiting = self._waiting.get(key)
            if waiting is not None:  # the app has not been sent the previous one yet: replace it
                self._queued_bytes += len(data) - len(waiting.data)
                waiting.data = data
                return
        item = _Queued(data, key)
        if key is not None:
            self._waiting[key] = item
        self._queue.append(item)
        self._queued_bytes += len(data)
        self._wake.set()
        if self._queued_bytes > self._limit:
            log.warning("device %s cannot keep up; its connection is closed", self.pairing_id)
            self.gateway.spawn(self.close(CLOSE_TOO_SLOW, "cannot keep up; reconnect and sync"))
            self.closed = True

    async def _write_all(self) -> None:
        try:
            while True:
                while not self._queue:
                    self._drained.set()
                    self._wake.clear()
                    await self._wake.wait()
                item = self._queue.popleft()
                if item.key is not None:
                    del self._waiting[item.key]
                self._writing = True
                try:
                    await self.ws.send(item.data)
                finally:
                    self._writing = False
                self._queued_bytes -= len(item.data)
                if self._queued_bytes <= self._limit // 2:
                    self._drained.set()
        except ConnectionClosed:
            self.closed = True
            self._drained.set()

    async def close(self, code: int = 1000, reason: str = "") -> None:
        """Closes the connection after the frames already queued are written (or it fails)."""
        self.closed = True
        if self._writer is not None and code != CLOSE_TOO_SLOW:
            # Let the writer finish what is queued (e.g. the error before an auth close), for a
            # moment at most: a peer that reads nothing must not hold the close up.
            loop = asyncio.get_running_loop()
            deadline = loop.time() + 2.0
            while self._queue and not self._writer.done() and loop.time() < deadline:
                self._drained.clear()
                self._wake.set()
                try:
                    await asyncio.wait_for(self._drained.wait(), timeout=max(0.0, deadline - loop.time()))
                except TimeoutError:
                    break
        await self.ws.close(code, reason)
        await self.stop_writer()

    async def stop_writer(self) -> None:
        self.closed = True
        self._drained.set()
        if self._writer is not None and not self._writer.done():
            await cancel_and_wait(self._writer)
