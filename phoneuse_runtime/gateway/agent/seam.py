"""What the agent part needs from the chat part, as a small Protocol, and a stand-in for it.

The chat part (`gateway/chat/`) stores the owner's messages and media. The agent part needs
three things of it:

- to hear of each user message once it is stored (to bridge it to the agent, or run it as a
  slash command): `on_user_message(listener)`;
- to store an assistant or system message and send it to every device: `post_message(...)`;
- to store media the server produced (a screenshot) so the app can pull it: `store_media(...)`;
- to know the chats: `chat_exists(chat_id)`, `default_chat_id()`.

When no part of the gateway offers these (`ChatSeam`), the agent part uses `MinimalChat`: it
keeps nothing on disk and serves no history, only enough (`message.send`, ids, broadcasts) for
the agent bridge to work. It is a part of its own, so a gateway built without the real chat can
include it (the agent tests do, until the chat part offers the seam).
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ...components import Contribution
from ...events import now_ms
from ..chat.channels import DEFAULT_CHAT_ID
from ..dispatch import Handlers, Payload
from ..errors import GatewayError
from ..protocol import Request

if TYPE_CHECKING:
    from ..server import Gateway
    from ..session import Session


class UserMessage(Protocol):
    """A message the owner sent (`message.send`), as stored: `chat_id` is never empty (the
    default channel when the request named none); `media` holds the schema's `media_ref`s."""

    @property
    def chat_id(self) -> str: ...
    @property
    def thread_id(self) -> str | None: ...
    @property
    def message_id(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def ts(self) -> int: ...
    @property
    def device_id(self) -> str | None: ...
    @property
    def media(self) -> Sequence[dict[str, Any]]: ...


@dataclass(frozen=True)
class PlainUserMessage:
    """`MinimalChat`'s user message."""

    chat_id: str
    thread_id: str | None
    message_id: str
    text: str
    ts: int
    device_id: str | None
    reply_to: str | None = None
    media: Sequence[dict[str, Any]] = ()


@dataclass(frozen=True)
class PostedMessage:
    message_id: str
    ts: int


UserMessageListener = Callable[["Session", UserMessage], Awaitable[None]]


@runtime_checkable
class ChatSeam(Protocol):
    """The chat part's side of the agent bridge."""

    def on_user_message(self, listener: UserMessageListener) -> None:
        """Calls `listener(session, message)` after each user message is stored and its
        `message` reply sent (a resent duplicate is not heard twice)."""
        ...

    async def post_message(
        self,
        *,
        chat_id: str,
        thread_id: str | None,
        role: str,
        text: str,
        reasoning: str | None = None,
        reply_to: str | None = None,
        model: str | None = None,
        tokens: int | None = None,
        media: Sequence[dict[str, Any]] = (),
        message_id: str | None = None,
        announce: bool = True,
    ) -> PostedMessage:
        """Stores an assistant or system message (under `message_id` when given, e.g. the id a
        stream used) and, with `announce`, broadcasts it as a `message` frame. Raises
        GatewayError("not_found") for an unknown chat."""
        ...

    async def store_media(self, data: bytes, *, kind: str, mime: str, filename: str) -> dict[str, Any]:
        """Stores media the server produced; returns its `media_ref` (media_id, kind, mime,
        size, filename), which `media.pull` serves and a `media.offer` announces."""
        ...

    async def chat_exists(self, chat_id: str) -> bool: ...

    async def default_chat_id(self) -> str:
        """The channel that is the default now (a request without a chat_id means it)."""
        ...


def find_chat(parts: Sequence[object]) -> ChatSeam | None:
    for part in parts:
        if isinstance(part, ChatSeam):
            return part
    return None


class SendPayload(Payload):
    text: str = ""
    reply_to: str | None = None
    media_refs: list[str] = []


MINIMAL_HANDLERS = Handlers()
MINIMAL_MEDIA_KEPT = 8


@MINIMAL_HANDLERS.on("message.send", SendPayload)
async def _message_send(session: Session, request: Request, payload: SendPayload) -> None:
    await _minimal_of(session.gateway).accept(session, request, payload)


def _minimal_of(gateway: Gateway) -> MinimalChat:
    for part in gateway.parts:
        if isinstance(part, MinimalChat):
            return part
    raise GatewayError("internal", "no chat part")  # pragma: no cover (the handler is its own)


class MinimalChat:
    """A stand-in chat: ids, broadcasts and `message.send`, nothing stored. Only for a gateway
    whose chat part does not offer `ChatSeam`."""

    name = "chat-minimal"

    def __init__(self, *, handle_frames: bool = True) -> None:
        self.handlers = MINIMAL_HANDLERS if handle_frames else Handlers()
        self._listeners: list[UserMessageListener] = []
        self._gateway: Gateway | None = None
        self._media: dict[str, bytes] = {}  # the latest few only: nothing here is served for long

    def contribution(self) -> Contribution:
        return Contribution()

    async def start(self, gateway: Gateway) -> None:
        self._gateway = gateway

    async def stop(self) -> None:
        pass

    async def session_opened(self, session: Session) -> None:
        pass

    async def session_closed(self, session: Session) -> None:
        pass

    @property
    def gateway(self) -> Gateway:
        if self._gateway is None:
            raise RuntimeError("the chat has not started")
        return self._gateway

    def on_user_message(self, listener: UserMessageListener) -> None:
        self._listeners.append(listener)

    async def chat_exists(self, chat_id: str) -> bool:
        return chat_id == DEFAULT_CHAT_ID

    async def default_chat_id(self) -> str:
        return DEFAULT_CHAT_ID

    async def accept(self, session: Session, request: Request, payload: SendPayload) -> None:
        chat_id = request.chat_id or DEFAULT_CHAT_ID
        if not await self.chat_exists(chat_id):
            raise GatewayError("not_found", f"no chat {chat_id!r}")
        if payload.media_refs:
            raise GatewayError("not_found", f"no completed upload {payload.media_refs[0]!r}")
        message = PlainUserMessage(
            chat_id=chat_id,
            thread_id=request.thread_id,
            message_id=f"m-{uuid.uuid4().hex}",
            text=payload.text,
            ts=now_ms(),
            device_id=session.device_id,
            reply_to=payload.reply_to,
        )
        frame: dict[str, Any] = {
            "message_id": message.message_id,
            "role": "user",
            "text": message.text,
            "ts": message.ts,
        }
        if message.reply_to:
            frame["reply_to"] = message.reply_to
        await session.reply(request, "message", frame)
        await self.gateway.broadcast(
            "message", frame, chat_id=chat_id, thread_id=request.thread_id, exclude=session
        )
        for listener in self._listeners:
            await listener(session, message)

    async def post_message(
        self,
        *,
        chat_id: str,
        thread_id: str | None,
        role: str,
        text: str,
        reasoning: str | None = None,
        reply_to: str | None = None,
        model: str | None = None,
        tokens: int | None = None,
        media: Sequence[dict[str, Any]] = (),
        message_id: str | None = None,
        announce: bool = True,
    ) -> PostedMessage:
        if not await self.chat_exists(chat_id):
            raise GatewayError("not_found", f"no chat {chat_id!r}")
        posted = PostedMessage(message_id or f"m-{uuid.uuid4().hex}", now_ms())
        if announce:
            frame: dict[str, Any] = {
                "message_id": posted.message_id,
                "role": role,
                "text": text,
                "ts": posted.ts,
            }
            optional = {"reasoning": reasoning, "reply_to": reply_to, "model": model, "tokens": tokens}
            frame.update({k: v for k, v in optional.items() if v is not None})
            if media:
                frame["media"] = list(media)
            await self.gateway.broadcast("message", frame, chat_id=chat_id, thread_id=thread_id)
        return posted

    async def store_media(self, data: bytes, *, kind: str, mime: str, filename: str) -> dict[str, Any]:
        media_id = f"media-{uuid.uuid4().hex}"
        self._media[media_id] = data
        while len(self._media) > MINIMAL_MEDIA_KEPT:
            del self._media[next(iter(self._media))]
        return {"media_id": media_id, "kind": kind, "mime": mime, "size": len(data), "filename": filename}
