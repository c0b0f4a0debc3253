"""`phoneuse-runtime memory export | import | stats`: the memory as JSON Lines, and what it holds.

They open the database file directly, as a second process beside a running server: WAL lets
an export read a consistent snapshot while the server writes, and an import writes in one
transaction that the server's writer waits for (busy timeout) rather than fails on. Nothing
goes through the network.

One line per record, each with a `type`:
- {"type": "node", "id", "kind", "name", "text", "attrs", "tags", "sources", "aliases", "keys",
  "created_ms", "updated_ms"}
- {"type": "edge", "relation", "from", "to", "ts", "weight", "attrs"}
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO

from phoneuse_runtime.memory.schema import DB_FILE, REMEDY, connect
from phoneuse_runtime.memory.store import Graph, node_ref, parse_ref
from phoneuse_runtime.util.files import StateFileError

BATCH = 1000


def open_existing(data_dir: Path, *, create: bool = False) -> sqlite3.Connection:
    """The data dir's memory; an import may create it, an export or stats may not."""
    path = data_dir / DB_FILE
    if create:
        data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    elif not path.exists():
        raise StateFileError(path, "no memory database here", "start the server once, or check --data-dir")
    return connect(path)


def export_lines(conn: sqlite3.Connection) -> Iterator[str]:
    """Every node, then every edge, in one read transaction: a snapshot."""
    conn.execute("BEGIN")
    try:
        graph = Graph(conn)
        last = 0
        while True:
            ids = [
                r[0]
                for r in conn.execute("SELECT id FROM nodes WHERE id > ? ORDER BY id LIMIT ?", (last, BATCH))
            ]
            if not ids:
                break
            last = ids[-1]
            nodes = graph.nodes(ids, with_edges=False)
            keys: dict[int, list[str]] = {}
            marks = ",".join("?" * len(ids))
            for key, n in conn.execute(
                f"SELECT key, node FROM keys WHERE node IN ({marks}) ORDER BY key", ids
            ):
                keys.setdefault(n, []).append(key)
            for n in ids:
                node = nodes[n]
                record = {
                    "type": "node",
                    "id": node.id,
                    "kind": node.kind,
                    "name": node.name,
                    "text": node.text,
                    "attrs": node.attrs,
                    "tags": node.tags,
                    "sources": node.sources,
                    "aliases": node.aliases,
                    "keys": keys.get(n, []),
                    "created_ms": node.created_ms,
                    "updated_ms": node.updated_ms,
                }
                yield json.dumps(record, ensure_ascii=False)
        for relation, src, dst, ts, weight, attrs in conn.execute(
            "SELECT relation, src, dst, ts, weight, attrs FROM edges ORDER BY id"
        ):
            edge = {
                "type": "edge",
                "relation": relation,
                "from": node_ref(src),
                "to": node_ref(dst),
                "ts": ts,
                "weight": weight,
                "attrs": json.loads(attrs),
            }
            yield json.dumps(edge, ensure_ascii=False)
    finally:
        conn.execute("COMMIT")


class BadImport(ValueError):
    """A line of an import file that is not a record this version reads."""


def _text(record: dict[str, Any], field: str, line: int, *, default: str | None = None) -> str:
    value = record.get(field, default)
    if not isinstance(value, str):
        raise BadImport(f"line {line}: {field!r} must be a string")
    return value


def import_lines(conn: sqlite3.Connection, lines: Iterable[str]) -> dict[str, int]:
    """Adds the records in one transaction: all of them or, on the first bad line, none.
    Nodes get new ids (the file's ids only join its edges); a node whose keys the memory
    already knows is updated rather than duplicated."""
    from phoneuse_runtime.memory.store import Entity

    graph = Graph(conn)
    graph.begin()
    counts = {"nodes": 0, "edges": 0, "merged": 0}
    ids: dict[str, int] = {}
    try:
        for number, raw in enumerate(lines, 1):
            if not raw.strip():
                continue
            try:
                record = json.loads(raw)
            except ValueError as exc:
                raise BadImport(f"line {number}: not JSON ({exc})") from None
            if not isinstance(record, dict):
                raise BadImport(f"line {number}: not a JSON object")
            kind = record.get("type")
            if kind == "node":
                keys = tuple(str(k) for k in record.get("keys") or [])
                known = next((m for k in keys if (m := graph.by_key(k)) is not None), None)
                sources = [str(s) for s in record.get("sources") or ["agent"]]
                attrs = record.get("attrs") or {}
                if not isinstance(attrs, dict):
                    raise BadImport(f"line {number}: 'attrs' must be an object")
                if known is not None:
                    entity = Entity(
                        _text(record, "kind", number),
                        _text(record, "name", number),
                        sources[0],
                        keys,
                        attrs=attrs,
                    )
                    n = graph.upsert(entity)
                    counts["merged"] += 1
                else:
                    n = graph.create(
                        kind=_text(record, "kind", number),
                        name=_text(record, "name", number),
                        text=_text(record, "text", number, default=""),
                        attrs=attrs,
                        tags=[str(t) for t in record.get("tags") or []],
                        sources=sources,
                        keys=keys,
                        stamp=int(record.get("created_ms") or 0) or None,
                    )
                    conn.executemany(
                        "INSERT OR IGNORE INTO aliases (node, alias) VALUES (?, ?)",
                        [(n, str(a)) for a in record.get("aliases") or []],
                    )
                    conn.execute(
                        "UPDATE nodes SET updated_ms = max(updated_ms, ?) WHERE id = ?",
                        (int(record.get("updated_ms") or 0), n),
                    )
                    counts["nodes"] += 1
                ids[_text(record, "id", number)] = n
            elif kind == "edge":
                src, dst = ids.get(_text(record, "from", number)), ids.get(_text(record, "to", number))
                if src is None or dst is None:
                    raise BadImport(f"line {number}: an edge between nodes not in the file before it")
                graph.link(
                    _text(record, "relation", number),
                    src,
                    dst,
                    ts=int(record.get("ts") or 0),
                    attrs=record.get("attrs") or {},
                )
                counts["edges"] += 1
            else:
                raise BadImport(f"line {number}: unknown record type {kind!r} (node or edge)")
        for n in set(ids.values()):
            graph._reindex(n)
        graph.commit()
    except BaseException:
        graph.rollback()
        raise
    return counts


def stats(conn: sqlite3.Connection) -> dict[str, Any]:
    """What is stored, by kind and by source, with the file's size."""
    by_kind = dict(conn.execute("SELECT kind, count(*) FROM nodes GROUP BY kind ORDER BY kind").fetchall())
    by_source = dict(
        conn.execute("SELECT source, count(*) FROM sources GROUP BY source ORDER BY source").fetchall()
    )
    relations = dict(
        conn.execute("SELECT relation, count(*) FROM edges GROUP BY relation ORDER BY relation").fetchall()
    )
    page = conn.execute("PRAGMA page_size").fetchone()[0] * conn.execute("PRAGMA page_count").fetchone()[0]
    return {
        "nodes": sum(by_kind.values()),
        "edges": sum(relations.values()),
        "kinds": by_kind,
        "sources": by_source,
        "relations": relations,
        "merges": conn.execute("SELECT count(*) FROM merges").fetchone()[0],
        "bytes": page,
    }


def write_export(conn: sqlite3.Connection, out: TextIO) -> int:
    count = 0
    for line in export_lines(conn):
        out.write(line + "\n")
        count += 1
    return count


__all__ = [
    "REMEDY",
    "BadImport",
    "export_lines",
    "import_lines",
    "open_existing",
    "parse_ref",
    "stats",
    "write_export",
]
