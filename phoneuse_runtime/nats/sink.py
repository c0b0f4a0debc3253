"""The JetStream event sink: every event on the runtime's bus, appended to a file-backed stream.

Subjects are `phoneuse.<device_name>.<event_type>` in the stream `PHONEUSE_EVENTS` (subjects
`phoneuse.>`, file storage, created if absent). Each message body is one JSON object:
`{"id", "device", "event_type", "source", "timestamp", "payload"}`, and carries the header
`Nats-Msg-Id` = `id` = `<device>.<run>.<n>` (`run` is new each time the runtime starts, `n`
counts the events it accepted): a message published again after a reconnect, whose first ack
was lost, is stored once (JetStream's duplicate window, 2 minutes).

The sink is an inside subscriber of the bus (the phone is not polled for it): the bus keeps
its semantics, and the publisher never waits on the sink. The sink moves what the bus queued
for it into its own buffer at once, and publishes from there with JetStream acks, in order,
up to `PUBLISH_WINDOW` messages in flight. An event leaves the buffer only once acked.

Outage bound: while NATS is unreachable the buffer keeps at most `nats_buffer_events` events
(10,000 by default), in memory. Past it the OLDEST are dropped; they are counted (`dropped`),
logged, and once NATS is back an `ERROR` event with code `EVENTS_DROPPED` and the count is
published after what was kept. A runtime that is killed loses no event it logged as acked:
an ack means the JetStream server has stored it. While NATS is unreachable the buffer is also
on disk (`nats_spool`, on by default: nats/spool.py), and so it is while more than
`SPOOL_PAST` events wait for acks with NATS up (it falls behind): a runtime killed then
publishes what it had accepted at its next start, and a kill loses at most `SPOOL_PAST`
accepted events, never one acked. Without the spool a kill loses the buffer.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import json
import logging
import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from phoneuse_runtime.config.settings import Settings
from phoneuse_runtime.kernel.events import ErrorEvent, Event, Subscription
from phoneuse_runtime.kernel.registry import Contribution
from phoneuse_runtime.nats.link import NatsLink
from phoneuse_runtime.nats.spool import Pending, Spool
from phoneuse_runtime.owner.privacy import mask_secrets, mask_values

if TYPE_CHECKING:
    from phoneuse_runtime.kernel.runtime import Runtime

log = logging.getLogger(__name__)

STREAM = "PHONEUSE_EVENTS"
SUBJECT_ROOT = "phoneuse"
SUBJECTS = f"{SUBJECT_ROOT}.>"
DUPLICATE_WINDOW_S = 120.0
DEFAULT_BUFFER_EVENTS = 10_000
DEFAULT_MAX_AGE_S = Settings.nats_stream_max_age_s
DEFAULT_MAX_BYTES = Settings.nats_stream_max_bytes
PUBLISH_WINDOW = 256  # messages in flight before their acks are awaited
ACK_TIMEOUT_S = 5.0
RETRY_S = 0.25
# Unacked events past which the buffer is spooled even with NATS up (it is falling behind): a
# kill then loses at most these, never one acked.
SPOOL_PAST = 2 * PUBLISH_WINDOW
SUBSCRIBER = "jetstream-sink"
MASK_INLINE_CHARS = 16_384  # payloads longer than this are masked on a thread, not the loop
SCOPE = "nats"
SOURCE = "phoneuse.nats"
_TOKEN_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def subject_for(device: str, event_type: str) -> str:
    """`phoneuse.<device>.<event_type>`; an event type is made one subject token by the device
    names' rule."""
    return f"{SUBJECT_ROOT}.{device}.{_TOKEN_UNSAFE.sub('_', event_type) or '_'}"


class JetStreamSink:
    """A component: the bus's events into JetStream (see the module's doc)."""

    name = "nats-events"

    def __init__(
        self,
        link: NatsLink,
        *,
        device_name: str,
        buffer_events: int = DEFAULT_BUFFER_EVENTS,
        spool: Path | None = None,
        bounds: StreamBounds | None = None,
    ) -> None:
        self.link = link
        self.bounds = bounds or StreamBounds()
        self.spool = Spool(spool, bound=buffer_events) if spool is not None else None
        self.replayed = 0  # events an earlier run left in the spool, published first
        self.device_name = device_name
        self.buffer_events = buffer_events
        self.run = uuid.uuid4().hex[:12]
        self.accepted = 0  # events taken into the buffer
        self.acked = 0  # events JetStream acked (duplicates included)
        self.duplicates = 0  # acks that said "already stored" (a re-publish)
        self.dropped = 0  # events lost: the buffer was full, or the bus's queue for us overflowed
        self._unreported = 0  # of dropped, not yet announced by an EVENTS_DROPPED event
        self._buffer: collections.deque[Pending] = collections.deque()
        self._wake = asyncio.Event()
        self._drained = asyncio.Event()
        self._drained.set()
        self._tasks: list[asyncio.Task[None]] = []
        self._sub: Subscription | None = None
        self._runtime: Runtime | None = None
        self._stream_ready = False
        self._failing = False

    def contribution(self) -> Contribution:
        return Contribution()

    @property
    def buffered(self) -> int:
        return len(self._buffer)

    async def start(self, runtime: Runtime) -> None:
        self._runtime = runtime
        if self.spool is not None:
            left = await asyncio.to_thread(self.spool.load)
            if left:
                # An earlier run was stopped (killed) before NATS had these: they go first.
                self._buffer.extend(left)
                self.replayed = len(left)
                self._drained.clear()
                await asyncio.to_thread(self.spool.begin, list(self._buffer))
                log.warning("publishing %d event(s) an earlier run left in %s", len(left), self.spool.path)
        self.link.acquire()
        # Every event (no types named), as an inside listener: nothing is polled for it.
        self._sub = runtime.bus.subscribe(SUBSCRIBER, (), scope=SCOPE, outside=False)
        self._tasks = [
            asyncio.create_task(self._receive(self._sub), name="nats-sink-receive"),
            asyncio.create_task(self._publish_loop(), name="nats-sink-publish"),
        ]
        log.info(
            "appending events to JetStream stream %s as %s.%s.* (run %s, buffer %d)",
            STREAM,
            SUBJECT_ROOT,
            self.device_name,
            self.run,
            self.buffer_events,
        )

    async def stop(self, *, grace_s: float) -> None:
        """Takes the bus's last events (the runtime closing ends our stream, after the calls it
        lets finish) and publishes what is buffered, within `grace_s` (when NATS is up)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(grace_s, 0.5)
        if self._tasks:
            await asyncio.wait([self._tasks[0]], timeout=max(grace_s - 0.5, 0.1))
        if self._runtime is not None and self._sub is not None:
            self._runtime.bus.unsubscribe(self._sub)  # a bus that is not closing: stop here
            await asyncio.wait([self._tasks[0]], timeout=0.5)
        if self._buffer and self.link.connected:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._drained.wait(), timeout=max(deadline - loop.time(), 0.2))
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._buffer:
            where = f"kept in {self.spool.path} for the next start" if self.spool is not None else "lost"
            log.warning("stopping with %d event(s) not acked by JetStream: %s", len(self._buffer), where)
            if self.spool is not None and not self.spool.active:
                self.spool.begin(self._buffer)
        if self.spool is not None:
            self.spool.close()
        await self.link.release()

    # --- in ------------------------------------------------------------------------------
    async def _receive(self, sub: Subscription) -> None:
        async for event in sub:
            lost = _bus_overflow(event)
            if lost:  # our queue on the bus overflowed: the loop was starved
                self._lose(lost)
            payload = event.payload_json or "{}"
            if len(payload) > MASK_INLINE_CHARS:  # a long text is masked off the event loop
                payload = await asyncio.to_thread(masked_payload, payload)
            else:
                payload = masked_payload(payload)
            self._accept(event, payload)

    def _accept(self, event: Event, payload: str) -> None:
        """Takes `event` with its `payload` (JSON, masked) into the buffer (and the spool)."""
        self.accepted += 1
        msg_id = f"{self.device_name}.{self.run}.{self.accepted}"
        body = (
            f'{{"id":{json.dumps(msg_id)},"device":{json.dumps(self.device_name)},'
            f'"event_type":{json.dumps(event.event_type)},"source":{json.dumps(event.source)},'
            f'"timestamp":{event.timestamp},"payload":{payload}}}'
        )
        if len(self._buffer) >= self.buffer_events:
            self._buffer.popleft()
            self._lose(1)
        item = Pending(msg_id, subject_for(self.device_name, event.event_type), body.encode())
        self._buffer.append(item)
        spool = self.spool
        if spool is not None:
            if spool.active:
                spool.append((item,))
                if spool.too_long():
                    spool.begin(self._buffer)
            elif not self.link.connected or len(self._buffer) > SPOOL_PAST:
                # NATS is away or behind: from now on the buffer is on disk too.
                why = "unreachable" if not self.link.connected else "behind"
                log.info(
                    "NATS is %s, %d event(s) unacked: spooling them to %s", why, len(self._buffer), spool.path
                )
                spool.begin(self._buffer)
        self._drained.clear()
        self._wake.set()

    def _lose(self, count: int) -> None:
        if not self._unreported:
            log.warning(
                "JetStream sink: buffer full (%d events; NATS at %s unreachable or slow): dropping oldest",
                self.buffer_events,
                self.link.url,
            )
        self.dropped += count
        self._unreported += count

    # --- out -----------------------------------------------------------------------------
    async def _publish_loop(self) -> None:
        while True:
            if not self._buffer:
                self._drained.set()
                self._wake.clear()
                await self._wake.wait()
                continue
            if not self.link.connected:
                await self.link.wait_connected(1.0)
                continue
            try:
                await self._publish_batch()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a lost connection, a timeout, a stream that went away
                # Said once per run of failures (a server without JetStream would fail each try).
                level = logging.DEBUG if self._failing else logging.WARNING
                log.log(
                    level, "JetStream publish failed (%s); %d event(s) kept to retry", exc, len(self._buffer)
                )
                self._failing = True
                self._stream_ready = False
                if self.spool is not None and not self.spool.active:
                    self.spool.begin(self._buffer)
                await asyncio.sleep(RETRY_S)  # the retry back-off; the link reconnects meanwhile
                continue
            if self._failing:
                self._failing = False
                log.info("JetStream publishing again; %d event(s) buffered", len(self._buffer))
            if self._unreported and self._runtime is not None:
                count, self._unreported = self._unreported, 0
                log.warning("JetStream sink caught up; %d event(s) were dropped meanwhile", count)
                notice = ErrorEvent(
                    code="EVENTS_DROPPED",
                    message=f"{count} event(s) dropped: NATS was unreachable past the sink's buffer",
                )
                self._runtime.bus.publish(notice.to_event(SOURCE))

    async def _publish_batch(self) -> None:
        js = self.link.js
        assert js is not None
        if not self._stream_ready:
            await ensure_stream(js, self.bounds)
            self._stream_ready = True
        batch = list(itertools.islice(self._buffer, PUBLISH_WINDOW))
        futures: list[asyncio.Future[Any]] = []
        try:
            for item in batch:
                headers = {"Nats-Msg-Id": item.msg_id}
                futures.append(await js.publish_async(item.subject, item.data, headers=headers))
            acks = await asyncio.wait_for(asyncio.gather(*futures), timeout=ACK_TIMEOUT_S)
        finally:
            for future in futures:
                future.cancel()  # the unanswered ones (a failure): frees nats-py's window
        self.acked += len(acks)
        self.duplicates += sum(1 for ack in acks if ack.duplicate)
        last = batch[-1]
        sent = {id(item) for item in batch}
        while self._buffer and id(self._buffer[0]) in sent:  # some may have been dropped meanwhile
            self._buffer.popleft()
        if self.spool is not None and self.spool.active:
            if self._buffer:
                self.spool.acked(last.msg_id)
            else:
                self.spool.clear()
        log.debug(
            "JetStream acked %d event(s) through %s (stream seq %d; %d acked in all)",
            len(acks),
            last.msg_id,
            acks[-1].seq,
            self.acked,
        )


def masked_payload(payload_json: str) -> str:
    """An event's payload (JSON) with the one masking rule (owner/privacy.py) applied to each of
    its texts: no one-time code or password reaches JetStream or the spool."""
    try:
        payload = json.loads(payload_json)
    except ValueError:
        return json.dumps(mask_secrets(payload_json), ensure_ascii=False)
    masked = mask_values(payload)
    if masked == payload:
        return payload_json
    return json.dumps(masked, ensure_ascii=False, separators=(",", ":"))


def _bus_overflow(event: Event) -> int:
    """How many events the bus dropped from our queue, when `event` is our queue's own notice."""
    if event.event_type != "ERROR" or event.source != "phoneuse.runtime":
        return 0
    try:
        payload = json.loads(event.payload_json)
    except ValueError:
        return 0
    if payload.get("code") != "EVENTS_DROPPED":
        return 0
    head = str(payload.get("message", "")).split(" ", 1)[0]
    return int(head) if head.isdigit() else 0


@dataclass(frozen=True, slots=True)
class StreamBounds:
    """The events stream's retention: its oldest events leave past `max_age_s` or `max_bytes`
    (settings nats_stream_max_age_s, nats_stream_max_bytes)."""

    max_age_s: int = DEFAULT_MAX_AGE_S
    max_bytes: int = DEFAULT_MAX_BYTES


async def ensure_stream(js: Any, bounds: StreamBounds | None = None) -> None:
    """The events stream, created (file storage, bounded by `bounds`) unless it exists; one made
    without bounds (by an earlier version) gets them. A stream with bounds keeps its own: whoever
    administers it (the fleet) set them."""
    from nats.js.api import DiscardPolicy, StorageType, StreamConfig
    from nats.js.errors import BadRequestError, NotFoundError

    bounds = bounds or StreamBounds()
    try:
        info = await js.stream_info(STREAM)
    except NotFoundError:
        info = None
    if info is not None:
        config = info.config
        if (config.max_age or 0) > 0 and (config.max_bytes or -1) > 0:
            return
        config.max_age = float(bounds.max_age_s)
        config.max_bytes = bounds.max_bytes
        config.discard = DiscardPolicy.OLD
        await js.update_stream(config)
        log.info("bounded JetStream stream %s: %d s, %d bytes", STREAM, bounds.max_age_s, bounds.max_bytes)
        return
    try:
        await js.add_stream(
            StreamConfig(
                name=STREAM,
                subjects=[SUBJECTS],
                storage=StorageType.FILE,
                duplicate_window=DUPLICATE_WINDOW_S,
                max_age=float(bounds.max_age_s),
                max_bytes=bounds.max_bytes,
                discard=DiscardPolicy.OLD,
                description="phoneuse-runtime events: phoneuse.<device>.<event_type>",
            )
        )
        log.info(
            "created JetStream stream %s (%s, file storage, %d s, %d bytes)",
            STREAM,
            SUBJECTS,
            bounds.max_age_s,
            bounds.max_bytes,
        )
    except BadRequestError:  # another runtime made it meanwhile
        await js.stream_info(STREAM)
