"""Bearer-token checks for the AndroidRuntime methods; a good token names the caller.

Checked at the top of each servicer method (`check`, a plain call) rather than in a server
interceptor: only the servicer's methods need a token (health and reflection stay open), and it
spares every call grpc.aio's interceptor layer. tests/test_auth.py walks the service descriptor, so a method
added later cannot skip the check unnoticed.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Iterable, Mapping
from typing import NoReturn

import grpc

from ..callers import Caller
from ..tokens import hash_token, token_matches

log = logging.getLogger(__name__)

BEARER = "bearer "
FRONTEND = "grpc"


class BearerAuth:
    """Checks `authorization: Bearer <token>` against SHA-256 hashes of the tokens it knows;
    each token names a principal (the server's own token is the agent's)."""

    def __init__(self, tokens: Mapping[str, str]) -> None:
        if not tokens or not all(tokens.values()):
            raise ValueError("a token is required, even on loopback")
        self._hashes = [
            (hash_token(token), Caller(FRONTEND, principal)) for principal, token in tokens.items()
        ]
        # Headers that passed, so that an agent's every call is not hashed anew. They hold what
        # the callers already send in every call; they are never logged or stored.
        self._known: dict[bytes, Caller] = {}

    def check(self, metadata: Iterable[tuple[str, str | bytes]] | None) -> Caller | str:
        """The caller, or why the call is refused."""
        presented = ""
        for key, value in metadata or ():
            if key == "authorization":
                presented = value if isinstance(value, str) else value.decode("latin-1")
                break
        if not presented:
            return "missing authorization metadata (expected 'Bearer <token>')"
        raw = presented.encode("utf-8", "surrogateescape")
        for known, caller in self._known.items():
            if hmac.compare_digest(raw, known):
                return caller
        scheme, token = presented[: len(BEARER)], presented[len(BEARER) :]
        if scheme.lower() == BEARER:
            for expected, caller in self._hashes:
                if token_matches(token, expected):
                    self._known[raw] = caller
                    return caller
        return "invalid token"

    async def refuse(self, context: grpc.aio.ServicerContext, method: str, problem: str) -> NoReturn:
        """Aborts the call with UNAUTHENTICATED (`check` said why)."""
        log.warning("rejected a call to %s: %s", method, problem)
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, problem)
        raise AssertionError("abort returned")  # pragma: no cover
