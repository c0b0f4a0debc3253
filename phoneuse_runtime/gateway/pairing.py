"""Pairings: one token per app device, stored only as a salted hash, in the gateway's database.

Two ways in:
- the host issues a token (`pair new`), shown once, for the app to scan;
- the app brings its own token: its first `hello` makes a pending request with a pairing code,
  which the owner approves (`pair approve CODE`) or denies within `PENDING_TTL_MS`.

The store works on a plain `sqlite3.Connection`, so the CLI uses it on the data dir while the
server runs, and the server through `GatewayDb.run`. Every change is one transaction: an
approve is either wholly applied or not at all.

Expiry is read defensively: a pairing is permanent only when its `permanent` column is exactly
1; otherwise an `expires_ms` that is not an integer counts as expired (never as permanent).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import sqlite3
from dataclasses import dataclass
from typing import Any

from ..events import now_ms
from .db import transaction

PENDING_TTL_MS = 10 * 60 * 1000
DAY_MS = 24 * 60 * 60 * 1000
MIN_APP_TOKEN_CHARS = 22  # an app's own token must carry 128 bits, as ours do
# No look-alikes: none of 0/O, 1/I/L, 2/Z, 5/S, 8/B, U/V.
CODE_ALPHABET = "ACDEFGHJKMNPQRTWXY34679"

DDL = """
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
    last_seen_ms INTEGER
);
CREATE TABLE IF NOT EXISTS pairing_requests (
    code TEXT PRIMARY KEY,
    device_id TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    salt BLOB NOT NULL,
    token_hash BLOB NOT NULL,
    created_ms INTEGER NOT NULL,
    expires_ms INTEGER NOT NULL
);
"""


class PairingNotFound(Exception):
    """No pairing or pending request has that id or code (CLI: `NOT_FOUND`, exit 3)."""


class AuthRefused(Exception):
    """A `hello` whose token opens nothing; the message is safe to show the app. `counts` is
    False for a token that waits for approval: an app may ask again and again meanwhile."""

    def __init__(self, message: str, *, counts: bool = True) -> None:
        super().__init__(message)
        self.counts = counts


def _hash(salt: bytes, token: str) -> bytes:
    return hashlib.sha256(salt + token.encode()).digest()


def _matches(row: sqlite3.Row, token: str) -> bool:
    return hmac.compare_digest(_hash(bytes(row["salt"]), token), bytes(row["token_hash"]))


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

    def __init__(self, conn: sqlite3.Connection, *, default_ttl_days: int = 30) -> None:
        self.conn = conn
        self.default_ttl_days = default_ttl_days

    @staticmethod
    def create_tables(conn: sqlite3.Connection) -> None:
        conn.executescript(DDL)

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
                "INSERT INTO pairings (id, name, salt, token_hash, created_ms, permanent, expires_ms) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (pairing_id, name, salt, _hash(salt, token), now, flag, expires),
            )
        return Issued(pairing_id, token, expires)

    def authenticate(
        self, token: str, *, device_id: str = "", device_name: str = "", now: int | None = None
    ) -> Pairing:
        """The live pairing this token opens, its last-seen time updated; AuthRefused otherwise.

        An unknown token with a `device_id` becomes (or refreshes) that device's pending
        request, and the refusal carries its pairing code."""
        now = now_ms() if now is None else now
        if not token:
            raise AuthRefused("hello needs a token")
        with transaction(self.conn) as conn:
            for row in conn.execute("SELECT * FROM pairings"):
                if _matches(row, token):
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
            conn.execute("DELETE FROM pairing_requests WHERE expires_ms <= ?", (now,))
            for row in conn.execute("SELECT * FROM pairing_requests"):
                if _matches(row, token):
                    code = row["code"]
                    raise AuthRefused(f"waiting for the owner's approval; pairing code: {code}", counts=False)
            if not device_id:
                raise AuthRefused("unknown token; to ask for pairing, say hello with a device_id")
            if len(token) < MIN_APP_TOKEN_CHARS:
                raise AuthRefused(f"a token of your own needs at least {MIN_APP_TOKEN_CHARS} characters")
            code = self._request(conn, token, device_id, device_name or device_id, now)
        raise AuthRefused(f"unknown token, pairing requested; pairing code: {code}")

    def _request(self, conn: sqlite3.Connection, token: str, device_id: str, name: str, now: int) -> str:
        salt = secrets.token_bytes(16)
        existing = conn.execute(
            "SELECT code FROM pairing_requests WHERE device_id = ?", (device_id,)
        ).fetchone()
        if existing is not None:  # idempotent per device: same code, same deadline, latest token
            conn.execute(
                "UPDATE pairing_requests SET salt = ?, token_hash = ?, name = ? WHERE code = ?",
                (salt, _hash(salt, token), name, existing["code"]),
            )
            return str(existing["code"])
        while True:
            code = new_code()
            if conn.execute("SELECT 1 FROM pairing_requests WHERE code = ?", (code,)).fetchone() is None:
                break
        conn.execute(
            "INSERT INTO pairing_requests (code, device_id, name, salt, token_hash, created_ms, expires_ms) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (code, device_id, name, salt, _hash(salt, token), now, now + PENDING_TTL_MS),
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
                "INSERT INTO pairings (id, name, device_id, salt, token_hash, created_ms, permanent, "
                "expires_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    pairing_id,
                    row["name"],
                    row["device_id"],
                    row["salt"],
                    row["token_hash"],
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
