"""The chat part: channels, messages, history, search, read receipts and media.

Modules: `store` (channels and messages in SQLite, with an FTS5 index), `media_store` (the
media table), `channels`, `messages` and `media` (the frame handlers), `part` (`ChatPart`).

What the other parts use (stable). The part is `chat_part(gateway)`; its methods match the
agent part's `ChatSeam` (`gateway/agent/seam.py`):

- `on_user_message(listener)`, called in a part's `start(gateway)`:
  `async def listener(session, message: StoredMessage)` runs after each NEW user message is
  stored, answered (`message` with the request's id) and broadcast to the owner's other devices;
  never for a resend. Listeners run in order, in the sender's frame loop, and their exceptions
  are logged (the message has succeeded): slow work (a slash command on the phone) goes to
  `gateway.spawn`. The agent part publishes `CHAT_MESSAGE` / runs slash commands from here.
  `StoredMessage` carries `message_id`, `chat_id`, `thread_id` (canonical: see `store`),
  `text`, `media` (the schema's media_refs), `reply_to`, `ts`, `device_id`, `pairing_id`,
  and `payload()` (its `message` frame's payload).
- `await post_message(chat_id=, thread_id=, role="assistant"|"system"|"cron", text=,
  reasoning=, reply_to=, model=, tokens=, media=(), message_id=None, announce=True)`: stores
  the message (the default channel when chat_id is None or empty) and, with `announce`,
  broadcasts its `message` frame (outboxed); `announce=False` e.g. for a stream's final text
  after `message.stop`. GatewayError("not_found") for an unknown chat or reply_to; ValueError
  for another role or a message_id already taken.
- `await store_media(data, kind=, mime=, filename=)` -> the schema's media_ref (served by
  `media.pull`); `await offer_media(media, chat_id=None, thread_id=None)` sends `media.offer`.
- `await chat_exists(chat_id)`, `await default_chat_id()`.
- `await channel_list(gateway)` (in `channels`): the channels `hello.ack` carries.
- `store.resolve(conn, chat_id, thread_id)` (on `gateway.db.run`): a request's canonical scope,
  the default channel when no chat is named, `not_found` for an unknown one.
"""

from __future__ import annotations

from phoneuse_runtime.gateway.chat import channels, media, messages
from phoneuse_runtime.gateway.chat.channels import DEFAULT_CHAT_ID, channel_list
from phoneuse_runtime.gateway.chat.part import ChatPart, UserMessageListener, chat_part
from phoneuse_runtime.gateway.chat.store import Scope, StoredMessage

__all__ = [
    "DEFAULT_CHAT_ID",
    "ChatPart",
    "Scope",
    "StoredMessage",
    "UserMessageListener",
    "channel_list",
    "channels",
    "chat_part",
    "media",
    "messages",
]
