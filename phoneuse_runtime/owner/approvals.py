"""Holds: a call waiting for a person's answer, as a first-class thing with its own events.

A policy holds a call with `PolicyCall.ask` (kernel/policies.py). The hold is announced (`APPROVAL_REQUESTED`,
with a digest of the exact call), waits for `answer` (from whichever front end shows it to
the phone's owner), and ends with `APPROVAL_RESOLVED`: approved, denied, expired (the call's
deadline passed with no answer) or cancelled (the server stopped).

While a hold of a caller other than the owner is pending, that principal's other calls that use
the device wait for it to end (`blocking`, `settled`: the runtime's drive stage), so an agent
cannot do by hand, around a held SEND_MESSAGE, what the hold is asking about. Another
principal's calls (a fleet's other agents, the lease holder) go on. Watchers
(`watch`) hear of each hold and its end: the terminal's store (approval_store.py) does.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from phoneuse_runtime.kernel.errors import Conflict, Denied
from phoneuse_runtime.kernel.events import ApprovalRequested, ApprovalResolved, CallerInfo, EventBus, now_ms

log = logging.getLogger(__name__)
SOURCE = "phoneuse.approvals"


if TYPE_CHECKING:
    from phoneuse_runtime.kernel.callers import Caller


class HeldCall(Protocol):
    """A call in flight as holds see it (the runtime's own record of it, not the policies' view): what
    it is, and the progress a hold writes back."""

    @property
    def caller(self) -> Caller: ...
    @property
    def kind(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def request_id(self) -> str: ...
    @property
    def app_target(self) -> str | None: ...
    @property
    def wire_params(self) -> Mapping[str, str]: ...
    @property
    def deadline(self) -> float: ...

    holding: str | None
    approved: bool
    waiting_on: str | None
    held_ms: int
    expired: bool


class NoSuchApproval(LookupError):
    """No hold has that id: it never existed, or it ended already."""


def how_to_answer(approval_id: str) -> str:
    """What a TIMEOUT says about a hold nobody answered: how to answer one, or stop holding."""
    return (
        f"The owner answers it in the paired Iris app, or on the server's machine with "
        f"`phoneuse-runtime approvals approve {approval_id}` (or `deny`; `approvals list` shows "
        f'what is held); `approvals = "off"` in config.toml (PHONEUSE_APPROVALS=off) holds nothing'
    )


def digest(call: HeldCall) -> str:
    """SHA-256 of the exact call, so an answer can name precisely what was approved."""
    canonical = json.dumps(
        [call.kind, call.name, call.app_target, sorted(call.wire_params.items())],
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


@dataclass(slots=True)
class Hold:
    approval_id: str
    call: HeldCall
    digest: str
    reason: str
    answer: asyncio.Future[tuple[bool, str]]


HoldWatcher = Callable[["Hold", bool], None]  # (the hold, whether it began or ended)


class Approvals:
    """The holds in progress, and the way to answer them."""

    def __init__(self, bus: EventBus) -> None:
        self.bus = bus
        self._holds: dict[str, Hold] = {}
        self._watchers: list[HoldWatcher] = []
        self._quiet: asyncio.Event | None = None  # set while no hold blocks the others

    def pending(self) -> list[Hold]:
        """Holds awaiting an answer, oldest first (for a front end that connects late)."""
        return list(self._holds.values())

    def watch(self, watcher: HoldWatcher) -> None:
        """Calls `watcher(hold, True)` when a hold begins and `watcher(hold, False)` when it ends."""
        self._watchers.append(watcher)

    def blocking(self, call: HeldCall) -> Hold | None:
        """The oldest pending hold that `call` must wait for: one of another call by the same
        principal (never the owner); None when it may go on. Another principal's holds never
        stop it: they are not about its work (and it may hold the phone's lease)."""
        principal = call.caller.principal
        for hold in self._holds.values():
            held = hold.call.caller
            if hold.call is not call and not held.owner and held.principal == principal:
                return hold
        return None

    async def settled(self, call: HeldCall) -> None:
        """Returns once no hold blocks `call` (at once when none does)."""
        while (hold := self.blocking(call)) is not None:
            if self._quiet is None:
                self._quiet = asyncio.Event()
            self._quiet.clear()
            call.waiting_on = hold.approval_id
            await self._quiet.wait()
        call.waiting_on = None

    def _ended(self) -> None:
        if self._quiet is not None:  # the waiters look again at what blocks them (`settled`)
            self._quiet.set()

    def answer(self, approval_id: str, *, approved: bool, by: str, digest: str | None = None) -> None:
        """Approves or denies a hold. With `digest`, only if it is still the exact call shown."""
        hold = self._holds.get(approval_id)
        if hold is None or hold.answer.done():
            raise NoSuchApproval(f"no pending approval {approval_id!r}")
        if digest is not None and digest != hold.digest:
            raise Conflict(f"approval {approval_id} is for a different call than the one answered")
        hold.answer.set_result((approved, by))

    async def hold(self, call: HeldCall, reason: str) -> None:
        loop = asyncio.get_running_loop()
        hold = Hold(uuid.uuid4().hex, call, digest(call), reason, loop.create_future())
        self._holds[hold.approval_id] = hold
        for watcher in self._watchers:
            watcher(hold, True)
        caller = CallerInfo(**call.caller.as_json())
        started = loop.time()
        self.bus.publish(
            ApprovalRequested(
                approval_id=hold.approval_id,
                kind=call.kind,
                name=call.name,
                request_id=call.request_id,
                params=dict(call.wire_params),
                app_target=call.app_target,
                digest=hold.digest,
                caller=caller,
                reason=reason,
                deadline_ms=now_ms() + int((call.deadline - started) * 1000),
            ).to_event(SOURCE)
        )
        log.info(
            "approval %s: %s (%s) is held: %s; the owner answers in the Iris app or with "
            "`phoneuse-runtime approvals approve %s` (or deny)",
            hold.approval_id,
            call.name,
            call.caller,
            reason,
            hold.approval_id,
        )
        outcome, by = "cancelled", ""
        call.holding = hold.approval_id
        try:
            approved, by = await hold.answer
            outcome = "approved" if approved else "denied"
        except asyncio.CancelledError:
            outcome = "expired" if call.expired else "cancelled"
            raise
        finally:
            waited_ms = int((loop.time() - started) * 1000)
            call.held_ms += waited_ms
            del self._holds[hold.approval_id]
            for watcher in self._watchers:
                watcher(hold, False)
            self._ended()
            log.info("approval %s for %s: %s after %d ms", hold.approval_id, call.name, outcome, waited_ms)
            self.bus.publish(
                ApprovalResolved(
                    approval_id=hold.approval_id, outcome=outcome, by=by, waited_ms=waited_ms, caller=caller
                ).to_event(SOURCE)
            )
        # `holding` stays set on a cancellation, so the deadline's message can name the approval.
        call.holding = None
        call.approved = outcome == "approved"
        if outcome == "denied":
            raise Denied(f"{call.name} was declined by {by or 'the approver'}")
