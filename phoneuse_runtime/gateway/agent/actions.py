"""The `CHAT_*` actions: how the agent talks to the phone's owner in the Iris app.

Each takes `chat_id` (empty: the default channel) and `thread_id`. None of them needs the
phone, so they never wait for its turn, and none is mirrored to the app as a tool.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from phoneuse_runtime.gateway.agent.base import agent_of
from phoneuse_runtime.gateway.agent.part import AgentPart, Scope, Stream, bounded_put
from phoneuse_runtime.gateway.agent.pickers import ask
from phoneuse_runtime.gateway.errors import GatewayError
from phoneuse_runtime.kernel.errors import InvalidParams
from phoneuse_runtime.kernel.params import Params
from phoneuse_runtime.kernel.registry import ActionContext, ActionResult, ActionSpec, AnyActionSpec

VIA = "iris"
ID_CHARS = 200
NOTES = (
    "Needs the Iris gateway (`serve` runs it unless `--no-gateway`). `chat_id` empty means the "
    "default channel; a `chat_id` that names no chat is `INVALID_PARAMS`."
)


class ChatParams(Params):
    chat_id: str = Field("", max_length=ID_CHARS, description="the chat; empty for the default channel")
    thread_id: str = Field("", max_length=ID_CHARS, description="the thread in the chat; empty for none")


class ChatResult(ActionResult):
    chat_id: str = Field(description="the chat it went to (the default channel's id when none was named)")


def _part(ctx: ActionContext) -> AgentPart:
    from phoneuse_runtime.gateway.server import Gateway

    return agent_of(ctx.component(Gateway))


async def _scope(ctx: ActionContext, p: ChatParams) -> tuple[AgentPart, Scope]:
    part = _part(ctx)
    return part, await part.resolve_scope(p.chat_id, p.thread_id)


async def _broadcast(part: AgentPart, scope: Scope, frame_type: str, payload: dict[str, object]) -> None:
    await part.gateway.broadcast(frame_type, payload, chat_id=scope.chat_id, thread_id=scope.thread_id)


def _stored(exc: GatewayError | ValueError) -> InvalidParams:
    return InvalidParams(
        f"the chat refused the message: {exc.message if isinstance(exc, GatewayError) else exc}"
    )


class ReplyParams(ChatParams):
    text: str = Field(min_length=1)
    reply_to: str = Field("", max_length=ID_CHARS, description="the message_id this answers")
    reasoning: str = Field("", description="the reasoning the app shows above the text")
    model: str = Field("", max_length=ID_CHARS)
    tokens: int | None = Field(None, ge=0)


class ReplyResult(ChatResult):
    message_id: str
    ts: int = Field(description="epoch ms")


async def chat_reply(ctx: ActionContext, p: ReplyParams) -> ReplyResult:
    part, scope = await _scope(ctx, p)
    try:
        posted = await part.chat.post_message(
            chat_id=scope.chat_id,
            thread_id=scope.thread_id,
            role="assistant",
            text=p.text,
            reasoning=p.reasoning or None,
            reply_to=p.reply_to or None,
            model=p.model or None,
            tokens=p.tokens,
        )
    except (GatewayError, ValueError) as exc:
        raise _stored(exc) from None
    return ReplyResult(chat_id=scope.chat_id, message_id=posted.message_id, ts=posted.ts, via=VIA)


class StreamParams(ChatParams):
    op: Literal["start", "update", "stop"]
    message_id: str = Field(
        "", max_length=ID_CHARS, description="the stream's message; start makes one when empty"
    )
    text: str = Field("", description="update: the full text so far (it replaces); stop: the final text")
    reasoning: str = Field("", description="stop: the reasoning shown above the text")
    model: str = Field("", max_length=ID_CHARS, description="stop: the model that wrote it")
    tokens: int | None = Field(None, ge=0, description="stop: tokens used")


class StreamResult(ChatResult):
    message_id: str


async def chat_stream(ctx: ActionContext, p: StreamParams) -> StreamResult:
    if p.op == "start":
        part, scope = await _scope(ctx, p)
        message_id = p.message_id or f"m-{uuid.uuid4().hex}"
        if message_id in part.streams:
            raise InvalidParams(f"stream {message_id!r} is already open; update or stop it")
        bounded_put(part.streams, message_id, Stream(scope, p.text))
        await _broadcast(part, scope, "message.start", {"message_id": message_id, "role": "assistant"})
        if p.text:
            await _broadcast(part, scope, "message.update", {"message_id": message_id, "text": p.text})
        return StreamResult(chat_id=scope.chat_id, message_id=message_id, via=VIA)
    # An open stream knows its chat: updates, the hot path, ask the chat part nothing.
    part = _part(ctx)
    message_id = p.message_id
    stream = part.streams.get(message_id)
    if stream is None:
        raise InvalidParams(f"no open stream {message_id!r}: start one with op=start")
    scope = stream.scope
    if (p.chat_id and p.chat_id != scope.chat_id) or (p.thread_id and p.thread_id != (scope.thread_id or "")):
        raise InvalidParams(f"stream {message_id!r} belongs to chat {scope.chat_id!r}")
    if p.op == "update":
        stream.text = p.text
        await _broadcast(part, scope, "message.update", {"message_id": message_id, "text": p.text})
        return StreamResult(chat_id=scope.chat_id, message_id=message_id, via=VIA)
    final = p.text or stream.text
    try:
        await part.chat.post_message(
            chat_id=scope.chat_id,
            thread_id=scope.thread_id,
            role="assistant",
            text=final,
            reasoning=p.reasoning or None,
            model=p.model or None,
            tokens=p.tokens,
            message_id=message_id,
            announce=False,  # message.stop is the announcement
        )
    except (GatewayError, ValueError) as exc:
        raise _stored(exc) from None
    del part.streams[message_id]
    stop: dict[str, object] = {"message_id": message_id, "final_text": final}
    if p.reasoning:
        stop["reasoning"] = p.reasoning
    if p.model:
        stop["model"] = p.model
    if p.tokens is not None:
        stop["tokens"] = p.tokens
    await _broadcast(part, scope, "message.stop", stop)
    return StreamResult(chat_id=scope.chat_id, message_id=message_id, via=VIA)


class StatusParams(ChatParams):
    state: Literal["busy", "idle"]
    reason: Literal["processing", "tool", "waiting_input", "cron"] = Field(
        "processing", description="busy: what the agent is doing"
    )


async def chat_status(ctx: ActionContext, p: StatusParams) -> ChatResult:
    part, scope = await _scope(ctx, p)
    if p.state == "busy":
        await _broadcast(part, scope, "agent.busy", {"reason": p.reason})
    else:
        await _broadcast(part, scope, "agent.idle", {})
    return ChatResult(chat_id=scope.chat_id, via=VIA)


class TypingParams(ChatParams):
    on: bool


async def chat_typing(ctx: ActionContext, p: TypingParams) -> ChatResult:
    part, scope = await _scope(ctx, p)
    await _broadcast(part, scope, "typing", {"on": p.on})
    return ChatResult(chat_id=scope.chat_id, via=VIA)


class CommentaryParams(ChatParams):
    message_id: str = Field("", max_length=ID_CHARS, description="the message it comments on, if any")
    text: str = Field(min_length=1)


async def chat_commentary(ctx: ActionContext, p: CommentaryParams) -> ChatResult:
    part, scope = await _scope(ctx, p)
    await _broadcast(part, scope, "commentary", {"message_id": p.message_id, "text": p.text})
    return ChatResult(chat_id=scope.chat_id, via=VIA)


class Choice(BaseModel):
    """One answer the owner may pick."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    value: str = Field(min_length=1, max_length=ID_CHARS)
    label: str = Field(min_length=1, max_length=ID_CHARS)


class AskParams(ChatParams):
    kind: Literal["choice", "clarify", "confirm"]
    question: str = Field(min_length=1, max_length=2000)
    choices: list[Choice] = Field(
        default_factory=list,
        max_length=50,
        description='JSON array of {"value", "label"}: required for choice; suggestions for clarify; '
        "the buttons of confirm",
    )


class AskResult(ActionResult):
    value: str = Field(description="the owner's answer: a choice's value, or the text they wrote")


async def chat_ask(ctx: ActionContext, p: AskParams) -> AskResult:
    if p.kind == "choice" and not p.choices:
        raise InvalidParams("a choice question needs choices")
    if len({c.value for c in p.choices}) != len(p.choices):
        raise InvalidParams("choices must have distinct values")
    part, scope = await _scope(ctx, p)
    choices = [c.model_dump() for c in p.choices]
    value = await ask(part, scope, kind=p.kind, question=p.question, choices=choices)
    return AskResult(value=value, via=VIA)


def _spec(  # noqa: PLR0917 (a table of specs reads best positionally)
    name: str,
    params: type[ChatParams],
    handler: Callable[[ActionContext, Any], Awaitable[ActionResult]],
    result: type[ActionResult],
    summary: str,
    notes: str = "",
) -> AnyActionSpec:
    return ActionSpec(
        name,
        params,
        handler,
        result,
        summary,
        exclusive=False,  # the chat, not the phone: never waits behind a tap
        notes=" ".join(x for x in (notes, NOTES) if x),
    )


ACTIONS = (
    _spec(
        "CHAT_REPLY",
        ReplyParams,
        chat_reply,
        ReplyResult,
        "Answer the owner in the Iris app",
        "Stored in the chat's history and sent to every device as a `message` (role assistant).",
    ),
    _spec(
        "CHAT_STREAM",
        StreamParams,
        chat_stream,
        StreamResult,
        "Stream an answer as it is written",
        "`op=start` opens a message (`message.start`), `update` sends its full text so far "
        "(`message.update`; a slow app gets the latest), `stop` ends it (`message.stop`) and stores it.",
    ),
    _spec(
        "CHAT_STATUS",
        StatusParams,
        chat_status,
        ChatResult,
        "Show the agent as busy or idle",
        "`agent.busy {reason}` or `agent.idle` on every device.",
    ),
    _spec("CHAT_TYPING", TypingParams, chat_typing, ChatResult, "Show or hide the typing indicator"),
    _spec(
        "CHAT_COMMENTARY",
        CommentaryParams,
        chat_commentary,
        ChatResult,
        "Say an intermediate beat (not stored)",
    ),
    _spec(
        "CHAT_ASK",
        AskParams,
        chat_ask,
        AskResult,
        "Ask the owner and wait for the answer",
        "A `picker.choice`, `picker.clarify` or `picker.confirm` on every device; the first "
        "device's `picker.select` is the result. No answer within timeout_ms is `TIMEOUT`.",
    ),
)
CHAT_ACTIONS = frozenset(spec.action_type for spec in ACTIONS)
