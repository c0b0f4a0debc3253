"""Device and runtime events, and the bus that fans them out.

Publishing never blocks and never waits for a subscriber. Each subscriber owns a
bounded queue; when it is full the OLDEST queued event is dropped, and the next
event the subscriber reads is an `ERROR` event with code `EVENTS_DROPPED` and the
number lost, so a slow reader learns it missed something and never stalls others.
"""

from __future__ import annotations

import asyncio
import collections
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

log = logging.getLogger(__name__)

DEFAULT_QUEUE_SIZE = 1024


def now_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass(frozen=True)
class Event:
    """One event as it travels the bus; `payload` is already a JSON object string."""

    event_type: str
    payload_json: str
    source: str
    timestamp: int = field(default_factory=now_ms)


class EventPayload(BaseModel):
    """Base of the documented event payload schemas."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)
    event_type: str = ""

    def to_event(self, source: str) -> Event:
        payload = self.model_dump(mode="json", by_alias=True, exclude={"event_type"})
        return Event(self.event_type, json.dumps(payload, ensure_ascii=False), source)


class TaskCompleted(EventPayload):
    """After every Execute, successful or not."""

    event_type: str = "TASK_COMPLETED"
    request_id: str
    action_type: str
    success: bool
    error: str
    duration_ms: int


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
    """A failure outside any one call, or EVENTS_DROPPED for an overflowed subscriber."""

    event_type: str = "ERROR"
    code: str
    message: str


EVENT_PAYLOADS: tuple[type[EventPayload], ...] = (
    TaskCompleted,
    AppStateChanged,
    MessageReceived,
    NotificationPosted,
    CallStateChanged,
    DeviceConnected,
    DeviceDisconnected,
    ErrorEvent,
)

EventSink = Callable[[Event], None]


class Subscription:
    """One subscriber's bounded queue. Iterate it to receive events until it is closed."""

    def __init__(self, subscriber_id: str, event_types: Iterable[str], maxsize: int) -> None:
        self.subscriber_id = subscriber_id
        self.event_types = frozenset(event_types)
        self.maxsize = maxsize
        self.dropped = 0
        self.delivered = 0
        self._queue: collections.deque[Event] = collections.deque()
        self._wakeup = asyncio.Event()
        self._closed = False

    def wants(self, event: Event) -> bool:
        return not self.event_types or event.event_type in self.event_types

    def offer(self, event: Event) -> None:
        if self._closed:
            return
        if len(self._queue) >= self.maxsize:
            self._queue.popleft()
            self.dropped += 1
        self._queue.append(event)
        self._wakeup.set()

    def close(self) -> None:
        self._closed = True
        self._wakeup.set()

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
                yield self._queue.popleft()
                continue
            if self._closed:
                return
            self._wakeup.clear()
            await self._wakeup.wait()


class EventBus:
    """Fans events out to subscribers; `publish` is synchronous and O(subscribers)."""

    def __init__(self, *, queue_size: int = DEFAULT_QUEUE_SIZE) -> None:
        self.queue_size = queue_size
        self._subs: dict[str, Subscription] = {}
        self._closed = False

    def publish(self, event: Event) -> None:
        for sub in self._subs.values():
            if sub.wants(event):
                sub.offer(event)

    def subscribe(self, subscriber_id: str, event_types: Iterable[str]) -> Subscription:
        """Registers a subscriber; an existing one with the same id is closed and replaced."""
        sid = subscriber_id or f"anon-{uuid.uuid4().hex}"
        sub = Subscription(sid, event_types, self.queue_size)
        if self._closed:
            sub.close()
            return sub
        old = self._subs.get(sid)
        if old is not None:
            log.info("subscriber %s replaced by a new stream", sid)
            old.close()
        self._subs[sid] = sub
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        if self._subs.get(sub.subscriber_id) is sub:
            del self._subs[sub.subscriber_id]
        sub.close()

    def close(self) -> None:
        """Ends every stream; used on shutdown."""
        self._closed = True
        for sub in list(self._subs.values()):
            sub.close()
        self._subs.clear()

    @property
    def subscriber_count(self) -> int:
        return len(self._subs)
