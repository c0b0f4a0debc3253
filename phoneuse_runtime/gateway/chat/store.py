"""The chat's tables in the gateway database: channels, messages (with a full-text index), the
message.send requests already answered, and read receipts. Plain functions of a
`sqlite3.Connection`, run on the database thread (`GatewayDb.run`).

Scopes. A message lives in a scope `(chat_id, thread_id)`: `chat_id` is always a channel that
is not a thread, and `thread_id` is None or a thread within it. A thread made with
`channel.create` is a channel of kind `thread` with a parent channel, and an app may name it
either way (`chat_id` = the thread's id, or `chat_id` = its parent and `thread_id` = the
thread's id); `resolve` turns both into the one canonical scope, and the server's frames carry
that. The schema's envelope `thread_id` is also "a thread scope within a chat_id" that nobody
created (a platform's topic, the agent's own): a `thread_id` that names no channel is such a
scope, kept as given. Only chats must exist: a `thread_id` naming a channel that is not a thread
of this chat is `not_found`.
"""

from __future__ import annotations

import json
import re
import secrets
import sqlite3
from dataclasses import dataclass, field, replace
from typing import Any

from phoneuse_runtime.gateway.db import transaction
from phoneuse_runtime.gateway.errors import GatewayError
from phoneuse_runtime.kernel.events import now_ms
from phoneuse_runtime.owner.privacy import mask_secrets

DEFAULT_CHAT_ID = "android:default"
DEFAULT_NAME = "Android"
RESEND_WINDOW_MS = 24 * 60 * 60 * 1000  # a message.send resent within it is not stored twice
SEARCH_HITS = 50

DDL = """
CREATE TABLE IF NOT EXISTS chat_channels (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    chat_id TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    parent_chat_id TEXT,
    is_default INTEGER NOT NULL DEFAULT 0,
    created_ms INTEGER NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS chat_channels_one_default ON chat_channels (is_default)
    WHERE is_default = 1;
CREATE TABLE IF NOT EXISTS chat_messages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    message_id TEXT NOT NULL UNIQUE,
    chat_id TEXT NOT NULL,
    thread_id TEXT,
    role TEXT NOT NULL,
    text TEXT NOT NULL,
    reasoning TEXT,
    model TEXT,
    tokens INTEGER,
    reply_to TEXT,
    media TEXT NOT NULL DEFAULT '[]',
    pairing_id TEXT,
    device_id TEXT,
    ts INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS chat_messages_scope ON chat_messages (chat_id, thread_id, seq);
CREATE VIRTUAL TABLE IF NOT EXISTS chat_messages_fts USING fts5(
    text, content = 'chat_messages', content_rowid = 'seq', tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS chat_messages_fts_insert AFTER INSERT ON chat_messages BEGIN
    INSERT INTO chat_messages_fts (rowid, text) VALUES (new.seq, new.text);
END;
CREATE TRIGGER IF NOT EXISTS chat_messages_fts_delete AFTER DELETE ON chat_messages BEGIN
    INSERT INTO chat_messages_fts (chat_messages_fts, rowid, text) VALUES ('delete', old.seq, old.text);
END;
-- The UTF-8 bytes the messages hold (text, reasoning, media references), kept by triggers: the
-- quota (`enforce_quota`) reads it without a scan.
CREATE TABLE IF NOT EXISTS chat_usage (id INTEGER PRIMARY KEY CHECK (id = 1), bytes INTEGER NOT NULL);
INSERT OR IGNORE INTO chat_usage (id, bytes) SELECT 1, coalesce(sum(
    length(CAST(text AS BLOB)) + coalesce(length(CAST(reasoning AS BLOB)), 0) + length(CAST(media AS BLOB))
), 0) FROM chat_messages;
CREATE TRIGGER IF NOT EXISTS chat_usage_insert AFTER INSERT ON chat_messages BEGIN
    UPDATE chat_usage SET bytes = bytes + length(CAST(new.text AS BLOB))
        + coalesce(length(CAST(new.reasoning AS BLOB)), 0) + length(CAST(new.media AS BLOB));
END;
CREATE TRIGGER IF NOT EXISTS chat_usage_delete AFTER DELETE ON chat_messages BEGIN
    UPDATE chat_usage SET bytes = bytes - length(CAST(old.text AS BLOB))
        - coalesce(length(CAST(old.reasoning AS BLOB)), 0) - length(CAST(old.media AS BLOB));
END;
CREATE TABLE IF NOT EXISTS chat_sends (
    pairing_id TEXT NOT NULL,
    request_id INTEGER NOT NULL,
    digest TEXT NOT NULL,
    message_id TEXT NOT NULL,
    created_ms INTEGER NOT NULL,
    PRIMARY KEY (pairing_id, request_id, digest)
);
CREATE INDEX IF NOT EXISTS chat_sends_age ON chat_sends (created_ms);
CREATE TABLE IF NOT EXISTS chat_reads (
    scope_id TEXT PRIMARY KEY,
    message_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    ts INTEGER NOT NULL
);
"""


def create_tables(conn: sqlite3.Connection) -> None:
    conn.executescript(f"BEGIN IMMEDIATE; {DDL} COMMIT;")  # usage counted once, with its triggers
    with transaction(conn):
        # The built-in default, once: after that there is always a default (it cannot be deleted).
        if conn.execute("SELECT 1 FROM chat_channels LIMIT 1").fetchone() is None:
            conn.execute(
                "INSERT INTO chat_channels (chat_id, name, kind, is_default, created_ms) "
                "VALUES (?, ?, 'default', 1, ?)",
                (DEFAULT_CHAT_ID, DEFAULT_NAME, now_ms()),
            )
    # The media table lives with the media code, in the same file.
    from phoneuse_runtime.gateway.chat.media_store import create_tables as create_media_tables

    create_media_tables(conn)


# Channels


@dataclass(frozen=True)
class Scope:
    chat_id: str
    thread_id: str | None = None

    @property
    def scope_id(self) -> str:
        """The channel this scope is: the thread, or the chat."""
        return self.thread_id or self.chat_id


def channel_dict(row: sqlite3.Row, last_read: str | None = None) -> dict[str, Any]:
    """A channel as the schema's `channel` (plus `last_read_message_id`, the owner's receipt)."""
    out: dict[str, Any] = {
        "chat_id": row["chat_id"],
        "name": row["name"],
        "kind": row["kind"],
        "parent_chat_id": row["parent_chat_id"],
        "is_default": bool(row["is_default"]),
    }
    if last_read is not None:
        out["last_read_message_id"] = last_read
    return out


def list_channels(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    rows = conn.execute(
        "SELECT c.*, r.message_id AS last_read FROM chat_channels c "
        "LEFT JOIN chat_reads r ON r.scope_id = c.chat_id ORDER BY c.seq"
    ).fetchall()
    return [channel_dict(row, row["last_read"]) for row in rows]


def get_channel(conn: sqlite3.Connection, chat_id: str) -> sqlite3.Row | None:
    row: sqlite3.Row | None = conn.execute(
        "SELECT * FROM chat_channels WHERE chat_id = ?", (chat_id,)
    ).fetchone()
    return row


def default_chat_id(conn: sqlite3.Connection) -> str:
    row = conn.execute("SELECT chat_id FROM chat_channels WHERE is_default = 1").fetchone()
    return str(row["chat_id"]) if row is not None else DEFAULT_CHAT_ID


def resolve(conn: sqlite3.Connection, chat_id: str | None, thread_id: str | None) -> Scope:
    """The canonical scope a request names (see the module docstring): the default channel when
    it names no chat; `not_found` for a chat that does not exist, or a thread (channel) that is
    not the chat's."""
    chat_id, thread_id = chat_id or None, thread_id or None  # an empty id names nothing: the default
    thread = get_channel(conn, thread_id) if thread_id is not None else None
    if thread is not None and thread["kind"] != "thread":
        raise GatewayError("not_found", f"no thread {thread_id!r}: that is a channel")
    if chat_id is None:
        if thread is not None:
            return Scope(str(thread["parent_chat_id"]), thread_id)
        chat_id = default_chat_id(conn)
    chat = get_channel(conn, chat_id)
    if chat is None:
        raise GatewayError("not_found", f"no chat {chat_id!r}")
    if chat["kind"] == "thread":
        if thread_id is not None and thread_id != chat_id:
            raise GatewayError("not_found", f"{chat_id!r} is a thread, and has no thread {thread_id!r}")
        return Scope(str(chat["parent_chat_id"]), chat_id)
    if thread is not None and thread["parent_chat_id"] != chat_id:
        raise GatewayError("not_found", f"chat {chat_id!r} has no thread {thread_id!r}")
    return Scope(chat_id, thread_id)


def create_channel(conn: sqlite3.Connection, name: str, parent_chat_id: str | None) -> dict[str, Any]:
    """A new channel, or a thread of `parent_chat_id` (which must be a channel, not a thread)."""
    with transaction(conn):
        if parent_chat_id is not None:
            parent = get_channel(conn, parent_chat_id)
            if parent is None:
                raise GatewayError("not_found", f"no chat {parent_chat_id!r}")
            if parent["kind"] == "thread":
                raise GatewayError("unsupported", "a thread cannot have threads of its own")
        kind = "thread" if parent_chat_id is not None else "channel"
        chat_id = f"android:{'thread' if parent_chat_id else 'chan'}_{secrets.token_hex(6)}"
        conn.execute(
            "INSERT INTO chat_channels (chat_id, name, kind, parent_chat_id, created_ms) "
            "VALUES (?, ?, ?, ?, ?)",
            (chat_id, name, kind, parent_chat_id, now_ms()),
        )
        row = get_channel(conn, chat_id)
    assert row is not None
    return channel_dict(row)


def rename_channel(conn: sqlite3.Connection, chat_id: str, name: str) -> None:
    if conn.execute("UPDATE chat_channels SET name = ? WHERE chat_id = ?", (name, chat_id)).rowcount == 0:
        raise GatewayError("not_found", f"no chat {chat_id!r}")


def set_default(conn: sqlite3.Connection, chat_id: str) -> bool:
    """Makes `chat_id` the default channel; False when it already was."""
    with transaction(conn):
        row = get_channel(conn, chat_id)
        if row is None:
            raise GatewayError("not_found", f"no chat {chat_id!r}")
        if row["kind"] == "thread":
            raise GatewayError("unsupported", "a thread cannot be the default channel; pick a channel")
        if row["is_default"]:
            return False
        conn.execute("UPDATE chat_channels SET is_default = 0 WHERE is_default = 1")
        conn.execute("UPDATE chat_channels SET is_default = 1 WHERE chat_id = ?", (chat_id,))
    return True


def delete_channel(conn: sqlite3.Connection, chat_id: str) -> list[str]:
    """Deletes a channel with its threads, their messages and read receipts; the ids deleted
    (the channel first). The default channel, or a channel whose thread is the default (never
    the case today), is refused."""
    with transaction(conn):
        row = get_channel(conn, chat_id)
        if row is None:
            raise GatewayError("not_found", f"no chat {chat_id!r}")
        if row["is_default"]:
            raise GatewayError(
                "unsupported",
                "the default channel cannot be deleted: there is always one; "
                "make another channel the default first (channel.set_default)",
            )
        threads = [
            str(r["chat_id"])
            for r in conn.execute("SELECT chat_id FROM chat_channels WHERE parent_chat_id = ?", (chat_id,))
        ]
        ids = [chat_id, *threads]
        rows = [(i,) for i in ids]
        conn.executemany("DELETE FROM chat_messages WHERE thread_id = ?", rows)
        conn.executemany("DELETE FROM chat_messages WHERE chat_id = ?", rows)
        conn.executemany("DELETE FROM chat_reads WHERE scope_id = ?", rows)
        conn.executemany("DELETE FROM chat_channels WHERE chat_id = ?", rows)
    return ids


# Messages


@dataclass(frozen=True)
class StoredMessage:
    """One stored message. `payload()` is its `message` frame's payload."""

    seq: int
    message_id: str
    chat_id: str
    thread_id: str | None
    role: str
    text: str
    ts: int
    reasoning: str | None = None
    model: str | None = None
    tokens: int | None = None
    reply_to: str | None = None
    media: list[dict[str, Any]] = field(default_factory=list)
    pairing_id: str | None = None  # the device that sent it (a user message): its pairing,
    device_id: str | None = None  # and what the app calls itself

    @property
    def scope(self) -> Scope:
        return Scope(self.chat_id, self.thread_id)

    def payload(self) -> dict[str, Any]:
        out: dict[str, Any] = {"message_id": self.message_id, "role": self.role, "text": self.text}
        for key in ("reasoning", "model", "tokens", "reply_to"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        if self.media:
            out["media"] = self.media
        out["ts"] = self.ts
        return out

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> StoredMessage:
        return cls(
            seq=row["seq"],
            message_id=row["message_id"],
            chat_id=row["chat_id"],
            thread_id=row["thread_id"],
            role=row["role"],
            text=row["text"],
            ts=row["ts"],
            reasoning=row["reasoning"],
            model=row["model"],
            tokens=row["tokens"],
            reply_to=row["reply_to"],
            media=json.loads(row["media"]),
            pairing_id=row["pairing_id"],
            device_id=row["device_id"],
        )


def new_message_id() -> str:
    return f"msg_{secrets.token_hex(8)}"


@dataclass(frozen=True)
class Draft:
    """A message as it is about to be stored: what it says, and who sent it (a user's device)."""

    role: str
    text: str
    message_id: str | None = None  # a new one when None
    reasoning: str | None = None
    model: str | None = None
    tokens: int | None = None
    reply_to: str | None = None
    media: list[dict[str, Any]] = field(default_factory=list)
    pairing_id: str | None = None
    device_id: str | None = None


def insert_message(conn: sqlite3.Connection, scope: Scope, draft: Draft) -> StoredMessage:
    """Stores one message (in the caller's transaction, if any). A `message_id` already taken is
    a ValueError: a message id never names two contents.

    Its text and reasoning are stored masked (phoneuse_runtime/owner/privacy.py: one-time codes and
    passwords), and so are what `history` and `search` give back later; the message returned
    (what the live frames and the listeners get, once) says what was sent."""
    message_id = draft.message_id or new_message_id()
    try:
        cursor = conn.execute(
            "INSERT INTO chat_messages (message_id, chat_id, thread_id, role, text, reasoning, model, "
            "tokens, reply_to, media, pairing_id, device_id, ts) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                message_id,
                scope.chat_id,
                scope.thread_id,
                draft.role,
                mask_secrets(draft.text),
                None if draft.reasoning is None else mask_secrets(draft.reasoning),
                draft.model,
                draft.tokens,
                draft.reply_to,
                json.dumps(draft.media, separators=(",", ":")),
                draft.pairing_id,
                draft.device_id,
                now_ms(),
            ),
        )
    except sqlite3.IntegrityError:
        raise ValueError(f"message id {message_id!r} is taken") from None
    stored = get_message(conn, message_id)
    assert stored is not None and stored.seq == cursor.lastrowid
    return replace(stored, text=draft.text, reasoning=draft.reasoning)


def usage(conn: sqlite3.Connection) -> int:
    """The UTF-8 bytes the stored messages hold (text, reasoning, media references)."""
    row = conn.execute("SELECT bytes FROM chat_usage WHERE id = 1").fetchone()
    return int(row["bytes"]) if row is not None else 0


_SIZE = (
    "length(CAST(text AS BLOB)) + coalesce(length(CAST(reasoning AS BLOB)), 0) + length(CAST(media AS BLOB))"
)


def enforce_quota(conn: sqlite3.Connection, *, max_bytes: int, retention_days: int) -> int:
    """Deletes the oldest messages (with their index rows) until the rest hold at most
    `max_bytes`, and those older than `retention_days` (0: no age limit); the newest message
    always stays. Returns how many went. Run it in the transaction that stored a message."""
    newest = conn.execute("SELECT MAX(seq) AS seq FROM chat_messages").fetchone()["seq"]
    if newest is None:
        return 0
    dropped = 0
    if retention_days > 0:
        cutoff_ms = now_ms() - retention_days * 86_400_000
        dropped += conn.execute(
            "DELETE FROM chat_messages WHERE ts < ? AND seq < ?", (cutoff_ms, newest)
        ).rowcount
    over = usage(conn) - max_bytes
    if over <= 0:
        return dropped
    cutoff, freed = None, 0
    for row in conn.execute(
        "SELECT seq, length(CAST(text AS BLOB)) + coalesce(length(CAST(reasoning AS BLOB)), 0) "
        "+ length(CAST(media AS BLOB)) AS size FROM chat_messages WHERE seq < ? ORDER BY seq",
        (newest,),
    ):
        cutoff, freed = row["seq"], freed + row["size"]
        if freed >= over:
            break
    if cutoff is not None:
        dropped += conn.execute("DELETE FROM chat_messages WHERE seq <= ?", (cutoff,)).rowcount
    return dropped


def get_message(conn: sqlite3.Connection, message_id: str) -> StoredMessage | None:
    row = conn.execute("SELECT * FROM chat_messages WHERE message_id = ?", (message_id,)).fetchone()
    return StoredMessage.from_row(row) if row is not None else None


def answered_send(
    conn: sqlite3.Connection, pairing_id: str, request_id: int, digest: str
) -> StoredMessage | None:
    """The message a resend of this request was stored as, within the resend window."""
    row = conn.execute(
        "SELECT m.* FROM chat_sends s JOIN chat_messages m ON m.message_id = s.message_id "
        "WHERE s.pairing_id = ? AND s.request_id = ? AND s.digest = ? AND s.created_ms >= ?",
        (pairing_id, request_id, digest, now_ms() - RESEND_WINDOW_MS),
    ).fetchone()
    return StoredMessage.from_row(row) if row is not None else None


def record_send(
    conn: sqlite3.Connection, pairing_id: str, request_id: int, digest: str, message_id: str
) -> None:
    now = now_ms()
    conn.execute("DELETE FROM chat_sends WHERE created_ms < ?", (now - RESEND_WINDOW_MS,))
    conn.execute(
        "INSERT OR REPLACE INTO chat_sends (pairing_id, request_id, digest, message_id, created_ms) "
        "VALUES (?, ?, ?, ?, ?)",
        (pairing_id, request_id, digest, message_id, now),
    )


def history_page(
    conn: sqlite3.Connection, scope: Scope, before_message_id: str | None, limit: int
) -> tuple[list[StoredMessage], bool]:
    """The `limit` newest messages of the scope older than `before_message_id`, oldest first,
    and whether there are older ones still."""
    before_seq = None
    if before_message_id is not None:
        before = get_message(conn, before_message_id)
        if before is None or before.scope != scope:
            raise GatewayError("not_found", f"no message {before_message_id!r} in this chat")
        before_seq = before.seq
    rows = conn.execute(
        "SELECT * FROM chat_messages WHERE chat_id = ? AND thread_id IS ? AND (? IS NULL OR seq < ?) "
        "ORDER BY seq DESC LIMIT ?",
        (scope.chat_id, scope.thread_id, before_seq, before_seq, limit + 1),
    ).fetchall()
    page = [StoredMessage.from_row(r) for r in rows[:limit]]
    page.reverse()
    return page, len(rows) > limit


_WORD = re.compile(r"\w+", re.UNICODE)


def fts_query(text: str) -> str | None:
    """The user's words as an FTS5 query that matches messages holding all of them (the last as
    a prefix, for search as you type), with none of FTS5's syntax let through: a query is
    never an error. None when it has no words."""
    words = _WORD.findall(text)
    if not words:
        return None
    quoted = [f'"{w}"' for w in words]
    quoted[-1] += "*"
    return " ".join(quoted)


def search(conn: sqlite3.Connection, query: str, within: Scope | None) -> list[dict[str, Any]]:
    """Messages that hold every word of `query`, best match first; `within` a chat (with its
    threads) or a thread, when given."""
    match = fts_query(query)
    if match is None:
        return []
    chat_id = within.chat_id if within is not None else None
    thread_id = within.thread_id if within is not None else None
    rows = conn.execute(
        "SELECT m.message_id, m.chat_id, m.thread_id, m.role, m.ts, "
        "snippet(chat_messages_fts, 0, '', '', '…', 16) AS snippet "
        "FROM chat_messages_fts JOIN chat_messages m ON m.seq = chat_messages_fts.rowid "
        "WHERE chat_messages_fts MATCH ? AND (? IS NULL OR m.chat_id = ?) AND (? IS NULL OR m.thread_id = ?) "
        "ORDER BY rank, m.seq DESC LIMIT ?",
        (match, chat_id, chat_id, thread_id, thread_id, SEARCH_HITS),
    ).fetchall()
    return [
        {
            "message_id": r["message_id"],
            "chat_id": r["chat_id"],
            "thread_id": r["thread_id"],
            "role": r["role"],
            "snippet": r["snippet"],
            "ts": r["ts"],
        }
        for r in rows
    ]


def store_read(conn: sqlite3.Connection, message: StoredMessage) -> bool:
    """Moves the owner's read receipt of the message's scope to it; False (nothing stored) when
    the receipt is already there or further on: receipts never move backwards."""
    cursor = conn.execute(
        "INSERT INTO chat_reads (scope_id, message_id, seq, ts) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (scope_id) DO UPDATE SET message_id = excluded.message_id, seq = excluded.seq, "
        "ts = excluded.ts WHERE excluded.seq > chat_reads.seq",
        (message.scope.scope_id, message.message_id, message.seq, now_ms()),
    )
    return cursor.rowcount > 0
