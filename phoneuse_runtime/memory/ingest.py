"""How the memory feeds itself: from the runtime's bus and from the phone's providers.

The ingestor is a bus subscriber like any stream: publishing never waits for it, and its queue
drops the oldest events if it ever falls 1024 behind (the providers' syncs catch up on what
matters: messages, calls, contacts, events). Events are stored in batches, each batch one
transaction in the memory's writer thread; while one is written the next gathers.

What each event does:
- MESSAGE_RECEIVED: an SMS syncs the SMS provider (its rows carry ids and boxes); a chat
  message (WhatsApp, ...) is stored from the event itself;
- CALL_STATE_CHANGED to idle: syncs the call log;
- TASK_COMPLETED of SEND_MESSAGE, MAKE_CALL/END_CALL, CREATE_EVENT, ADD_CONTACT: syncs the
  provider the action wrote to;
- NOTIFICATION_POSTED: the notification, under its app (SMS apps' are skipped: the SMS is
  stored from the provider);
- APP_STATE_CHANGED: the app's last use and its foreground time today;
- DEVICE_CONNECTED: syncs everything; so does start-up.

The memory never makes the phone be polled: its subscription is an inside one, so the backends
poll for MESSAGE_RECEIVED, NOTIFICATION_POSTED, APP_STATE_CHANGED and CALL_STATE_CHANGED only
while a caller subscribes from outside (a phone left alone runs no command). It catches up on
its own instead, reading only the SMS and calls above its marks: when it is asked (MEMORY and
CONTACTS, `Memory.catch_up`), after an action wrote to a provider, and every
`memory_catch_up_s` (300 s by default). While nobody subscribes, notifications and app usage
are not seen (Android keeps no history of them that the runtime could read later).

Provider syncs read only what is new where the provider allows (`above_id` high-water marks for
SMS and calls, kept in the database) and never what retention would drop at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from phoneuse_runtime.device.base import CallFilter, EventFilter, SmsFilter, set_deadline
from phoneuse_runtime.kernel.capabilities import CALENDAR, CALLS, CONTACTS, SHELL, SMS
from phoneuse_runtime.kernel.errors import RuntimeFailure
from phoneuse_runtime.kernel.events import Event, now_ms
from phoneuse_runtime.memory.resolve import e164, email_key, fold, phone_key
from phoneuse_runtime.memory.store import Entity, Graph
from phoneuse_runtime.owner.privacy import mask_secrets
from phoneuse_runtime.util.numbers import valid_region
from phoneuse_runtime.util.tasks import cancel_and_wait

if TYPE_CHECKING:
    from phoneuse_runtime.device.base import Attendee, CalendarEvent, CallRecord, Contact, SmsMessage
    from phoneuse_runtime.kernel.runtime import Runtime

log = logging.getLogger(__name__)

T = TypeVar("T")


class Memory(Protocol):
    """What the ingestor uses of the memory component (component.py's `Memory`)."""

    region: str
    retention_days: int
    catch_up_s: int

    async def write(self, work: Callable[[Graph], T]) -> T: ...
    async def read(self, work: Callable[[Graph], T], *, label: str = "") -> T: ...


SUBSCRIBER = "memory-ingest"
SCOPE = "phoneuse.memory"  # its own scope: no client's subscriber_id can replace it
EVENT_TYPES = (
    "MESSAGE_RECEIVED",
    "CALL_STATE_CHANGED",
    "TASK_COMPLETED",
    "NOTIFICATION_POSTED",
    "APP_STATE_CHANGED",
    "DEVICE_CONNECTED",
)
BATCH = 500  # events per transaction at most
# Events held while the writer is slow (a locked file, a busy disk); past this the oldest are
# dropped and counted, and a full provider sync is asked for, as after a reconnection.
MAX_PENDING = 50_000
SYNC_TIMEOUT_S = 30.0  # one provider read; a phone that does not answer in that time is retried later
DAY_MS = 86_400_000
SMS_APPS = (
    "sms",
    "com.google.android.apps.messaging",
    "com.android.messaging",
    "com.samsung.android.messaging",
)
# Which provider an action wrote to, so that its effect is read back.
ACTION_SYNCS = {
    "SEND_MESSAGE": "sms",
    "MAKE_CALL": "calls",
    "END_CALL": "calls",
    "CREATE_EVENT": "calendar",
    "ADD_CONTACT": "contacts",
}
# In this order when several are due: contacts first, so that a number, an address or a name
# seen in the other sources finds the contact it belongs to (a calendar guest named only "Bob
# Smith" is the contact Bob Smith only if the contact is there when the guest is read).
SYNC_NEEDS = {"contacts": CONTACTS, "sms": SMS, "calls": CALLS, "calendar": CALENDAR}
ME = "self"  # the key of the phone's owner: the one who uses apps

Op = Callable[[Graph], None]


def _is_sms_app(app: str) -> bool:
    return app in SMS_APPS


@dataclass
class Usage:
    """The app in front now, and since when (for foreground time)."""

    package: str = ""
    since_ms: int = 0


class Ingestor:
    def __init__(self, memory: Memory, runtime: Runtime) -> None:
        """`memory.catch_up_s` sets the cadence of the timed catch-ups (0: none)."""
        self.memory = memory
        self.runtime = runtime
        self.events: list[Event] = []
        self.syncs: set[str] = set()
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._tasks: list[asyncio.Task[None]] = []
        self._usage = Usage()
        self.ingested = 0  # events stored, for the benchmark and stats
        self.dropped = 0  # events dropped while the writer could not keep up

    # --- lifecycle -----------------------------------------------------------------
    async def start(self) -> None:
        # Only the TASK_COMPLETED of the actions that wrote to a provider: the runtime then
        # builds no event for the rest (every other Execute).
        sub = self.runtime.bus.subscribe(
            SUBSCRIBER, EVENT_TYPES, scope=SCOPE, narrow={"TASK_COMPLETED": ACTION_SYNCS}, outside=False
        )
        self._tasks = [
            asyncio.create_task(self._receive(sub), name="memory-receive"),
            asyncio.create_task(self._work(), name="memory-ingest"),
        ]
        if self.memory.catch_up_s > 0:
            self._tasks.append(asyncio.create_task(self._cadence(), name="memory-catch-up"))
        self.request("contacts", "sms", "calls", "calendar")
        await self.memory.write(self._expire)

    async def stop(self, *, grace_s: float) -> None:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.settled(), timeout=max(grace_s, 0.1))
        await cancel_and_wait(*self._tasks)

    async def settled(self) -> None:
        # Yields first: the receiver takes what the bus queued for it on its next turn.
        await asyncio.sleep(0)
        while not (self._idle.is_set() and not self.events and not self.syncs):
            await self._idle.wait()
            await asyncio.sleep(0)

    def front(self) -> tuple[str, int] | None:
        """The app in front since when (epoch ms), as the last APP_STATE_CHANGED said."""
        return (self._usage.package, self._usage.since_ms) if self._usage.package else None

    def request(self, *syncs: str) -> None:
        """Asks for provider syncs; they run after the events queued before them."""
        device = self.runtime.device
        self.syncs.update(s for s in syncs if SYNC_NEEDS[s] in device.capabilities)
        self._kick()

    def _kick(self) -> None:
        self._idle.clear()
        self._wake.set()

    async def _read_sim_country(self) -> None:
        """The SIM's country (gsm.sim.operator.iso-country, "us" or "fr,fr" on dual SIMs) where
        the phone tells it: numbers without a country code are read in it."""
        token = set_deadline(asyncio.get_running_loop().time() + 5)
        try:
            result = await self.runtime.device.shell("getprop gsm.sim.operator.iso-country", timeout_s=5)
        except (RuntimeFailure, OSError) as exc:
            log.debug("could not read the SIM's country: %s", exc)
            return
        finally:
            from phoneuse_runtime.device.base import reset_deadline

            reset_deadline(token)
        country = result.stdout.strip().split(",")[0].strip().upper()
        if result.exit_code == 0 and valid_region(country):
            self.memory.region = country
            log.info("reading phone numbers in the SIM's region %s", country)

    async def _cadence(self) -> None:
        """The slow catch-up: new SMS and calls every `catch_up_s`, whatever else happens."""
        while True:
            await asyncio.sleep(self.memory.catch_up_s)  # the catch-up cadence (memory_catch_up_s)
            self.request("sms", "calls")

    # --- the loop --------------------------------------------------------------------
    async def _receive(self, sub: Any) -> None:
        async for event in sub:
            if event.event_type == "ERROR":  # EVENTS_DROPPED: the bus's queue for us overflowed
                self.dropped += 1
                self.request("contacts", "sms", "calls", "calendar")
                continue
            self.events.append(event)
            if len(self.events) > MAX_PENDING:
                del self.events[: len(self.events) - MAX_PENDING]
                self.dropped += 1
                self.request("contacts", "sms", "calls", "calendar")
            self._kick()

    async def _work(self) -> None:
        # Before the first sync, in the background: a phone that is slow to answer never holds
        # up the server's start.
        if SHELL in self.runtime.device.capabilities and self.runtime.device.link.up:
            await self._read_sim_country()
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self.events or self.syncs:
                batch, self.events = self.events[:BATCH], self.events[BATCH:]
                ops = [op for event in batch for op in self._ops(event)]
                if ops:
                    await self._apply(ops)
                self.ingested += len(batch)
                if not self.events and self.syncs:
                    name = min(self.syncs, key=list(SYNC_NEEDS).index)
                    self.syncs.discard(name)
                    await self._sync(name)
            self._idle.set()

    async def _apply(self, ops: list[Op]) -> None:
        def run(graph: Graph) -> None:
            for op in ops:
                op(graph)

        try:
            await self.memory.write(run)
        except Exception:
            log.exception("the memory could not store a batch of %d change(s)", len(ops))

    # --- events ------------------------------------------------------------------------
    def _ops(self, event: Event) -> list[Op]:
        try:
            payload = json.loads(event.payload_json)
        except ValueError:
            return []
        kind = event.event_type
        if kind == "MESSAGE_RECEIVED":
            if _is_sms_app(str(payload.get("app", ""))):
                self.request("sms")
                return []
            return [self._chat_op(payload, event.timestamp)]
        if kind == "CALL_STATE_CHANGED":
            if payload.get("state") == "idle":
                self.request("calls")
            return []
        if kind == "TASK_COMPLETED":
            sync = ACTION_SYNCS.get(str(payload.get("action_type", "")))
            if sync and payload.get("success"):
                self.request(sync)
            return []
        if kind == "NOTIFICATION_POSTED":
            if _is_sms_app(str(payload.get("package", ""))):
                return []
            return [self._notification_op(payload, event.timestamp)]
        if kind == "APP_STATE_CHANGED":
            return self._usage_ops(str(payload.get("package", "")), event.timestamp)
        if kind == "DEVICE_CONNECTED":
            self.request("contacts", "sms", "calls", "calendar")
        return []

    def _person(self, graph: Graph, address: str, source: str, *, name: str = "", ts: int = 0) -> int | None:
        key = phone_key(address, self.memory.region)
        if key is None:
            return None
        normal = e164(address, self.memory.region)
        attrs: dict[str, Any] = {"phones": [normal]} if normal else {"phones": [address]}
        return graph.upsert(Entity("person", name or address, source, (key,), attrs=attrs, ts=ts))

    def _message(
        self,
        graph: Graph,
        *,
        key: str,
        source: str,
        address: str,
        body: str,
        outgoing: bool,
        ts: int,
        attrs: dict[str, Any],
    ) -> None:
        if graph.by_key(key) is not None:
            return  # already stored
        person = self._person(graph, address, source, ts=ts)
        who = (
            graph.conn.execute("SELECT name FROM nodes WHERE id = ?", (person,)).fetchone()[0]
            if person
            else address
        )
        label = {"sms": "SMS"}.get(source, attrs.get("app", "message"))
        name = f"{label} {'to' if outgoing else 'from'} {who}"
        message = graph.upsert(
            Entity(
                "message",
                name,
                source,
                (key,),
                text=mask_secrets(body),
                attrs={**attrs, "direction": "out" if outgoing else "in", "address": address, "date_ms": ts},
                ts=ts,
            )
        )
        if person is not None:
            graph.link("messaged", person, message, ts=ts, attrs={"direction": "out" if outgoing else "in"})
            graph.touch(person, ts)

    def _chat_op(self, payload: dict[str, Any], ts: int) -> Op:
        app, message_id = str(payload.get("app", "")), str(payload.get("message_id", ""))
        address, body = str(payload.get("from", "")), str(payload.get("body", ""))
        thread = str(payload.get("thread_id", ""))

        def op(graph: Graph) -> None:
            self._message(
                graph,
                key=f"chat:{app}:{thread}:{message_id}",
                source="notifications",  # a chat app's message: what its notification said
                address=address,
                body=body,
                outgoing=False,
                ts=ts,
                attrs={"app": app, "thread_id": thread},
            )

        return op

    def _notification_op(self, payload: dict[str, Any], ts: int) -> Op:
        package, title = str(payload.get("package", "")), str(payload.get("title", ""))
        text, key = str(payload.get("text", "")), str(payload.get("key", ""))

        def op(graph: Graph) -> None:
            app = graph.upsert(Entity("app", package, "notifications", (f"app:{package}",), ts=ts))
            note = graph.upsert(
                Entity(
                    "message",
                    mask_secrets(title) or package,
                    "notifications",
                    (f"notification:{package}:{key}:{ts}",),
                    text=mask_secrets(text),
                    attrs={"package": package, "notification_key": key, "date_ms": ts},
                    ts=ts,
                )
            )
            graph.link("related_to", note, app, ts=ts)

        return op

    def _usage_ops(self, package: str, ts: int) -> list[Op]:
        previous = self._usage
        self._usage = Usage(package, ts)

        def op(graph: Graph) -> None:
            me = graph.upsert(Entity("person", "Me", "app_usage", (ME,), attrs={"owner": True}, ts=ts))
            if previous.package and previous.package != package:
                _add_foreground(graph, previous.package, previous.since_ms, ts)
            if package:
                app = graph.upsert(
                    Entity(
                        "app", package, "app_usage", (f"app:{package}",), attrs={"last_used_ms": ts}, ts=ts
                    )
                )
                graph.link("uses", me, app, ts=ts)

        return [op]

    # --- provider syncs ------------------------------------------------------------------
    async def _sync(self, name: str) -> None:
        device = self.runtime.device
        if not device.link.up:
            return  # DEVICE_CONNECTED asks again
        loop = asyncio.get_running_loop()
        token = set_deadline(loop.time() + SYNC_TIMEOUT_S)
        try:
            if name == "contacts":
                contacts = await device.contacts()
                await self.memory.write(lambda g: self._store_contacts(g, contacts))
            elif name == "sms":
                mark = int(await self.memory.read(lambda g: g.meta("sms_mark", "0")))
                since = now_ms() - self.memory.retention_days * DAY_MS if self.memory.retention_days else None
                rows = await device.sms_messages(SmsFilter(above_id=mark or None, since_ms=since))
                await self.memory.write(lambda g: self._store_sms(g, rows, mark))
            elif name == "calls":
                mark = int(await self.memory.read(lambda g: g.meta("calls_mark", "0")))
                since = now_ms() - self.memory.retention_days * DAY_MS if self.memory.retention_days else None
                calls = await device.call_log(CallFilter(above_id=mark or None, since_ms=since))
                await self.memory.write(lambda g: self._store_calls(g, calls, mark))
            elif name == "calendar":
                events = await device.calendar_events(EventFilter())
                await self.memory.write(lambda g: self._store_events(g, events))
        except (RuntimeFailure, OSError, asyncio.TimeoutError) as exc:
            log.info("the memory could not read the phone's %s now: %s", name, exc)
        except Exception:
            log.exception("the memory's %s sync failed", name)
        finally:
            from phoneuse_runtime.device.base import reset_deadline

            reset_deadline(token)

    def _contact_entity(self, contact: Contact) -> Entity:
        region = self.memory.region
        keys = [f"contact:{contact.id}"]
        phones: list[str] = []
        for number in contact.phones:
            key = phone_key(number, region)
            if key:
                keys.append(key)
            phones.append(e164(number, region) or number)
        emails = [e.strip() for e in contact.emails if e.strip()]
        keys += [k for e in emails if (k := email_key(e))]
        attrs = {
            "contact_id": contact.id,
            "phones": phones,
            "phones_display": list(contact.phones),
            "emails": emails,
            "starred": contact.starred,
        }
        return Entity("person", contact.name, "contacts", tuple(keys), attrs=attrs)

    def _store_contacts(self, graph: Graph, contacts: list[Contact]) -> None:
        for contact in contacts:
            graph.upsert(self._contact_entity(contact))

    def _store_sms(self, graph: Graph, rows: list[SmsMessage], mark: int) -> None:
        for row in sorted(rows, key=lambda r: int(r.id) if r.id.isdigit() else 0):
            self._message(
                graph,
                key=f"sms:{row.id}",
                source="sms",
                address=row.address,
                body=row.body,
                outgoing=row.box in ("sent", "outbox"),
                ts=row.date_ms,
                attrs={"app": "sms", "box": row.box, "thread_id": row.thread_id, "sms_id": row.id},
            )
            if row.id.isdigit():
                mark = max(mark, int(row.id))
        graph.set_meta("sms_mark", str(mark))
        self._expire(graph)

    def _store_calls(self, graph: Graph, calls: list[CallRecord], mark: int) -> None:
        for call in sorted(calls, key=lambda c: int(c.id) if c.id.isdigit() else 0):
            if call.id.isdigit():
                mark = max(mark, int(call.id))
            key = f"call:{call.id}"
            if graph.by_key(key) is not None:
                continue
            person = self._person(graph, call.number, "calls", name=call.name, ts=call.date_ms)
            who = call.name or call.number
            node = graph.upsert(
                Entity(
                    "call",
                    f"{call.kind.capitalize()} call with {who}",
                    "calls",
                    (key,),
                    attrs={
                        "kind": call.kind,
                        "number": call.number,
                        "duration_s": call.duration_s,
                        "date_ms": call.date_ms,
                    },
                    ts=call.date_ms,
                )
            )
            if person is not None:
                graph.link("called", person, node, ts=call.date_ms, attrs={"kind": call.kind})
                graph.touch(person, call.date_ms)
        graph.set_meta("calls_mark", str(mark))
        self._expire(graph)

    def _store_events(self, graph: Graph, events: list[CalendarEvent]) -> None:
        for event in events:
            attrs = {
                "start_ms": event.start_ms,
                "end_ms": event.end_ms,
                "all_day": event.all_day,
                "location": event.location,
                "calendar": event.calendar,
            }
            node = graph.upsert(
                Entity(
                    "event",
                    event.title,
                    "calendar",
                    (f"event:{event.id}",),
                    text=event.description,
                    attrs=attrs,
                )
            )
            if event.location:
                place = graph.upsert(
                    Entity("place", event.location, "calendar", (f"place:{fold(event.location)}",))
                )
                graph.link("located_at", node, place, ts=event.start_ms)
            for attendee in event.attendees:
                person = self._attendee(graph, attendee)
                if person is not None:
                    graph.link(
                        "attends",
                        person,
                        node,
                        ts=event.start_ms,
                        attrs={"status": attendee.status, "organizer": attendee.organizer},
                    )

    def _attendee(self, graph: Graph, attendee: Attendee) -> int | None:
        """The person a guest is. An address decides (whatever its case), so that the contact
        with that address and the guest are one; a guest with only a name is the one person
        known by that name, else a person of its own, the same for every event it attends."""
        name, address = attendee.name.strip(), attendee.email.strip()
        key = email_key(address)
        attrs: dict[str, Any] = {"emails": [address]} if key else {}  # not a number or a name put there
        if key is None:
            if not name:
                return None
            known = graph.person_named(name)
            if known is not None:
                graph.add_source(known, "calendar")
                return known
            key = f"attendee:{fold(name)}"
        return graph.upsert(Entity("person", name or address.split("@")[0], "calendar", (key,), attrs=attrs))

    def _expire(self, graph: Graph) -> None:
        days = self.memory.retention_days
        if days > 0:
            graph.expire(before_ms=now_ms() - days * DAY_MS)


def _add_foreground(graph: Graph, package: str, since_ms: int, until_ms: int) -> None:
    """Adds the time an app was in front to its total for the day (local time) it ended in."""
    n = graph.by_key(f"app:{package}")
    if n is None:
        return
    # Two switches in one millisecond (or a clock step back) count as no time, and still
    # record the day's total: an app that was in front has one.
    until_ms = max(until_ms, since_ms)
    row = graph.conn.execute("SELECT attrs FROM nodes WHERE id = ?", (n,)).fetchone()
    attrs = json.loads(row[0])
    day = dt.datetime.fromtimestamp(until_ms / 1000).date().isoformat()
    total = attrs.get("foreground_ms_today", 0) if attrs.get("usage_day") == day else 0
    attrs.update(usage_day=day, foreground_ms_today=total + (until_ms - since_ms))
    graph.conn.execute("UPDATE nodes SET attrs = ? WHERE id = ?", (json.dumps(attrs), n))
