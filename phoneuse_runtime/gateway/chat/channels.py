"""Channels: the owner's chats, and threads within them. There is always exactly one default
channel (the built-in one is `android:default`), which cannot be deleted.

`channel_list(gateway)` is what `hello.ack` and `channel.list` carry. Every change reaches all
of the owner's devices: the one that asked gets the answer with its request id, the others the
same frame through their outboxes (`channel.*` frames are never dropped).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, field_validator

from phoneuse_runtime.gateway.chat import store
from phoneuse_runtime.gateway.chat.handlers import HANDLERS
from phoneuse_runtime.gateway.chat.store import DEFAULT_CHAT_ID
from phoneuse_runtime.gateway.dispatch import Empty, Payload
from phoneuse_runtime.gateway.errors import GatewayError
from phoneuse_runtime.gateway.protocol import Request

if TYPE_CHECKING:
    from phoneuse_runtime.gateway.server import Gateway
    from phoneuse_runtime.gateway.session import Session

__all__ = ["DEFAULT_CHAT_ID", "channel_list"]

NAME_MAX = 100


async def channel_list(gateway: Gateway) -> list[dict[str, Any]]:
    """Every channel (schema `channel`), in the order they were made, the built-in default first."""
    return await gateway.db.run(store.list_channels)


def _name(value: str) -> str:
    name = " ".join(value.split())
    if not name:
        raise ValueError("a channel name is not blank")
    return name


class CreatePayload(Payload):
    name: str = Field(max_length=NAME_MAX)
    kind: Literal["channel", "thread"] | None = None
    parent_chat_id: str | None = None

    _clean = field_validator("name")(_name)


class RenamePayload(Payload):
    name: str = Field(max_length=NAME_MAX)

    _clean = field_validator("name")(_name)


async def _target(session: Session, request: Request) -> str:
    """The channel a channel.* request is about: the envelope's thread, else its chat, else the
    default channel; `not_found` for one that does not exist."""
    scope = await session.gateway.db.run(lambda c: store.resolve(c, request.chat_id, request.thread_id))
    return scope.scope_id


@HANDLERS.on("channel.create", CreatePayload)
async def create(session: Session, request: Request, payload: CreatePayload) -> None:
    if payload.kind == "thread" and payload.parent_chat_id is None:
        raise GatewayError("unsupported", "a thread needs the parent_chat_id of its channel")
    if payload.kind == "channel" and payload.parent_chat_id is not None:
        raise GatewayError("unsupported", "a channel has no parent_chat_id; make it kind thread")
    channel = await session.gateway.db.run(
        lambda c: store.create_channel(c, payload.name, payload.parent_chat_id)
    )
    await session.reply(request, "channel.created", channel)
    await session.gateway.broadcast("channel.created", channel, exclude=session)


@HANDLERS.on("channel.rename", RenamePayload)
async def rename(session: Session, request: Request, payload: RenamePayload) -> None:
    gateway = session.gateway
    chat_id = await _target(session, request)
    await gateway.db.run(lambda c: store.rename_channel(c, chat_id, payload.name))
    renamed = {"chat_id": chat_id, "name": payload.name}
    await session.reply(request, "channel.renamed", renamed)
    await gateway.broadcast("channel.renamed", renamed, exclude=session)


@HANDLERS.on("channel.set_default", Empty)
async def set_default(session: Session, request: Request, payload: Empty) -> None:
    """No frame of its own in the schema: every device (this one too) gets the new `channel.list`."""
    gateway = session.gateway
    chat_id = await _target(session, request)
    if await gateway.db.run(lambda c: store.set_default(c, chat_id)):
        await gateway.broadcast("channel.list", {"channels": await channel_list(gateway)})


@HANDLERS.on("channel.delete", Empty)
async def delete(session: Session, request: Request, payload: Empty) -> None:
    """Deletes the channel, its threads and their messages: a `channel.deleted` for each."""
    gateway = session.gateway
    chat_id = await _target(session, request)
    deleted = await gateway.db.run(lambda c: store.delete_channel(c, chat_id))
    await session.reply(request, "channel.deleted", {"chat_id": chat_id})
    for gone in deleted[1:]:
        await session.send("channel.deleted", {"chat_id": gone})
    for gone in deleted:
        await gateway.broadcast("channel.deleted", {"chat_id": gone}, exclude=session)


@HANDLERS.on("channel.list", Empty)
async def list_(session: Session, request: Request, payload: Empty) -> None:
    await session.reply(request, "channel.list", {"channels": await channel_list(session.gateway)})
