"""The ordered chain every call passes before its handler runs, Execute and Query alike.

A policy either returns (allow), raises `Denied`, or holds the call for a person's answer
with `await call.ask(reason)`. It runs inside the call's deadline, so a hold that outlasts
timeout_ms ends as TIMEOUT ("no answer came"), never as a hung request and never as DENIED.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from phoneuse_runtime.kernel.errors import Denied
from phoneuse_runtime.kernel.params import Params

if TYPE_CHECKING:
    from phoneuse_runtime.kernel.callers import Caller

CallKind = Literal["action", "query"]


@dataclass(frozen=True, slots=True, eq=False)
class PolicyCall:
    """One call in flight, as policies see it: what it is, read-only (`wire_params` a read-only
    mapping, `params` a frozen model), and `ask`. The runtime keeps the call's progress (its
    task, timer, answer, outcome, phase) in a record of its own, out of a policy's reach."""

    caller: Caller
    kind: CallKind
    name: str  # the action_type or query type
    request_id: str  # empty for a query
    app_target: str | None
    wire_params: Mapping[str, str]  # as the caller sent them
    params: Params | None  # typed, validated
    # What the call would do, named as actions: its own name, plus those whose effect it has
    # (START_INTENT to CALL tel:... is also MAKE_CALL). Policies judge a call by these.
    effects: frozenset[str]
    deadline: float  # loop.time() at which the call times out
    _ask: Callable[[str], Awaitable[None]] = field(repr=False)
    about: str = ""  # what the action's spec says of this call for its approver (`describe`)

    async def ask(self, reason: str) -> None:
        """Holds the call until a person approves it (returns) or denies it (Denied)."""
        await self._ask(reason)


class Policy(Protocol):
    name: str

    async def check(self, call: PolicyCall) -> None:
        """Returns to allow; raises Denied, or holds with `call.ask`, otherwise."""


@runtime_checkable
class FrontPolicy(Protocol):
    """A policy that also judges a UI action (`ActionSpec.drives_ui`) by the app in front,
    which is known only once the action has its turn on the phone, just before it runs."""

    name: str

    async def hold_in_front(self, call: PolicyCall, package: str) -> str | None:
        """The reason to hold the call for an approval with `package` in front; None to let it run."""


class ListPolicy:
    """The configuration's allow and deny lists, naming actions and queries alike. A call is
    judged by each of its effects: denying MAKE_CALL also denies a START_INTENT that calls."""

    name = "lists"

    def __init__(self, *, allow: frozenset[str], deny: frozenset[str]) -> None:
        self.allow = allow
        self.deny = deny

    async def check(self, call: PolicyCall) -> None:
        for effect in sorted(call.effects or {call.name}):
            who = call.name if effect == call.name else f"{call.name} does what {effect} does, and {effect}"
            if effect in self.deny:
                raise Denied(f"{who} is on this server's deny list")
            if self.allow and effect not in self.allow:
                raise Denied(f"{who} is not on this server's allow list")


class AskFirst:
    """Holds the named actions and queries for a person's approval."""

    name = "ask-first"

    def __init__(
        self, names: frozenset[str], *, reason: str = "this server asks before it does this"
    ) -> None:
        self.names = names
        self.reason = reason

    async def check(self, call: PolicyCall) -> None:
        if call.name in self.names:
            await call.ask(f"{self.reason}: {call.about}" if call.about else self.reason)
