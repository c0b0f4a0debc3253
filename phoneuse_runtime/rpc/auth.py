"""Bearer-token checks for the AndroidRuntime methods; a good token names the caller.

Checked at the top of each servicer method (`check`, a plain call) rather than in a server
interceptor: only the servicer's methods need a token (health and reflection stay open), and it
spares every call grpc.aio's interceptor layer. The methods check it before they read their
request (see servicer.py). tests/test_auth.py walks the service descriptor, so a method added
later cannot skip the check unnoticed.

Refusals are logged through a `RefusalLog`: any app on the phone can send bad calls by the
thousand, and a line for each would fill the log faster than the calls cost anything else.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import NoReturn

import grpc

from phoneuse_runtime.auth.tokens import hash_token, token_matches
from phoneuse_runtime.auth.tokens_file import TokensFile
from phoneuse_runtime.kernel.callers import Caller

log = logging.getLogger(__name__)

BEARER = "bearer "
FRONTEND = "grpc"
REFUSAL_LOG_INTERVAL_S = 10.0
# How often a server re-reads the fleet's tokens file between calls (a stat, and a read when it
# changed): a revoked principal's open Subscribe streams end within this.
TOKENS_RECHECK_S = 0.5
REVOKED = "the token was revoked"

Timer = Callable[[float, Callable[[], None]], object]
"""Runs a callback after a delay: `loop.call_later`, or a test's fake."""


class RefusalLog:
    """Logs refused calls, at most one line per `interval_s`: the first refusal after a quiet
    interval at once, then, at the end of each interval in which more came, how many and the
    last one's reason."""

    def __init__(
        self, *, interval_s: float = REFUSAL_LOG_INTERVAL_S, call_later: Timer | None = None
    ) -> None:
        self.interval_s = interval_s
        self._call_later = call_later
        self._running = False  # an interval is running: refusals are counted, not logged
        self._held = 0
        self._last = ""

    def refused(self, method: str, problem: str) -> None:
        if self._running:
            self._held += 1
            self._last = f"{method}: {problem}"
            return
        log.warning("rejected a call to %s: %s", method, problem)
        self._start_interval()

    def _start_interval(self) -> None:
        self._running = True
        call_later = self._call_later or asyncio.get_running_loop().call_later
        call_later(self.interval_s, self._end_interval)

    def _end_interval(self) -> None:
        if not self._held:
            self._running = False
            return
        log.warning(
            "rejected %d more call%s in the last %g s (the last to %s)",
            self._held,
            "" if self._held == 1 else "s",
            self.interval_s,
            self._last,
        )
        self._held = 0
        self._start_interval()


class BearerAuth:
    """Checks `authorization: Bearer <token>` against SHA-256 hashes of the tokens it knows;
    each token names a principal (the server's own token is the agent's). `tokens_file` is a
    fleet's tokens file (auth/tokens_file.py): its hashes name principals too, and it is re-read
    when it changes (at each call, and every TOKENS_RECHECK_S by the server), so that a token
    revoked there is refused from the next call on and its principal's open streams end."""

    def __init__(self, tokens: Mapping[str, str], *, tokens_file: Path | None = None) -> None:
        if not tokens or not all(tokens.values()):
            raise ValueError("a token is required, even on loopback")
        self._hashes = [
            (hash_token(token), Caller(FRONTEND, principal)) for principal, token in tokens.items()
        ]
        self._own = list(self._hashes)
        self._file = TokensFile(tokens_file) if tokens_file is not None else None
        # Headers that passed, so that an agent's every call is not hashed anew. They hold what
        # the callers already send in every call; they are never logged or stored.
        self._known: dict[bytes, Caller] = {}
        self.refusals = RefusalLog()
        # Told the fleet principals whose token went away (refresh): the server ends their streams.
        self.on_revoked: Callable[[frozenset[str]], object] | None = None

    @property
    def watches_file(self) -> bool:
        return self._file is not None

    def refresh(self) -> frozenset[str]:
        """Re-reads the tokens file if it changed; the fleet principals whose token it no
        longer holds (revoked, or replaced by a new one), which `on_revoked` is also told, so
        that their open streams end."""
        if self._file is None:
            return frozenset()
        before = dict(self._file.hashes)
        if not self._file.current():
            return frozenset()
        self._known.clear()  # a token that passed may be revoked now
        after = self._file.hashes
        fleet = [(digest, Caller(FRONTEND, name)) for name, digest in after.items()]
        self._hashes = self._own + fleet
        revoked = frozenset(name for name, digest in before.items() if after.get(name) != digest)
        if revoked and self.on_revoked is not None:
            self.on_revoked(revoked)
        return revoked

    def check(self, metadata: Iterable[tuple[str, str | bytes]] | None) -> Caller | str:
        """The caller, or why the call is refused."""
        self.refresh()
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
        self.refusals.refused(method, problem)
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, problem)
        raise AssertionError("abort returned")  # pragma: no cover
