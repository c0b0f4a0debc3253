"""Pairings: one token per app device, stored only hashed, in the gateway's database.

Two ways in:
- the host issues a token (`pair new`), shown once, for the app to scan;
- the app brings its own token: its first `hello` makes a pending request with a pairing code,
  which the owner approves (`pair approve CODE`) or denies within `PENDING_TTL_MS`.

A pending request belongs to the token that made it, not to its `device_id` (which the app
chooses, and any app can say): only that token is ever shown its code, a hello with another
token and the same `device_id` makes a request of its own (with its own code), and approving a
code pairs that request's token and no other. The owner approves the code their app shows.

A token is found by its `lookup` column, an indexed SHA-256 of the token under a fixed key:
tokens carry at least 128 bits (`token_problem`), so an unsalted hash of one gives nothing away
and no hello scans the rows. Each row also keeps the salted hash it always had, checked with
`hmac.compare_digest` once the row is found. Rows from older versions have no `lookup` yet;
they are checked the old way, and get one the first time their token says hello.

What unauthenticated hellos can cost is bounded: a token that opens nothing is a guess, and
the whole gateway has `GuessBudget` of them per window (a paired or pending token is never
counted, and always looked up); at most `max_pending` requests wait at once.

The store works on a plain `sqlite3.Connection`, so the CLI uses it on the data dir while the
server runs, and the server through `GatewayDb.run`. Every change is one transaction: an
approve is either wholly applied or not at all.

Expiry is read defensively: a pairing is permanent only when its `permanent` column is exactly
1; otherwise an `expires_ms` that is not an integer counts as expired (never as permanent).
"""

from __future__ import annotations

import collections
import hashlib
import hmac
import re
import secrets
import sqlite3
import string
import time
from dataclasses import dataclass
from typing import Any

from phoneuse_runtime.gateway.db import transaction
from phoneuse_runtime.gateway.errors import ErrorCode
from phoneuse_runtime.kernel.events import now_ms

PENDING_TTL_MS = 10 * 60 * 1000
DAY_MS = 24 * 60 * 60 * 1000
MIN_TOKEN_BITS = 128  # an app's own token must carry as many as ours (256) nearly
BASE64URL = frozenset(string.ascii_letters + string.digits + "-_")
HEX_LOWER, HEX_UPPER = frozenset("0123456789abcdef"), frozenset("0123456789ABCDEF")
TOKEN_RULE = "".join(  # a rule, not a secret
    (
        "an app's own token must carry at least 128 bits: 22 or more base64url characters ",
        "(A-Z a-z 0-9 - _) or 32 or more hex digits, from a random generator",
    )
)
PAIR_NEW = "`phoneuse-runtime pair new` (a token to scan, never held back by a flood of hellos)"
_LOOKUP_KEY = b"phoneuse-runtime gateway token lookup v1\x00"
# No look-alikes: none of 0/O, 1/I/L, 2/Z, 5/S, 8/B, U/V.
CODE_ALPHABET = "ACDEFGHJKMNPQRTWXY34679"

PAIRINGS_DDL = """
CREATE TABLE IF NOT EXISTS pairings (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    device_id TEXT NOT NULL DEFAULT '',
    salt BLOB NOT NULL,
    token_hash BLOB NOT NULL,
    created_ms INTEGER NOT NULL,
    permanent INTEGER NOT NULL DEFAULT 0,
    expires_ms INTEGER,
    revoked_ms INTEGER,
    last_seen_ms INTEGER,
    lookup BLOB
)"""
REQUESTS_DDL = """
CREATE TABLE IF NOT EXISTS {table} (
    code TEXT PRIMARY KEY,
    device_id TEXT NOT NULL,
    name TEXT NOT NULL,
    salt BLOB NOT NULL,
    token_hash BLOB NOT NULL,
    created_ms INTEGER NOT NULL,
    expires_ms INTEGER NOT NULL,
    lookup BLOB
)"""
INDEXES = (
    "CREATE UNIQUE INDEX IF NOT EXISTS pairings_lookup ON pairings (lookup)",
    "CREATE UNIQUE INDEX IF NOT EXISTS pairing_requests_lookup ON pairing_requests (lookup)",
    "CREATE INDEX IF NOT EXISTS pairing_requests_expiry ON pairing_requests (expires_ms)",
)


class PairingNotFound(Exception):
    """No pairing or pending request has that id or code (CLI: `NOT_FOUND`, exit 3)."""


class AuthRefused(Exception):
    """A `hello` whose token opens nothing; the message is safe to show the app, `code` is the
    error frame's (`auth`, or `rate_limited` past a budget or cap)."""

    def __init__(self, message: str, *, code: ErrorCode = "auth") -> None:
        super().__init__(message)
        self.code: ErrorCode = code


class GuessBudget:
    """Failed guesses (hellos whose token opens nothing) for the whole gateway, in a sliding
    window. Not per address: every app on a phone is 127.0.0.1, and any of them can bind
    another 127/8 address. Used on the database thread only."""

    def __init__(self, allowed: int, window_s: float) -> None:
        self.allowed = allowed
        self.window_s = window_s
        self._times: collections.deque[float] = collections.deque()

    def spend(self) -> bool:
        """Counts one guess; False (and not counted) once the window's budget is spent."""
        now = time.monotonic()
        while self._times and self._times[0] <= now - self.window_s:
            self._times.popleft()
        if len(self._times) >= self.allowed:
            return False
        self._times.append(now)
        return True


# The common shapes of a generated token, besides a bare random body: a UUID (its 32 hex digits
# are the body) and a short word before the body ("app-", "sk_live_", "iris:"), which carries
# nothing and is set aside.
_UUID = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|"
    r"[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}"
)
_PREFIX = re.compile(r"[A-Za-z][A-Za-z0-9]{0,15}[-_.:]")
_PREFIX_CHARS = frozenset(string.ascii_letters + string.digits + "-_.:")


def _bodies(token: str) -> list[str]:
    """The random bodies `token` may be, in its common shapes: itself; the hex digits of a UUID;
    what follows one, two or three short words ending in `-`, `_`, `.` or `:`."""
    bodies = [token]
    rest = token
    for _ in range(3):
        word = _PREFIX.match(rest)
        if word is None:
            break
        rest = rest[word.end() :]
        bodies.append(rest)
    return [b.replace("-", "") if _UUID.fullmatch(b) else b for b in bodies]


# A random body nearly always mixes two of these (one kind only: about 1 in 40 million for
# 22 base64url characters, 1 in 3 million for 32 hex digits).
_KINDS = (frozenset(string.ascii_lowercase), frozenset(string.ascii_uppercase), frozenset(string.digits))


def _body_problem(body: str) -> str | None:
    """Why `body` does not look like a random base64url or hex string of 128 bits, or None."""
    if not body or not set(body) <= BASE64URL:
        return f"{TOKEN_RULE}; this one has other characters"
    chars = set(body)
    hexadecimal = chars <= HEX_LOWER or chars <= HEX_UPPER
    alphabet, bits = (16, 4) if hexadecimal else (64, 6)
    if len(body) * bits < MIN_TOKEN_BITS:
        return f"{TOKEN_RULE}; this one is {len(body)} characters"
    head = body[:33]
    pairs = [head[i : i + 2] for i in range(len(head) - 1)]
    steps = collections.Counter(ord(pair[1]) - ord(pair[0]) for pair in pairs)
    kinds = sum(1 for kind in _KINDS if chars & kind)
    if (
        len(chars) < min(len(body), alphabet) // 2
        or len(set(pairs)) * 2 < len(pairs)
        or max(steps.values()) * 2 > len(pairs)
        or kinds < 2
    ):
        return f"{TOKEN_RULE}; this one repeats itself like no random token does"
    return None


def token_problem(token: str) -> str | None:
    """Why an app's own token cannot be trusted to carry 128 bits, or None.

    One token says little about the generator it came from, so this is a screen against typed,
    constant and patterned tokens, not a proof. The token is read in its common shapes
    (`_bodies`: bare, a UUID, a short word and a body) and passes when one of its bodies does:
    base64url (or hex) only, enough characters for 128 bits at 6 (or 4) bits each (a UUID's 32
    hex digits count 128, for its 122 random bits), at least half as many distinct characters as
    a random one nearly always has, two of lower case, upper case and digits (`_KINDS`), and
    over its first 33 characters, half the pairs of neighbours distinct and no one step
    between neighbours in more than half (two thirds and a third, as they were, refused about one
    random hex token in 100,000)."""
    if not token or not set(token) <= _PREFIX_CHARS:
        return f"{TOKEN_RULE}; this one has other characters"
    problems = [_body_problem(body) for body in _bodies(token)]
    return None if None in problems else problems[0]


def _hash(salt: bytes, token: str) -> bytes:
    return hashlib.sha256(salt + token.encode()).digest()


def _lookup(token: str) -> bytes:
    return hashlib.sha256(_LOOKUP_KEY + token.encode()).digest()


def _matches(row: sqlite3.Row, token: str) -> bool:
    return hmac.compare_digest(_hash(bytes(row["salt"]), token), bytes(row["token_hash"]))


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {str(r[1]) for r in conn.execute(f"PRAGMA table_info({table})")}


_FIND = {  # per table: by lookup; the rows of an older version without one; giving one its lookup
    table: (
        f"SELECT * FROM {table} WHERE lookup = ?",  # noqa: S608 (fixed table names)
        f"SELECT rowid, * FROM {table} WHERE lookup IS NULL",  # noqa: S608
        f"UPDATE {table} SET lookup = ? WHERE rowid = ?",  # noqa: S608
    )
    for table in ("pairings", "pairing_requests")
}


def _find(conn: sqlite3.Connection, table: str, token: str) -> sqlite3.Row | None:
    """The row of `table` whose token this is: by its lookup, else among the rows of an older
    version that have none yet (which then get theirs)."""
    by_lookup, without_lookup, set_lookup = _FIND[table]
    key = _lookup(token)
    row: sqlite3.Row | None = conn.execute(by_lookup, (key,)).fetchone()
    if row is not None:
        return row if _matches(row, token) else None
    old: sqlite3.Row
    for old in conn.execute(without_lookup).fetchall():
        if _matches(old, token):
            conn.execute(set_lookup, (key, old["rowid"]))
            return old
    return None


def new_code() -> str:
    chars = "".join(secrets.choice(CODE_ALPHABET) for _ in range(8))
    return f"{chars[:4]}-{chars[4:]}"


def normalize_code(code: str) -> str:
    """What the owner typed, as stored: case and a missing dash forgiven."""
    chars = code.strip().upper().replace("-", "").replace(" ", "")
    return f"{chars[:4]}-{chars[4:]}" if len(chars) == 8 else chars


@dataclass(frozen=True)
class Issued:
    pairing_id: str
    token: str
    expires_at: int | None  # epoch ms; None when permanent


@dataclass(frozen=True)
class Pairing:
    """A paired app device, as `pair list` shows it."""

    id: str
    name: str
    device_id: str
    created_ms: int
    permanent: bool
    expires_ms: int | None  # None when permanent, or when the stored expiry cannot be read
    revoked: bool
    last_seen_ms: int | None

    def state(self, now: int) -> str:
        if self.revoked:
            return "revoked"
        if self.permanent:
            return "paired"
        if self.expires_ms is None or self.expires_ms <= now:
            return "expired"
        return "paired"

    def as_json(self, now: int) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": "paired",
            "state": self.state(now),
            "name": self.name,
            "device_id": self.device_id,
            "created_at": self.created_ms,
            "expires_at": None if self.permanent else self.expires_ms,
            "permanent": self.permanent,
            "last_seen": self.last_seen_ms,
        }


@dataclass(frozen=True)
class PendingRequest:
    code: str
    device_id: str
    name: str
    created_ms: int
    expires_ms: int

    def as_json(self, now: int) -> dict[str, Any]:
        return {
            "id": self.code,
            "kind": "pending",
            "state": "pending" if self.expires_ms > now else "expired",
            "name": self.name,
            "device_id": self.device_id,
            "created_at": self.created_ms,
            "expires_at": self.expires_ms,
            "permanent": False,
            "last_seen": None,
        }


def _pairing(row: sqlite3.Row) -> Pairing:
    permanent = row["permanent"] == 1 and not isinstance(row["permanent"], bool)
    expires = row["expires_ms"]
    readable = isinstance(expires, int) and not isinstance(expires, bool)
    last_seen = row["last_seen_ms"]
    return Pairing(
        id=row["id"],
        name=row["name"],
        device_id=row["device_id"],
        created_ms=row["created_ms"],
        permanent=permanent,
        expires_ms=expires if readable else None,
        revoked=row["revoked_ms"] is not None,
        last_seen_ms=last_seen if isinstance(last_seen, int) else None,
    )


def _pending(row: sqlite3.Row) -> PendingRequest:
    return PendingRequest(row["code"], row["device_id"], row["name"], row["created_ms"], row["expires_ms"])


class PairingStore:
    """Pairings and pending requests on one connection (see `db.connect`)."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        *,
        default_ttl_days: int = 30,
        max_pending: int = 32,
        guesses: GuessBudget | None = None,
    ) -> None:
        self.conn = conn
        self.default_ttl_days = default_ttl_days
        self.max_pending = max_pending
        self.guesses = guesses  # None: unbounded (the CLI, which never authenticates)

    @staticmethod
    def create_tables(conn: sqlite3.Connection) -> None:
        """The tables, and a store of an older version brought up to date (its pairings and
        requests kept): a `lookup` column, and requests no longer unique per device_id."""
        with transaction(conn):
            conn.execute(PAIRINGS_DDL)
            if "lookup" not in _columns(conn, "pairings"):
                conn.execute("ALTER TABLE pairings ADD COLUMN lookup BLOB")
            conn.execute(REQUESTS_DDL.format(table="pairing_requests"))
            if "lookup" not in _columns(conn, "pairing_requests"):  # device_id was UNIQUE
                conn.execute(REQUESTS_DDL.format(table="pairing_requests_new"))
                conn.execute(
                    "INSERT INTO pairing_requests_new (code, device_id, name, salt, token_hash, "
                    "created_ms, expires_ms) SELECT code, device_id, name, salt, token_hash, "
                    "created_ms, expires_ms FROM pairing_requests"
                )
                conn.execute("DROP TABLE pairing_requests")
                conn.execute("ALTER TABLE pairing_requests_new RENAME TO pairing_requests")
            for statement in INDEXES:
                conn.execute(statement)

    def _expiry(self, now: int, ttl_days: int | None, permanent: bool) -> tuple[int, int | None]:
        if permanent:
            return 1, None
        days = self.default_ttl_days if ttl_days is None else ttl_days
        if days <= 0:
            raise ValueError("a pairing's TTL is at least one day")
        return 0, now + days * DAY_MS

    def issue(
        self, name: str, *, ttl_days: int | None = None, permanent: bool = False, now: int | None = None
    ) -> Issued:
        """A new pairing with a fresh token (256 bits), which is returned once and never stored."""
        now = now_ms() if now is None else now
        flag, expires = self._expiry(now, ttl_days, permanent)
        token = secrets.token_urlsafe(32)
        salt = secrets.token_bytes(16)
        pairing_id = secrets.token_hex(4)
        with transaction(self.conn) as conn:
            conn.execute(
                "INSERT INTO pairings (id, name, salt, token_hash, lookup, created_ms, permanent, "
                "expires_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (pairing_id, name, salt, _hash(salt, token), _lookup(token), now, flag, expires),
            )
        return Issued(pairing_id, token, expires)

    def authenticate(
        self, token: str, *, device_id: str = "", device_name: str = "", now: int | None = None
    ) -> Pairing:
        """The live pairing this token opens, its last-seen time updated; AuthRefused otherwise.

        A token that waits for approval is told its own pairing code again. An unknown token is
        a guess, refused once the gateway's guess budget is spent; with a `device_id` it makes
        a pending request of its own (if it passes `token_problem` and fewer than `max_pending`
        wait), and the refusal carries that request's code."""
        now = now_ms() if now is None else now
        if not token:
            raise AuthRefused("hello needs a token")
        with transaction(self.conn) as conn:
            row = _find(conn, "pairings", token)
            if row is not None:
                pairing = _pairing(row)
                state = pairing.state(now)
                if state != "paired":
                    raise AuthRefused(f"this token's pairing is {state}; pair the app again")
                # A host-issued token learns which app holds it from its first hello.
                conn.execute(
                    "UPDATE pairings SET last_seen_ms = ?, "
                    "device_id = CASE WHEN device_id = '' THEN ? ELSE device_id END WHERE id = ?",
                    (now, device_id, pairing.id),
                )
                return pairing
            pending = _find(conn, "pairing_requests", token)
            if pending is not None and pending["expires_ms"] > now:
                code = pending["code"]
                raise AuthRefused(f"waiting for the owner's approval; pairing code: {code}", code="auth")
            if self.guesses is not None and not self.guesses.spend():
                message = (
                    "too many failed hellos on this gateway; try again in a minute, or the owner "
                    f"pairs this app at once with {PAIR_NEW}"
                )
                raise AuthRefused(message, code="rate_limited")
            if not device_id:
                raise AuthRefused("unknown token; to ask for pairing, say hello with a device_id")
            problem = token_problem(token)
            if problem:
                raise AuthRefused(problem)
            conn.execute("DELETE FROM pairing_requests WHERE expires_ms <= ?", (now,))
            waiting = int(conn.execute("SELECT COUNT(*) FROM pairing_requests").fetchone()[0])
            if waiting >= self.max_pending:
                message = (
                    f"{waiting} pairing requests already wait for the owner, the most at once; "
                    "ask again once the owner has approved or denied some, or in 10 minutes; "
                    f"or the owner pairs this app at once with {PAIR_NEW}"
                )
                raise AuthRefused(message, code="rate_limited")
            code = self._request(conn, token, device_id, device_name or device_id, now)
        raise AuthRefused(f"unknown token, pairing requested; pairing code: {code}")

    def _request(self, conn: sqlite3.Connection, token: str, device_id: str, name: str, now: int) -> str:
        salt = secrets.token_bytes(16)
        while True:
            code = new_code()
            if conn.execute("SELECT 1 FROM pairing_requests WHERE code = ?", (code,)).fetchone() is None:
                break
        conn.execute(
            "INSERT INTO pairing_requests (code, device_id, name, salt, token_hash, lookup, created_ms, "
            "expires_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (code, device_id, name, salt, _hash(salt, token), _lookup(token), now, now + PENDING_TTL_MS),
        )
        return code

    def approve(
        self, code: str, *, permanent: bool = False, ttl_days: int | None = None, now: int | None = None
    ) -> Pairing:
        """The pending request becomes a pairing with the app's own token, in one transaction."""
        now = now_ms() if now is None else now
        flag, expires = self._expiry(now, ttl_days, permanent)
        key = normalize_code(code)
        with transaction(self.conn) as conn:
            row = conn.execute(
                "SELECT * FROM pairing_requests WHERE code = ? AND expires_ms > ?", (key, now)
            ).fetchone()
            if row is None:
                raise PairingNotFound(f"no pending pairing request has the code {key!r}")
            pairing_id = secrets.token_hex(4)
            conn.execute(
                "INSERT INTO pairings (id, name, device_id, salt, token_hash, lookup, created_ms, "
                "permanent, expires_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    pairing_id,
                    row["name"],
                    row["device_id"],
                    row["salt"],
                    row["token_hash"],
                    row["lookup"],  # None for a request of an older version: found the old way
                    now,
                    flag,
                    expires,
                ),
            )
            conn.execute("DELETE FROM pairing_requests WHERE code = ?", (key,))
            return _pairing(conn.execute("SELECT * FROM pairings WHERE id = ?", (pairing_id,)).fetchone())

    def deny(self, code: str) -> None:
        key = normalize_code(code)
        with transaction(self.conn) as conn:
            if conn.execute("DELETE FROM pairing_requests WHERE code = ?", (key,)).rowcount == 0:
                raise PairingNotFound(f"no pending pairing request has the code {key!r}")

    def revoke(self, pairing_id: str, *, now: int | None = None) -> None:
        now = now_ms() if now is None else now
        with transaction(self.conn) as conn:
            cur = conn.execute(
                "UPDATE pairings SET revoked_ms = COALESCE(revoked_ms, ?) WHERE id = ?", (now, pairing_id)
            )
            if cur.rowcount == 0:
                raise PairingNotFound(f"no pairing has the id {pairing_id!r}")

    def update(
        self, pairing_id: str, *, permanent: bool = False, ttl_days: int | None = None, now: int | None = None
    ) -> Pairing:
        """Makes a pairing permanent, or gives it `ttl_days` (default: the default TTL) from now."""
        now = now_ms() if now is None else now
        flag, expires = self._expiry(now, ttl_days, permanent)
        with transaction(self.conn) as conn:
            cur = conn.execute(
                "UPDATE pairings SET permanent = ?, expires_ms = ? WHERE id = ? AND revoked_ms IS NULL",
                (flag, expires, pairing_id),
            )
            if cur.rowcount == 0:
                raise PairingNotFound(f"no live pairing has the id {pairing_id!r}")
            return _pairing(conn.execute("SELECT * FROM pairings WHERE id = ?", (pairing_id,)).fetchone())

    def pairings(self) -> list[Pairing]:
        return [_pairing(r) for r in self.conn.execute("SELECT * FROM pairings ORDER BY created_ms, id")]

    def pending(self) -> list[PendingRequest]:
        rows = self.conn.execute("SELECT * FROM pairing_requests ORDER BY created_ms, code")
        return [_pending(r) for r in rows]

    def live_ids(self, *, now: int | None = None) -> set[str]:
        """The ids of the pairings whose tokens work now."""
        now = now_ms() if now is None else now
        return {p.id for p in self.pairings() if p.state(now) == "paired"}
