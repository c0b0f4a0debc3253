"""The ordered chain every call passes before its handler runs.

A policy either returns (allow), raises `Denied`, or holds the call while it waits
for an answer (a person approving on the phone). It runs inside the call's deadline,
so a hold that outlasts timeout_ms ends as TIMEOUT, never as a hung request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from .errors import Denied
from .params import Params


@dataclass(frozen=True)
class PolicyCall:
    request_id: str
    action_type: str
    app_target: str | None
    params: Params
    deadline: float  # loop.time() at which the call times out


class Policy(Protocol):
    name: str

    async def check(self, call: PolicyCall) -> None:
        """Returns to allow; raises Denied (or waits) otherwise."""


class ActionListPolicy:
    """Allow and deny lists of action types from the configuration."""

    name = "action-lists"

    def __init__(self, *, allow: frozenset[str], deny: frozenset[str]) -> None:
        self.allow = allow
        self.deny = deny

    async def check(self, call: PolicyCall) -> None:
        if call.action_type in self.deny:
            raise Denied(f"{call.action_type} is on this server's deny list")
        if self.allow and call.action_type not in self.allow:
            raise Denied(f"{call.action_type} is not on this server's allow list")
