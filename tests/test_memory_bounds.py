"""The memory graph keeps its own bounds (limits.py), whoever adds to it: REMEMBER's params are
checked the same way first, but a plug-in may reach the graph through its component."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from phoneuse_runtime.kernel.errors import InvalidParams
from phoneuse_runtime.kernel.limits import (
    MEMORY_KIND_CHARS,
    MEMORY_LINKS,
    MEMORY_NAME_CHARS,
    MEMORY_TAG_CHARS,
    MEMORY_TAGS,
    MEMORY_TEXT_CHARS,
)
from phoneuse_runtime.memory.schema import connect
from phoneuse_runtime.memory.store import Graph

GOOD: dict[str, Any] = {"kind": "fact", "name": "n", "text": "", "tags": [], "related_to": []}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"kind": "k" * (MEMORY_KIND_CHARS + 1)}, f"kind has {MEMORY_KIND_CHARS + 1} characters"),
        ({"name": "n" * (MEMORY_NAME_CHARS + 1)}, f"name has {MEMORY_NAME_CHARS + 1} characters"),
        ({"text": "\x01" * (MEMORY_TEXT_CHARS + 1)}, f"text has {MEMORY_TEXT_CHARS + 1} characters"),
        ({"tags": ["t" * (MEMORY_TAG_CHARS + 1)]}, f"a tag has {MEMORY_TAG_CHARS + 1} characters"),
        ({"tags": ["t"] * (MEMORY_TAGS + 1)}, f"tags has {MEMORY_TAGS + 1} entries"),
        ({"related_to": ["mem-1"] * (MEMORY_LINKS + 1)}, f"related_to has {MEMORY_LINKS + 1} entries"),
    ],
    ids=["kind", "name", "text", "tag", "tags", "links"],
)
def test_an_item_past_the_limits_is_refused_and_not_stored(
    change: dict[str, Any], message: str, tmp_path: Path
) -> None:
    graph = Graph(connect(tmp_path / "memory.db"))
    with pytest.raises(InvalidParams, match=f"^{message}; at most"):
        graph.remember(**{**GOOD, **change})
    assert graph.conn.execute("SELECT count(*) FROM nodes").fetchone() == (0,)
    at_limits, _ = graph.remember(
        kind="k" * MEMORY_KIND_CHARS,
        name="n" * MEMORY_NAME_CHARS,
        text="\x01" * MEMORY_TEXT_CHARS,
        tags=["t" * MEMORY_TAG_CHARS] * MEMORY_TAGS,
        related_to=[],
    )
    assert graph.conn.execute("SELECT id FROM nodes").fetchall() == [(at_limits,)]
