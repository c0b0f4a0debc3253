"""Which front end a gRPC client relays for: the `x-phoneuse-frontend` metadata key.

A front end that reaches the runtime as a gRPC client (the attached `phoneuse-runtime mcp`)
says so on every call, so that the runtime's caller is `Caller("mcp", principal)`, as when the
same front end runs in the server's own process. The wire contract is fixed and has no field for
it, hence metadata. Only the front end is taken from it: the principal is always the token's.

The names are a closed set (`RELAYED`). Any other value (in any of the key's entries, if it
comes more than once) is refused with INVALID_ARGUMENT (`BAD_REQUEST: ...`) before the request
is read, rather than ignored: a client that believes it relays for a front end should learn at
once that it does not. The check comes after the token's, so a caller without the token learns
nothing of it.

It grants nothing. No policy, approval, limit or allow/deny list treats a front end differently
from another (only `Caller.owner`, which the Iris app's own slash commands set and metadata never
does); idempotency and subscriber ids stay scoped by principal. Its caller is marked `relayed`:
the in-process MCP face answers holds (by elicitation, where the owner turned it on) only of
calls it made itself, never a relayed caller's, so a gRPC client that says `mcp` cannot have its
hold answered over MCP. A gRPC client that says `mcp` changes only how events and approvals name
its calls.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

from phoneuse_runtime.kernel.callers import Caller
from phoneuse_runtime.kernel.errors import BadRequest

FRONTEND_KEY = "x-phoneuse-frontend"
RELAYED: frozenset[str] = frozenset({"mcp"})
_SHOWN = 40  # of a refused value, in the message


@functools.lru_cache(maxsize=256)
def _relayed(frontend: str, principal: str) -> Caller:
    return Caller(frontend, principal, relayed=True)


def relayed_caller(caller: Caller, metadata: Iterable[tuple[str, str | bytes]] | None) -> Caller:
    """The token's caller, named for the front end the metadata says it relays for, if any.
    Raises BadRequest for a front end not in RELAYED (each entry of the key is checked)."""
    named: str | None = None
    for key, value in metadata or ():
        if key != FRONTEND_KEY:
            continue
        text = value if isinstance(value, str) else value.decode("latin-1")
        if text not in RELAYED:
            shown = text[:_SHOWN] + ("..." if len(text) > _SHOWN else "")
            known = ", ".join(sorted(RELAYED))
            raise BadRequest(
                f"{FRONTEND_KEY} {shown!r} is not a front end this server knows (known: {known})"
            )
        named = text
    if named is None:
        return caller
    return _relayed(named, caller.principal)
