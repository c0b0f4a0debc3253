"""MEMORY: items the agent stored with REMEMBER."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from phoneuse_runtime.params import Params
from phoneuse_runtime.registry import QueryContext, QueryResult, QuerySpec


class MemoryFilters(Params):
    id: str | None = None
    kind: str | None = None
    name: str | None = Field(default=None, description="part of the name, any case")
    tag: str | None = None
    q: str | None = Field(
        default=None, description="words that must all appear in the name or text, any case"
    )
    related_to: str | None = Field(default=None, description="items linked to this id, either way")


class MemoryResult(QueryResult):
    id: str
    kind: str
    name: str
    text: str
    tags: list[str]
    related_to: list[str]
    created_ms: int
    updated_ms: int


async def memory(ctx: QueryContext, f: MemoryFilters) -> Sequence[MemoryResult]:
    items = ctx.memory.items()
    linked: set[str] = set()
    if f.related_to:
        anchor = ctx.memory.get(f.related_to)
        linked = set(anchor.related_to) if anchor else set()
        linked |= {i.id for i in items if f.related_to in i.related_to}
    words = f.q.casefold().split() if f.q else []
    out = []
    for item in reversed(items):  # newest first
        if f.id is not None and item.id != f.id:
            continue
        if f.kind is not None and item.kind != f.kind:
            continue
        if f.name and f.name.casefold() not in item.name.casefold():
            continue
        if f.tag is not None and f.tag not in item.tags:
            continue
        if f.related_to and item.id not in linked:
            continue
        haystack = f"{item.name} {item.text}".casefold()
        if not all(w in haystack for w in words):
            continue
        out.append(MemoryResult.model_validate(item, from_attributes=True))
    return out


QUERIES = (QuerySpec("MEMORY", MemoryFilters, memory, MemoryResult, "Memory items, newest first"),)
