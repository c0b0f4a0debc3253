"""Channels: the owner's chats. Always one is the default; the built-in one is `android:default`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..server import Gateway

DEFAULT_CHAT_ID = "android:default"


def default_channel() -> dict[str, Any]:
    return {
        "chat_id": DEFAULT_CHAT_ID,
        "name": "Android",
        "kind": "default",
        "parent_chat_id": None,
        "is_default": True,
    }


async def channel_list(gateway: Gateway) -> list[dict[str, Any]]:
    """Every channel (schema `channel`), as `hello.ack` and `channel.list` carry them."""
    return [default_channel()]
