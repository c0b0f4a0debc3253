"""The memory's SQLite file: its tables, and opening it safely.

One file, `memory.db` in the data dir, in WAL mode with `synchronous=FULL`: a change is on disk
when its COMMIT returns, so a `kill -9` (or a power cut) after an acknowledged REMEMBER loses
nothing, and readers (queries, `memory export`, `memory stats`) never wait for the writer.

Node ids are the table's integer keys, shown as `mem-<n>`, as the JSON store showed them. The
full-text index (`fts`) holds each node's name, text and aliases under the node's id, folded for
case and accents by the unicode61 tokenizer, with prefix indexes for as-you-type queries.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from phoneuse_runtime.util.files import StateFileError, private_sqlite

SCHEMA_VERSION = 1
DB_FILE = "memory.db"
REMEDY = (
    "move it aside (with its -wal and -shm files) or delete it (the memory then starts empty), "
    "or restore it from `phoneuse-runtime memory export`, then start the server again"
)

SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE nodes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,  -- an id is never given twice
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    text TEXT NOT NULL DEFAULT '',
    attrs TEXT NOT NULL DEFAULT '{}',
    created_ms INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL
);
CREATE INDEX nodes_kind ON nodes (kind, updated_ms);
CREATE INDEX nodes_updated ON nodes (updated_ms);
CREATE TABLE tags (node INTEGER NOT NULL, tag TEXT NOT NULL, pos INTEGER NOT NULL,
    PRIMARY KEY (node, tag)) WITHOUT ROWID;
CREATE INDEX tags_tag ON tags (tag);
CREATE TABLE sources (node INTEGER NOT NULL, source TEXT NOT NULL,
    PRIMARY KEY (node, source)) WITHOUT ROWID;
CREATE INDEX sources_source ON sources (source);
-- What identifies a node across sources: tel:+15550001111, email:ann@x.org, contact:3, sms:12, app:com.x
CREATE TABLE keys (key TEXT PRIMARY KEY, node INTEGER NOT NULL) WITHOUT ROWID;
CREATE INDEX keys_node ON keys (node);
CREATE TABLE aliases (node INTEGER NOT NULL, alias TEXT NOT NULL,
    PRIMARY KEY (node, alias)) WITHOUT ROWID;
CREATE TABLE edges (
    id INTEGER PRIMARY KEY,
    relation TEXT NOT NULL,
    src INTEGER NOT NULL,
    dst INTEGER NOT NULL,
    ts INTEGER NOT NULL,
    weight INTEGER NOT NULL DEFAULT 1,
    attrs TEXT NOT NULL DEFAULT '{}'
);
CREATE UNIQUE INDEX edges_src ON edges (src, relation, dst);
CREATE INDEX edges_dst ON edges (dst, relation);
-- A merge of `merged` into `kept`, with what `merged` was, so that it can be undone.
CREATE TABLE merges (id INTEGER PRIMARY KEY, kept INTEGER NOT NULL, merged INTEGER NOT NULL,
    ts INTEGER NOT NULL, record TEXT NOT NULL);
CREATE INDEX merges_kept ON merges (kept);
CREATE VIRTUAL TABLE fts USING fts5 (
    name, text, aliases, tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3'
);
-- Semantic search (embeddings.py): a unit vector per node, and what it was made from.
CREATE TABLE vectors (node INTEGER PRIMARY KEY, digest TEXT NOT NULL, vec BLOB NOT NULL);
-- BM25 with the name weighing 10, aliases 5, the text 1: `ORDER BY rank` uses it.
INSERT INTO fts (fts, rank) VALUES ('rank', 'bm25(10.0, 1.0, 5.0)');
"""


def connect(path: Path, *, readonly: bool = False) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit), WAL, synchronous=FULL.
    A file that is not this memory is StateFileError, with what to do about it."""
    if readonly:
        conn = sqlite3.connect(
            f"file:{path}?mode=ro", uri=True, isolation_level=None, timeout=30, check_same_thread=False
        )
    else:
        private_sqlite(path)  # 0600, and so its -wal and -shm: contacts and messages
        conn = sqlite3.connect(path, isolation_level=None, timeout=30, check_same_thread=False)
    try:
        conn.execute("PRAGMA busy_timeout = 30000")
        if not readonly:
            conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = FULL")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise StateFileError(path, f"not a memory database ({exc})", REMEDY) from None
    if version == 0 and not tables and not readonly:
        conn.executescript(f"BEGIN; {SCHEMA} PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;")
    elif version != SCHEMA_VERSION or "nodes" not in tables:
        conn.close()
        problem = (
            f"a memory database of a newer version ({version})"
            if version > SCHEMA_VERSION
            else "not a memory database (its tables are not the memory's)"
        )
        raise StateFileError(path, problem, REMEDY)
    return conn


def check(conn: sqlite3.Connection, path: Path) -> None:
    """A cheap integrity check at start-up: the pages the schema and the first rows need.
    A damaged file is StateFileError, never a silent reset."""
    try:
        problems = [r[0] for r in conn.execute("PRAGMA quick_check(1)")]
    except sqlite3.DatabaseError as exc:
        raise StateFileError(path, f"a damaged memory database ({exc})", REMEDY) from None
    if problems != ["ok"]:
        raise StateFileError(path, f"a damaged memory database ({problems[0]})", REMEDY)
