"""The agent's memory: a small persistent store of things it was told to remember.

Each item has a kind (person, place, fact, preference, ...), a name, free text, tags
and links to related items. It is a plain JSON file written atomically; a later issue
grows it into a graph.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import ElementNotFound, Internal, InvalidParams
from .events import now_ms
from .files import StateFileError, StateWriter, read_state_text, remove_stale_temps, validation_problem
from .limits import (
    MEMORY_KIND_CHARS,
    MEMORY_LINKS,
    MEMORY_NAME_CHARS,
    MEMORY_TAG_CHARS,
    MEMORY_TAGS,
    MEMORY_TEXT_CHARS,
    too_long,
)

if TYPE_CHECKING:
    from pydantic import TypeAdapter

log = logging.getLogger(__name__)

REMEDY = "move it aside or delete it (the agent's memory then starts empty), then start the server again"
_ID = re.compile(r"mem-([1-9][0-9]{0,17})")


@dataclass(frozen=True)
class MemoryItem:
    """One stored item. Immutable: a change replaces the item, so a snapshot of the store's
    items stays as it was while a worker thread writes it out."""

    id: str
    kind: str
    name: str
    text: str = ""
    tags: tuple[str, ...] = ()
    related_to: tuple[str, ...] = ()
    created_ms: int = 0
    updated_ms: int = 0


def _check_bounds(*, kind: str, name: str, text: str, tags: list[str], related_to: list[str]) -> None:
    """What one item may hold (limits.py), whoever adds it: REMEMBER checks its params the same way."""
    for what, value, limit in (
        ("kind", kind, MEMORY_KIND_CHARS),
        ("name", name, MEMORY_NAME_CHARS),
        ("text", text, MEMORY_TEXT_CHARS),
        *(("a tag", tag, MEMORY_TAG_CHARS) for tag in tags),
    ):
        if len(value) > limit:
            raise InvalidParams(too_long(what, len(value), limit))
    for what, items, most in (("tags", tags, MEMORY_TAGS), ("related_to", related_to, MEMORY_LINKS)):
        if len(items) > most:
            raise InvalidParams(f"{what} has {len(items)} entries; at most {most} are allowed")


@cache
def _file_format() -> TypeAdapter[Any]:
    """What memory.json must hold. Unknown keys are errors rather than dropped, since the next
    save would otherwise lose them. Built on first use: most starts have no file to read."""
    from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

    class MemoryFile(BaseModel):
        model_config = ConfigDict(extra="forbid", strict=True)
        next_id: int | None = Field(default=None, ge=1)
        items: list[MemoryItem] = Field(default_factory=list)

    return TypeAdapter(MemoryFile)


_CHUNK = 200  # items encoded at once: about a millisecond of holding the interpreter


def _render(next_id: int, items: list[MemoryItem]) -> Iterator[str]:
    """memory.json in pieces of `_CHUNK` items, so that encoding a large store in the writer's
    thread hands the interpreter back to the event loop between pieces."""
    yield f'{{"next_id": {next_id}, "items": ['
    for start in range(0, len(items), _CHUNK):
        rows = json.dumps([vars(item) for item in items[start : start + _CHUNK]], ensure_ascii=False)
        yield ("," if start else "") + rows[1:-1]
    yield "]}"


class MemoryStore:
    """Items in insertion order, persisted to `path` (None keeps them in memory only).

    A change is written in a worker thread, and `add` and `forget` return once it is on disk;
    concurrent changes share writes. `close` waits for the last write.
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._items: dict[str, MemoryItem] = {}
        self._next = 1
        self._writer = None if path is None else StateWriter(path, self._snapshot)

    def load(self) -> None:
        """Reads the file (StateFileError if it is not a memory store) and removes what an
        earlier crash in the middle of writing it left behind."""
        if self.path is None:
            return
        remove_stale_temps(self.path)
        if not self.path.exists():
            return
        from pydantic import ValidationError

        text = read_state_text(self.path, remedy=REMEDY)
        if not text.strip():
            raise StateFileError(self.path, "empty, not a memory store", REMEDY)
        try:
            data = _file_format().validate_json(text)
        except ValidationError as exc:
            problem = f"not a memory store ({validation_problem(exc)})"
            raise StateFileError(self.path, problem, REMEDY) from None
        items: dict[str, MemoryItem] = {}
        for item in data.items:
            if item.id in items:
                raise StateFileError(self.path, f"not a memory store (the id {item.id!r} repeats)", REMEDY)
            items[item.id] = item
        self._items = items
        # An id is never given twice, whatever next_id says or whether it is there at all.
        self._next = max(data.next_id or 1, self._after_ids())

    def _after_ids(self) -> int:
        numbers = [int(m.group(1)) for m in map(_ID.fullmatch, self._items) if m]
        return max(numbers, default=0) + 1

    def _snapshot(self) -> Iterator[str]:
        return _render(self._next, list(self._items.values()))

    async def _persist(self) -> None:
        if self._writer is None:
            return
        self._writer.changed()
        try:
            await self._writer.written()
        except OSError as exc:  # the runtime's own disk, not the phone: not DEVICE_UNAVAILABLE
            raise Internal(
                f"the change is made but could not be saved to {self.path} ({exc.strerror or exc}); "
                "the next change that can be saved saves it too"
            ) from exc

    async def add(
        self, *, kind: str, name: str, text: str, tags: list[str], related_to: list[str]
    ) -> MemoryItem:
        _check_bounds(kind=kind, name=name, text=text, tags=tags, related_to=related_to)
        missing = [rid for rid in related_to if rid not in self._items]
        if missing:
            raise InvalidParams(f"related_to names unknown memory id(s): {', '.join(missing)}")
        while f"mem-{self._next}" in self._items:  # an id someone wrote into the file by hand
            self._next += 1
        stamp = now_ms()
        item = MemoryItem(
            id=f"mem-{self._next}",
            kind=kind,
            name=name,
            text=text,
            tags=tuple(tags),
            related_to=tuple(related_to),
            created_ms=stamp,
            updated_ms=stamp,
        )
        self._next += 1
        self._items[item.id] = item
        await self._persist()
        return item

    async def forget(self, item_id: str) -> MemoryItem:
        item = self._items.pop(item_id, None)
        if item is None:
            raise ElementNotFound(f"no memory item with id {item_id!r}")
        for other in list(self._items.values()):
            if item_id in other.related_to:
                related = tuple(r for r in other.related_to if r != item_id)
                self._items[other.id] = replace(other, related_to=related)
        await self._persist()
        return item

    def get(self, item_id: str) -> MemoryItem | None:
        return self._items.get(item_id)

    def items(self) -> list[MemoryItem]:
        return list(self._items.values())

    async def close(self) -> None:
        """Waits until every change is on disk."""
        if self._writer is not None:
            await self._writer.close()
