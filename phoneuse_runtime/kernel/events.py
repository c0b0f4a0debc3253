"""Device and runtime events, and the bus that fans them out.

Publishing never blocks and never waits for a subscriber. Each subscriber owns a
queue bounded in events and in bytes; when it is full the OLDEST queued events are
dropped (the newest is always kept), and the next event the subscriber reads is an
`ERROR` event with code `EVENTS_DROPPED` and the number lost, so a slow reader learns
it missed something and never stalls others, and a stream that never reads holds a
bounded share of memory.
"""

from __future__ import annotations

import asyncio
import collections
import json
import logging
import sys
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from phoneuse_runtime.kernel.limits import fit_json, shorten

log = logging.getLogger(__name__)

DEFAULT_QUEUE_SIZE = 1024
DEFAULT_QUEUE_BYTES = 4 * 1024 * 1024
EVENT_OVERHEAD_BYTES = 256  # an Event beside its payload: the object, its type, source and subject
RESULT_PREVIEW_CHARS = 512  # TASK_COMPLETED's result_preview, at most
PREVIEW_VALUE_CHARS = 80  # a string value in it, at most


def now_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass(frozen=True)
class Event:
    """One event as it travels the bus; `payload` is already a JSON object string."""

    event_type: str
    payload_json: str
    source: str
    timestamp: int = field(default_factory=now_ms)
    # What the event is about, for subscribers that want only some of a type: the action type
    # of TASK_STARTED and TASK_COMPLETED. Not sent on any wire.
    subject: str = ""


def event_bytes(event: Event) -> int:
    """What a queued event holds in memory: its payload as CPython stores it, and the rest."""
    return sys.getsizeof(event.payload_json) + EVENT_OVERHEAD_BYTES


class EventPayload(BaseModel):
    """Base of the documented event payload schemas."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)
    event_type: str = ""
    omit_none: ClassVar[bool] = False  # whether a field left None is left out of the payload

    def to_event(self, source: str, *, subject: str = "") -> Event:
        payload = self.model_dump(
            mode="json", by_alias=True, exclude={"event_type"}, exclude_none=self.omit_none
        )
        text = json.dumps(payload, ensure_ascii=False)
        # A payload no client could receive (TASK_STARTED's params escape to six times their
        # size) would end every stream it reached: it travels as the omitted-result marker.
        return Event(self.event_type, fit_json(text), source, subject=subject)


class CallerInfo(BaseModel):
    """Who made a call: the front end it came through and the principal it authenticated as."""

    model_config = ConfigDict(extra="forbid", defer_build=True)
    frontend: str = Field(description="e.g. grpc, gateway")
    principal: str = Field(description="e.g. agent (the gRPC token), device:ID (a paired app)")


class TaskStarted(EventPayload):
    """An Execute passed validation and its policies, and its handler is about to run."""

    event_type: str = "TASK_STARTED"
    request_id: str
    action_type: str
    params: dict[str, str] = Field(description="the params as the caller sent them")
    caller: CallerInfo


class TaskCompleted(EventPayload):
    """After every Execute that ran or was refused (params, capability, policy), successful or not,
    one cut short by shutdown included; a replay of a stored response, or a CONFLICT, publishes none."""

    event_type: str = "TASK_COMPLETED"
    request_id: str
    action_type: str
    success: bool
    error: str
    duration_ms: int
    held_ms: int = Field(description="of duration_ms, the time the call waited for an approval")
    caller: CallerInfo
    result_preview: str = Field(
        default="",
        description=f"on success, the result JSON shortened to at most {RESULT_PREVIEW_CHARS} characters "
        f"(string values past {PREVIEW_VALUE_CHARS} characters cut, ending in …), for front ends "
        "that mirror the agent's work; empty on failure",
    )


def result_preview(result_json: str) -> str:
    """`result_json` as TASK_COMPLETED shows it: whole when short, else with its long string
    values (a screenshot's base64, a UI dump) cut, then cut to RESULT_PREVIEW_CHARS."""
    if len(result_json) <= RESULT_PREVIEW_CHARS:
        return result_json
    try:
        result = json.loads(result_json)
    except ValueError:
        result = None
    if isinstance(result, dict):
        result_json = json.dumps(
            {k: _short(v) for k, v in result.items()}, ensure_ascii=False, separators=(",", ":")
        )
    return shorten(result_json, RESULT_PREVIEW_CHARS)


def _short(value: object) -> object:
    return shorten(value, PREVIEW_VALUE_CHARS) if isinstance(value, str) else value


class ApprovalRequested(EventPayload):
    """A policy holds a call until a person approves or denies it, or its deadline passes."""

    event_type: str = "APPROVAL_REQUESTED"
    approval_id: str
    kind: str = Field(description="action or query")
    name: str = Field(description="the action_type or query type")
    request_id: str = Field(description="the Execute's request_id; empty for a query")
    params: dict[str, str] = Field(description="the params (or filters) as the caller sent them")
    app_target: str | None
    digest: str = Field(
        description="SHA-256 (hex) of the exact call: kind, name, app_target and params; "
        "an answer may quote it to approve exactly what it was shown"
    )
    caller: CallerInfo
    reason: str = Field(description="why the policy asks")
    deadline_ms: int = Field(description="epoch ms at which the call times out unanswered")


class ApprovalResolved(EventPayload):
    """A hold ended: approved, denied, expired (no answer before the deadline) or cancelled (shutdown)."""

    event_type: str = "APPROVAL_RESOLVED"
    approval_id: str
    outcome: str = Field(description="approved, denied, expired or cancelled")
    by: str = Field(description="who answered, as the approver named itself; empty when none did")
    waited_ms: int
    caller: CallerInfo


class AppStateChanged(EventPayload):
    """The foreground app or activity changed."""

    event_type: str = "APP_STATE_CHANGED"
    package: str
    activity: str
    previous_package: str


class MessageReceived(EventPayload):
    """An SMS or chat message arrived."""

    event_type: str = "MESSAGE_RECEIVED"
    from_: str = Field(alias="from")
    body: str
    app: str
    thread_id: str
    message_id: str


class NotificationPosted(EventPayload):
    """A notification appeared in the shade."""

    event_type: str = "NOTIFICATION_POSTED"
    package: str
    title: str
    text: str
    key: str


class SystemDialogShown(EventPayload):
    """A system dialog came up over the app: an "isn't responding" (anr) or "keeps stopping"
    (crash) dialog, a runtime permission prompt (the owner's to answer, never the agent's), found
    in a screen the runtime read (DUMP_UI, an action's settled screen); once per appearance."""

    event_type: str = "SYSTEM_DIALOG"
    kind: str = Field(description="anr, crash, permission or other")
    package: str = Field(description="the app it is about, where the phone's app list names it; else empty")
    label: str = Field(description="the app it is about, as the dialog names it")
    title: str
    buttons: list[str]


class CallStateChanged(EventPayload):
    """A call rang, started or ended."""

    event_type: str = "CALL_STATE_CHANGED"
    state: str
    number: str


class DeviceConnected(EventPayload):
    """The backend reached the phone."""

    event_type: str = "DEVICE_CONNECTED"
    device: str
    serial: str
    model: str


class DeviceDisconnected(EventPayload):
    """The backend lost the phone."""

    event_type: str = "DEVICE_DISCONNECTED"
    device: str
    serial: str
    reason: str


class ErrorEvent(EventPayload):
    """A failure outside any one call: `EVENTS_DROPPED` for an overflowed subscriber (with the
    count), `UI_SERVER_RESTARTED` when the phone's UI server (uiautomator2's) died and the backend
    restarted it (with `took_ms`; the next UI call works without the agent doing anything), or
    the code of an unforeseen failure."""

    event_type: str = "ERROR"
    code: str
    message: str
    took_ms: int | None = Field(
        default=None, description="`UI_SERVER_RESTARTED`: how long the restart took (ms); absent otherwise"
    )
    # `took_ms` belongs to one code: the other codes' payloads stay as they were.
    omit_none: ClassVar[bool] = True


CORE_EVENTS: tuple[type[EventPayload], ...] = (
    TaskStarted,
    TaskCompleted,
    ApprovalRequested,
    ApprovalResolved,
    AppStateChanged,
    MessageReceived,
    NotificationPosted,
    SystemDialogShown,
    CallStateChanged,
    DeviceConnected,
    DeviceDisconnected,
    ErrorEvent,
)


def event_type_of(payload: type[EventPayload]) -> str:
    default: str = payload.model_fields["event_type"].default
    return default


EventSink = Callable[[Event], None]


class Subscription:
    """One subscriber's bounded queue. Iterate it to receive events until it is closed."""

    def __init__(
        self,
        subscriber_id: str,
        event_types: Iterable[str],
        maxsize: int,
        narrow: Mapping[str, Iterable[str]] | None = None,
        *,
        outside: bool = True,
        max_bytes: int = DEFAULT_QUEUE_BYTES,
    ) -> None:
        self.subscriber_id = subscriber_id
        self.scope = ""
        # A caller's stream (gRPC Subscribe, a connected Iris device): what it wants is polled
        # from the phone. The runtime's own listeners (the memory) get events but make no poll.
        self.outside = outside
        self.event_types = frozenset(event_types)
        # Per event type, the only subjects wanted (e.g. TASK_COMPLETED of SEND_MESSAGE alone).
        self.narrow = {t: frozenset(subjects) for t, subjects in (narrow or {}).items()}
        if not self.narrow.keys() <= self.event_types:
            raise ValueError("a subscription narrows only event types it names")
        self.maxsize = maxsize
        self.max_bytes = max_bytes
        self.queued_bytes = 0
        self.dropped = 0
        self.delivered = 0
        self._queue: collections.deque[tuple[Event, int]] = collections.deque()
        self._wakeup = asyncio.Event()
        self._closed = False
        self.ended: str | None = None  # why the stream was ended (end), if it was

    def wants(self, event: Event) -> bool:
        if self.event_types and event.event_type not in self.event_types:
            return False
        subjects = self.narrow.get(event.event_type) if self.narrow else None
        return subjects is None or event.subject in subjects

    def offer(self, event: Event) -> None:
        if self._closed:
            return
        size = event_bytes(event)
        queue = self._queue
        while queue and (len(queue) >= self.maxsize or self.queued_bytes + size > self.max_bytes):
            self.queued_bytes -= queue.popleft()[1]
            self.dropped += 1
        queue.append((event, size))
        self.queued_bytes += size
        self._wakeup.set()

    def close(self) -> None:
        self._closed = True
        self._wakeup.set()

    def end(self, reason: str) -> None:
        """Closes the stream at once, its queued events dropped: its caller may no longer have
        them (its token was revoked). `ended` says why."""
        self.ended = reason
        self._queue.clear()
        self.dropped = 0
        self.close()

    @property
    def closed(self) -> bool:
        return self._closed

    def _drop_notice(self) -> Event:
        notice = ErrorEvent(code="EVENTS_DROPPED", message=f"{self.dropped} event(s) dropped: queue full")
        self.dropped = 0
        return notice.to_event("phoneuse.runtime")

    async def __aiter__(self) -> AsyncIterator[Event]:
        while True:
            if self.dropped:
                yield self._drop_notice()
                continue
            if self._queue:
                self.delivered += 1
                event, size = self._queue.popleft()
                self.queued_bytes -= size
                yield event
                continue
            if self._closed:
                return
            self._wakeup.clear()
            await self._wakeup.wait()


class EventBus:
    """Fans events out to subscribers; `publish` is synchronous and O(subscribers).

    Subscriber ids are scoped: the same id under two scopes (principals) names two streams."""

    def __init__(
        self, *, queue_size: int = DEFAULT_QUEUE_SIZE, queue_bytes: int = DEFAULT_QUEUE_BYTES
    ) -> None:
        self.queue_size = queue_size
        self.queue_bytes = queue_bytes
        self._subs: dict[tuple[str, str], Subscription] = {}
        # How many subscribers want every event, how many want each named type, and how many
        # want a type for some subjects only: lets a publisher skip building an event nobody
        # would receive (a TASK_COMPLETED per Execute, when only SEND_MESSAGE's are wanted).
        self._wants_all = 0
        self._wants: collections.Counter[str] = collections.Counter()
        self._wants_subject: collections.Counter[tuple[str, str]] = collections.Counter()
        # The same, for outside subscribers alone (`demanded`): what the phone is polled for.
        self._outside_all = 0
        self._outside: collections.Counter[str] = collections.Counter()
        self._closed = False

    def publish(self, event: Event) -> None:
        for sub in self._subs.values():
            if sub.wants(event):
                sub.offer(event)

    def interested(self, event_type: str, subject: str = "") -> bool:
        """Whether an event of this type (about `subject`, where it has one) would reach anyone."""
        # get, not []: a Counter's missing key goes through a Python-level __missing__.
        return (
            self._wants_all > 0
            or self._wants.get(event_type, 0) > 0
            or (self._wants_subject.get((event_type, subject), 0) > 0 if subject else False)
        )

    def demanded(self, event_type: str) -> bool:
        """Whether an outside subscriber (a caller's stream, not the runtime's own listeners)
        wants events of this type: what a backend polls the phone for."""
        return self._outside_all > 0 or self._outside.get(event_type, 0) > 0

    def subscribe(
        self,
        subscriber_id: str,
        event_types: Iterable[str],
        *,
        scope: str = "",
        narrow: Mapping[str, Iterable[str]] | None = None,
        outside: bool = True,
    ) -> Subscription:
        """Registers a subscriber; a live one with the same id in the same scope is closed and
        replaced. `narrow` keeps some of the named types to the given subjects only. An inside
        subscriber (`outside=False`: the memory, the gateway while no device is connected)
        receives what is published but never makes the phone be polled (`demanded`)."""
        sid = subscriber_id or f"anon-{uuid.uuid4().hex}"
        sub = Subscription(
            sid, event_types, self.queue_size, narrow, outside=outside, max_bytes=self.queue_bytes
        )
        if self._closed:
            sub.close()
            return sub
        old = self._subs.get((scope, sid))
        if old is not None:
            log.info("subscriber %s replaced by a new stream", sid)
            self._drop((scope, sid))
        self._subs[(scope, sid)] = sub
        sub.scope = scope
        self._count(sub, 1)
        return sub

    def set_outside(self, sub: Subscription, outside: bool) -> None:
        """Makes a live subscriber count as outside (its types are polled for) or not."""
        if sub.outside == outside:
            return
        live = self._subs.get((sub.scope, sub.subscriber_id)) is sub
        if live:
            self._count_outside(sub, -1)
        sub.outside = outside
        if live:
            self._count_outside(sub, 1)

    def _count_outside(self, sub: Subscription, step: int) -> None:
        if not sub.outside:
            return
        if not sub.event_types:
            self._outside_all += step
        for event_type in sub.event_types:
            self._outside[event_type] += step

    def _count(self, sub: Subscription, step: int) -> None:
        self._count_outside(sub, step)
        if not sub.event_types:
            self._wants_all += step
            return
        for event_type in sub.event_types:
            subjects = sub.narrow.get(event_type)
            if subjects is None:
                self._wants[event_type] += step
            else:
                for subject in subjects:
                    self._wants_subject[(event_type, subject)] += step

    def _drop(self, key: tuple[str, str]) -> None:
        sub = self._subs.pop(key)
        self._count(sub, -1)
        sub.close()

    def unsubscribe(self, sub: Subscription) -> None:
        key = (sub.scope, sub.subscriber_id)
        if self._subs.get(key) is sub:
            self._drop(key)
        sub.close()

    def end_scope(self, scope: str, reason: str) -> int:
        """Ends every stream of `scope` (a principal whose token was revoked); how many."""
        keys = [key for key in self._subs if key[0] == scope]
        for key in keys:
            sub = self._subs[key]
            self._drop(key)
            sub.end(reason)
        return len(keys)

    def close(self) -> None:
        """Ends every stream; used on shutdown."""
        self._closed = True
        for key in list(self._subs):
            self._drop(key)

    @property
    def subscriber_count(self) -> int:
        return len(self._subs)
