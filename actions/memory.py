"""The agent's memory: REMEMBER and FORGET (phoneuse_runtime/memory/)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from phoneuse_runtime.kernel.errors import ElementNotFound
from phoneuse_runtime.kernel.limits import (
    MEMORY_KIND_CHARS,
    MEMORY_LINKS,
    MEMORY_NAME_CHARS,
    MEMORY_TAG_CHARS,
    MEMORY_TAGS,
    MEMORY_TEXT_CHARS,
    clip,
)
from phoneuse_runtime.kernel.params import Params
from phoneuse_runtime.kernel.registry import ActionContext, ActionResult, ActionSpec
from phoneuse_runtime.memory import Memory
from phoneuse_runtime.memory.store import Graph, check_bounds, node_ref, parse_ref

ADDRESSES = 16  # phones or emails one REMEMBER may carry


class RememberParams(Params):
    kind: str = Field(
        default="fact",
        min_length=1,
        max_length=MEMORY_KIND_CHARS,
        description="person, organization, place, event, message, call, note, fact, preference, app, "
        "topic, or any other word",
    )
    name: str = Field(min_length=1, max_length=MEMORY_NAME_CHARS)
    text: str = Field(default="", max_length=MEMORY_TEXT_CHARS)
    tags: list[Annotated[str, Field(max_length=MEMORY_TAG_CHARS)]] = Field(
        default_factory=list, max_length=MEMORY_TAGS, description="comma-separated or a JSON list"
    )
    related_to: list[str] = Field(
        default_factory=list, max_length=MEMORY_LINKS, description="ids of existing memory items"
    )
    phones: list[Annotated[str, Field(max_length=64)]] = Field(
        default_factory=list,
        max_length=ADDRESSES,
        description="a person's numbers, in any format: the person the phone knows by one of them "
        "is the same person (merged, undone by FORGET merge=)",
    )
    emails: list[Annotated[str, Field(max_length=254)]] = Field(
        default_factory=list, max_length=ADDRESSES, description="a person's emails (any case)"
    )


class RememberResult(ActionResult):
    id: str = Field(description="the node that holds it: a person the phone knew keeps its own id")
    kind: str
    name: str
    merge_id: str | None = Field(
        default=None, description="when the item was merged into a known person: FORGET merge= undoes it"
    )


async def remember(ctx: ActionContext, p: RememberParams) -> RememberResult:
    memory = ctx.component(Memory)
    check_bounds(kind=p.kind, name=p.name, text=p.text, tags=p.tags, related_to=p.related_to)
    keys = memory.person_keys(p.phones, p.emails)

    n, merge = await memory.write(
        lambda g: g.remember(
            kind=p.kind,
            name=p.name,
            text=p.text,
            tags=list(p.tags),
            related_to=list(p.related_to),
            phones=list(p.phones),
            emails=list(p.emails),
            keys=keys,
        )
    )
    return RememberResult(
        id=node_ref(n),
        kind=p.kind,
        name=p.name,
        merge_id=None if merge is None else f"merge-{merge}",
        via="memory",
    )


class ForgetParams(Params):
    id: str | None = Field(default=None, min_length=1, description="a node: removed with its edges")
    merge: str | None = Field(
        default=None, description="a merge (merge-N, from REMEMBER or MEMORY's attrs.merges): undone"
    )

    @model_validator(mode="after")
    def _one(self) -> ForgetParams:
        if (self.id is None) == (self.merge is None):
            raise ValueError("give exactly one of id (a memory item) or merge (a merge to undo)")
        return self


class ForgetResult(ActionResult):
    id: str
    forgotten: bool
    restored_id: str | None = Field(default=None, description="with merge=: the node split out again")


def _missing(ref: str) -> ElementNotFound:
    return ElementNotFound(f"no memory item with id {clip(ref)}")


async def forget(ctx: ActionContext, p: ForgetParams) -> ForgetResult:
    memory = ctx.component(Memory)
    if p.merge is not None:
        merge_ref = p.merge
        head, _, number = merge_ref.partition("-")
        if head != "merge" or not number.isascii() or not number.isdigit() or len(number) > 18:
            raise ElementNotFound(f"no memory merge with id {clip(merge_ref)}")
        restored = await memory.write(lambda g: g.unmerge(int(number)))
        return ForgetResult(id=merge_ref, forgotten=True, restored_id=node_ref(restored), via="memory")
    ref = p.id or ""
    n = parse_ref(ref)
    if n is None:
        raise _missing(ref)

    def drop(graph: Graph) -> None:
        if not graph.exists(n):
            raise _missing(ref)
        graph.remove(n)

    await memory.write(drop)
    return ForgetResult(id=ref, forgotten=True, via="memory")


ACTIONS = (
    ActionSpec(
        "REMEMBER",
        RememberParams,
        remember,
        RememberResult,
        "Store an item in the phone's memory graph",
        exclusive=False,  # the runtime's own store, not the phone
    ),
    ActionSpec(
        "FORGET",
        ForgetParams,
        forget,
        ForgetResult,
        "Delete a memory item with its edges and index rows, or undo a merge (ELEMENT_NOT_FOUND if absent)",
        exclusive=False,
    ),
)
