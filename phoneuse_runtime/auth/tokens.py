"""Bearer tokens: generation, the 0600 token file, and constant-time checks against a hash.

The server keeps only the SHA-256 of its token in memory. The plain token lives in
one place, the data dir's `token` file (mode 0600), for local clients to read.
Nothing here logs a token.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

from phoneuse_runtime.config.settings import TOKEN_FILE
from phoneuse_runtime.util.files import StateFileError, read_state_text


def generate_token() -> str:
    return secrets.token_urlsafe(32)


def hash_token(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def token_matches(presented: str, expected_hash: bytes) -> bool:
    """Constant-time comparison; hashing first makes the time independent of the lengths too."""
    return hmac.compare_digest(hash_token(presented), expected_hash)


def token_path(data_dir: Path) -> Path:
    return data_dir / TOKEN_FILE


REMEDY = "delete it, and `serve` generates a new token (clients then read the new one)"


def read_token_file(data_dir: Path) -> str | None:
    """The stored token; None if there is none (no file, an empty one, or one we may not read).
    StateFileError if the file holds something that cannot be a token: a token travels in an
    HTTP/2 header, so it is printable ASCII."""
    path = token_path(data_dir)
    try:
        text = read_state_text(path, remedy=REMEDY).strip()
    except (FileNotFoundError, PermissionError):
        return None
    bad = next((c for c in text if not " " <= c <= "~"), None)
    if bad is not None:
        raise StateFileError(path, f"not a token (it holds the character {bad!r})", REMEDY)
    return text or None


def load_or_create_token(data_dir: Path) -> tuple[str, bool]:
    """The stored token, or a new one written with mode 0600; returns (token, created)."""
    existing = read_token_file(data_dir)
    if existing:
        return existing, False
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    token = generate_token()
    path = token_path(data_dir)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(token + "\n")
    os.chmod(path, 0o600)
    return token, True
