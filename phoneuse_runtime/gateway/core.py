"""The gateway's own frames after `hello`: ping, sync (the outbox) and fcm.register (push)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from phoneuse_runtime.gateway import outbox, push
from phoneuse_runtime.gateway.dispatch import Handlers, Payload
from phoneuse_runtime.gateway.errors import GatewayError
from phoneuse_runtime.gateway.limits import DEVICE_ID_CHARS, DEVICE_NAME_CHARS, TOKEN_CHARS
from phoneuse_runtime.gateway.protocol import Request
from phoneuse_runtime.kernel.events import now_ms

if TYPE_CHECKING:
    from phoneuse_runtime.gateway.session import Session

HANDLERS = Handlers()


class HelloPayload(Payload):
    token: str = Field("", max_length=TOKEN_CHARS)
    device_id: str = Field("", max_length=DEVICE_ID_CHARS)
    device_name: str = Field("", max_length=DEVICE_NAME_CHARS)
    caps: dict[str, object] | None = None
    fcm_token: str | None = None
    ntfy_topic: str | None = None


class PingPayload(Payload):
    ts: int | None = None


class SyncPayload(Payload):
    cursor: int = 0


class FcmRegisterPayload(Payload):
    fcm_token: str | None = None
    ntfy_topic: str | None = None


@HANDLERS.on("hello", HelloPayload)
async def hello_again(session: Session, request: Request, payload: HelloPayload) -> None:
    raise GatewayError("unsupported", "this connection has already said hello")


@HANDLERS.on("ping", PingPayload)
async def ping(session: Session, request: Request, payload: PingPayload) -> None:
    await session.reply(request, "pong", {"ts": now_ms()})


@HANDLERS.on("sync", SyncPayload)
async def sync(session: Session, request: Request, payload: SyncPayload) -> None:
    """Replays the device's outbox after `cursor`, in order, then `sync.done {cursor}`.

    A cursor the outbox can no longer answer without holes (older than retention, or newer than
    anything this server queued) gets no replay: `sync.done {cursor: newest, reset: true}`, and
    the app reloads history, then goes on from the new cursor."""
    if payload.cursor < 0:
        raise GatewayError("unsupported", "a sync cursor is 0 or more")
    gateway = session.gateway
    replay = await gateway.db.run(lambda c: outbox.since(c, session.pairing_id, payload.cursor))
    if replay.reset:
        await session.reply(request, "sync.done", {"cursor": replay.newest, "reset": True})
        return
    cursor = payload.cursor
    for seq, frame in replay.frames:
        await session.drained()  # a long replay moves at the app's pace, never overflowing its queue
        session.enqueue(frame, None)
        cursor = seq
    await session.reply(request, "sync.done", {"cursor": max(cursor, replay.newest)})


@HANDLERS.on("fcm.register", FcmRegisterPayload)
async def fcm_register(session: Session, request: Request, payload: FcmRegisterPayload) -> None:
    """Stores the device's push details; a field left out is kept, an empty one cleared."""
    problem = push.topic_problem(payload.ntfy_topic or "") or push.fcm_problem(payload.fcm_token or "")
    if problem:
        raise GatewayError("unsupported", problem)
    if payload.fcm_token is None and payload.ntfy_topic is None:
        raise GatewayError("unsupported", "fcm.register needs an fcm_token or an ntfy_topic")
    await session.gateway.db.run(
        lambda c: push.register(
            c, session.pairing_id, fcm_token=payload.fcm_token, ntfy_topic=payload.ntfy_topic
        )
    )
