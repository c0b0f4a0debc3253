"""The runtime: execute, query and subscribe, independent of gRPC and WebSocket.

Front ends (`rpc/`, later the gateway) translate their frames into these calls, each with
its caller; all the contracts of design.md section 2 (validation, capabilities, deadlines,
idempotency, policies and holds, events) are enforced here, once. Failures leave as
`RuntimeFailure`s (errors.py): every front end keeps only a table from code to its wire.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel

from phoneuse_runtime.config.settings import Settings
from phoneuse_runtime.device.base import KEYCODES, Device, Foreground, reset_deadline, set_deadline
from phoneuse_runtime.kernel.callers import Caller
from phoneuse_runtime.kernel.capabilities import UI
from phoneuse_runtime.kernel.context import ActionContext, QueryContext, missing_capability
from phoneuse_runtime.kernel.errors import (
    BadRequest,
    Conflict,
    DeviceUnavailable,
    Internal,
    PermissionDenied,
    RuntimeFailure,
    Timeout,
    Unsupported,
    translate,
)
from phoneuse_runtime.kernel.events import (
    CallerInfo,
    ErrorEvent,
    EventBus,
    Subscription,
    TaskCompleted,
    TaskStarted,
    result_preview,
)
from phoneuse_runtime.kernel.idempotency import IdempotencyCache
from phoneuse_runtime.kernel.limits import (
    MAX_APP_TARGET_CHARS,
    MAX_EVENT_TYPES,
    MAX_ID_CHARS,
    MAX_NAME_CHARS,
    MAX_OFFSET_DIGITS,
    MAX_RESPONSE_JSON_BYTES,
    MAX_TIMEOUT_MS,
    bad_id,
    bad_timeout,
    clip,
    omitted_json,
    too_long,
    utf8_size,
)
from phoneuse_runtime.kernel.params import Params, parse_params
from phoneuse_runtime.kernel.policies import CallKind, FrontPolicy, Policy, PolicyCall
from phoneuse_runtime.kernel.registry import AnyActionSpec, AnyQuerySpec, Registry
from phoneuse_runtime.kernel.turns import Turns
from phoneuse_runtime.owner.approvals import Approvals, how_to_answer
from phoneuse_runtime.owner.controls import brought_refusal, front_refusal
from phoneuse_runtime.owner.front_guard import FrontGuard, FrontRefused, reset_guard, set_guard
from phoneuse_runtime.screen.settle import SETTLE_KEY, front_package, split_settle
from phoneuse_runtime.screen.ui import UiNode

log = logging.getLogger(__name__)

SOURCE = "phoneuse.runtime"
DEFAULT_QUERY_LIMIT = 20
OFFSET_KEY = "offset"
# An owner's control found in front this soon after an agent's UI action with settle_ms=0 (no
# look after it) is taken as that action's doing (Runtime._brought_before); later, the owner's.
UNLOOKED_S = 10.0
# A replay's entry beside its texts: the entry, its key (principal, request_id), the outcome object.
OUTCOME_OVERHEAD_BYTES = 512


def _uncancel(task: asyncio.Task[Any] | None) -> None:
    """Takes back the deadline's own cancellation, once it has been turned into TIMEOUT."""
    if sys.version_info >= (3, 11) and task is not None:
        task.uncancel()


@dataclass(slots=True, eq=False)
class _Call:
    """The runtime's record of one call in flight: what it is, and its progress (for the
    deadline's message and the outcome), which holds write back (approvals.HeldCall). Policies
    see it only through its `view`."""

    caller: Caller
    kind: CallKind
    name: str  # the action_type or query type
    request_id: str  # empty for a query
    app_target: str | None
    wire_params: Mapping[str, str]  # as the caller sent them
    deadline: float  # loop.time() at which the call times out
    approvals: Approvals = field(repr=False)
    params: Params | None = None  # typed, once validated (always, by the time policies run)
    effects: frozenset[str] = frozenset()  # set before the policies run
    about: str = ""  # the spec's `describe` of the call, set before the policies run
    started: float = 0.0  # loop.time() when the runtime took the call
    phase: str = "starting"
    holding: str | None = None  # the approval id while held
    approved: bool = False  # a person approved it: it no longer waits on other calls' holds
    waiting_on: str | None = None  # the approval id of another call's hold it waits on
    approved_in: str | None = None  # the package in front it was held for (approve_ui_in)
    held_ms: int = 0
    expired: bool = False  # set by the deadline, just before it cancels the call
    timer: asyncio.TimerHandle | None = None
    task: asyncio.Task[Any] | None = None
    outcome: Any = None  # the runtime's answer, once there is one
    answer: asyncio.Future[Any] | None = None  # what the caller awaits
    _view: PolicyCall | None = None

    @property
    def view(self) -> PolicyCall:
        """The call as policies see it (made once, when the policies first run)."""
        view = self._view
        if view is None:
            view = self._view = PolicyCall(
                self.caller,
                self.kind,
                self.name,
                self.request_id,
                self.app_target,
                MappingProxyType(self.wire_params),
                self.params,
                self.effects,
                self.deadline,
                self.ask,
                self.about,
            )
        return view

    async def ask(self, reason: str) -> None:
        """Holds the call until a person approves it (returns) or denies it (Denied)."""
        await self.approvals.hold(self, reason)


def _expire(call: _Call) -> None:
    """The call's deadline: marks it, then cancels its task. Only this makes TIMEOUT."""
    call.expired = True
    if call.task is not None:
        call.task.cancel()


@dataclass(slots=True)
class ActionCall:
    action_type: str
    params: Mapping[str, str]
    request_id: str
    timeout_ms: int
    app_target: str | None = None


@dataclass(slots=True)
class ActionOutcome:
    request_id: str
    success: bool
    result_json: str
    error: str
    duration_ms: int
    held_ms: int = 0  # of duration_ms, the time a policy held the call for an approval


@dataclass(slots=True)
class QueryCall:
    query_type: str
    filters: Mapping[str, str]
    limit: int
    timeout_s: float


@dataclass(frozen=True, slots=True)
class QueryPage:
    results: list[str]
    total_count: int
    has_more: bool


def _outcome_bytes(outcome: ActionOutcome) -> int:
    """What a replayable outcome holds in memory: its texts (as CPython stores them) and the rest."""
    return sys.getsizeof(outcome.result_json) + sys.getsizeof(outcome.error) + OUTCOME_OVERHEAD_BYTES


def _stopping() -> DeviceUnavailable:
    return DeviceUnavailable("the server is stopping: nothing new starts; call again once it is back")


class Runtime:
    """One phone, its handlers, its policies and components, and the services handlers share."""

    def __init__(
        self,
        *,
        device: Device,
        registry: Registry,
        settings: Settings,
        bus: EventBus,
        policies: Sequence[Policy] = (),
        refusals: Sequence[Policy] = (),
        components: Mapping[str, object] | None = None,
    ) -> None:
        self.device = device
        self.registry = registry
        self.settings = settings
        self.bus = bus
        self.policies = tuple(policies)
        # Those of `policies` that never ask a person: read again before device work that
        # waited on a hold (a lease taken meanwhile refuses it).
        self.refusals = tuple(refusals)
        self._front_policies = tuple(p for p in self.policies if isinstance(p, FrontPolicy))
        self.components: Mapping[str, object] = components or {}
        self.approvals = Approvals(bus)
        self._replays: IdempotencyCache[ActionOutcome] = IdempotencyCache(
            ttl_s=settings.idempotency_ttl_s,
            max_entries=settings.idempotency_max_entries,
            max_bytes=settings.idempotency_max_bytes,
            size=_outcome_bytes,
        )
        self._tasks: set[asyncio.Task[None]] = set()
        self._loop: asyncio.AbstractEventLoop  # set by start
        self._closing = False
        # One phone, one finger: actions that drive it take turns (waiting counts against their deadline).
        self.turns = Turns()
        # When the last guarded UI action ended that had no look after it (_brought_before).
        self._unlooked: float | None = None

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        await self.device.start(self.bus.publish, wanted=self.bus.demanded)

    async def drain(self, *, grace_s: float = 0.0) -> None:
        """Refuses new calls, lets in-flight actions finish within `grace_s`, cancels the rest,
        ends all streams. The device stays open (the components may still need it to stop)."""
        self._closing = True
        if self._tasks:
            _, pending = await asyncio.wait(set(self._tasks), timeout=grace_s)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending)
        self.bus.close()

    async def close(self, *, grace_s: float = 0.0) -> None:
        """Drains (see `drain`), then closes the device."""
        await self.drain(grace_s=grace_s)
        await self.device.close()

    def _supported(self, name: str, requires: frozenset[str]) -> None:
        """UNSUPPORTED for a capability this device lacks; DEVICE_UNAVAILABLE at once, not at the
        deadline, while the phone it needs does not answer."""
        device = self.device
        capabilities = device.capabilities
        if not requires <= capabilities:
            missing = sorted(requires - capabilities)[0]
            raise Unsupported(f"{name}: {missing_capability(device, missing)}")
        link = device.link
        if not link.up:
            raise DeviceUnavailable(
                f"{name}: the phone ({device.kind} {link.serial or ''}) is not reachable now: {link.reason}; "
                "the runtime keeps reconnecting and publishes DEVICE_CONNECTED when it is back"
            )

    # --- Execute -----------------------------------------------------------
    async def execute(self, caller: Caller, request: ActionCall) -> ActionOutcome:
        """Runs an action once per (principal, request_id). Raises BadRequest for a malformed call;
        every other failure is the outcome's."""
        if not 0 < len(request.action_type) <= MAX_NAME_CHARS:
            raise BadRequest(
                too_long("action_type", len(request.action_type), MAX_NAME_CHARS)
                if request.action_type
                else "action_type is empty"
            )
        request_id = request.request_id
        if not (0 < len(request_id) <= MAX_ID_CHARS and request_id.isascii() and request_id.isprintable()):
            raise BadRequest(bad_id("request_id", request_id) or "")
        problem = bad_timeout(request.timeout_ms)
        if problem is not None:
            raise BadRequest(problem)
        if request.app_target is not None and len(request.app_target) > MAX_APP_TARGET_CHARS:
            raise BadRequest(too_long("app_target", len(request.app_target), MAX_APP_TARGET_CHARS))
        key = (caller.principal, request.request_id)
        # Python's hash of the content: 64 bits, within one principal's one request_id.
        fingerprint = hash((request.action_type, request.app_target, tuple(sorted(request.params.items()))))
        spec = self.registry.actions.get(request.action_type)  # None: UNKNOWN_ACTION, from _perform
        # The registry's own copy of a known name: 10,000 retained ids share one string each.
        label = spec.action_type if spec is not None else request.action_type
        replay = self._replays.begin(key, fingerprint, label)
        if replay is not None:
            if replay.outcome is not None:
                return replay.outcome
            if replay.pending is not None:
                return await replay.pending
            failure = Conflict(
                f"request_id {clip(request.request_id)} was already used for a different request "
                f"({replay.conflicts_with}); use a new request_id"
            )
            return ActionOutcome(request.request_id, False, "{}", failure.wire(), 0)
        if self._closing:  # draining: what runs finishes (and replays), nothing new starts
            refused = ActionOutcome(request.request_id, False, "{}", _stopping().wire(), 0)
            self._replays.finish(key, refused)
            return refused
        loop = self._loop
        now = loop.time()
        call = _Call(
            caller,
            "action",
            request.action_type,
            request.request_id,
            request.app_target,
            request.params,
            now + request.timeout_ms / 1000,
            self.approvals,
            started=now,
        )
        # The action runs in its own task: a client that disconnects or whose own deadline
        # passes does not cancel half an action; its retry gets the stored outcome. The caller
        # waits on a future of its own, which its cancellation may cancel without harm.
        task = loop.create_task(self._run(call, spec, key, request.timeout_ms))
        call.task = task
        call.timer = loop.call_at(call.deadline, _expire, call)
        self._tasks.add(task)
        call.answer = loop.create_future()
        return await call.answer  # type: ignore[no-any-return]

    async def _run(
        self,
        call: _Call,
        spec: AnyActionSpec | None,
        key: tuple[str, str],
        timeout_ms: int,
    ) -> None:
        """Runs the action to its outcome, records it for replays, answers and announces it."""
        success, result_json = False, "{}"
        failure: RuntimeFailure | None = None
        try:
            result_json = await self._perform(call, spec)
            success = True
        except BaseException as exc:
            if call.expired:  # the deadline, however the handler let its cancellation out
                _uncancel(call.task)
                failure = self._deadline_passed(call, timeout_ms)
            elif self._closing and isinstance(exc, asyncio.CancelledError):
                failure = DeviceUnavailable("the server shut down before the action finished")
                raise
            else:
                # A CancelledError nobody asked for (a handler awaited a cancelled future) is
                # the handler's own failure, like any other it lets escape.
                failure = self._escaped(exc, doing=call.name)
                if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                    raise
        finally:
            if call.timer is not None:
                call.timer.cancel()
            if call.task is not None:
                self._tasks.discard(call.task)
            now = self._loop.time()
            error = ""
            if failure is not None:
                error = failure.wire()
                if failure.details:
                    result_json = _json(failure.details)
            outcome = ActionOutcome(
                call.request_id, success, result_json, error, int((now - call.started) * 1000), call.held_ms
            )
            self._replays.finish(key, outcome)
            call.outcome = outcome
            if call.answer is not None and not call.answer.done():
                call.answer.set_result(outcome)
            # Building the event costs: skipped when nobody listens for this action's.
            if self.bus.interested("TASK_COMPLETED", call.name):
                self.bus.publish(
                    TaskCompleted(
                        request_id=call.request_id,
                        action_type=call.name,
                        success=success,
                        error=error,
                        duration_ms=outcome.duration_ms,
                        held_ms=call.held_ms,
                        caller=CallerInfo(**call.caller.as_json()),
                        result_preview=result_preview(result_json) if success else "",
                    ).to_event(SOURCE, subject=call.name)
                )
            # Its traceback holds this frame, and the handler's with the call's params: a cycle
            # only the collector's rare full pass would free (a megabyte per failed call).
            failure = None

    def _escaped(self, exc: BaseException, *, doing: str) -> RuntimeFailure:
        """What a handler let escape, as a failure; an unforeseen one is also an ERROR event."""
        failure = translate(exc, doing=doing)
        if type(failure) is Internal:
            self.bus.publish(ErrorEvent(code=failure.code, message=failure.message).to_event(SOURCE))
        return failure

    def _deadline_passed(self, call: _Call, timeout_ms: int) -> Timeout:
        if call.holding is not None:
            return Timeout(
                f"no answer came to approval {call.holding} for {call.name} within {timeout_ms} ms; "
                f"nothing was done. {how_to_answer(call.holding)}",
                details={"approval_id": call.holding, "held_ms": call.held_ms},
            )
        if call.phase == "waiting" and call.waiting_on is not None:
            return Timeout(
                f"{call.name} waited for approval {call.waiting_on} (another call held for the owner) "
                f"to be answered, and {timeout_ms} ms passed first; nothing was done. "
                f"{how_to_answer(call.waiting_on)}",
                details={"approval_id": call.waiting_on},
            )
        if call.phase == "turn":
            return Timeout(
                f"{call.name} did not get its turn on the phone within {timeout_ms} ms "
                "(other actions held it); nothing was done"
            )
        return Timeout(f"{call.name} did not finish within {timeout_ms} ms; its device work was cancelled")

    async def _perform(self, call: _Call, spec: AnyActionSpec | None) -> str:
        """The stages of an action, each refusing as early as it can: the checks that need no
        person (capabilities, params, the spec's own `check`), then the policies (which may hold
        it), then its drive stage (`_drive`), where it waits for other calls' holds, takes its
        turn on the phone and, for a UI action, looks at what is in front."""
        log.debug("action %s (request %s) started", call.name, call.request_id)
        if spec is None:
            spec = self.registry.action(call.name)  # UnknownAction, with the names it may have meant
        if spec.requires:
            self._supported(call.name, spec.requires)
        wire, settle_ms = split_settle(call.wire_params) if spec.settles else (call.wire_params, 0)
        if UI not in self.device.capabilities:
            settle_ms = 0  # a phone whose screen cannot be read (Termux without adb) is not looked at
        call.params = params = parse_params(
            spec.params, wire, also_allowed=(SETTLE_KEY,) if spec.settles else ()
        )
        ctx = ActionContext(
            call.name,
            self.device,
            self.settings,
            call.caller,
            self.components,
            call.app_target or None,
            call.request_id,
            call.deadline,
        )
        if spec.check is not None and (reading := spec.check(ctx, params)) is not None:
            await reading  # a check that reads the phone (a recipient's contacts)
        if spec.describe is not None:
            ctx.about = call.about = await spec.describe(ctx, params)
        if self.policies:
            call.phase = "policies"
            call.effects = spec.effects_of(params)
            view = call.view
            for policy in self.policies:
                await policy.check(view)
        if self.bus.interested("TASK_STARTED", call.name):
            self.bus.publish(
                TaskStarted(
                    request_id=call.request_id,
                    action_type=call.name,
                    params=dict(call.wire_params),
                    caller=CallerInfo(**call.caller.as_json()),
                ).to_event(SOURCE, subject=call.name)
            )
        set_deadline(call.deadline)  # this task's own context: its primitives and their threads see it
        if call.caller.owner or not (spec.requires or spec.drives_ui):
            # The owner's own calls, and those that leave the phone alone (CHAT_REPLY), run as they come.
            if spec.takes_turns:
                return await self._in_turn(call, spec, ctx, params, settle_ms)
            call.phase = "device"
            return await spec.run(ctx, params, settle_ms)
        return await self._drive(call, spec, ctx, params, settle_ms)

    async def _in_turn(
        self, call: _Call, spec: AnyActionSpec, ctx: ActionContext, params: Any, settle_ms: int
    ) -> str:
        turns = self.turns
        if not turns.take_now():
            call.phase = "turn"
            await turns.take()
        try:
            call.phase = "device"
            return await spec.run(ctx, params, settle_ms)
        finally:
            turns.give_back()

    async def _drive(
        self, call: _Call, spec: AnyActionSpec, ctx: ActionContext, params: Any, settle_ms: int
    ) -> str:
        """Runs a caller's device work once no other call's hold is pending (a call a person
        approved goes on regardless: it was the one asked about), in its turn on the phone, and,
        for a UI action, with what is in front read after the turn was taken: one of the owner's
        controls refuses it (PERMISSION_DENIED), a package in `approve_ui_in` holds it. Holds
        are waited for without the turn, so an approved call is never stuck behind one."""
        turns = self.turns
        approvals = self.approvals
        allowed: set[str] = set()  # guarded packages a front policy let this call run in front of
        while True:
            waited = bool(call.held_ms)
            if not call.approved:
                call.phase = "waiting"
                waited = waited or approvals.blocking(call) is not None
                await approvals.settled(call)
            if self.refusals and (call.approved or waited):  # the world may have moved on meanwhile
                call.phase = "policies"
                for refusal in self.refusals:
                    await refusal.check(call.view)
            took = False
            if spec.takes_turns:
                if not turns.take_now():
                    call.phase = "turn"
                    await turns.take()
                took = True
            try:
                drives = spec.drives_ui_with(params)
                guarded = drives and self.device.guards_front
                reason = await self._front(call) if drives and not guarded else None
                if reason is None and (call.approved or approvals.blocking(call) is None):
                    call.phase = "device"
                    if not guarded:
                        seen = self.device.refs.screen
                        result = await spec.run(ctx, params, settle_ms)
                        if drives:
                            await self._left_in_front(call)
                        elif (looked := self._front_looked(seen)) is not None:
                            await self._brought_before(call, looked)  # a read's look (DUMP_UI)
                        return result
                    done, reason = await self._run_guarded(
                        call, spec, ctx, params, settle_ms, allowed=allowed
                    )
                    if done is not None:
                        return done
            finally:
                if took:
                    turns.give_back()
            if reason is not None:
                call.phase = "policies"
                await call.ask(reason)
            # else another call was held while this one waited for its turn: wait for that one.

    async def _run_guarded(
        self,
        call: _Call,
        spec: AnyActionSpec,
        ctx: ActionContext,
        params: Any,
        settle_ms: int,
        *,
        allowed: set[str],
    ) -> tuple[str | None, str | None]:
        """A UI action on a phone that checks what is in front in the action's own command
        (front_guard.py): its result, or the reason to hold it (the phone refused to act)."""
        token = set_guard(FrontGuard(self._guarded_fronts(call, allowed)))
        seen = self.device.refs.screen
        refused: Foreground | None = None
        try:
            result = await spec.run(ctx, params, settle_ms)
        except FrontRefused as refusal:
            refused = refusal.front
        finally:
            reset_guard(token)
        if refused is not None:
            await self._brought_before(call, refused)
            return None, await self._refused_front(call, refused, allowed)
        looked = self._front_looked(seen)
        # Without a look after it (settle_ms=0), what the action brought is judged by the next
        # look or UI action the phone refuses (_brought_before).
        self._unlooked = None if looked is not None else asyncio.get_running_loop().time()
        if looked is not None:
            await self._left_in_front(call, looked)
        return result, None

    def _guarded_fronts(self, call: _Call, allowed: set[str]) -> frozenset[str]:
        """The packages the phone must find not in front: the owner's apps, and those a front
        policy may hold UI actions in (approve_ui_in) but this call was not let into."""
        held = self.settings.approve_ui_in if self._front_policies else frozenset()
        return self.settings.owner_apps | (held - allowed - {call.approved_in or ""})

    async def _refused_front(self, call: _Call, front: Foreground, allowed: set[str]) -> str | None:
        """What the phone found in front when it refused: as `_judge_front`, and with no hold,
        that package is let in front when the action runs again."""
        reason = await self._judge_front(call, front)
        if reason is None:
            allowed.add(front.package)
        return reason

    def _front_looked(self, before: UiNode | None) -> Foreground | None:
        """What the screen a UI action's settle looked at last showed in front, when it looked
        during the action (the device's remembered screen is no longer `before`); else None."""
        screen = self.device.refs.screen
        if screen is None or screen is before:
            return None
        package = front_package(screen)
        return Foreground(package=package, activity="") if package else None

    async def _brought_before(self, call: _Call, front: Foreground) -> None:
        """The first look at the screen (a read's, DUMP_UI) or guarded UI action the phone refused
        after an agent's UI action nobody looked at after (settle_ms=0: no round trip of its own to
        read the front, and a read at once would miss an app still starting), within UNLOOKED_S of
        it: an owner's control in front then is taken as brought by that action, undone with HOME
        and refused, naming it. (Later, or after a look, it is the owner's: refused, not undone.)"""
        since, self._unlooked = self._unlooked, None
        if since is None or asyncio.get_running_loop().time() - since > UNLOOKED_S:
            return
        refusal = brought_refusal(self.settings.owner, front)
        if refusal is not None:
            await self.device.press_key(KEYCODES["HOME"])
            cause = refusal.removeprefix("it ")
            raise PermissionDenied(f"{call.name}: the UI action before it, with settle_ms=0, {cause}")

    async def _left_in_front(self, call: _Call, front: Foreground | None = None) -> None:
        """After a UI action, in its turn: one that brought one of the owner's controls to the
        front (its icon, its card in recents) is undone with HOME and refused (owner/controls.py).
        `front`: what the action's settle saw last (on a guarded phone, whose primitives check the
        front only before they act); else read now."""
        if front is None:
            front = await self.device.foreground()
        refusal = brought_refusal(self.settings.owner, front)
        if refusal is not None:
            await self.device.press_key(KEYCODES["HOME"])
            raise PermissionDenied(f"{call.name}: {refusal}")

    async def _front(self, call: _Call) -> str | None:
        """Reads what is in front for a UI action, and judges it (`_judge_front`)."""
        call.phase = "front"
        return await self._judge_front(call, await self.device.foreground())

    async def _judge_front(self, call: _Call, front: Foreground) -> str | None:
        """PermissionDenied for the owner's controls; the reason to hold the call when a policy
        wants the owner to approve UI in that app (unless the owner already did); else None."""
        refusal = front_refusal(self.settings.owner, front)
        if refusal is not None:
            raise PermissionDenied(f"{call.name}: {refusal}")
        if call.approved_in == front.package:
            return None
        for policy in self._front_policies:
            reason = await policy.hold_in_front(call.view, front.package)
            if reason is not None:
                call.approved_in = front.package
                call.approved = False
                return reason
        return None

    # --- Query -------------------------------------------------------------
    async def query(self, caller: Caller, request: QueryCall) -> QueryPage:
        """One page of results. Every failure, a malformed request included, raises RuntimeFailure."""
        spec: AnyQuerySpec | None = self.registry.queries.get(request.query_type)
        if spec is None:
            known = ", ".join(sorted(self.registry.queries))
            raise BadRequest(
                f"query_type {request.query_type or 'QUERY_TYPE_UNSPECIFIED'} is not served; use {known}"
            )
        if request.limit < 0:
            raise BadRequest(f"limit must be >= 0, got {request.limit}")
        if self._closing:
            raise _stopping()
        limit = min(request.limit or DEFAULT_QUERY_LIMIT, self.settings.query_max_limit)
        filters = dict(request.filters)
        offset_text = filters.pop(OFFSET_KEY, "0")
        # isdigit() alone takes "²", which int() refuses.
        if not (
            0 < len(offset_text) <= MAX_OFFSET_DIGITS and offset_text.isascii() and offset_text.isdigit()
        ):
            raise BadRequest(
                f"filter offset must be a non-negative integer of at most {MAX_OFFSET_DIGITS} digits, "
                f"got {clip(offset_text)}"
            )
        offset = int(offset_text)
        if spec.requires:
            self._supported(request.query_type, spec.requires)
        parsed = parse_params(spec.filters, filters, also_allowed=(OFFSET_KEY,))
        # The transport's deadline (a gRPC client may send any): a hold's never passes a day.
        timeout_s = min(request.timeout_s, MAX_TIMEOUT_MS / 1000)
        loop = self._loop
        now = loop.time()
        call = _Call(
            caller,
            "query",
            request.query_type,
            "",
            None,
            request.filters,
            now + timeout_s,
            self.approvals,
            params=parsed,
            started=now,
            effects=frozenset({request.query_type}),
        )
        # The deadline cancels this very task; a query changes nothing, so nothing is left half done.
        call.task = asyncio.current_task()
        timer = loop.call_at(call.deadline, _expire, call)
        try:
            if self.policies:
                view = call.view
                for policy in self.policies:
                    await policy.check(view)
            ctx = QueryContext(request.query_type, self.device, self.settings, caller, self.components)
            call.phase = "device"
            deadline_token = set_deadline(call.deadline)
            try:
                matches: Sequence[BaseModel] = await spec.handler(ctx, parsed)
            finally:
                reset_deadline(deadline_token)
        except BaseException as exc:
            if call.expired:  # the deadline, however the handler let its cancellation out
                _uncancel(call.task)
                within_ms = int(timeout_s * 1000)
                if call.holding is not None:
                    raise Timeout(
                        f"no answer came to approval {call.holding} for {request.query_type} within "
                        f"{within_ms} ms; nothing was read. {how_to_answer(call.holding)}",
                        details={"approval_id": call.holding, "held_ms": call.held_ms},
                    ) from None
                raise Timeout(f"{request.query_type} query did not finish within {within_ms} ms") from None
            if isinstance(exc, (asyncio.CancelledError, KeyboardInterrupt, SystemExit)):
                raise  # the caller went away, or the process is ending
            raise self._escaped(exc, doing=f"{request.query_type} query") from None
        finally:
            timer.cancel()
        return _page(matches, offset, limit)

    # --- Subscribe -----------------------------------------------------------
    def subscribe(self, caller: Caller, subscriber_id: str, event_types: Iterable[str]) -> Subscription:
        """A stream of events. Subscriber ids are the caller's own: another principal's same id
        names another stream. Raises BadRequest for an id or event types past their limits, and for
        an event type the registry does not know (the core's, the components' and plug-ins')."""
        problem = bad_id("subscriber_id", subscriber_id, empty_ok=True)
        if problem is not None:
            raise BadRequest(problem)
        types = tuple(event_types)
        if len(types) > MAX_EVENT_TYPES:
            raise BadRequest(f"event_types has {len(types)} entries; at most {MAX_EVENT_TYPES} are allowed")
        longest = max(types, key=len, default="")
        if len(longest) > MAX_NAME_CHARS:
            raise BadRequest(too_long("event type", len(longest), MAX_NAME_CHARS))
        unknown = [t for t in types if t not in self.registry.events]
        if unknown:  # a typo would wait forever for an event nobody publishes
            raise BadRequest(self.registry.unknown_event(unknown[0]))
        return self.bus.subscribe(subscriber_id, types, scope=caller.principal)

    def unsubscribe(self, sub: Subscription) -> None:
        self.bus.unsubscribe(sub)

    def end_streams(self, principals: Iterable[str], reason: str) -> int:
        """Ends the open streams of these principals (their tokens were revoked); how many."""
        ended = sum(self.bus.end_scope(principal, reason) for principal in principals)
        if ended:
            log.warning("ended %d stream(s) of %s: %s", ended, ", ".join(sorted(principals)), reason)
        return ended


def _page(matches: Sequence[BaseModel], offset: int, limit: int) -> QueryPage:
    """Up to `limit` results from `offset`, ending early rather than pass MAX_RESPONSE_JSON_BYTES
    (has_more then says so, and paging on by the results' count reaches everything). A result
    too large to send on its own is replaced by the omitted-result marker, in its place."""
    results: list[str] = []
    budget = MAX_RESPONSE_JSON_BYTES
    for match in matches[offset : offset + limit]:
        text = match.model_dump_json(by_alias=True)
        size = utf8_size(text)
        if size > MAX_RESPONSE_JSON_BYTES:
            text = omitted_json(size)
            size = len(text)
        if size > budget and results:
            break
        budget -= size
        results.append(text)
    return QueryPage(results, total_count=len(matches), has_more=offset + len(results) < len(matches))


def _json(details: dict[str, object]) -> str:
    import json

    return json.dumps(details, ensure_ascii=False)
