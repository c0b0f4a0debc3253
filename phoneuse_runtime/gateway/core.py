"""The gateway's own frames after `hello`: ping."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..events import now_ms
from .dispatch import Handlers, Payload
from .errors import GatewayError
from .protocol import Request

if TYPE_CHECKING:
    from .session import Session

HANDLERS = Handlers()


class HelloPayload(Payload):
    token: str = ""
    device_id: str = ""
    device_name: str = ""
    caps: dict[str, object] | None = None
    fcm_token: str | None = None
    ntfy_topic: str | None = None


class PingPayload(Payload):
    ts: int | None = None


@HANDLERS.on("hello", HelloPayload)
async def hello_again(session: Session, request: Request, payload: HelloPayload) -> None:
    raise GatewayError("unsupported", "this connection has already said hello")


@HANDLERS.on("ping", PingPayload)
async def ping(session: Session, request: Request, payload: PingPayload) -> None:
    await session.reply(request, "pong", {"ts": now_ms()})
