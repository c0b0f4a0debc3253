"""One app connection after a good `hello`: the device it is, and the ways to write to it."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from .errors import GatewayError
from .protocol import Request, encode_frame

if TYPE_CHECKING:
    from .pairing import Pairing
    from .server import Gateway

log = logging.getLogger(__name__)


class Session:
    """A paired app device's live connection.

    `pairing_id` is the device as the gateway knows it (one pairing, one token): outboxes, read
    state and principals are keyed by it. `device_id` is what the app calls itself in `hello`.
    `state` holds what a part keeps per connection (an upload in progress, ...), under the
    part's own key."""

    def __init__(
        self, gateway: Gateway, ws: ServerConnection, pairing: Pairing, hello: dict[str, Any]
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

    @property
    def principal(self) -> str:
        """The runtime's principal for calls this device makes."""
        return f"device:{self.pairing_id}"

    async def send(
        self,
        frame_type: str,
        payload: dict[str, Any],
        *,
        chat_id: str | None = None,
        thread_id: str | None = None,
        id: int | None = None,
    ) -> None:
        """Writes one frame to this connection. A connection that is gone drops it silently:
        frames that must not be lost go through `Gateway.broadcast` (the outbox)."""
        await self._write(encode_frame(frame_type, payload, id=id, chat_id=chat_id, thread_id=thread_id))

    async def reply(self, request: Request, frame_type: str, payload: dict[str, Any]) -> None:
        """The natural response to `request`: its id, and its chat and thread scope."""
        await self.send(
            frame_type, payload, id=request.id, chat_id=request.chat_id, thread_id=request.thread_id
        )

    async def error(self, exc: GatewayError, request_id: int | None) -> None:
        await self.send("error", {"code": exc.code, "message": exc.message}, id=request_id)

    async def send_bytes(self, data: bytes) -> None:
        """One binary frame (media)."""
        await self._write(data)

    async def _write(self, data: str | bytes) -> None:
        if self.closed:
            return
        try:
            await self.ws.send(data)
        except ConnectionClosed:
            self.closed = True

    async def close(self, code: int = 1000, reason: str = "") -> None:
        self.closed = True
        await self.ws.close(code, reason)
