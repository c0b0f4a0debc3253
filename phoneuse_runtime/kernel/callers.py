"""Who asks: every Execute, Query and Subscribe carries its caller.

A caller is the front end a call came through and the principal it authenticated as
(the gRPC token's name, or `device:PAIRING_ID` for a paired app device). Idempotency and subscriber
ids are scoped per principal, policies see the caller, and task events name it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Caller:
    frontend: str  # e.g. "grpc", "gateway"
    principal: str  # e.g. "agent" (the gRPC token), "device:3f2a…" (a paired phone app)
    # The phone's owner (a slash command typed in the Iris app): never held for an approval,
    # never waits on another call's hold, and may drive the owner's controls (owner/controls.py).
    owner: bool = False
    # Named for its front end by the client's own word (gRPC's `x-phoneuse-frontend`,
    # rpc/frontends.py), not by the front end itself: it gets none of that front end's ways.
    relayed: bool = False

    def as_json(self) -> dict[str, str]:
        return {"frontend": self.frontend, "principal": self.principal}

    def __str__(self) -> str:
        return f"{self.frontend}:{self.principal}"
