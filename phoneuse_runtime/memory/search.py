"""MEMORY's search: which nodes match the filters, and in what order.

The order blends three signals, each in [0, 1]:
- text: the node's BM25 relevance to `q` (name weighs 10, aliases 5, text 1), divided by the
  best match's, so the best text match scores 1;
- recency: 0.5 ** (days since the node's last update / 30), a half-life of a month;
- link: how close the node is to `related_to`: 0.7 + 0.3 * min(weight, 10) / 10 for a direct
  neighbour (weight counts the messages, calls and mentions behind the edge), 0.35 two hops
  away.

score = 0.6 text + 0.25 recency + 0.15 link when both `q` and `related_to` are given;
0.7 text + 0.3 recency with `q` alone; 0.6 link + 0.4 recency with `related_to` alone; with
neither, recency alone (newest first, as the JSON store listed its items). Ties go to the newer
node, then the higher id.

With `q` and no `related_to`, the blend orders the TOP (100) best BM25 matches, and the matches
past them follow in BM25 order with score 0. A word that matches more than RANKED (2,000) nodes
is ranked among its 2,000 most recently stored matches, the older ones following newest first:
BM25 over every match of a common word costs tens of milliseconds on 100k nodes, and what an
agent asks about ("dinner") is most often recent.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from phoneuse_runtime.kernel.errors import InvalidParams
from phoneuse_runtime.kernel.events import now_ms
from phoneuse_runtime.memory.resolve import fold
from phoneuse_runtime.memory.store import parse_ref

DAY_MS = 86_400_000
RRF_K = 60  # reciprocal-rank fusion's constant, as its authors (Cormack et al.) chose it
TOP = 100  # matches ranked by the blend; past them, by BM25 alone (q) or newest first
RANKED = 2000  # the most recently stored matches of `q` that BM25 ranks; older ones follow, newest first
HALF_LIFE_DAYS = 30.0
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class Filters:
    id: str | None = None
    kind: str | None = None
    name: str | None = None
    tag: str | None = None
    q: str | None = None
    related_to: str | None = None
    depth: int = 1
    relation: str | None = None
    source: str | None = None
    since_ms: int | None = None
    until_ms: int | None = None


def query_words(q: str) -> list[str]:
    """The words of `q` that the search matches (limits.MEMORY_QUERY_WORDS bounds them)."""
    return _WORD.findall(q)


def fts_query(q: str) -> str | None:
    """`q` as an FTS5 query: every word must match, each as a prefix ("den" finds "dentist").
    Words are quoted, so FTS5's own syntax (AND, NEAR, *, ") in `q` is plain text."""
    words = _WORD.findall(q)
    if not words:
        return None
    return " ".join(f'"{w}"*' for w in words)


def recency(updated_ms: int, now: int) -> float:
    age_days = max(0, now - updated_ms) / DAY_MS
    return float(0.5 ** (age_days / HALF_LIFE_DAYS))


def neighbours(
    conn: sqlite3.Connection, anchor: int, *, depth: int, relation: str | None
) -> dict[int, float]:
    """Nodes within `depth` (1 or 2) edges of `anchor`, either way, with their link score."""
    rel_sql = " AND relation = ?" if relation else ""
    args: tuple[object, ...] = (relation,) if relation else ()

    def step(n: int) -> list[tuple[int, int]]:
        return conn.execute(
            f"SELECT dst, weight FROM edges WHERE src = ?{rel_sql} "
            f"UNION ALL SELECT src, weight FROM edges WHERE dst = ?{rel_sql}",
            (n, *args, n, *args),
        ).fetchall()

    near: dict[int, float] = {}
    for other, weight in step(anchor):
        if other != anchor:
            score = 0.7 + 0.3 * min(weight, 10) / 10
            near[other] = max(near.get(other, 0.0), score)
    if depth >= 2:
        far: dict[int, float] = {}
        for first in list(near):
            for other, _ in step(first):
                if other != anchor and other not in near:
                    far[other] = 0.35
        near.update(far)
    return near


@dataclass
class Hits:
    """The matches: the first ids in order with their scores, how many match in all, and the
    statement (ending LIMIT ? OFFSET ?) that reads the ids after those, in order."""

    ids: list[int]
    scores: list[float]
    total: int
    rest: tuple[str, tuple[object, ...]] | None = None
    # Where `rest` goes on (its OFFSET), and the ids it must not repeat (fused in from vectors).
    offset: int = -1
    skip: set[int] = field(default_factory=set)

    def __post_init__(self) -> None:
        if self.offset < 0:
            self.offset = len(self.ids)


@dataclass(frozen=True)
class Conditions:
    """The filters other than `q`, as SQL on `nodes AS n`, and the link scores of related_to."""

    where: list[str]
    args: list[object]
    link: dict[int, float]

    @property
    def sql(self) -> str:
        return " AND ".join(self.where) or "1"


def conditions(conn: sqlite3.Connection, f: Filters) -> Conditions | None:
    """None when nothing can match (an id that is no id, related_to without neighbours)."""
    where: list[str] = []
    args: list[object] = []
    if f.id is not None:
        n = parse_ref(f.id)
        if n is None:
            return None
        where.append("n.id = ?")
        args.append(n)
    for value, clause in (
        (f.kind, "n.kind = ?"),
        (f.tag, "n.id IN (SELECT node FROM tags WHERE tag = ?)"),
        (f.source, "n.id IN (SELECT node FROM sources WHERE source = ?)"),
        (f.since_ms, "n.updated_ms >= ?"),
        (f.until_ms, "n.updated_ms <= ?"),
        (fold(f.name) if f.name else None, "instr(fold(n.name), ?) > 0"),
    ):
        if value is not None:
            where.append(clause)
            args.append(value)
    link: dict[int, float] = {}
    if f.related_to:
        anchor = parse_ref(f.related_to)
        if anchor is None:
            return None
        link = neighbours(conn, anchor, depth=f.depth, relation=f.relation)
        if not link:
            return None
        where.append("n.id IN (SELECT value FROM json_each(?))")
        args.append("[" + ",".join(map(str, link)) + "]")
    return Conditions(where, args, link)


def search(conn: sqlite3.Connection, f: Filters) -> Hits:
    """The matching nodes, best first."""
    found = conditions(conn, f)
    if found is None:
        return Hits([], [], 0)
    where, args, link = found.where, found.args, found.link
    text: dict[int, float] = {}
    match = fts_query(f.q) if f.q else None
    if f.q and match is None:
        return Hits([], [], 0)  # only punctuation: nothing can contain it as a word
    condition = " AND ".join(where) or "1"
    if not link:
        return _ranked_in_sql(conn, match, where, condition, args)
    if match is not None:
        sql = (
            "SELECT n.id, n.updated_ms, fts.rank FROM fts CROSS JOIN nodes AS n ON n.id = fts.rowid "
            f"WHERE fts MATCH ? AND {condition}"
        )
        rows = conn.execute(sql, (match, *args)).fetchall()
        best = max((-r[2] for r in rows), default=0.0) or 1.0
        text = {r[0]: -r[2] / best for r in rows}
        updated = {r[0]: r[1] for r in rows}
    else:
        updated = dict(
            conn.execute(f"SELECT n.id, n.updated_ms FROM nodes AS n WHERE {condition}", args).fetchall()
        )
    weights = (0.6, 0.25, 0.15) if match is not None else (0.0, 0.4, 0.6)
    ids, scores = _blend(updated, text, link, weights)
    return Hits(ids, scores, len(ids))


def _blend(
    updated: dict[int, int],
    text: dict[int, float],
    link: dict[int, float],
    weights: tuple[float, float, float],
) -> tuple[list[int], list[float]]:
    now = now_ms()
    scored = [
        (
            weights[0] * text.get(n, 0.0) + weights[1] * recency(stamp, now) + weights[2] * link.get(n, 0.0),
            stamp,
            n,
        )
        for n, stamp in updated.items()
    ]
    scored.sort(reverse=True)
    return [n for _, _, n in scored], [round(s, 6) for s, _, _ in scored]


def _ranked_in_sql(
    conn: sqlite3.Connection, match: str | None, where: list[str], condition: str, args: list[object]
) -> Hits:
    """Without related_to, SQLite orders: by BM25 rank for `q` (the TOP best blended with
    recency), else newest first. Only the first TOP ids are read now; the rest when a page
    reaches them (`Hits.rest`)."""
    if match is None:
        base = f"FROM nodes AS n WHERE {condition}"
        total = conn.execute(f"SELECT count(*) {base}", args).fetchone()[0]
        rest = f"SELECT n.id {base} ORDER BY n.updated_ms DESC, n.id DESC LIMIT ? OFFSET ?"
        ids = [r[0] for r in conn.execute(rest, (*args, TOP, 0))]
        return Hits(ids, [0.0] * len(ids), total, (rest, (*args,)))
    if where:
        base = f"FROM fts CROSS JOIN nodes AS n ON n.id = fts.rowid WHERE fts MATCH ? AND {condition}"
        column = "n.id"
    else:  # the index alone: no row of nodes is read for the matches beyond TOP
        base = "FROM fts WHERE fts MATCH ?"
        column = "fts.rowid"
    params = (match, *args)
    total = conn.execute(f"SELECT count(*) {base}", params).fetchone()[0]
    if total <= RANKED:
        rest = f"SELECT {column} {base} ORDER BY fts.rank, fts.rowid DESC LIMIT ? OFFSET ?"
        window = base
    else:
        # BM25 for the RANKED most recently stored matches; the older ones after them, newest first.
        boundary = conn.execute(
            f"SELECT fts.rowid {base} ORDER BY fts.rowid DESC LIMIT 1 OFFSET ?", (*params, RANKED - 1)
        ).fetchone()[0]
        window = f"{base} AND fts.rowid >= {int(boundary)}"
        rest = (
            f"SELECT id FROM (SELECT {column} AS id, 0 AS part, fts.rank AS r {window} "
            f"UNION ALL SELECT {column}, 1, 0 {base} AND fts.rowid < {int(boundary)}) "
            "ORDER BY part, r, id DESC LIMIT ? OFFSET ?"
        )
        params = (*params, *params)
    top = conn.execute(
        f"SELECT {column}, fts.rank {window} ORDER BY fts.rank, fts.rowid DESC LIMIT ?", (match, *args, TOP)
    ).fetchall()
    best = max((-r[1] for r in top), default=0.0) or 1.0
    text = {n: -rank / best for n, rank in top}
    marks = ",".join("?" * len(top))
    updated = dict(
        conn.execute(f"SELECT id, updated_ms FROM nodes WHERE id IN ({marks})", list(text)).fetchall()
    )
    ids, scores = _blend(updated, text, {}, (0.7, 0.3, 0.0))
    return Hits(ids, scores, total, (rest, params))


def parse_time(value: str, what: str) -> int:
    """Epoch ms, or an ISO-8601 time (UTC unless it says otherwise), as epoch ms; within the
    times every param takes (params.EARLIEST to params.LATEST), else InvalidParams naming them."""
    from phoneuse_runtime.kernel.params import EARLIEST, LATEST

    earliest, latest = _epoch_ms(EARLIEST), _epoch_ms(LATEST)
    text = value.strip()
    if (
        text.lstrip("+-").isascii()
        and text.lstrip("+-").isdigit()
        and len(text) - len(text.lstrip("+-")) <= 1
    ):
        # Python's int() takes any length; a long one is simply out of range.
        ms = int(text) if len(text) <= 20 else (earliest - 1 if text[0] == "-" else latest + 1)
    else:
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=timezone.utc)
            ms = _epoch_ms(moment)
        except (ValueError, OverflowError):
            raise InvalidParams(
                f"{what}: expected epoch milliseconds or an ISO-8601 time, got {value[:40]!r}"
            ) from None
    if not earliest <= ms <= latest:
        raise InvalidParams(
            f"{what}: {value[:40]!r} is out of range: times run from {EARLIEST.date().isoformat()} to "
            f"{LATEST.date().isoformat()} (UTC), epoch milliseconds {earliest} to {latest}"
        )
    return ms


def _epoch_ms(moment: datetime) -> int:
    return (moment - datetime(1970, 1, 1, tzinfo=timezone.utc)) // timedelta(milliseconds=1)


def fuse(conn: sqlite3.Connection, hits: Hits, nearest: list[int], f: Filters, match: str | None) -> Hits:
    """The lexical hits and the nearest vectors' nodes (those the other filters allow), by
    reciprocal-rank fusion: each node scores the sum of 1 / (60 + its rank) in each list. The
    lexical matches past the fused ones follow as before."""
    found = conditions(conn, f)
    if found is None or not nearest:
        return hits
    marks = ",".join("?" * len(nearest))
    allowed = {
        r[0]
        for r in conn.execute(
            f"SELECT n.id FROM nodes AS n WHERE n.id IN ({marks}) AND {found.sql}", (*nearest, *found.args)
        )
    }
    vector = [n for n in nearest if n in allowed]
    fused: dict[int, float] = {}
    for ranking in (hits.ids, vector):
        for rank, n in enumerate(ranking, 1):
            fused[n] = fused.get(n, 0.0) + 1.0 / (RRF_K + rank)
    order = sorted(fused, key=lambda n: (-fused[n], -n))
    extra = [n for n in vector if n not in hits.ids]
    lexical = set()
    if extra and match is not None:  # already counted among the lexical matches past the top?
        marks = ",".join("?" * len(extra))
        lexical = {
            r[0]
            for r in conn.execute(
                f"SELECT rowid FROM fts WHERE fts MATCH ? AND rowid IN ({marks})", (match, *extra)
            )
        }
    total = hits.total + len([n for n in extra if n not in lexical])
    return Hits(order, [round(fused[n], 6) for n in order], total, hits.rest, len(hits.ids), set(order))
