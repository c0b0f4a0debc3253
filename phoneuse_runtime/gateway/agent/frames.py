"""`agent.stop` and `agent.steer`: the owner's say in the agent's turn, as events on the bus."""

from __future__ import annotations

from typing import TYPE_CHECKING

from phoneuse_runtime.gateway.agent.base import HANDLERS, agent_of
from phoneuse_runtime.gateway.agent.events import SOURCE, AgentSteer, AgentStop
from phoneuse_runtime.gateway.dispatch import Empty, Payload
from phoneuse_runtime.gateway.errors import GatewayError
from phoneuse_runtime.gateway.protocol import Request

if TYPE_CHECKING:
    from phoneuse_runtime.gateway.session import Session


class SteerPayload(Payload):
    text: str


@HANDLERS.on("agent.stop", Empty)
async def agent_stop(session: Session, request: Request, payload: Empty) -> None:
    """Publishes AGENT_STOP and answers `agent.idle` (to the other devices too): the app clears
    its indicator at once, whether or not an agent heard it."""
    part = agent_of(session.gateway)
    scope = await part.resolve_request_scope(request)
    part.publish(
        AgentStop(
            chat_id=scope.chat_id, thread_id=scope.thread_id or "", device_id=session.device_id
        ).to_event(SOURCE)
    )
    await session.reply(request, "agent.idle", {})
    await session.gateway.broadcast(
        "agent.idle", {}, chat_id=request.chat_id, thread_id=request.thread_id, exclude=session
    )


@HANDLERS.on("agent.steer", SteerPayload)
async def agent_steer(session: Session, request: Request, payload: SteerPayload) -> None:
    if not payload.text.strip():
        raise GatewayError("unsupported", "agent.steer needs some text")
    part = agent_of(session.gateway)
    if not part.agent_connected():
        raise GatewayError("unsupported", "no agent is connected to steer")
    scope = await part.resolve_request_scope(request)
    part.publish(
        AgentSteer(
            chat_id=scope.chat_id,
            thread_id=scope.thread_id or "",
            text=payload.text,
            device_id=session.device_id,
        ).to_event(SOURCE)
    )
