"""Pickers: questions put to the owner on every device, answered once by `picker.select`.

Two kinds: an approval (`picker.approval`, from the runtime's hold of a call), and the agent's
own question (`CHAT_ASK`: `picker.choice`, `picker.clarify`, `picker.confirm`). The first answer
from any device wins; later answers, and answers to pickers that expired, get `not_found`.
A device that connects while a picker is open gets it again (`AgentPart.session_opened`).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from phoneuse_runtime.gateway.agent.base import HANDLERS, agent_of
from phoneuse_runtime.gateway.dispatch import Payload
from phoneuse_runtime.gateway.errors import GatewayError
from phoneuse_runtime.gateway.protocol import Request
from phoneuse_runtime.kernel.errors import Conflict
from phoneuse_runtime.owner.approvals import NoSuchApproval

if TYPE_CHECKING:
    from phoneuse_runtime.gateway.agent.part import AgentPart, Scope
    from phoneuse_runtime.gateway.session import Session

APPROVE, DENY = "approve", "deny"


@dataclass
class Picker:
    picker_id: str
    frame_type: str
    payload: dict[str, Any]
    scope: Scope
    values: frozenset[str] | None = None  # the answers allowed; None: any text
    approval_id: str | None = None  # an approval's hold, and the digest of the call it shows
    digest: str | None = None
    answer: asyncio.Future[str] | None = None  # a CHAT_ASK's waiting action


class SelectPayload(Payload):
    picker_id: str
    value: str


@HANDLERS.on("picker.select", SelectPayload)
async def picker_select(session: Session, request: Request, payload: SelectPayload) -> None:
    part = agent_of(session.gateway)
    answer(part, payload.picker_id, payload.value, by=f"{session.device_name} ({session.principal})")


def answer(part: AgentPart, picker_id: str, value: str, *, by: str) -> Picker:
    """Answers an open picker; GatewayError not_found when there is none (any more), or
    unsupported for a value it does not offer."""
    picker = part.pickers.get(picker_id)
    if picker is None:
        raise GatewayError("not_found", f"no open picker {picker_id!r}: it was answered already, or expired")
    if picker.values is not None and value not in picker.values:
        raise GatewayError(
            "unsupported",
            f"picker {picker_id} takes one of {', '.join(sorted(picker.values))}, not {value!r}",
        )
    if picker.approval_id is not None:
        try:
            part.gateway.runtime.approvals.answer(
                picker.approval_id, approved=value == APPROVE, by=by, digest=picker.digest
            )
        except NoSuchApproval:
            raise GatewayError("not_found", f"approval {picker_id} has ended already") from None
        except Conflict as exc:  # never: the digest is the one the hold announced
            raise GatewayError("unsupported", exc.message) from None
        # The picker closes with APPROVAL_RESOLVED (mirror.py), which tells every device.
        return picker
    if picker.answer is not None:
        if picker.answer.done():
            raise GatewayError("not_found", f"picker {picker_id} has ended already")
        picker.answer.set_result(value)
    part.pickers.pop(picker_id, None)
    return picker


async def ask(
    part: AgentPart,
    scope: Scope,
    *,
    kind: str,
    question: str,
    choices: Sequence[dict[str, str]],
) -> str:
    """Puts the agent's question to every device; the first device's answer."""
    picker_id = f"ask-{uuid.uuid4().hex}"
    values: frozenset[str] | None = None
    if kind == "choice":
        frame_type = "picker.choice"
        payload: dict[str, Any] = {"picker_id": picker_id, "title": question, "choices": list(choices)}
        values = frozenset(c["value"] for c in choices)
    elif kind == "clarify":
        frame_type = "picker.clarify"
        payload = {"picker_id": picker_id, "question": question, "choices": list(choices)}
    else:
        frame_type = "picker.confirm"
        payload = {"picker_id": picker_id, "title": "The agent asks", "message": question}
        if choices:
            values = frozenset(c["value"] for c in choices)
    future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    picker = Picker(picker_id, frame_type, payload, scope, values=values, answer=future)
    part.pickers[picker_id] = picker
    try:
        await part.gateway.broadcast(frame_type, payload, chat_id=scope.chat_id, thread_id=scope.thread_id)
        return await future
    finally:  # answered, or the action's deadline passed: the picker is closed either way
        part.pickers.pop(picker_id, None)
