"""Slash commands: the owner drives the phone from the chat, agent or no agent.

Every action of the registry is a command (`/tap`, `/type`, `/sms`, ... for the common ones,
`/` and the lower-cased action type for the rest), beside `/help`, `/status`, `/approve` and
`/deny`. A command's arguments are its params as `key=value`; the common ones also take
positional arguments (`/tap 540 1200`, `/sms +15551234 see you at 8`), the last of which takes
the rest of the line. A command runs through the runtime as the device's principal, so the
app sees it as `tool.start` / `tool.end` like any other call, then a system message with the
outcome; a screenshot's is a `media.offer`.
"""

from __future__ import annotations

import base64
import binascii
import json
import shlex
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from phoneuse_runtime.gateway.agent.actions import CHAT_ACTIONS
from phoneuse_runtime.gateway.agent.approvals import OWNER_FRONTEND
from phoneuse_runtime.gateway.agent.base import HANDLERS, agent_of
from phoneuse_runtime.gateway.agent.mirror import clip
from phoneuse_runtime.gateway.agent.part import AgentPart, Scope, bounded_put
from phoneuse_runtime.gateway.agent.pickers import APPROVE, DENY, answer
from phoneuse_runtime.gateway.dispatch import Empty, Payload
from phoneuse_runtime.gateway.errors import GatewayError
from phoneuse_runtime.gateway.protocol import Request
from phoneuse_runtime.kernel.callers import Caller
from phoneuse_runtime.kernel.errors import RuntimeFailure
from phoneuse_runtime.kernel.events import now_ms
from phoneuse_runtime.kernel.runtime import ActionCall

if TYPE_CHECKING:
    from phoneuse_runtime.gateway.session import Session
    from phoneuse_runtime.kernel.registry import AnyActionSpec

COMMAND_TIMEOUT_MS = 30_000
RESULT_PREVIEW_CHARS = 600

# The common actions' short names and positional params (the last takes the rest of the line
# when marked so).
ALIASES: dict[str, tuple[str, tuple[str, ...], bool]] = {
    "TAP": ("/tap", ("x", "y"), False),
    "LONG_PRESS": ("/press", ("x", "y"), False),
    "TYPE_TEXT": ("/type", ("text",), True),
    "OPEN_APP": ("/open", ("name",), True),
    "CLOSE_APP": ("/close", ("package",), False),
    "SCREENSHOT": ("/screenshot", (), False),
    "DUMP_UI": ("/ui", (), False),
    "SEND_MESSAGE": ("/sms", ("to", "body"), True),
    "MAKE_CALL": ("/call", ("to",), True),
    "END_CALL": ("/hangup", (), False),
    "OPEN_URL": ("/url", ("url",), False),
    "PRESS_KEY": ("/key", ("key",), False),
    "SWIPE": ("/swipe", ("direction",), False),
    "SCROLL": ("/scroll", ("direction",), False),
    "SET_CLIPBOARD": ("/clip", ("text",), True),
    "SHELL": ("/shell", ("command",), True),
}


@dataclass(frozen=True)
class Command:
    name: str  # with its "/"
    description: str
    args_hint: str
    category: str
    action: str | None = None  # None: a built-in of the gateway
    positional: tuple[str, ...] = ()
    greedy: bool = False

    def entry(self) -> dict[str, str]:
        return {
            "name": self.name,
            "description": self.description,
            "args_hint": self.args_hint,
            "category": self.category,
        }


BUILTINS = (
    Command("/help", "List the commands", "", "chat"),
    Command("/status", "The phone, the agent and what waits for an answer", "", "chat"),
    Command("/approve", "Approve the newest pending approval (or the one named)", "[picker_id]", "approvals"),
    Command("/deny", "Deny the newest pending approval (or the one named)", "[picker_id]", "approvals"),
)


def _hint(spec: AnyActionSpec, positional: tuple[str, ...], greedy: bool) -> str:
    parts = [f"<{name}>" for name in positional]
    if greedy and parts:
        parts[-1] = f"<{positional[-1]}...>"
    for name, info in spec.params.model_fields.items():
        key = info.alias or name
        if key in positional:
            continue
        parts.append(f"{key}=…" if info.is_required() else f"[{key}=…]")
    return " ".join(parts)


def command_table(part: AgentPart) -> dict[str, Command]:
    """Every command by name: the built-ins, then the registry's actions (but CHAT_*)."""
    if part.commands:
        return part.commands
    table = {c.name: c for c in BUILTINS}
    for name, spec in sorted(part.gateway.runtime.registry.actions.items()):
        if name in CHAT_ACTIONS:
            continue
        alias, positional, greedy = ALIASES.get(name, ("/" + name.lower(), (), False))
        category = "simulator" if name.startswith("SIM_") else "phone"
        table[alias] = Command(
            alias, spec.summary, _hint(spec, positional, greedy), category, name, positional, greedy
        )
    part.commands = table
    return table


class CompletePayload(Payload):
    prefix: str


@HANDLERS.on("commands.catalog", Empty)
async def commands_catalog(session: Session, request: Request, payload: Empty) -> None:
    table = command_table(agent_of(session.gateway))
    await session.reply(request, "commands.catalog", {"commands": [c.entry() for c in table.values()]})


@HANDLERS.on("commands.complete", CompletePayload)
async def commands_complete(session: Session, request: Request, payload: CompletePayload) -> None:
    prefix = payload.prefix.strip().lower()
    if prefix and not prefix.startswith("/"):
        prefix = "/" + prefix
    table = command_table(agent_of(session.gateway))
    matches = [
        {"name": c.name, "description": c.description, "args_hint": c.args_hint}
        for c in table.values()
        if c.name.startswith(prefix)
    ]
    await session.reply(request, "commands.complete", {"prefix": payload.prefix, "matches": matches})


class UsageError(Exception):
    """A command line that does not parse; the message says why."""


def parse_args(command: Command, spec: AnyActionSpec, line: str) -> dict[str, str]:
    """The params of a command line: `key=value` for any param, and positional arguments."""
    try:
        tokens = shlex.split(line)
    except ValueError:  # an apostrophe in free text ("it's"): plain words then
        tokens = line.split()
    keys = {info.alias or name for name, info in spec.params.model_fields.items()}
    params: dict[str, str] = {}
    loose: list[str] = []
    for token in tokens:
        key, sep, value = token.partition("=")
        if sep and key in keys:
            params[key] = value
        else:
            loose.append(token)
    positional = [p for p in command.positional if p not in params]
    if len(loose) > len(positional) and not (command.greedy and positional):
        allowed = " ".join(f"<{p}>" for p in positional) or "no positional arguments"
        raise UsageError(f"{command.name} takes {allowed}, and key=value for its params: {command.args_hint}")
    for i, name in enumerate(positional):
        if i >= len(loose):
            break
        last = i == len(positional) - 1
        params[name] = " ".join(loose[i:]) if last and command.greedy else loose[i]
    return params


async def run_command(part: AgentPart, session: Session, scope: Scope, line: str) -> None:
    """Runs one slash command typed in `scope`; its outcome is a system message there."""
    word, _, rest = line.partition(" ")
    name = word.lower()
    table = command_table(part)
    command = table.get(name)
    if command is None:
        close = [c for c in table if c.startswith(name[:3])][:3] if len(name) > 1 else []
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        await part.say(scope, f"Unknown command {word}.{hint} /help lists them.")
        return
    if command.action is None:
        await BUILTIN_RUNNERS[command.name](part, session, scope, rest.strip())
        return
    spec = part.gateway.runtime.registry.actions[command.action]
    try:
        params = parse_args(command, spec, rest)
    except UsageError as exc:
        await part.say(scope, str(exc))
        return
    request_id = f"iris-{uuid.uuid4().hex}"
    caller = Caller(OWNER_FRONTEND, session.principal, owner=True)
    bounded_put(part.scopes, (caller.principal, request_id), scope)  # its tool frames go here
    try:
        outcome = await part.gateway.runtime.execute(
            caller, ActionCall(command.action, params, request_id, COMMAND_TIMEOUT_MS)
        )
    except RuntimeFailure as failure:
        await part.say(scope, f"{command.name} failed: {failure.wire()}")
        return
    if not outcome.success:
        await part.say(scope, f"{command.name} failed: {outcome.error}")
        return
    result = json.loads(outcome.result_json)
    if command.action == "SCREENSHOT":
        await _offer_screenshot(part, scope, result)
        return
    shown = {k: v for k, v in result.items() if k != "via"}
    await part.say(
        scope, f"{command.name} done: {clip(json.dumps(shown, ensure_ascii=False), RESULT_PREVIEW_CHARS)}"
    )


async def _offer_screenshot(part: AgentPart, scope: Scope, result: dict[str, Any]) -> None:
    try:
        data = base64.b64decode(result["image_base64"], validate=True)
    except (KeyError, binascii.Error):
        await part.say(scope, "/screenshot returned no image")
        return
    fmt = str(result.get("format", "png"))
    ref = await part.chat.store_media(
        data, kind="image", mime=f"image/{fmt}", filename=f"screenshot-{now_ms()}.{fmt}"
    )
    await part.chat.offer_media(ref, chat_id=scope.chat_id, thread_id=scope.thread_id)
    await part.say(scope, f"Screenshot, {result.get('width')}x{result.get('height')}", media=[ref])


async def _help(part: AgentPart, session: Session, scope: Scope, rest: str) -> None:
    lines = [f"{c.name} {c.args_hint}".rstrip() + f" — {c.description}" for c in command_table(part).values()]
    await part.say(scope, "Commands:\n" + "\n".join(lines))


async def _status(part: AgentPart, session: Session, scope: Scope, rest: str) -> None:
    runtime = part.gateway.runtime
    link = runtime.device.link
    phone = "online" if link.up else f"unreachable ({link.reason})"
    approvals = [p for p in part.pickers.values() if p.approval_id is not None]
    lines = [
        f"Phone: {runtime.device.kind}, {phone}",
        f"Agent: {'connected' if part.agent_connected() else 'not connected'}",
        f"Devices connected: {len(part.gateway.sessions)}",
        f"Pending approvals: {len(approvals)}",
        *(f"  {p.picker_id}: {p.payload['command']}" for p in approvals),
    ]
    await part.say(scope, "\n".join(lines))


async def _answer_approval(
    part: AgentPart, session: Session, scope: Scope, picker_id: str, value: str
) -> None:
    pending = [p for p in part.pickers.values() if p.approval_id is not None]
    if not picker_id:
        if not pending:
            await part.say(scope, "No approval is pending.")
            return
        picker_id = pending[-1].picker_id
    try:
        picker = answer(part, picker_id, value, by=f"{session.device_name} ({session.principal})")
    except GatewayError as exc:
        await part.say(scope, exc.message)
        return
    verb = "Approved" if value == APPROVE else "Denied"
    await part.say(scope, f"{verb}: {picker.payload.get('command', picker_id)}")


async def _approve(part: AgentPart, session: Session, scope: Scope, rest: str) -> None:
    await _answer_approval(part, session, scope, rest, APPROVE)


async def _deny(part: AgentPart, session: Session, scope: Scope, rest: str) -> None:
    await _answer_approval(part, session, scope, rest, DENY)


BUILTIN_RUNNERS = {"/help": _help, "/status": _status, "/approve": _approve, "/deny": _deny}
