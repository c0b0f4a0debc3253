"""MEMORY: the phone's memory graph (phoneuse_runtime/memory/), searched and ranked.

Ranking (see phoneuse_runtime/memory/search.py): text relevance (BM25), recency and closeness
to `related_to`, blended; without `q` or `related_to`, newest first. With an embeddings
endpoint, `q` is also matched by meaning and the two lists fused (memory/embeddings.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import Field, ValidationInfo, field_validator

from phoneuse_runtime.kernel.errors import InvalidParams
from phoneuse_runtime.kernel.limits import MEMORY_QUERY_WORDS
from phoneuse_runtime.kernel.params import Params
from phoneuse_runtime.kernel.registry import QueryContext, QueryResult, QuerySpec
from phoneuse_runtime.memory import Filters, Memory, Node
from phoneuse_runtime.memory.search import parse_time, query_words
from phoneuse_runtime.memory.store import SOURCES

Source = Literal["contacts", "sms", "calls", "calendar", "notifications", "app_usage", "agent"]
assert set(Source.__args__) == set(SOURCES)  # type: ignore[attr-defined]


class MemoryFilters(Params):
    id: str | None = None
    kind: str | None = Field(default=None, description="person, message, call, event, place, app, fact, ...")
    name: str | None = Field(default=None, description="part of the name, any case or accents")
    tag: str | None = None
    q: str | None = Field(
        default=None,
        description="full text over name, aliases and text: every word, each as a prefix, any case "
        "or accents; BM25-ranked",
    )
    related_to: str | None = Field(default=None, description="nodes linked to this id, either way")
    depth: int = Field(default=1, ge=1, le=2, description="with related_to: 1 (neighbours) or 2 (and theirs)")
    relation: str | None = Field(default=None, description="with related_to: only edges of this relation")
    source: Source | None = Field(default=None, description="nodes this source contributed to")
    since: str | None = Field(default=None, description="updated at or after: epoch ms or ISO-8601")
    until: str | None = Field(default=None, description="updated at or before: epoch ms or ISO-8601")

    @field_validator("q")
    @classmethod
    def _words(cls, value: str | None) -> str | None:
        if value is not None and (count := len(query_words(value))) > MEMORY_QUERY_WORDS:
            raise InvalidParams(
                f"q has {count} words; at most {MEMORY_QUERY_WORDS} are allowed (every word must match: "
                "a few distinctive ones find more)"
            )
        return value

    @field_validator("since", "until")
    @classmethod
    def _time(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None:
            parse_time(value, str(info.field_name))
        return value


class MemoryEdge(QueryResult):
    relation: str
    node_id: str
    name: str
    ts: int
    direction: str = Field(description="out: from this node; in: to it")


class MemoryResult(QueryResult):
    id: str
    kind: str
    name: str
    text: str
    tags: list[str]
    related_to: list[str] = Field(description="the ids this node links to as related_to")
    created_ms: int
    updated_ms: int
    attrs: dict[str, Any] = Field(description="per kind: phones and emails, start_ms, direction, ...")
    sources: list[str]
    aliases: list[str]
    score: float = Field(
        description="the ranking's blend of text, recency and link (0 without q and related_to)"
    )
    edges: list[MemoryEdge] = Field(description="the strongest edges, heaviest then newest first")


def to_result(node: Node, score: float) -> MemoryResult:
    return MemoryResult(
        id=node.id,
        kind=node.kind,
        name=node.name,
        text=node.text,
        tags=node.tags,
        related_to=node.related_to,
        created_ms=node.created_ms,
        updated_ms=node.updated_ms,
        attrs=node.attrs,
        sources=node.sources,
        aliases=node.aliases,
        score=score,
        edges=[
            MemoryEdge(relation=e.relation, node_id=e.node_id, name=e.name, ts=e.ts, direction=e.direction)
            for e in node.edges
        ],
    )


async def memory(ctx: QueryContext, f: MemoryFilters) -> Sequence[MemoryResult]:
    filters = Filters(
        id=f.id,
        kind=f.kind,
        name=f.name,
        tag=f.tag,
        q=f.q,
        related_to=f.related_to,
        depth=f.depth,
        relation=f.relation,
        source=f.source,
        since_ms=None if f.since is None else parse_time(f.since, "since"),
        until_ms=None if f.until is None else parse_time(f.until, "until"),
    )
    store = ctx.component(Memory)
    await store.catch_up()  # what the phone gained since the memory last looked
    return await store.search(filters, to_result)


QUERIES = (
    QuerySpec(
        "MEMORY",
        MemoryFilters,
        memory,
        MemoryResult,
        "The memory graph: people, messages, calls, events, places, apps and the agent's items, best first",
    ),
)
