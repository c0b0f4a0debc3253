"""Bearer-token checks for the AndroidRuntime methods.

Checked at the top of each servicer method rather than in a server interceptor: only the
servicer's methods need a token (health and reflection stay open), and it spares every call
grpc.aio's interceptor layer. tests/test_auth.py walks the service descriptor, so a method
added later cannot skip the check unnoticed. Reading the metadata and hashing cost ~2 µs.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

import grpc

from ..tokens import hash_token, token_matches

log = logging.getLogger(__name__)

BEARER = "bearer "


class BearerAuth:
    """Checks `authorization: Bearer <token>` against the SHA-256 of the server's token."""

    def __init__(self, token: str) -> None:
        if not token:
            raise ValueError("a token is required, even on loopback")
        self._hash = hash_token(token)

    def problem(self, metadata: Iterable[tuple[str, str | bytes]] | None) -> str | None:
        """Why the call is refused, or None when the token is right."""
        presented = ""
        for key, value in metadata or ():
            if key == "authorization":
                presented = value if isinstance(value, str) else value.decode("latin-1")
                break
        if not presented:
            return "missing authorization metadata (expected 'Bearer <token>')"
        scheme, token = presented[: len(BEARER)], presented[len(BEARER) :]
        if scheme.lower() != BEARER or not token_matches(token, self._hash):
            return "invalid token"
        return None

    async def require(self, context: grpc.aio.ServicerContext, method: str) -> None:
        """Aborts the call with UNAUTHENTICATED unless its token is right."""
        problem = self.problem(context.invocation_metadata())
        if problem is not None:
            log.warning("rejected a call to %s: %s", method, problem)
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, problem)
