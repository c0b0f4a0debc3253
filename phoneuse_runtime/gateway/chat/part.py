"""The chat part itself: its tables and media directory, and the listeners of user messages."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ...components import Contribution
from .handlers import HANDLERS
from .store import StoredMessage, create_tables

if TYPE_CHECKING:
    from ..server import Gateway
    from ..session import Session

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

    async def notify(self, session: Session, message: StoredMessage) -> None:
        for listener in list(self.listeners):
            try:
                await listener(session, message)
            except Exception:
                # The message is stored and answered already: a listener's failure is the
                # listener's, and must not turn into an error for a message that succeeded.
                log.exception("a user message listener failed on %s", message.message_id)

    async def start(self, gateway: Gateway) -> None:
        self._gateway = gateway
        await gateway.db.run(create_tables)
        self.media_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        for partial in self.media_dir.glob("*.part"):  # uploads cut short by the last stop
            partial.unlink(missing_ok=True)

    async def stop(self) -> None:
        pass

    async def session_opened(self, session: Session) -> None:
        pass

    async def session_closed(self, session: Session) -> None:
        from .media import abandon_upload

        await abandon_upload(session)


def chat_part(gateway: Gateway) -> ChatPart:
    """The gateway's chat part (a programming error when it runs without one)."""
    for part in gateway.parts:
        if isinstance(part, ChatPart):
            return part
    raise RuntimeError("the gateway runs no chat part")
