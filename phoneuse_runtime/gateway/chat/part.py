"""The chat part itself: its tables and media directory, and the listeners of user messages."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from phoneuse_runtime.gateway.chat.handlers import HANDLERS
from phoneuse_runtime.gateway.chat.store import (
    Draft,
    StoredMessage,
    create_tables,
    default_chat_id,
    get_channel,
)
from phoneuse_runtime.kernel.registry import Contribution
from phoneuse_runtime.util.files import private_dir

if TYPE_CHECKING:
    from phoneuse_runtime.gateway.server import Gateway
    from phoneuse_runtime.gateway.session import Session

log = logging.getLogger(__name__)

MEDIA_DIR = "gateway-media"

UserMessageListener = Callable[["Session", StoredMessage], Awaitable[None]]


class ChatPart:
    """Channels, messages, history, search, read receipts and media (see the package docstring).

    Other parts reach it with `chat_part(gateway)` and register with `on_user_message`."""

    name = "chat"

    def __init__(self) -> None:
        self.handlers = HANDLERS
        self.listeners: list[UserMessageListener] = []
        self._gateway: Gateway | None = None

    @property
    def gateway(self) -> Gateway:
        if self._gateway is None:
            raise RuntimeError("the chat part has not started")
        return self._gateway

    @property
    def media_dir(self) -> Path:
        return self.gateway.settings.data_dir / MEDIA_DIR

    def contribution(self) -> Contribution:
        return Contribution()

    def on_user_message(self, listener: UserMessageListener) -> UserMessageListener:
        """Calls `listener(session, message)` after each new user message is stored, answered
        and broadcast (never for a resend). Listeners run in the order registered, in the
        sender's frame loop: one that has slow work to do hands it to `gateway.spawn`."""
        self.listeners.append(listener)
        return listener

    async def post_message(
        self,
        *,
        chat_id: str | None,
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
    ) -> StoredMessage:
        """Stores a message of the server's side (role assistant, system or cron) in the chat
        named (the default channel when None or empty), under `message_id` when given (the id a
        stream used); with `announce`, broadcasts its `message` frame to every device of the
        owner (outboxed). GatewayError("not_found") for an unknown chat, thread or reply_to;
        ValueError for a role that is not the server's, or a message_id already taken."""
        from phoneuse_runtime.gateway.chat.messages import store_message

        draft = Draft(
            role=role,
            text=text,
            message_id=message_id,
            reasoning=reasoning,
            model=model,
            tokens=tokens,
            reply_to=reply_to,
            media=list(media),
        )
        message = await store_message(
            self.gateway, draft, chat_id=chat_id or None, thread_id=thread_id or None
        )
        if announce:
            await self.gateway.broadcast(
                "message", message.payload(), chat_id=message.chat_id, thread_id=message.thread_id
            )
        return message

    async def store_media(
        self, data: bytes, *, kind: str, mime: str, filename: str | None = None
    ) -> dict[str, Any]:
        """Keeps media the server produced (a screenshot): its `media_ref` (schema), which
        `media.pull` serves, for a `media.offer` (`offer_media`) or a message's `media`.
        ValueError for a kind the schema does not name."""
        from phoneuse_runtime.gateway.chat.media import store_media

        return await store_media(self.gateway, data, kind=kind, mime=mime, filename=filename)

    async def offer_media(
        self, media: dict[str, Any], *, chat_id: str | None = None, thread_id: str | None = None
    ) -> None:
        """Announces stored media (`media.offer`) to every connected device, in the chat named
        (the default channel when None); the app pulls the bytes with `media.pull`."""
        from phoneuse_runtime.gateway.chat.media import offer_media

        await offer_media(self.gateway, media, chat_id=chat_id or None, thread_id=thread_id or None)

    async def chat_exists(self, chat_id: str) -> bool:
        """Whether `chat_id` names a channel or a thread."""
        return await self.gateway.db.run(lambda c: get_channel(c, chat_id) is not None)

    async def default_chat_id(self) -> str:
        """The channel that is the default now (a request without a chat_id means it)."""
        return await self.gateway.db.run(default_chat_id)

    async def notify(self, session: Session, message: StoredMessage) -> None:
        for listener in list(self.listeners):
            try:
                await listener(session, message)
            except Exception:
                # The message is stored and answered already: a listener's failure is the
                # listener's, and must not turn into an error for a message that succeeded.
                log.exception("a user message listener failed on %s", message.message_id)

    async def start(self, gateway: Gateway) -> None:
        # gateway_chat_max_bytes and gateway_chat_retention_days are checked by load_settings.
        self._gateway = gateway
        await gateway.db.run(create_tables)
        private_dir(self.media_dir)
        for partial in self.media_dir.glob("*.part"):  # uploads cut short by the last stop
            partial.unlink(missing_ok=True)

    async def stop(self) -> None:
        pass

    async def session_opened(self, session: Session) -> None:
        pass

    async def session_closed(self, session: Session) -> None:
        from phoneuse_runtime.gateway.chat.media import abandon_upload

        await abandon_upload(session)


def chat_part(gateway: Gateway) -> ChatPart:
    """The gateway's chat part (a programming error when it runs without one)."""
    for part in gateway.parts:
        if isinstance(part, ChatPart):
            return part
    raise RuntimeError("the gateway runs no chat part")
