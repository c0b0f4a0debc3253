"""The agent's memory store."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from phoneuse_runtime.limits import (
    MEMORY_KIND_CHARS,
    MEMORY_LINKS,
    MEMORY_NAME_CHARS,
    MEMORY_TAG_CHARS,
    MEMORY_TAGS,
    MEMORY_TEXT_CHARS,
)
from phoneuse_runtime.params import Params
from phoneuse_runtime.registry import ActionContext, ActionResult, ActionSpec


class RememberParams(Params):
    kind: str = Field(
        default="fact",
        min_length=1,
        max_length=MEMORY_KIND_CHARS,
        description="person, place, fact, preference, ...",
    )
    name: str = Field(min_length=1, max_length=MEMORY_NAME_CHARS)
    text: str = Field(default="", max_length=MEMORY_TEXT_CHARS)
    tags: list[Annotated[str, Field(max_length=MEMORY_TAG_CHARS)]] = Field(
        default_factory=list, max_length=MEMORY_TAGS, description="comma-separated or a JSON list"
    )
    related_to: list[str] = Field(
        default_factory=list, max_length=MEMORY_LINKS, description="ids of existing memory items"
    )


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
