"""The memory graph on SQLite: nodes, edges, keys, aliases, merges, and the full-text index.

Everything here is synchronous and runs in the memory's own threads (component.py): one thread
writes, a few read. Each change is one transaction, so the index rows, the edges and the node
they belong to appear and disappear together.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from phoneuse_runtime.kernel.errors import ElementNotFound, InvalidParams
from phoneuse_runtime.kernel.events import now_ms
from phoneuse_runtime.kernel.limits import (
    MEMORY_KIND_CHARS,
    MEMORY_LINKS,
    MEMORY_NAME_CHARS,
    MEMORY_TAG_CHARS,
    MEMORY_TAGS,
    MEMORY_TEXT_CHARS,
    too_long,
)
from phoneuse_runtime.memory.resolve import fold

# Which source's name wins when two name one person: the phone's contacts, then what the agent
# said, then calendars; a number an SMS came from names a person only until one of these does.
NAME_PRIORITY = {"contacts": 4, "agent": 3, "calendar": 2, "notifications": 1}
SOURCES = ("contacts", "sms", "calls", "calendar", "notifications", "app_usage", "agent")
EDGES_SHOWN = 5  # the strongest edges a result carries


def node_ref(n: int) -> str:
    return f"mem-{n}"


def parse_ref(ref: str) -> int | None:
    """The integer id of `mem-<n>`, or None for anything else."""
    head, sep, number = ref.partition("-")
    if head != "mem" or not sep or not number.isascii() or not number.isdigit() or number.startswith("0"):
        return None
    value = int(number)
    return value if 0 < value < 2**63 else None


def check_bounds(*, kind: str, name: str, text: str, tags: Sequence[str], related_to: Sequence[str]) -> None:
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


@dataclass
class Edge:
    relation: str
    node_id: str
    name: str
    ts: int
    direction: str  # out: this node -> node_id; in: node_id -> this node
    weight: int = 1


@dataclass
class Node:
    id: str
    kind: str
    name: str
    text: str
    attrs: dict[str, Any]
    tags: list[str]
    sources: list[str]
    aliases: list[str]
    related_to: list[str]
    created_ms: int
    updated_ms: int
    edges: list[Edge] = field(default_factory=list)


@dataclass(frozen=True)
class Entity:
    """Something a source saw, to be found or made in the graph: `keys` identify it (tel:, email:,
    contact:3), `name` names it, `attrs` are merged into the node's."""

    kind: str
    name: str
    source: str
    keys: tuple[str, ...]
    text: str | None = None
    attrs: dict[str, Any] = field(default_factory=dict)
    ts: int = 0


class Graph:
    """The graph on one connection. Writers call the mutating methods inside `transaction()`."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    # --- transactions --------------------------------------------------------------
    def begin(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def commit(self) -> None:
        self.conn.execute("COMMIT")

    def rollback(self) -> None:
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")

    # --- meta ---------------------------------------------------------------------
    def meta(self, key: str, default: str = "") -> str:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return str(row[0]) if row else default

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    # --- reading -------------------------------------------------------------------
    def exists(self, n: int) -> bool:
        return self.conn.execute("SELECT 1 FROM nodes WHERE id = ?", (n,)).fetchone() is not None

    def nodes(self, ids: Sequence[int], *, with_edges: bool = True) -> dict[int, Node]:
        """The nodes with these ids (those that exist), with their tags, sources, aliases,
        related_to links and strongest edges."""
        if not ids:
            return {}
        conn = self.conn
        marks = ",".join("?" * len(ids))
        rows = conn.execute(
            f"SELECT id, kind, name, text, attrs, created_ms, updated_ms FROM nodes WHERE id IN ({marks})",
            list(ids),
        ).fetchall()
        found: dict[int, Node] = {}
        for n, kind, name, text, attrs, created, updated in rows:
            found[n] = Node(
                node_ref(n), kind, name, text, json.loads(attrs), [], [], [], [], created, updated
            )
        if not found:
            return {}
        present = list(found)
        marks = ",".join("?" * len(present))
        for n, tag in conn.execute(
            f"SELECT node, tag FROM tags WHERE node IN ({marks}) ORDER BY pos", present
        ):
            found[n].tags.append(tag)
        for n, source in conn.execute(
            f"SELECT node, source FROM sources WHERE node IN ({marks}) ORDER BY source",
            present,
        ):
            found[n].sources.append(source)
        for n, alias in conn.execute(
            f"SELECT node, alias FROM aliases WHERE node IN ({marks}) ORDER BY alias",
            present,
        ):
            found[n].aliases.append(alias)
        for n, dst in conn.execute(
            f"SELECT src, dst FROM edges WHERE src IN ({marks}) AND relation = 'related_to' ORDER BY id",
            present,
        ):
            found[n].related_to.append(node_ref(dst))
        for m, kept, merged, ts in conn.execute(
            f"SELECT id, kept, merged, ts FROM merges WHERE kept IN ({marks}) ORDER BY id",
            present,
        ):
            found[kept].attrs.setdefault("merges", []).append(
                {"merge_id": f"merge-{m}", "merged_id": node_ref(merged), "ts": ts}
            )
        if with_edges:
            for n in present:
                found[n].edges = self.strongest_edges(n)
        return found

    def strongest_edges(self, n: int, limit: int = EDGES_SHOWN) -> list[Edge]:
        rows = self.conn.execute(
            "SELECT e.relation, e.other, nodes.name, e.ts, e.dir, e.weight FROM ("
            "  SELECT relation, dst AS other, ts, 'out' AS dir, weight FROM edges WHERE src = ?1"
            "  UNION ALL"
            "  SELECT relation, src AS other, ts, 'in' AS dir, weight FROM edges WHERE dst = ?1"
            ") AS e JOIN nodes ON nodes.id = e.other ORDER BY e.weight DESC, e.ts DESC LIMIT ?2",
            (n, limit),
        ).fetchall()
        return [Edge(rel, node_ref(other), name, ts, d, w) for rel, other, name, ts, d, w in rows]

    def by_key(self, key: str) -> int | None:
        row = self.conn.execute("SELECT node FROM keys WHERE key = ?", (key,)).fetchone()
        return int(row[0]) if row else None

    def person_named(self, name: str) -> int | None:
        """The one person known by this name or alias (case and accents folded); None when no
        one is, or when several are, since a name alone does not say which of them it means."""
        rows = self.conn.execute(
            "SELECT DISTINCT a.node FROM aliases a JOIN nodes n ON n.id = a.node "
            "WHERE n.kind = 'person' AND fold(a.alias) = ? LIMIT 2",
            (fold(name),),
        ).fetchall()
        return int(rows[0][0]) if len(rows) == 1 else None

    def keys_of(self, n: int) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT key FROM keys WHERE node = ? ORDER BY key", (n,))]

    # --- writing -------------------------------------------------------------------
    def _reindex(self, n: int) -> None:
        row = self.conn.execute("SELECT name, text FROM nodes WHERE id = ?", (n,)).fetchone()
        self.conn.execute("DELETE FROM fts WHERE rowid = ?", (n,))
        self.conn.execute("DELETE FROM vectors WHERE node = ?", (n,))  # made again in the background
        if row is None:
            return
        aliases = " ".join(a for (a,) in self.conn.execute("SELECT alias FROM aliases WHERE node = ?", (n,)))
        self.conn.execute(
            "INSERT INTO fts (rowid, name, text, aliases) VALUES (?, ?, ?, ?)", (n, *row, aliases)
        )

    def create(
        self,
        *,
        kind: str,
        name: str,
        text: str = "",
        attrs: dict[str, Any] | None = None,
        tags: Iterable[str] = (),
        sources: Iterable[str] = (),
        keys: Iterable[str] = (),
        stamp: int | None = None,
        node_id: int | None = None,
    ) -> int:
        stamp = now_ms() if stamp is None else stamp
        cur = self.conn.execute(
            "INSERT INTO nodes (id, kind, name, text, attrs, created_ms, updated_ms) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (node_id, kind, name, text, json.dumps(attrs or {}, ensure_ascii=False), stamp, stamp),
        )
        n = int(cur.lastrowid or 0)
        self.conn.executemany(
            "INSERT OR IGNORE INTO tags (node, tag, pos) VALUES (?, ?, ?)",
            [(n, t, i) for i, t in enumerate(tags)],
        )
        self.conn.executemany(
            "INSERT OR IGNORE INTO sources (node, source) VALUES (?, ?)", [(n, s) for s in sources]
        )
        self.conn.executemany("INSERT OR REPLACE INTO keys (key, node) VALUES (?, ?)", [(k, n) for k in keys])
        self._reindex(n)
        return n

    def link(
        self, relation: str, src: int, dst: int, *, ts: int | None = None, attrs: dict[str, Any] | None = None
    ) -> None:
        """Adds the edge, or strengthens it (weight + 1, the later ts) when it is there."""
        ts = now_ms() if ts is None else ts
        self.conn.execute(
            "INSERT INTO edges (relation, src, dst, ts, attrs) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (src, relation, dst) DO UPDATE SET weight = weight + 1, ts = max(ts, excluded.ts)",
            (relation, src, dst, ts, json.dumps(attrs or {}, ensure_ascii=False)),
        )

    def add_source(self, n: int, source: str) -> None:
        self.conn.execute("INSERT OR IGNORE INTO sources (node, source) VALUES (?, ?)", (n, source))

    def touch(self, n: int, stamp: int) -> None:
        self.conn.execute("UPDATE nodes SET updated_ms = max(updated_ms, ?) WHERE id = ?", (stamp, n))

    def remove(self, n: int) -> None:
        """The node, its edges, its keys, aliases, tags, sources, index rows and merge records."""
        conn = self.conn
        for table, column in (("tags", "node"), ("sources", "node"), ("keys", "node"), ("aliases", "node")):
            conn.execute(f"DELETE FROM {table} WHERE {column} = ?", (n,))
        conn.execute("DELETE FROM edges WHERE src = ?1 OR dst = ?1", (n,))
        conn.execute("DELETE FROM merges WHERE kept = ?1 OR merged = ?1", (n,))
        conn.execute("DELETE FROM fts WHERE rowid = ?", (n,))
        conn.execute("DELETE FROM vectors WHERE node = ?", (n,))
        conn.execute("DELETE FROM nodes WHERE id = ?", (n,))

    def remember(
        self,
        *,
        kind: str,
        name: str,
        text: str,
        tags: Sequence[str],
        related_to: Sequence[str],
        phones: Sequence[str] = (),
        emails: Sequence[str] = (),
        keys: Sequence[str] = (),
    ) -> tuple[int, int | None]:
        """The agent's REMEMBER: a new node with `related_to` edges. A person whose number or
        email the graph knows is merged into that person (recorded; FORGET merge= undoes it).
        Returns the node that holds it and the merge's id, if one happened."""
        check_bounds(kind=kind, name=name, text=text, tags=tags, related_to=related_to)
        targets: list[int] = []
        missing: list[str] = []
        for ref in related_to:
            n = parse_ref(ref)
            if n is None or not self.exists(n):
                missing.append(ref)
            elif n not in targets:
                targets.append(n)
        if missing:
            raise InvalidParams(f"related_to names unknown memory id(s): {', '.join(missing)}")
        stamp = now_ms()
        attrs: dict[str, Any] = {}
        if phones or emails:
            attrs.update(phones=list(phones), emails=list(emails))
        if kind == "person":
            attrs["name_source"] = "agent"
        n = self.create(
            kind=kind, name=name, text=text, attrs=attrs, tags=tags, sources=["agent"], stamp=stamp
        )
        for target in targets:
            self.link("related_to", n, target, ts=stamp)
        if kind == "person":
            self.conn.execute("INSERT OR IGNORE INTO aliases (node, alias) VALUES (?, ?)", (n, name))
        others = sorted({m for k in keys if (m := self.by_key(k)) is not None and m != n})
        self.conn.executemany("INSERT OR REPLACE INTO keys (key, node) VALUES (?, ?)", [(k, n) for k in keys])
        if not others:
            return n, None
        # The agent described someone the phone knows: one person, the older node kept.
        kept = others[0]
        merge_id = self.merge(kept, n)
        for other in others[1:]:
            self.merge(kept, other)
        return kept, merge_id

    # --- entities (ingestion) --------------------------------------------------------
    def upsert(self, entity: Entity) -> int:
        """The node `entity` is (found by any of its keys), updated, or a new one. When its keys
        point at several nodes, they are one thing: merged into the oldest, and recorded."""
        found = sorted({m for k in entity.keys if (m := self.by_key(k)) is not None})
        stamp = entity.ts or now_ms()
        if not found:
            attrs = dict(entity.attrs)
            if entity.kind == "person":
                attrs["name_source"] = entity.source
            n = self.create(
                kind=entity.kind,
                name=entity.name,
                text=entity.text or "",
                attrs=attrs,
                sources=[entity.source],
                keys=entity.keys,
                stamp=stamp,
            )
            if entity.kind == "person":
                self.conn.execute(
                    "INSERT OR IGNORE INTO aliases (node, alias) VALUES (?, ?)", (n, entity.name)
                )
                self._reindex(n)
            return n
        n = found[0]
        for other in found[1:]:
            self.merge(n, other)
        self._update(n, entity, stamp)
        return n

    def _update(self, n: int, entity: Entity, stamp: int) -> None:
        conn = self.conn
        row = conn.execute("SELECT name, text, attrs, updated_ms FROM nodes WHERE id = ?", (n,)).fetchone()
        name, text, attrs_text, updated = row
        attrs = json.loads(attrs_text)
        changed = False
        for key, value in entity.attrs.items():
            if isinstance(value, list) and isinstance(attrs.get(key), list):
                merged = _merged(key, attrs[key], value)
                if merged != attrs[key]:
                    attrs[key], changed = merged, True
            elif attrs.get(key) != value:
                attrs[key], changed = value, True
        new_name = name
        if entity.kind == "person" and entity.name and entity.name != name:
            conn.execute("INSERT OR IGNORE INTO aliases (node, alias) VALUES (?, ?)", (n, entity.name))
            mine = NAME_PRIORITY.get(attrs.get("name_source", ""), 0)
            theirs = NAME_PRIORITY.get(entity.source, 0)
            if theirs > mine:
                new_name, attrs["name_source"], changed = entity.name, entity.source, True
            else:
                changed = True  # the alias joins the index
        elif entity.kind != "person" and entity.name and entity.name != name:
            new_name, changed = entity.name, True
        new_text = text if entity.text is None else entity.text
        if new_text != text:
            changed = True
        self.conn.executemany(
            "INSERT OR REPLACE INTO keys (key, node) VALUES (?, ?)", [(k, n) for k in entity.keys]
        )
        self.add_source(n, entity.source)
        if changed or stamp > updated:
            conn.execute(
                "UPDATE nodes SET name = ?, text = ?, attrs = ?, updated_ms = max(updated_ms, ?) "
                "WHERE id = ?",
                (new_name, new_text, json.dumps(attrs, ensure_ascii=False), stamp, n),
            )
        if changed:
            self._reindex(n)

    # --- merges --------------------------------------------------------------------
    def merge(self, kept: int, merged: int) -> int:
        """Folds `merged` into `kept`: its keys, aliases, tags, sources and edges move over, its
        name becomes an alias. What it was is recorded, so that `unmerge` can split it again."""
        conn = self.conn
        node = conn.execute(
            "SELECT kind, name, text, attrs, created_ms, updated_ms FROM nodes WHERE id = ?", (merged,)
        ).fetchone()
        record = {
            "node": node,
            "keys": self.keys_of(merged),
            "aliases": [r[0] for r in conn.execute("SELECT alias FROM aliases WHERE node = ?", (merged,))],
            "tags": [
                r[0] for r in conn.execute("SELECT tag FROM tags WHERE node = ? ORDER BY pos", (merged,))
            ],
            "sources": [r[0] for r in conn.execute("SELECT source FROM sources WHERE node = ?", (merged,))],
            "edges": conn.execute(
                "SELECT relation, src, dst, ts, weight, attrs FROM edges WHERE src = ?1 OR dst = ?1",
                (merged,),
            ).fetchall(),
        }
        # What `kept` gains, so that an unmerge takes back exactly that.
        have_tags = {r[0] for r in conn.execute("SELECT tag FROM tags WHERE node = ?", (kept,))}
        have_sources = {r[0] for r in conn.execute("SELECT source FROM sources WHERE node = ?", (kept,))}
        have_aliases = {r[0] for r in conn.execute("SELECT alias FROM aliases WHERE node = ?", (kept,))}
        kept_text = conn.execute("SELECT text FROM nodes WHERE id = ?", (kept,)).fetchone()[0]
        record["gained"] = {
            "tags": [t for t in record["tags"] if t not in have_tags],
            "sources": [s for s in record["sources"] if s not in have_sources],
            "aliases": [a for a in {node[1], *record["aliases"]} if a not in have_aliases],
            "text": bool(node[2]) and not kept_text,
        }
        conn.execute("UPDATE keys SET node = ? WHERE node = ?", (kept, merged))
        conn.execute("INSERT OR IGNORE INTO aliases (node, alias) VALUES (?, ?)", (kept, node[1]))
        conn.execute(
            "INSERT OR IGNORE INTO aliases SELECT ?, alias FROM aliases WHERE node = ?", (kept, merged)
        )
        pos = conn.execute("SELECT count(*) FROM tags WHERE node = ?", (kept,)).fetchone()[0]
        conn.execute(
            "INSERT OR IGNORE INTO tags SELECT ?, tag, pos + ? FROM tags WHERE node = ?", (kept, pos, merged)
        )
        conn.execute(
            "INSERT OR IGNORE INTO sources SELECT ?, source FROM sources WHERE node = ?", (kept, merged)
        )
        for relation, src, dst, ts, weight, attrs in record["edges"]:
            src2, dst2 = (kept if src == merged else src), (kept if dst == merged else dst)
            if src2 == dst2:
                continue
            conn.execute(
                "INSERT INTO edges (relation, src, dst, ts, weight, attrs) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (src, relation, dst) DO UPDATE SET weight = weight + excluded.weight, "
                "ts = max(ts, excluded.ts)",
                (relation, src2, dst2, ts, weight, attrs),
            )
        if record["gained"]["text"]:
            conn.execute("UPDATE nodes SET text = ? WHERE id = ?", (node[2], kept))
        conn.execute("UPDATE merges SET kept = ? WHERE kept = ?", (kept, merged))
        for table in ("tags", "sources", "aliases"):
            conn.execute(f"DELETE FROM {table} WHERE node = ?", (merged,))
        conn.execute("DELETE FROM edges WHERE src = ?1 OR dst = ?1", (merged,))
        conn.execute("DELETE FROM fts WHERE rowid = ?", (merged,))
        conn.execute("DELETE FROM vectors WHERE node = ?", (merged,))
        conn.execute("DELETE FROM nodes WHERE id = ?", (merged,))
        self.touch(kept, max(node[5], 0))
        self._reindex(kept)
        cur = conn.execute(
            "INSERT INTO merges (kept, merged, ts, record) VALUES (?, ?, ?, ?)",
            (kept, merged, now_ms(), json.dumps(record, ensure_ascii=False)),
        )
        return int(cur.lastrowid or 0)

    def unmerge(self, merge_id: int) -> int:
        """Undoes a merge: the merged node comes back under its own id with its keys, aliases,
        tags, sources and edges; the kept node loses what came from it. Returns the node."""
        conn = self.conn
        row = conn.execute("SELECT kept, merged, record FROM merges WHERE id = ?", (merge_id,)).fetchone()
        if row is None:
            raise ElementNotFound(f"no memory merge with id 'merge-{merge_id}'")
        kept, merged, record_text = row
        record = json.loads(record_text)
        kind, name, text, attrs, created, updated = record["node"]
        self.create(
            kind=kind,
            name=name,
            text=text,
            attrs=json.loads(attrs),
            tags=record["tags"],
            sources=record["sources"],
            stamp=created,
            node_id=merged,
        )
        conn.execute("UPDATE nodes SET updated_ms = ? WHERE id = ?", (updated, merged))
        conn.executemany(
            "UPDATE keys SET node = ? WHERE key = ? AND node = ?", [(merged, k, kept) for k in record["keys"]]
        )
        conn.executemany(
            "INSERT OR IGNORE INTO aliases (node, alias) VALUES (?, ?)",
            [(merged, a) for a in record["aliases"]],
        )
        gained = record["gained"]
        conn.executemany("DELETE FROM tags WHERE node = ? AND tag = ?", [(kept, t) for t in gained["tags"]])
        conn.executemany(
            "DELETE FROM sources WHERE node = ? AND source = ?", [(kept, s) for s in gained["sources"]]
        )
        conn.executemany(
            "DELETE FROM aliases WHERE node = ? AND alias = ?", [(kept, a) for a in gained["aliases"]]
        )
        if gained["text"]:
            conn.execute("UPDATE nodes SET text = '' WHERE id = ? AND text = ?", (kept, text))
        for relation, src, dst, ts, weight, edge_attrs in record["edges"]:
            moved_src, moved_dst = (kept if src == merged else src), (kept if dst == merged else dst)
            conn.execute(
                "UPDATE edges SET weight = weight - ? WHERE src = ? AND relation = ? AND dst = ?",
                (weight, moved_src, relation, moved_dst),
            )
            conn.execute(
                "INSERT OR IGNORE INTO edges (relation, src, dst, ts, weight, attrs) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (relation, src, dst, ts, weight, edge_attrs),
            )
        conn.execute("DELETE FROM edges WHERE weight <= 0")
        conn.execute("DELETE FROM merges WHERE id = ?", (merge_id,))
        self._reindex(merged)
        self._reindex(kept)
        return int(merged)

    # --- retention -----------------------------------------------------------------
    def expire(self, *, before_ms: int, kinds: Sequence[str] = ("message", "call")) -> int:
        """Removes messages and calls last updated before `before_ms`; returns how many."""
        marks = ",".join("?" * len(kinds))
        old = [
            r[0]
            for r in self.conn.execute(
                f"SELECT id FROM nodes WHERE kind IN ({marks}) AND updated_ms < ? "
                "AND id NOT IN (SELECT node FROM sources WHERE source = 'agent')",
                (*kinds, before_ms),
            )
        ]
        for n in old:
            self.remove(n)
        return len(old)


def _merged(key: str, have: list[Any], new: list[Any]) -> list[Any]:
    """A list attribute with another source's values added; emails meet whatever their case (a
    calendar may spell an address as the contact does not), the first spelling kept."""
    out: list[Any] = []
    seen: set[Any] = set()
    for value in (*have, *new):
        same = str(value).casefold() if key == "emails" else value
        if same not in seen:
            seen.add(same)
            out.append(value)
    return out
