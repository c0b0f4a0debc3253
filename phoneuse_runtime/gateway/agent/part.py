"""The agent part: the owner's chat bridged to the agent, and the agent's work shown to the owner.

- A user message becomes a `CHAT_MESSAGE` event on the runtime's bus, which the agent reads
  through its gRPC `Subscribe`; the agent answers with the `CHAT_*` actions (`actions.py`).
- Every Execute is mirrored to the app as `tool.start` / `tool.end`, phone events become
  `notification`s, and approvals are put before the owner as `picker.approval` (`mirror.py`).
- A message that starts with `/` runs on the phone as a slash command (`commands.py`).

The part listens on the bus only once a device is paired: until then, a runtime that nobody
has paired pays nothing for it (no TASK_* events built, no phone events polled).
"""

from __future__ import annotations

import collections
import logging
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from phoneuse_runtime.config.settings import ConfigError
from phoneuse_runtime.gateway.agent.approvals import OwnerApproval
from phoneuse_runtime.gateway.agent.base import HANDLERS
from phoneuse_runtime.gateway.agent.events import EVENTS, SOURCE, ChatMessage, MediaRef
from phoneuse_runtime.gateway.agent.seam import ChatSeam, UserMessage, find_chat
from phoneuse_runtime.gateway.errors import GatewayError
from phoneuse_runtime.kernel.errors import DeviceUnavailable, InvalidParams
from phoneuse_runtime.kernel.events import Event, Subscription, now_ms
from phoneuse_runtime.kernel.registry import Contribution

if TYPE_CHECKING:
    from phoneuse_runtime.gateway.agent.commands import Command
    from phoneuse_runtime.gateway.agent.pickers import Picker
    from phoneuse_runtime.gateway.protocol import Request
    from phoneuse_runtime.gateway.server import Gateway
    from phoneuse_runtime.gateway.session import Session

log = logging.getLogger(__name__)

LISTENED = (
    "TASK_STARTED",
    "TASK_COMPLETED",
    "APPROVAL_REQUESTED",
    "APPROVAL_RESOLVED",
    "MESSAGE_RECEIVED",
    "NOTIFICATION_POSTED",
    "CALL_STATE_CHANGED",
    "DEVICE_CONNECTED",
    "DEVICE_DISCONNECTED",
)
BUS_SCOPE = "gateway"  # the bus's subscriber ids are scoped; principals never name this one
MAX_TRACKED = 1024  # tools and streams in flight kept; past it the oldest are forgotten
NO_AGENT = (
    "No agent is connected, so nobody reads this. Slash commands drive the phone directly: /help lists them."
)


@dataclass(frozen=True)
class Scope:
    """Where in the chats something belongs."""

    chat_id: str
    thread_id: str | None = None


@dataclass
class ToolRun:
    index: int
    name: str
    scope: Scope


@dataclass
class Stream:
    scope: Scope
    text: str = ""


def bounded_put(table: collections.OrderedDict[Any, Any], key: Any, value: Any) -> None:
    table[key] = value
    while len(table) > MAX_TRACKED:
        table.popitem(last=False)


class AgentPart:
    name = "agent"

    def __init__(self) -> None:
        self.handlers = HANDLERS
        self.policy = OwnerApproval(self)
        self._gateway: Gateway | None = None
        self._chat: ChatSeam | None = None
        self.pickers: dict[str, Picker] = {}  # picker_id -> an open picker (approvals and CHAT_ASK)
        self.tools: collections.OrderedDict[tuple[str, str], ToolRun] = collections.OrderedDict()
        self.streams: collections.OrderedDict[str, Stream] = collections.OrderedDict()
        # Where a slash command was typed, by (principal, request_id): its tool frames go there.
        self.scopes: collections.OrderedDict[tuple[str, str], Scope] = collections.OrderedDict()
        self.agent_scope: Scope | None = None  # where the owner last wrote to the agent
        self.tool_index = 0
        self._sub: Subscription | None = None
        self.commands: dict[str, Command] = {}  # the slash commands, once asked for (commands.py)

    # --- the part's life ------------------------------------------------------
    def contribution(self) -> Contribution:
        from phoneuse_runtime.gateway.agent.actions import ACTIONS

        return Contribution(actions=ACTIONS, events=EVENTS, policies=[self.policy])

    @property
    def gateway(self) -> Gateway:
        if self._gateway is None:
            raise RuntimeError("the agent part has not started")
        return self._gateway

    @property
    def chat(self) -> ChatSeam:
        if self._chat is None:
            raise RuntimeError("the agent part has not started")
        return self._chat

    async def start(self, gateway: Gateway) -> None:
        settings = gateway.settings
        unknown = sorted(settings.approval_actions - set(gateway.runtime.registry.actions))
        if unknown:
            raise ConfigError(f"approval_actions names no action: {', '.join(unknown)}")
        self._gateway = gateway
        chat = find_chat(gateway.parts)
        if chat is None:  # a gateway assembled without the chat part: a programming error
            raise RuntimeError("the agent part needs the chat part (gateway/chat/) in the gateway")
        self._chat = chat
        chat.on_user_message(self._user_message)
        if await gateway.paired_devices():
            self.listen()
            self.policy.paired = True
        elif settings.approvals == "paired":
            from phoneuse_runtime.gateway.agent.approvals import unpaired_note
            from phoneuse_runtime.kernel.events import now_ms

            pairings = await gateway.db.run(lambda c: gateway.pairing_store(c).pairings())
            note = unpaired_note(pairings, now_ms())
            if note is not None and pairings:
                log.warning("%s; `phoneuse-runtime pair new` pairs the app again", note)

    async def stop(self) -> None:
        for picker in self.pickers.values():
            if picker.answer is not None and not picker.answer.done():
                # The waiting CHAT_ASK fails with a reason, not as a cancellation of its own.
                picker.answer.set_exception(
                    DeviceUnavailable("the Iris gateway stopped before the owner answered")
                )
        if self._sub is not None:
            self.gateway.runtime.bus.unsubscribe(self._sub)

    async def session_opened(self, session: Session) -> None:
        self.listen()
        self._devices_listen()
        # What the device may have missed while it was away, and must answer: pending pickers.
        for picker in list(self.pickers.values()):
            await session.send(
                picker.frame_type,
                picker.payload,
                chat_id=picker.scope.chat_id,
                thread_id=picker.scope.thread_id,
            )
        if not self.gateway.runtime.device.link.up:
            await session.send("status", {"state": "degraded"})

    async def session_closed(self, session: Session) -> None:
        self._devices_listen()

    def listen(self) -> None:
        """Starts listening on the bus (once): the mirror, phone events and approvals."""
        if self._sub is not None:
            return
        from phoneuse_runtime.gateway.agent.mirror import pump

        self._sub = self.gateway.runtime.bus.subscribe(
            "iris-agent", LISTENED, scope=BUS_SCOPE, outside=bool(self.gateway.sessions)
        )
        self.gateway.spawn(pump(self, self._sub))

    def _devices_listen(self) -> None:
        """The phone's events are polled for the gateway only while a device is connected to
        see them (the bus's `demanded`); with none, its subscription makes no poll."""
        if self._sub is not None:
            self.gateway.runtime.bus.set_outside(self._sub, bool(self.gateway.sessions))

    # --- chats -----------------------------------------------------------------
    async def resolve_scope(self, chat_id: str, thread_id: str) -> Scope:
        """The chat an action names (the default channel when empty); INVALID_PARAMS for one
        that does not exist."""
        chat = self.chat
        if not chat_id:
            chat_id = await chat.default_chat_id()
        elif not await chat.chat_exists(chat_id):
            raise InvalidParams(f"chat_id {chat_id!r} names no chat; empty means the default channel")
        return Scope(chat_id, thread_id or None)

    async def resolve_request_scope(self, request: Request) -> Scope:
        """The chat an app's request names; GatewayError not_found for one that does not exist."""
        try:
            return await self.resolve_scope(request.chat_id or "", request.thread_id or "")
        except InvalidParams:
            raise GatewayError("not_found", f"no chat {request.chat_id!r}") from None

    async def current_scope(self) -> Scope:
        return self.agent_scope or Scope(await self.chat.default_chat_id())

    async def say(self, scope: Scope, text: str, **extra: Any) -> None:
        """A system message in `scope`, to every device (and stored)."""
        await self.chat.post_message(
            chat_id=scope.chat_id, thread_id=scope.thread_id, role="system", text=text, **extra
        )

    def agent_connected(self) -> bool:
        """Whether a subscriber hears CHAT_MESSAGE: a live Subscribe whose filter names it or is
        empty. The part's own subscription never does."""
        return self.gateway.runtime.bus.interested(ChatMessage.model_fields["event_type"].default)

    def publish(self, event: Event) -> None:
        self.gateway.runtime.bus.publish(event)

    async def _user_message(self, session: Session, message: UserMessage) -> None:
        scope = Scope(message.chat_id, message.thread_id)
        if message.text.lstrip().startswith("/"):
            from phoneuse_runtime.gateway.agent.commands import run_command

            self.gateway.spawn(run_command(self, session, scope, message.text.strip()))
            return
        self.agent_scope = scope
        if not self.agent_connected():
            # A notice to the sender alone, not stored: the history keeps the conversation.
            notice = {
                "message_id": f"notice-{uuid.uuid4().hex}",
                "role": "system",
                "text": NO_AGENT,
                "ts": now_ms(),
            }
            await session.send("message", notice, chat_id=scope.chat_id, thread_id=scope.thread_id)
            return
        self.publish(
            ChatMessage(
                chat_id=message.chat_id,
                thread_id=message.thread_id or "",
                message_id=message.message_id,
                text=message.text,
                media=[MediaRef.model_validate(m) for m in message.media],
                device_id=message.device_id or "",
            ).to_event(SOURCE)
        )

    def next_tool_index(self) -> int:
        self.tool_index += 1
        return self.tool_index
