"""The chat part: channels, messages, history, search, read receipts and media."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...components import Contribution
from ..dispatch import Handlers

if TYPE_CHECKING:
    from ..server import Gateway
    from ..session import Session

HANDLERS = Handlers()


class ChatPart:
    name = "chat"

    def __init__(self) -> None:
        self.handlers = HANDLERS

    def contribution(self) -> Contribution:
        return Contribution()

    async def start(self, gateway: Gateway) -> None:
        self.gateway = gateway

    async def stop(self) -> None:
        pass

    async def session_opened(self, session: Session) -> None:
        pass

    async def session_closed(self, session: Session) -> None:
        pass
