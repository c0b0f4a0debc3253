"""The events the agent part publishes on the runtime's bus, for the agent's `Subscribe`."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from phoneuse_runtime.kernel.events import EventPayload

SOURCE = "phoneuse.gateway"


class MediaRef(BaseModel):
    """A media item the owner attached to a chat message (the Iris schema's `media_ref`)."""

    model_config = ConfigDict(extra="ignore", defer_build=True)

    media_id: str
    kind: str = Field(description="image, audio, video, document or voice")
    mime: str = ""
    size: int = 0
    filename: str = ""


class ChatMessage(EventPayload):
    """The phone's owner wrote to the agent in the Iris app; answer with `CHAT_REPLY` or `CHAT_STREAM`."""

    event_type: str = "CHAT_MESSAGE"
    chat_id: str = Field(description="the chat it was written in (never empty)")
    thread_id: str = Field(description="the thread within the chat; empty for none")
    message_id: str = Field(description="the stored message's id (for `reply_to`)")
    text: str
    media: list[MediaRef] = Field(description="attachments the owner uploaded")
    device_id: str = Field(description="the app device it came from")


class AgentStop(EventPayload):
    """The owner pressed stop in the Iris app: abort the current turn (the app shows idle already)."""

    event_type: str = "AGENT_STOP"
    chat_id: str
    thread_id: str
    device_id: str


class AgentSteer(EventPayload):
    """The owner sent a steering message mid-turn: take it into account in the current turn."""

    event_type: str = "AGENT_STEER"
    chat_id: str
    thread_id: str
    text: str
    device_id: str


EVENTS: tuple[type[EventPayload], ...] = (ChatMessage, AgentStop, AgentSteer)
