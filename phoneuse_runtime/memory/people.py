"""CONTACTS' side of the memory: the people it knows, found by number, email, name or words,
each with when they were last in touch (the newest message or call between them and the phone).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from phoneuse_runtime.memory.resolve import fold
from phoneuse_runtime.memory.search import fts_query
from phoneuse_runtime.memory.store import Graph, node_ref

CONTACT_RELATIONS = ("messaged", "called")


@dataclass
class Person:
    memory_id: str
    name: str
    aliases: list[str]
    attrs: dict[str, Any]
    sources: list[str]
    keys: list[str]
    last_contacted: int | None
    fts_rank: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


def people(
    graph: Graph,
    *,
    keys: list[str],
    name: str | None,
    q: str | None,
    q_keys: list[str],
    everyone: bool,
    also: Sequence[str] = (),
) -> list[Person]:
    """The people matching every filter given: `keys` (a number's or an email's) exactly, `name`
    as a folded substring of the name or an alias, `q` as words (FTS) or as a number or email
    (`q_keys`). With no filter (`everyone`), every person with a number or an email. The people
    `also` names (the phone's contacts that matched) come whatever the filters."""
    conn = graph.conn
    candidates: set[int] | None = None

    def narrow(found: set[int]) -> None:
        nonlocal candidates
        candidates = found if candidates is None else candidates & found

    if keys:
        narrow({n for k in keys if (n := graph.by_key(k)) is not None})
    ranks: dict[int, float] = {}
    if q:
        found = {n for k in q_keys if (n := graph.by_key(k)) is not None}
        match = fts_query(q)
        if match is not None:
            for n, rank in conn.execute(
                "SELECT n.id, bm25(fts, 10.0, 1.0, 5.0) FROM fts CROSS JOIN nodes AS n ON n.id = fts.rowid "
                "WHERE fts MATCH ? AND n.kind = 'person'",
                (match,),
            ):
                found.add(n)
                ranks[n] = -rank
        narrow(found)
    if name:
        wanted = fold(name)
        if candidates is None:
            rows = conn.execute(
                "SELECT id FROM nodes WHERE kind = 'person' AND (instr(fold(name), ?1) > 0 OR id IN "
                "(SELECT node FROM aliases WHERE instr(fold(alias), ?1) > 0))",
                (wanted,),
            )
            narrow({r[0] for r in rows})
        else:
            kept = set()
            for n in candidates:
                names = [r[0] for r in conn.execute("SELECT alias FROM aliases WHERE node = ?", (n,))]
                row = conn.execute("SELECT name FROM nodes WHERE id = ?", (n,)).fetchone()
                if row and any(wanted in fold(x) for x in [row[0], *names]):
                    kept.add(n)
            candidates = kept
    extra = {n for k in also if (n := graph.by_key(k)) is not None}
    if candidates is None and not everyone:
        candidates = set()
    if candidates is None:
        candidates = {
            r[0]
            for r in conn.execute(
                "SELECT DISTINCT node FROM keys WHERE key >= 'email:' AND key < 'email;' "
                "OR key >= 'tel:' AND key < 'tel;' OR key >= 'contact:' AND key < 'contact;'"
            )
        }
    ids = sorted(candidates | extra)
    out: list[Person] = []
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        chunk_rows: list[tuple[int, str, str]] = conn.execute(
            f"SELECT id, name, attrs FROM nodes WHERE kind = 'person' AND id IN ({marks})",
            chunk,
        ).fetchall()
        for n, node_name, attrs in chunk_rows:
            last = conn.execute(
                "SELECT max(ts) FROM edges WHERE src = ? AND relation IN ('messaged', 'called')", (n,)
            ).fetchone()[0]
            out.append(
                Person(
                    memory_id=node_ref(n),
                    name=node_name,
                    aliases=[r[0] for r in conn.execute("SELECT alias FROM aliases WHERE node = ?", (n,))],
                    attrs=json.loads(attrs),
                    sources=[
                        r[0]
                        for r in conn.execute(
                            "SELECT source FROM sources WHERE node = ? ORDER BY source", (n,)
                        )
                    ],
                    keys=[r[0] for r in conn.execute("SELECT key FROM keys WHERE node = ?", (n,))],
                    last_contacted=last,
                    fts_rank=ranks.get(n, 0.0),
                )
            )
    return out
