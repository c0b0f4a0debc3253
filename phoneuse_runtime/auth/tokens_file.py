"""The fleet's tokens: one per principal, stored as SHA-256 hashes in the fleet data dir's
`tokens.json` (mode 0600), which every member runtime reads (`serve --tokens-file`).

A token is printed once, when it is made (`fleet token new NAME`), and never stored in the
clear. The principal comes from the token a runtime checks, never from a header a caller can
set: nginx only passes `authorization` through. A runtime re-reads the file when it changes
(`TokensFile.current`), so a revoked token stops working on every phone at its next call.

The file: `{"version": 1, "tokens": {"NAME": {"sha256": "<hex>", "created": "<ISO-8601>"}}}`.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

from phoneuse_runtime.auth.principals import reserved_problem
from phoneuse_runtime.auth.tokens import generate_token, hash_token
from phoneuse_runtime.util.files import StateFileError, atomic_write_text, read_state_text

log = logging.getLogger(__name__)

TOKENS_FILE = "tokens.json"
VERSION = 1
# A principal's name: what task events and idempotency scoping show. "agent" is each runtime's
# own token's principal; "device:" names a paired app: neither can be a fleet token's.
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,63}")
REMEDY = "fix it, or remove it and make the tokens again with `phoneuse-runtime fleet token new NAME`"


class TokenError(ValueError):
    """A token operation that cannot be done (a bad name, one taken, one unknown)."""


def name_problem(name: str) -> str | None:
    """Why `name` cannot name a fleet token's principal, or None."""
    if not _NAME.fullmatch(name):
        return f"bad principal name {name!r}: a letter, then up to 63 letters, digits, '_', '.' or '-'"
    return reserved_problem(name, what="a fleet token's principal")


@dataclass(frozen=True)
class StoredToken:
    name: str
    sha256: str  # hex
    created: str


def read_tokens(path: Path) -> dict[str, StoredToken]:
    """The tokens stored in `path`, by name; {} when there is no file. StateFileError when the
    file is not one of ours."""
    try:
        text = read_state_text(path, remedy=REMEDY)
    except FileNotFoundError:
        return {}
    try:
        raw = json.loads(text)
    except ValueError as exc:
        raise StateFileError(path, f"not JSON ({exc})", REMEDY) from None
    if not isinstance(raw, dict) or raw.get("version") != VERSION or not isinstance(raw.get("tokens"), dict):
        raise StateFileError(path, f"not a fleet tokens file (version {VERSION})", REMEDY)
    out: dict[str, StoredToken] = {}
    for name, entry in raw["tokens"].items():
        digest = entry.get("sha256") if isinstance(entry, dict) else None
        if not isinstance(digest, str) or not re.fullmatch(r"[0-9a-f]{64}", digest) or name_problem(name):
            raise StateFileError(path, f"the token {name!r} has no valid name and sha256", REMEDY)
        out[name] = StoredToken(name, digest, str(entry.get("created", "")))
    return out


def _write(path: Path, tokens: dict[str, StoredToken]) -> None:
    body = {
        "version": VERSION,
        "tokens": {t.name: {"sha256": t.sha256, "created": t.created} for t in tokens.values()},
    }
    atomic_write_text(path, json.dumps(body, indent=2) + "\n")  # 0600 (mkstemp), whole or not at all


def new_token(path: Path, name: str) -> str:
    """Makes a token for principal `name`, stores its hash and returns it (the only time it is
    seen). TokenError for a bad name or one that has a token already."""
    problem = name_problem(name)
    if problem:
        raise TokenError(problem)
    tokens = read_tokens(path)
    if name in tokens:
        raise TokenError(f"{name!r} has a token already; `fleet token revoke {name}` first")
    token = generate_token()
    created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    tokens[name] = StoredToken(name, hash_token(token).hex(), created)
    _write(path, tokens)
    return token


def revoke_token(path: Path, name: str) -> None:
    """Removes principal `name`'s token: every member refuses it from its next call on."""
    tokens = read_tokens(path)
    if name not in tokens:
        known = ", ".join(sorted(tokens)) or "none"
        raise TokenError(f"no token named {name!r} (tokens: {known})")
    del tokens[name]
    _write(path, tokens)


class TokensFile:
    """A runtime's view of a fleet tokens file: the hashes by principal, re-read whenever the
    file changes (its inode, size or mtime; `atomic_write_text` replaces it, so a new inode). A
    file that is gone or broken holds no tokens: a revocation can never be undone by an error."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._seen: tuple[int, int, int] | None = None
        self.hashes: dict[str, bytes] = {}

    def current(self) -> bool:
        """Re-reads the file if it changed; True when it did (the caller's cache is then stale)."""
        try:
            info = os.stat(self.path)
            seen = (info.st_ino, info.st_size, info.st_mtime_ns)
        except OSError:
            seen = None
        if seen == self._seen:
            return False
        self._seen = seen
        hashes: dict[str, bytes] = {}
        if seen is not None:
            try:
                hashes = {name: bytes.fromhex(t.sha256) for name, t in read_tokens(self.path).items()}
            except (StateFileError, OSError) as exc:
                log.warning("the fleet tokens file cannot be used, so no fleet token is accepted: %s", exc)
        elif self.hashes:
            log.warning("the fleet tokens file %s is gone: no fleet token is accepted", self.path)
        self.hashes = hashes
        return True
