"""What the agent part needs from the chat part, as a small Protocol.

The chat part (`gateway/chat/`) stores the owner's messages and media. The agent part needs
three things of it:

- to hear of each user message once it is stored (to bridge it to the agent, or run it as a
  slash command): `on_user_message(listener)`;
- to store an assistant or system message and send it to every device: `post_message(...)`;
- to store media the server produced (a screenshot) so the app can pull it, and offer it:
  `store_media(...)`, `offer_media(...)`;
- to know the chats: `chat_exists(chat_id)`, `default_chat_id()`.

The chat part (`gateway/chat/part.py`, `ChatPart`) offers them; the agent part finds it among
the gateway's parts by this Protocol, and refuses to start without one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from phoneuse_runtime.gateway.session import Session


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


class PostedMessage(Protocol):
    @property
    def message_id(self) -> str: ...
    @property
    def ts(self) -> int: ...


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

    async def offer_media(
        self, media: dict[str, Any], *, chat_id: str | None = None, thread_id: str | None = None
    ) -> None:
        """Announces stored media to every connected device (`media.offer`) in that chat."""
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
