"""The runtime: execute, query and subscribe, independent of gRPC and WebSocket.

`rpc/servicer.py` and the gateway translate their frames into these calls; all the
contracts of design.md section 2 (validation, deadlines, idempotency, policies,
events) are enforced here, once.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from collections.abc import Awaitable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel

from .config import Settings
from .device.base import Device
from .errors import BadRequest, Conflict, DeviceUnavailable, Internal, InvalidParams, RuntimeFailure, Timeout
from .events import ErrorEvent, EventBus, Subscription, TaskCompleted
from .idempotency import IdempotencyCache, fingerprint
from .memory import MemoryStore
from .params import parse_params
from .policies import ActionListPolicy, Policy, PolicyCall
from .registry import ActionContext, ActionResult, QueryContext, Registry

log = logging.getLogger(__name__)
T = TypeVar("T")

SOURCE = "phoneuse.runtime"
DEFAULT_QUERY_LIMIT = 20
OFFSET_KEY = "offset"


async def within(seconds: float | None, work: Awaitable[T]) -> T:
    """Awaits `work`, cancelling it after `seconds` (asyncio.TimeoutError). One task fewer than
    wait_for on Python 3.11+, where asyncio.timeout exists."""
    if sys.version_info >= (3, 11):
        async with asyncio.timeout(seconds):
            return await work
    return await asyncio.wait_for(work, seconds)  # pragma: no cover


def _start_task(work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
    """A task for `work`. From Python 3.12 it starts eagerly: an action that finishes without
    waiting (most sim actions) completes before this returns, sparing two loop iterations."""
    if sys.version_info >= (3, 12):
        return asyncio.Task(work, loop=asyncio.get_running_loop(), eager_start=True)
    return asyncio.create_task(work)


@dataclass(frozen=True)
class ActionCall:
    action_type: str
    params: Mapping[str, str]
    request_id: str
    timeout_ms: int
    app_target: str | None = None


@dataclass(frozen=True)
class ActionOutcome:
    request_id: str
    success: bool
    result_json: str
    error: str
    duration_ms: int


@dataclass(frozen=True)
class QueryPage:
    results: list[str]
    total_count: int
    has_more: bool


@dataclass
class Runtime:
    """One phone, its handlers, and the services handlers share."""

    device: Device
    registry: Registry
    settings: Settings
    memory: MemoryStore
    bus: EventBus = field(default_factory=EventBus)
    policies: list[Policy] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._replays: IdempotencyCache[ActionOutcome] = IdempotencyCache(
            ttl_s=self.settings.idempotency_ttl_s, max_entries=self.settings.idempotency_max_entries
        )
        self._tasks: set[asyncio.Task[None]] = set()
        # One phone, one finger: exclusive actions take turns (waiting counts against their deadline).
        self.device_lock = asyncio.Lock()

    @classmethod
    def create(cls, device: Device, registry: Registry, settings: Settings) -> Runtime:
        """The production assembly: memory under the data dir, the configured policy chain."""
        return cls(
            device=device,
            registry=registry,
            settings=settings,
            memory=MemoryStore(settings.data_dir / "memory.json"),
            bus=EventBus(queue_size=settings.event_queue_size),
            policies=[ActionListPolicy(allow=settings.allow_actions, deny=settings.deny_actions)],
        )

    async def start(self) -> None:
        self.memory.load()
        await self.device.start(self.bus.publish)

    async def close(self, *, grace_s: float = 0.0) -> None:
        """Lets in-flight actions finish within `grace_s`, cancels the rest, ends all streams."""
        if self._tasks:
            _, pending = await asyncio.wait(set(self._tasks), timeout=grace_s)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending)
        await self.device.close()
        self.bus.close()

    # --- Execute -----------------------------------------------------------
    async def execute(self, call: ActionCall) -> ActionOutcome:
        """Runs an action once per request_id. Raises BadRequest for a malformed call."""
        if not call.action_type:
            raise BadRequest("action_type is empty")
        if not call.request_id:
            raise BadRequest("request_id is empty")
        if call.timeout_ms <= 0:
            raise BadRequest(f"timeout_ms must be > 0, got {call.timeout_ms}")
        fp = fingerprint(call.action_type, call.app_target, call.params)
        seen = self._replays.lookup(call.request_id, fp)
        if seen is not None:
            if seen.outcome is None:
                failure = Conflict(
                    f"request_id {call.request_id!r} was already used for a different request "
                    f"({seen.conflicting_action}); use a new request_id"
                )
                return ActionOutcome(call.request_id, False, "{}", failure.wire(), 0)
            return await asyncio.shield(seen.outcome)
        self._replays.claim(call.request_id, fp, call.action_type)
        # The action runs in its own task: a client that disconnects or whose own deadline
        # passes does not cancel half an action; its retry gets the stored outcome. The caller
        # waits on a future of its own, which its cancellation may cancel without harm.
        answer: asyncio.Future[ActionOutcome] = asyncio.get_running_loop().create_future()
        task = _start_task(self._run(call, answer))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return await answer

    async def _run(self, call: ActionCall, answer: asyncio.Future[ActionOutcome]) -> None:
        """Runs the action to its outcome, records it for replays and answers the caller."""
        started = time.monotonic()
        try:
            outcome = await self._attempt(call, started)  # catches everything but cancellation
        except asyncio.CancelledError:
            failure = DeviceUnavailable("the server shut down before the action finished")
            elapsed = int((time.monotonic() - started) * 1000)
            outcome = ActionOutcome(call.request_id, False, "{}", failure.wire(), elapsed)
            raise
        finally:
            self._replays.finish(call.request_id, outcome)
            if not answer.done():
                answer.set_result(outcome)

    async def _attempt(self, call: ActionCall, started: float) -> ActionOutcome:
        log.debug("action %s (request %s) started", call.action_type, call.request_id)
        deadline = asyncio.get_running_loop().time() + call.timeout_ms / 1000
        try:
            result = await within(call.timeout_ms / 1000, self._perform(call, deadline))
            success, result_json, error = True, result, ""
        except asyncio.TimeoutError:
            failure: RuntimeFailure = Timeout(
                f"{call.action_type} did not finish within {call.timeout_ms} ms; "
                "its device work was cancelled"
            )
            success, result_json, error = False, "{}", failure.wire()
        except RuntimeFailure as exc:
            success, result_json, error = False, json.dumps(exc.details, ensure_ascii=False), exc.wire()
        except Exception:
            log.exception("action %s (request %s) crashed", call.action_type, call.request_id)
            failure = Internal(f"{call.action_type} failed unexpectedly; see the server log")
            success, result_json, error = False, "{}", failure.wire()
            self.bus.publish(ErrorEvent(code=failure.code, message=failure.message).to_event(SOURCE))
        duration_ms = int((time.monotonic() - started) * 1000)
        if self.bus.subscriber_count:  # building the event costs; skip it when nobody listens
            self.bus.publish(
                TaskCompleted(
                    request_id=call.request_id,
                    action_type=call.action_type,
                    success=success,
                    error=error,
                    duration_ms=duration_ms,
                ).to_event(SOURCE)
            )
        return ActionOutcome(call.request_id, success, result_json, error, duration_ms)

    async def _perform(self, call: ActionCall, deadline: float) -> str:
        spec = self.registry.action(call.action_type)
        params = parse_params(spec.params, call.params)
        policy_call = PolicyCall(call.request_id, call.action_type, call.app_target, params, deadline)
        for policy in self.policies:
            await policy.check(policy_call)
        ctx = ActionContext(
            device=self.device,
            app_target=call.app_target or None,
            settings=self.settings,
            memory=self.memory,
            request_id=call.request_id,
            deadline=deadline,
        )
        if spec.exclusive:
            async with self.device_lock:
                result: ActionResult = await spec.handler(ctx, params)
        else:
            result = await spec.handler(ctx, params)
        return result.model_dump_json(by_alias=True)

    # --- Query -------------------------------------------------------------
    async def query(
        self, query_type: str, filters: Mapping[str, str], limit: int, *, timeout_s: float | None = None
    ) -> QueryPage:
        """One page of results. Raises BadRequest for bad filters, RuntimeFailure for device trouble."""
        spec = self.registry.queries.get(query_type)
        if spec is None:
            known = ", ".join(sorted(self.registry.queries))
            raise BadRequest(
                f"query_type {query_type or 'QUERY_TYPE_UNSPECIFIED'} is not served; use {known}"
            )
        if limit < 0:
            raise BadRequest(f"limit must be >= 0, got {limit}")
        limit = min(limit or DEFAULT_QUERY_LIMIT, self.settings.query_max_limit)
        raw = dict(filters)
        offset_text = raw.pop(OFFSET_KEY, "0")
        if not offset_text.isdigit():
            raise BadRequest(f"filter offset must be a non-negative integer, got {offset_text!r}")
        offset = int(offset_text)
        try:
            parsed = parse_params(spec.filters, raw, also_allowed=(OFFSET_KEY,))
        except InvalidParams as exc:
            raise BadRequest(f"{query_type}: {exc.message}") from None
        ctx = QueryContext(device=self.device, settings=self.settings, memory=self.memory)
        try:
            matches: Sequence[BaseModel] = await within(timeout_s, spec.handler(ctx, parsed))
        except asyncio.TimeoutError:
            raise Timeout(f"{query_type} query did not finish within {timeout_s:.1f} s") from None
        page = matches[offset : offset + limit]
        return QueryPage(
            results=[m.model_dump_json(by_alias=True) for m in page],
            total_count=len(matches),
            has_more=offset + len(page) < len(matches),
        )

    # --- Subscribe -----------------------------------------------------------
    def subscribe(self, subscriber_id: str, event_types: Iterable[str]) -> Subscription:
        return self.bus.subscribe(subscriber_id, event_types)

    def unsubscribe(self, sub: Subscription) -> None:
        self.bus.unsubscribe(sub)
