"""What the bus tells the owner: the agent's work, the phone's events and approvals.

- `TASK_STARTED` / `TASK_COMPLETED` of every Execute, from any caller, become `tool.start` /
  `tool.end` (the `CHAT_*` actions excepted: they are the agent's voice, not its work). A call
  refused before it started (bad params, a policy) still shows, as a `tool.start` at its end.
- `MESSAGE_RECEIVED`, `NOTIFICATION_POSTED`, a ringing call, and the phone lost or back become
  `notification {kind: "generic"}`; lost and back also send `status` degraded / online.
- `APPROVAL_REQUESTED` becomes a `picker.approval` on every device; `APPROVAL_RESOLVED` closes
  it, with a `notification {kind: "approval"}` saying how it ended. Its `command` and
  `description` show the action and its target first, never cut (approval_text.py); the frame
  also carries the whole call: `action`, `target`, `app_target`, `params` (every value, uncut),
  `digest`, `reason` and `deadline_ms` (extra fields the app may ignore).
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

from phoneuse_runtime.gateway.agent.actions import CHAT_ACTIONS
from phoneuse_runtime.gateway.agent.part import Scope, ToolRun, bounded_put
from phoneuse_runtime.gateway.agent.pickers import APPROVE, DENY, Picker
from phoneuse_runtime.kernel.events import Event, now_ms
from phoneuse_runtime.kernel.limits import shorten
from phoneuse_runtime.owner.approval_text import call_line, full_params, stripped, target

if TYPE_CHECKING:
    from phoneuse_runtime.gateway.agent.part import AgentPart
    from phoneuse_runtime.kernel.events import Subscription

log = logging.getLogger(__name__)

PREVIEW_CHARS = 200


def clip(text: str, limit: int = PREVIEW_CHARS) -> str:
    return shorten(text, limit)


def call_preview(name: str, params: dict[str, str], app_target: str | None = None) -> str:
    """A one-line account of a call: `SEND_MESSAGE to=+1555 body=hi`, its target first."""
    return call_line(name, params, app_target)


async def pump(part: AgentPart, sub: Subscription) -> None:
    """Handles the part's bus events in order until the subscription ends."""
    async for event in sub:
        try:
            await on_event(part, event)
        except Exception:
            log.exception("the gateway could not show a %s event", event.event_type)


ACTION_KEY = '"action_type": "'


def action_of(payload_json: str) -> str | None:
    """A task event's action_type, read without parsing the event (whose params may be a long
    streamed text): the first `"action_type": "` is the top-level one, since it comes before
    the params, and a JSON string cannot hold an unescaped quote. None when the text is not
    laid out so; the event is then parsed."""
    at = payload_json.find(ACTION_KEY)
    if at < 0:
        return None
    start = at + len(ACTION_KEY)
    return payload_json[start : payload_json.find('"', start)]


async def on_event(part: AgentPart, event: Event) -> None:
    handler = HANDLED.get(event.event_type)
    if handler is None:
        return
    if handler in (task_started, task_completed) and action_of(event.payload_json) in CHAT_ACTIONS:
        return  # the agent's voice, not its work: never a tool
    await handler(part, json.loads(event.payload_json))


def _key(payload: dict[str, Any]) -> tuple[str, str]:
    return (payload["caller"]["principal"], payload["request_id"])


async def _scope_of(part: AgentPart, key: tuple[str, str]) -> Scope:
    return part.scopes.get(key) or await part.current_scope()


async def _tool_start(part: AgentPart, key: tuple[str, str], name: str, params: dict[str, str]) -> ToolRun:
    run = ToolRun(part.next_tool_index(), name, await _scope_of(part, key))
    bounded_put(part.tools, key, run)
    frame = {"index": run.index, "name": name, "args": params, "preview": call_preview(name, params)}
    await part.gateway.broadcast(
        "tool.start", frame, chat_id=run.scope.chat_id, thread_id=run.scope.thread_id
    )
    return run


async def task_started(part: AgentPart, payload: dict[str, Any]) -> None:
    if payload["action_type"] in CHAT_ACTIONS:
        return
    await _tool_start(part, _key(payload), payload["action_type"], payload["params"])


async def task_completed(part: AgentPart, payload: dict[str, Any]) -> None:
    name = payload["action_type"]
    if name in CHAT_ACTIONS:
        return
    key = _key(payload)
    run = part.tools.pop(key, None) or await _tool_start(part, key, name, {})
    part.tools.pop(key, None)
    part.scopes.pop(key, None)
    frame = {
        "index": run.index,
        "name": name,
        "ok": payload["success"],
        "duration": payload["duration_ms"] / 1000,
        # The result on success (TASK_COMPLETED's preview of it), the error otherwise.
        "output_preview": clip(payload["result_preview"] if payload["success"] else payload["error"]),
    }
    await part.gateway.broadcast("tool.end", frame, chat_id=run.scope.chat_id, thread_id=run.scope.thread_id)


async def notify(part: AgentPart, title: str, body: str, *, kind: str = "generic") -> None:
    frame = {"kind": kind, "title": clip(title), "body": clip(body, 1000), "ts": now_ms()}
    await part.gateway.broadcast("notification", frame)


async def message_received(part: AgentPart, payload: dict[str, Any]) -> None:
    await notify(part, f"Message from {payload['from']}", payload["body"])


async def notification_posted(part: AgentPart, payload: dict[str, Any]) -> None:
    await notify(part, payload["title"] or payload["package"], payload["text"])


async def call_state_changed(part: AgentPart, payload: dict[str, Any]) -> None:
    if payload["state"] == "ringing":
        await notify(part, "Incoming call", payload["number"] or "unknown number")


async def device_disconnected(part: AgentPart, payload: dict[str, Any]) -> None:
    await part.gateway.broadcast("status", {"state": "degraded"})
    await notify(part, "The phone is unreachable", payload["reason"])


async def device_connected(part: AgentPart, payload: dict[str, Any]) -> None:
    await part.gateway.broadcast("status", {"state": "online"})
    await notify(part, "The phone is back", f"{payload['model']} {payload['serial']}".strip())


async def approval_requested(part: AgentPart, payload: dict[str, Any]) -> None:
    picker_id = payload["approval_id"]
    name = payload["name"]
    seconds = max(0, (payload["deadline_ms"] - now_ms()) // 1000)
    spec = part.gateway.runtime.registry.actions.get(name)
    what = f"{spec.summary[:1].lower()}{spec.summary[1:]} ({name})" if spec is not None else stripped(name)
    params, app_target = payload["params"], payload["app_target"]
    aimed = target(params, app_target)
    who = stripped(payload["caller"]["principal"])
    frame = {
        "picker_id": picker_id,
        "command": call_preview(name, params, app_target),
        # What and to whom first: a cut can take only the reason and the time left.
        "description": clip(
            f"{who} asks to {what}{': ' + aimed if aimed else ''}. {stripped(payload['reason'])}. "
            f"Approve or deny within {seconds} s.",
            max(500, len(aimed) + len(what) + len(who) + 20),
        ),
        "action": stripped(name),
        "target": aimed,
        "app_target": app_target,
        "params": full_params(params),
        "digest": payload["digest"],
        "reason": stripped(payload["reason"]),
        "deadline_ms": payload["deadline_ms"],
    }
    scope = await part.current_scope()
    part.pickers[picker_id] = Picker(
        picker_id,
        "picker.approval",
        frame,
        scope,
        values=frozenset({APPROVE, DENY}),
        approval_id=payload["approval_id"],
        digest=payload["digest"],
    )
    await part.gateway.broadcast("picker.approval", frame, chat_id=scope.chat_id, thread_id=scope.thread_id)


async def approval_resolved(part: AgentPart, payload: dict[str, Any]) -> None:
    picker = part.pickers.pop(payload["approval_id"], None)
    if picker is None:
        return
    command = picker.payload["command"]
    by = f" by {payload['by']}" if payload["by"] else ""
    await notify(part, f"{payload['outcome'].capitalize()}{by}", command, kind="approval")


HANDLED = {
    "TASK_STARTED": task_started,
    "TASK_COMPLETED": task_completed,
    "MESSAGE_RECEIVED": message_received,
    "NOTIFICATION_POSTED": notification_posted,
    "CALL_STATE_CHANGED": call_state_changed,
    "DEVICE_DISCONNECTED": device_disconnected,
    "DEVICE_CONNECTED": device_connected,
    "APPROVAL_REQUESTED": approval_requested,
    "APPROVAL_RESOLVED": approval_resolved,
}
