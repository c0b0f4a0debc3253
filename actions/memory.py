"""The agent's memory store."""

from __future__ import annotations

from pydantic import Field

from phoneuse_runtime.params import Params
from phoneuse_runtime.registry import ActionContext, ActionResult, ActionSpec


class RememberParams(Params):
    kind: str = Field(default="fact", min_length=1, description="person, place, fact, preference, ...")
    name: str = Field(min_length=1)
    text: str = ""
    tags: list[str] = Field(default_factory=list, description="comma-separated or a JSON list")
    related_to: list[str] = Field(default_factory=list, description="ids of existing memory items")


class RememberResult(ActionResult):
    id: str
    kind: str
    name: str


async def remember(ctx: ActionContext, p: RememberParams) -> RememberResult:
    item = await ctx.memory.add(
        kind=p.kind, name=p.name, text=p.text, tags=list(p.tags), related_to=list(p.related_to)
    )
    return RememberResult(id=item.id, kind=item.kind, name=item.name, via="memory")


class ForgetParams(Params):
    id: str = Field(min_length=1)


class ForgetResult(ActionResult):
    id: str
    forgotten: bool


async def forget(ctx: ActionContext, p: ForgetParams) -> ForgetResult:
    await ctx.memory.forget(p.id)
    return ForgetResult(id=p.id, forgotten=True, via="memory")


ACTIONS = (
    ActionSpec(
        "REMEMBER",
        RememberParams,
        remember,
        RememberResult,
        "Store an item in the agent's memory",
        exclusive=False,  # the runtime's own store, not the phone
    ),
    ActionSpec(
        "FORGET",
        ForgetParams,
        forget,
        ForgetResult,
        "Delete a memory item (ELEMENT_NOT_FOUND if absent)",
        exclusive=False,
    ),
)
