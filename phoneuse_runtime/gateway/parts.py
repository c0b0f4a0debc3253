"""A part of the gateway: a family of frame handlers with what it adds to the app and keeps.

The gateway's core (hello, ping, sync, push) is served by the gateway itself; the chat
(`gateway/chat/`) and the agent bridge (`gateway/agent/`) are parts. Each part is started
after the gateway's database is open and before it accepts connections, and stopped after the
last connection is closed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from phoneuse_runtime.gateway.dispatch import Handlers
    from phoneuse_runtime.gateway.server import Gateway
    from phoneuse_runtime.gateway.session import Session
    from phoneuse_runtime.kernel.registry import Contribution


class Part(Protocol):
    name: str
    handlers: Handlers

    def contribution(self) -> Contribution:
        """The actions, events and policies this part adds to the app (asked once)."""
        ...

    async def start(self, gateway: Gateway) -> None:
        """Create tables (`gateway.db`), subscribe to the bus (`gateway.runtime.bus`), ..."""
        ...

    async def stop(self) -> None: ...

    async def session_opened(self, session: Session) -> None:
        """A device said hello and got its `hello.ack` (e.g. replay its pending approvals)."""
        ...

    async def session_closed(self, session: Session) -> None:
        """This connection ended. The device may already have a newer one (a second connection
        replaces the first): look at `gateway.sessions`, not at this session."""
        ...
