"""The agent's memory: a small persistent store of things it was told to remember.

Each item has a kind (person, place, fact, preference, ...), a name, free text, tags
and links to related items. It is a plain JSON file written atomically; a later issue
grows it into a graph.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .errors import ElementNotFound, InvalidParams
from .events import now_ms
from .files import atomic_write_text
from .limits import (
    MEMORY_KIND_CHARS,
    MEMORY_LINKS,
    MEMORY_NAME_CHARS,
    MEMORY_TAG_CHARS,
    MEMORY_TAGS,
    MEMORY_TEXT_CHARS,
    too_long,
)

log = logging.getLogger(__name__)


@dataclass
class MemoryItem:
    id: str
    kind: str
    name: str
    text: str = ""
    tags: list[str] = field(default_factory=list)
    related_to: list[str] = field(default_factory=list)
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


class MemoryStore:
    """Items in insertion order, persisted to `path` after every change (None keeps them in memory)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._items: dict[str, MemoryItem] = {}
        self._next = 1

    def load(self) -> None:
        if self.path is None or not self.path.exists():
            return
        data = json.loads(self.path.read_text(encoding="utf-8"))
        self._items = {raw["id"]: MemoryItem(**raw) for raw in data.get("items", [])}
        self._next = int(data.get("next_id", len(self._items) + 1))

    def _save(self) -> None:
        if self.path is None:
            return
        payload = {"next_id": self._next, "items": [asdict(i) for i in self._items.values()]}
        atomic_write_text(self.path, json.dumps(payload, ensure_ascii=False))

    def add(self, *, kind: str, name: str, text: str, tags: list[str], related_to: list[str]) -> MemoryItem:
        _check_bounds(kind=kind, name=name, text=text, tags=tags, related_to=related_to)
        missing = [rid for rid in related_to if rid not in self._items]
        if missing:
            raise InvalidParams(f"related_to names unknown memory id(s): {', '.join(missing)}")
        stamp = now_ms()
        item = MemoryItem(
            id=f"mem-{self._next}",
            kind=kind,
            name=name,
            text=text,
            tags=tags,
            related_to=related_to,
            created_ms=stamp,
            updated_ms=stamp,
        )
        self._next += 1
        self._items[item.id] = item
        self._save()
        return item

    def forget(self, item_id: str) -> MemoryItem:
        item = self._items.pop(item_id, None)
        if item is None:
            raise ElementNotFound(f"no memory item with id {item_id!r}")
        for other in self._items.values():
            if item_id in other.related_to:
                other.related_to.remove(item_id)
        self._save()
        return item

    def get(self, item_id: str) -> MemoryItem | None:
        return self._items.get(item_id)

    def items(self) -> list[MemoryItem]:
        return list(self._items.values())
