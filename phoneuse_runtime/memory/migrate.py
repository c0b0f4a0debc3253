"""The JSON store of earlier versions (memory.json), moved into the graph on first start.

Its items become `agent` nodes under the same ids (`mem-3` stays `mem-3`), their links become
`related_to` edges, and no id the file held or had given (`next_id`) is given again. The file
is renamed `memory.json.migrated` once the graph holds it; a file that is not a memory store
stops start-up with one line saying so, as it always did.
"""

from __future__ import annotations

import logging
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from phoneuse_runtime.memory.store import Graph, parse_ref
from phoneuse_runtime.util.files import (
    StateFileError,
    read_state_text,
    remove_stale_temps,
    validation_problem,
)

if TYPE_CHECKING:
    from pydantic import TypeAdapter

log = logging.getLogger(__name__)

REMEDY = "move it aside or delete it (the agent's memory then starts empty), then start the server again"
MIGRATED = "migrated_json"


@cache
def _file_format() -> TypeAdapter[Any]:
    """What memory.json held. Unknown keys are errors rather than dropped: they would be lost."""
    from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

    class Item(BaseModel):
        model_config = ConfigDict(extra="forbid", strict=True)
        id: str
        kind: str
        name: str
        text: str = ""
        tags: tuple[str, ...] = ()
        related_to: tuple[str, ...] = ()
        created_ms: int = 0
        updated_ms: int = 0

    class MemoryFile(BaseModel):
        model_config = ConfigDict(extra="forbid", strict=True)
        next_id: int | None = Field(default=None, ge=1)
        items: list[Item] = Field(default_factory=list)

    return TypeAdapter(MemoryFile)


def migrate_json(graph: Graph, path: Path) -> int:
    """Moves `path` into the graph (one transaction) and renames it; returns the items moved."""
    remove_stale_temps(path)
    if not path.exists():
        return 0
    done = path.with_name(path.name + ".migrated")
    if graph.meta(MIGRATED):  # moved, but the rename did not happen before a crash
        path.replace(done)
        return 0
    from pydantic import ValidationError

    text = read_state_text(path, remedy=REMEDY)
    if not text.strip():
        raise StateFileError(path, "empty, not a memory store", REMEDY)
    try:
        data = _file_format().validate_json(text)
    except ValidationError as exc:
        raise StateFileError(path, f"not a memory store ({validation_problem(exc)})", REMEDY) from None
    seen: set[str] = set()
    for item in data.items:
        if item.id in seen:
            raise StateFileError(path, f"not a memory store (the id {item.id!r} repeats)", REMEDY)
        seen.add(item.id)
    graph.begin()
    try:
        ids: dict[str, int] = {}
        legacy: list[Any] = []
        for item in data.items:
            wanted = parse_ref(item.id)
            if wanted is None or graph.exists(wanted):
                legacy.append(item)  # an id written by hand: it gets a new one, after the others
                continue
            ids[item.id] = _add(graph, item, wanted)
        # No id the file held or had handed out (next_id) is given again.
        given = max([data.next_id - 1 if data.next_id else 0, *ids.values()], default=0)
        conn = graph.conn
        conn.execute("UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = 'nodes'", (given,))
        conn.execute(
            "INSERT INTO sqlite_sequence (name, seq) SELECT 'nodes', ? "
            "WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'nodes')",
            (given,),
        )
        for item in legacy:
            ids[item.id] = _add(graph, item, None)
            conn.execute(
                "INSERT OR REPLACE INTO keys (key, node) VALUES (?, ?)", (f"legacy:{item.id}", ids[item.id])
            )
        for item in data.items:
            for target in item.related_to:
                if target in ids:
                    graph.link("related_to", ids[item.id], ids[target], ts=item.updated_ms)
        graph.set_meta(MIGRATED, str(len(data.items)))
        graph.commit()
    except BaseException:
        graph.rollback()
        raise
    path.replace(done)
    log.info(
        "moved %d item(s) from %s into the memory graph; the file is kept as %s", len(ids), path, done.name
    )
    return len(ids)


def _add(graph: Graph, item: Any, node_id: int | None) -> int:
    n = graph.create(
        kind=item.kind,
        name=item.name,
        text=item.text,
        tags=item.tags,
        sources=["agent"],
        stamp=item.created_ms,
        node_id=node_id,
    )
    graph.conn.execute("UPDATE nodes SET updated_ms = ? WHERE id = ?", (item.updated_ms, n))
    return n
