"""Messages: `message.send` (stored, answered, broadcast, then handed to the listeners),
`history`, `search` and `read.receipt`; and `store_message`, behind `ChatPart.post_message`,
with which the other parts put the assistant's and the system's messages in the chat."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from typing import TYPE_CHECKING, Any, Literal, get_args

from pydantic import Field

from phoneuse_runtime.gateway.chat import media_store, store
from phoneuse_runtime.gateway.chat.handlers import HANDLERS
from phoneuse_runtime.gateway.chat.part import chat_part
from phoneuse_runtime.gateway.chat.store import Draft, Scope, StoredMessage
from phoneuse_runtime.gateway.db import transaction
from phoneuse_runtime.gateway.dispatch import Payload
from phoneuse_runtime.gateway.errors import GatewayError
from phoneuse_runtime.gateway.protocol import Request

if TYPE_CHECKING:
    from phoneuse_runtime.config.settings import Settings
    from phoneuse_runtime.gateway.server import Gateway
    from phoneuse_runtime.gateway.session import Session

MEDIA_PER_MESSAGE = 20
HISTORY_LIMIT = 50  # a history request without a limit
HISTORY_FRAME_OVERHEAD = 512  # a history frame's envelope, has_more, oldest_message_id, chat ids
ServerRole = Literal["assistant", "system", "cron"]


class SendPayload(Payload):
    text: str = ""
    reply_to: str | None = None
    media_refs: list[str] = Field(default_factory=list, max_length=MEDIA_PER_MESSAGE)


class HistoryPayload(Payload):
    before_message_id: str | None = None
    limit: int = Field(default=HISTORY_LIMIT, ge=1, le=200)


class SearchPayload(Payload):
    query: str = Field(max_length=1000)
    scope: Literal["all", "chat"] = "all"
    chat_id: str | None = None
    thread_id: str | None = None


class ReadReceiptPayload(Payload):
    message_id: str
    chat_id: str | None = None


def _send_digest(request: Request, payload: SendPayload) -> str:
    """What a resend must repeat besides its id: apps number requests per connection, so the
    same id with other content is another message, not a resend."""
    content = [request.chat_id, request.thread_id, payload.text, payload.reply_to, payload.media_refs]
    return hashlib.sha256(json.dumps(content).encode()).hexdigest()


def _bound(conn: sqlite3.Connection, settings: Settings) -> None:
    """The chat's quota and retention (config/settings.py's gateway_chat_*), after a message is stored."""
    store.enforce_quota(
        conn, max_bytes=settings.gateway_chat_max_bytes, retention_days=settings.gateway_chat_retention_days
    )


def _check_reply_to(conn: sqlite3.Connection, scope: Scope, reply_to: str | None) -> None:
    if reply_to is None:
        return
    target = store.get_message(conn, reply_to)
    if target is None or target.chat_id != scope.chat_id:
        raise GatewayError("not_found", f"no message {reply_to!r} in this chat to reply to")


def _store_send(
    conn: sqlite3.Connection, session: Session, request: Request, payload: SendPayload
) -> tuple[StoredMessage, bool]:
    """The stored message, and whether it is new (False for a resend)."""
    scope = store.resolve(conn, request.chat_id, request.thread_id)
    digest = _send_digest(request, payload)
    with transaction(conn):
        if request.id is not None:
            earlier = store.answered_send(conn, session.pairing_id, request.id, digest)
            if earlier is not None:
                return earlier, False
        _check_reply_to(conn, scope, payload.reply_to)
        media = media_store.uploads_named(conn, session.pairing_id, payload.media_refs)
        draft = Draft(
            role="user",
            text=payload.text,
            reply_to=payload.reply_to,
            media=media,
            pairing_id=session.pairing_id,
            device_id=session.device_id,
        )
        message = store.insert_message(conn, scope, draft)
        _bound(conn, session.gateway.settings)
        if request.id is not None:
            store.record_send(conn, session.pairing_id, request.id, digest, message.message_id)
    return message, True


@HANDLERS.on("message.send", SendPayload)
async def send(session: Session, request: Request, payload: SendPayload) -> None:
    if not payload.text.strip() and not payload.media_refs:
        raise GatewayError("unsupported", "a message needs text or media_refs")
    gateway = session.gateway
    message, new = await gateway.db.run(lambda c: _store_send(c, session, request, payload))
    frame = message.payload()
    await session.send("message", frame, id=request.id, chat_id=message.chat_id, thread_id=message.thread_id)
    if new:
        await gateway.broadcast(
            "message", frame, chat_id=message.chat_id, thread_id=message.thread_id, exclude=session
        )
        await chat_part(gateway).notify(session, message)


def _fit(items: list[dict[str, Any]], max_bytes: int) -> tuple[list[dict[str, Any]], bool]:
    """The newest of `items` (oldest first) whose frame stays within `max_bytes`, the limit the
    app was told, and whether older ones were left out (the app pages on to them). The newest
    one is always kept: a message the app could send is one it can be sent back."""
    budget = max_bytes - HISTORY_FRAME_OVERHEAD
    kept = 0
    for item in reversed(items):
        size = len(json.dumps(item, ensure_ascii=False, separators=(",", ":")).encode()) + 1
        if kept and budget - size < 0:
            break
        budget -= size
        kept += 1
    return items[len(items) - kept :], kept < len(items)


@HANDLERS.on("history", HistoryPayload)
async def history(session: Session, request: Request, payload: HistoryPayload) -> None:
    """A page of the scope's messages, oldest to newest, ending before `before_message_id`
    (the newest page without it)."""

    def page(conn: sqlite3.Connection) -> tuple[Scope, list[StoredMessage], bool]:
        scope = store.resolve(conn, request.chat_id, request.thread_id)
        messages, more = store.history_page(conn, scope, payload.before_message_id, payload.limit)
        return scope, messages, more

    scope, messages, more = await session.gateway.db.run(page)
    items, trimmed = _fit([m.payload() for m in messages], session.gateway.limits.max_frame_bytes)
    messages = messages[len(messages) - len(items) :]
    body: dict[str, Any] = {"messages": items, "has_more": more or trimmed}
    if messages:
        body["oldest_message_id"] = messages[0].message_id
    await session.send("history", body, id=request.id, chat_id=scope.chat_id, thread_id=scope.thread_id)


@HANDLERS.on("search", SearchPayload)
async def search(session: Session, request: Request, payload: SearchPayload) -> None:
    """Full-text search over every stored message (`scope: all`), or one chat's (`scope: chat`:
    the payload's chat and thread, else the envelope's, else the default channel). A query
    without words finds nothing."""

    def hits(conn: sqlite3.Connection) -> list[dict[str, Any]]:
        within = None
        if payload.scope == "chat":
            within = store.resolve(
                conn, payload.chat_id or request.chat_id, payload.thread_id or request.thread_id
            )
        return store.search(conn, payload.query, within)

    found = await session.gateway.db.run(hits)
    await session.reply(
        request, "search.results", {"query": payload.query, "scope": payload.scope, "hits": found}
    )


@HANDLERS.on("read.receipt", ReadReceiptPayload)
async def read_receipt(session: Session, request: Request, payload: ReadReceiptPayload) -> None:
    """Stores the owner's read position in the message's chat (the message names its chat; a
    chat given as well must be that one) and tells the other devices. A receipt behind the
    stored one changes nothing and goes nowhere."""

    def mark(conn: sqlite3.Connection) -> tuple[StoredMessage, bool]:
        message = store.get_message(conn, payload.message_id)
        chat_id = payload.chat_id or request.chat_id
        if chat_id is not None or request.thread_id is not None:
            scope = store.resolve(conn, chat_id, request.thread_id)
            if message is not None and message.scope != scope:
                message = None
        if message is None:
            raise GatewayError("not_found", f"no message {payload.message_id!r} in this chat")
        return message, store.store_read(conn, message)

    message, moved = await session.gateway.db.run(mark)
    if moved:
        await session.gateway.broadcast(
            "read.receipt",
            {"chat_id": message.scope.scope_id, "message_id": message.message_id},
            chat_id=message.chat_id,
            thread_id=message.thread_id,
            exclude=session,
        )


async def store_message(
    gateway: Gateway, draft: Draft, *, chat_id: str | None, thread_id: str | None
) -> StoredMessage:
    """Stores a message of the server's side (the agent's reply, a system notice, the end of a
    stream) in the chat named (the default channel when None), without sending it anywhere.

    Raises GatewayError("not_found") for an unknown chat, thread or `reply_to`, and ValueError
    for a role that is not the server's or a `message_id` already taken (one id never names two
    contents)."""
    if draft.role not in get_args(ServerRole):
        raise ValueError(f"role must be one of {', '.join(get_args(ServerRole))}, got {draft.role!r}")

    def insert(conn: sqlite3.Connection) -> StoredMessage:
        scope = store.resolve(conn, chat_id, thread_id)
        with transaction(conn):
            _check_reply_to(conn, scope, draft.reply_to)
            message = store.insert_message(conn, scope, draft)
            _bound(conn, gateway.settings)
            return message

    return await gateway.db.run(insert)
