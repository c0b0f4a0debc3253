"""The simulated phone's data stores (the providers' tables), and their JSON form on disk.

Ids are strings of increasing integers, like a content provider's `_id` column. Every
mutation sets `dirty`, so the device can persist after each primitive.

The stores are bounded, as a phone's are (`LIMITS` says how, for people and the spec): what the
world sends (SMS, chat messages, notifications, calls) pushes out the oldest, like Messages' "delete
old messages", Android's cap on each app's notifications and its call log's 500 calls; what the
owner adds (contacts, events, alarms) is refused past its limit, like a phone whose storage is full.
"""

from __future__ import annotations

import json
import pathlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from functools import cache
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from phoneuse_runtime.device.base import (
    Alarm,
    CalendarEvent,
    CallRecord,
    Contact,
    Notification,
    SmsBox,
    SmsMessage,
)
from phoneuse_runtime.device.sim.catalog import BY_PACKAGE
from phoneuse_runtime.kernel.errors import InvalidParams, Unsupported
from phoneuse_runtime.kernel.events import now_ms
from phoneuse_runtime.kernel.limits import clip
from phoneuse_runtime.util.files import StateFileError, read_state_text, validation_problem
from phoneuse_runtime.util.numbers import MIN_MATCH, digits, same_number

if TYPE_CHECKING:
    from pydantic import TypeAdapter

FORMAT_VERSION = 1
# The sim's volume indexes at the start, and each stream's range (AudioService's defaults).
DEFAULT_VOLUMES = {"music": 5, "ring": 5, "alarm": 6, "notification": 5}
VOLUME_RANGES = {"music": (0, 15), "ring": (0, 7), "alarm": (1, 7), "notification": (0, 7)}
REMEDY = "move it aside or delete it (the phone then starts as the seed phone), then start the server again"

# What the world sends: the oldest go first.
SMS_PER_THREAD = 500  # the default of Messages' "delete old messages"
SMS_MAX = 2_000
CHAT_MESSAGES_PER_CHAT = 500
CHAT_MESSAGES_MAX = 2_000
NOTIFICATIONS_PER_APP = 50  # Android's own limit per package
NOTIFICATIONS_MAX = 500
TEXT_MAX = 1_000_000  # characters of text in each of these three stores
UNUSED_CONVERSATIONS_MAX = 100  # SMS threads, and chats, opened but without a message
CALLS_MAX = 500  # Android's call log keeps its newest 500 calls
# Screens a scenario shows (SIM_SET_SCREEN): characters of their XML kept in all back stacks;
# past it the oldest shown are closed, as Android destroys activities it needs the memory of.
SCREENS_XML_MAX = 4_000_000
# What the owner adds: refused past these.
CONTACTS_MAX = 5_000
EVENTS_MAX = 5_000
ALARMS_MAX = 100

LIMITS: tuple[tuple[str, str], ...] = (
    (
        "SMS",
        f"{SMS_PER_THREAD} per conversation and {SMS_MAX:,} in all, with at most {TEXT_MAX:,} "
        "characters of text in all; the oldest go first, and a conversation goes with its last message",
    ),
    (
        "WhatsApp messages",
        f"{CHAT_MESSAGES_PER_CHAT} per chat and {CHAT_MESSAGES_MAX:,} in all, with at most {TEXT_MAX:,} "
        "characters of text in all; the oldest go first, and a chat goes with its last message",
    ),
    (
        "notifications",
        f"{NOTIFICATIONS_PER_APP} per app and {NOTIFICATIONS_MAX} in all, with at most {TEXT_MAX:,} "
        "characters of title and text in all; the oldest go first",
    ),
    (
        "conversations without messages",
        f"{UNUSED_CONVERSATIONS_MAX} SMS threads and {UNUSED_CONVERSATIONS_MAX} chats; the oldest go first",
    ),
    ("call log", f"{CALLS_MAX} calls, as Android's call log keeps; the oldest go first"),
    (
        "screens shown (`SIM_SET_SCREEN`)",
        f"{SCREENS_XML_MAX:,} characters of XML in all back stacks; the oldest shown close first "
        "(the one in front stays)",
    ),
    ("contacts", f"{CONTACTS_MAX:,}; one more is `UNSUPPORTED`"),
    ("calendar events", f"{EVENTS_MAX:,}; one more is `UNSUPPORTED`"),
    ("alarms", f"{ALARMS_MAX}; one more is `UNSUPPORTED`"),
)

T = TypeVar("T")

# The kinds of call the simulator logs (of CallRecord's): it blocks nothing and has no voicemail.
CallKind = Literal["incoming", "outgoing", "missed", "rejected"]


def _may_be(number: str, key: str) -> bool:
    """Whether `number` may be the same as one with `number_key` `key`; quick for the numbers the
    simulator stores ("+" and digits), exact after `same_number` for any other."""
    plain = number.startswith("+") and number[1:].isascii() and number[1:].isdigit()
    return number.endswith(key) or not plain


def number_key(address: str) -> str:
    """What two numbers that are `same_number` share: their last MIN_MATCH digits (all of them, if
    fewer). "" for an address without digits."""
    return digits(address)[-MIN_MATCH:]


def keep_newest(
    rows: list[T],
    *,
    group: Callable[[T], str],
    per_group: int,
    most: int,
    size: Callable[[T], int],
    size_max: int,
) -> list[T] | None:
    """`rows` (oldest first) without their oldest, so that no group keeps more than `per_group`,
    at most `most` remain, and their sizes add up to at most `size_max` (the newest row always
    stays). None when nothing has to go, which is found without building anything."""
    counts: dict[str, int] = {}
    total = 0
    over = len(rows) > most
    for row in rows:
        key = group(row)
        counts[key] = counts.get(key, 0) + 1
        total += size(row)
        over = over or counts[key] > per_group
    if not over and total <= size_max:
        return None
    counts.clear()
    total = 0
    kept: list[T] = []
    for row in reversed(rows):
        key = group(row)
        if counts.get(key, 0) >= per_group:
            continue
        if kept and (len(kept) >= most or total + size(row) > size_max):
            break  # everything older goes too: the oldest go first
        kept.append(row)
        counts[key] = counts.get(key, 0) + 1
        total += size(row)
    kept.reverse()
    return kept


def require_number(number: str) -> str:
    if not digits(number):
        raise InvalidParams(f"not a phone number: {clip(number)}")
    return number.strip()


@dataclass
class ChatMessage:
    """One WhatsApp message; WhatsApp keeps its own store, never the SMS provider."""

    id: str
    from_me: bool
    body: str
    date_ms: int
    read: bool = True


@dataclass
class Chat:
    jid: str  # e.g. "14155550101@s.whatsapp.net"; also the thread id reported in events
    name: str
    number: str
    messages: list[ChatMessage] = field(default_factory=list)


@dataclass
class SimState:
    contacts: list[Contact] = field(default_factory=list)
    sms: list[SmsMessage] = field(default_factory=list)
    threads: dict[str, str] = field(default_factory=dict)  # thread_id -> first address seen
    events: list[CalendarEvent] = field(default_factory=list)
    alarms: list[Alarm] = field(default_factory=list)
    notifications: list[Notification] = field(default_factory=list)
    # notification key -> what tapping it opens: "sms:<address>" or "chat:<jid>"
    notification_targets: dict[str, str] = field(default_factory=dict)
    chats: list[Chat] = field(default_factory=list)
    calls: list[CallRecord] = field(default_factory=list)  # the call log, oldest first
    clipboard: str = ""
    wifi_enabled: bool = True
    airplane_mode: bool = False
    # --- the phone's settings (issue 27: SET_BLUETOOTH ... SET_AUTO_ROTATE) ---
    bluetooth_enabled: bool = False
    auto_rotate: bool = True
    volumes: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_VOLUMES))
    brightness: int = 128  # 0..255
    brightness_auto: bool = True
    dnd: str = "off"  # off, priority, alarms, total
    next_ids: dict[str, int] = field(default_factory=dict)
    dirty: bool = False
    # thread_id -> number_key of its address, in thread order: found without parsing every address
    _thread_keys: dict[str, str] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._thread_keys = {tid: number_key(first) for tid, first in self.threads.items()}

    # --- ids ---------------------------------------------------------------
    def new_id(self, table: str) -> str:
        value = self.next_ids.get(table, 1)
        self.next_ids[table] = value + 1
        return str(value)

    # --- contacts ----------------------------------------------------------
    def add_contact(
        self, name: str, phones: list[str], emails: list[str], *, starred: bool = False
    ) -> Contact:
        if not name.strip() and not phones and not emails:
            raise InvalidParams("a contact needs a name, a phone number or an email")
        if len(self.contacts) >= CONTACTS_MAX:
            raise Unsupported(f"the phone's contacts are full ({CONTACTS_MAX:,}); it keeps no more")
        contact = Contact(self.new_id("contacts"), name.strip(), list(phones), list(emails), starred)
        self.contacts.append(contact)
        self.dirty = True
        return contact

    def contact_for_number(self, number: str) -> Contact | None:
        return next((c for c in self.contacts if any(same_number(p, number) for p in c.phones)), None)

    def display_name(self, address: str) -> str:
        contact = self.contact_for_number(address)
        return contact.name if contact else address

    def find_contacts(self, query: str) -> list[Contact]:
        """Exact name (case-insensitive) wins; otherwise every contact a word of whose name starts so."""
        q = query.strip().casefold()
        if not q:
            return []
        exact = [c for c in self.contacts if c.name.casefold() == q]
        if exact:
            return exact
        return [
            c
            for c in self.contacts
            if c.name.casefold().startswith(q) or any(w.startswith(q) for w in c.name.casefold().split())
        ]

    def resolve_recipient(self, text: str) -> str | None:
        """A typed recipient as Messages would take it: a unique contact's first number, or a number."""
        matches = [c for c in self.find_contacts(text) if c.phones]
        if len(matches) == 1:
            return matches[0].phones[0]
        if digits(text) and re.fullmatch(r"[\d\s()+\-.*#]+", text.strip()):
            return text.strip()
        return None

    # --- sms ---------------------------------------------------------------
    def thread_id_for(self, address: str) -> str:
        """The thread of the first address that is the same number (or, without digits, the same text)."""
        key = number_key(address)
        for thread_id, candidate in self._thread_keys.items():
            if candidate != key:
                continue
            first = self.threads[thread_id]
            if same_number(first, address) or (
                not key and first.strip().casefold() == address.strip().casefold()
            ):
                return thread_id
        thread_id = self.new_id("threads")
        self.threads[thread_id] = address.strip()
        self._thread_keys[thread_id] = key
        self.dirty = True
        self._drop_unused_threads()
        return thread_id

    def _drop_thread(self, thread_id: str) -> None:
        self.threads.pop(thread_id, None)
        self._thread_keys.pop(thread_id, None)

    def _drop_unused_threads(self) -> None:
        used = {m.thread_id for m in self.sms}
        unused = [t for t in self.threads if t not in used]  # oldest first, as dicts keep order
        for thread_id in unused[: max(0, len(unused) - UNUSED_CONVERSATIONS_MAX)]:
            self._drop_thread(thread_id)

    def add_sms(
        self, address: str, body: str, box: SmsBox, *, read: bool = True, date_ms: int = 0
    ) -> SmsMessage:
        address = require_number(address)
        message = SmsMessage(
            id=self.new_id("sms"),
            thread_id=self.thread_id_for(address),
            address=address,
            body=body,
            date_ms=date_ms or now_ms(),
            box=box,
            read=read,
        )
        self.sms.append(message)
        self.dirty = True
        self._trim_sms()
        return message

    def _trim_sms(self) -> None:
        kept = keep_newest(
            self.sms,
            group=lambda m: m.thread_id,
            per_group=SMS_PER_THREAD,
            most=SMS_MAX,
            size=lambda m: len(m.body),
            size_max=TEXT_MAX,
        )
        if kept is None:
            return
        gone = {m.thread_id for m in self.sms} - {m.thread_id for m in kept}
        self.sms = kept
        for thread_id in gone:  # Messages deletes a conversation with its last message
            self._drop_thread(thread_id)

    def thread_messages(self, thread_id: str) -> list[SmsMessage]:
        """Oldest first, as a conversation shows them."""
        return sorted((m for m in self.sms if m.thread_id == thread_id), key=lambda m: (m.date_ms, int(m.id)))

    def mark_thread_read(self, thread_id: str) -> None:
        for message in self.sms:
            if message.thread_id == thread_id and not message.read:
                message.read = True
                self.dirty = True

    # --- calendar, clock ---------------------------------------------------
    def add_event(self, event: CalendarEvent) -> CalendarEvent:
        if not event.title.strip():
            raise InvalidParams("an event needs a title")
        if event.end_ms < event.start_ms:
            raise InvalidParams("an event cannot end before it starts")
        if len(self.events) >= EVENTS_MAX:
            raise Unsupported(f"the phone's calendar is full ({EVENTS_MAX:,} events); it keeps no more")
        stored = replace(event, id=self.new_id("events"), attendees=list(event.attendees))
        if not stored.calendar:
            stored.calendar = "Personal"
        self.events.append(stored)
        self.dirty = True
        return stored

    def add_alarm(self, alarm: Alarm) -> Alarm:
        if not (0 <= alarm.hour <= 23 and 0 <= alarm.minute <= 59):
            raise InvalidParams(f"no such time of day: {alarm.hour:02d}:{alarm.minute:02d}")
        allowed = ("MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN")
        days = [d.upper()[:3] for d in alarm.days]
        unknown = [d for d in days if d not in allowed]
        if unknown:
            raise InvalidParams(f"unknown day(s) {unknown}; allowed: {', '.join(allowed)}")
        if len(self.alarms) >= ALARMS_MAX:
            raise Unsupported(f"the clock has {ALARMS_MAX} alarms, as many as it keeps")
        stored = Alarm(self.new_id("alarms"), alarm.hour, alarm.minute, alarm.label, days, alarm.enabled)
        self.alarms.append(stored)
        self.dirty = True
        return stored

    # --- call log ----------------------------------------------------------
    def add_call(self, number: str, kind: CallKind, *, date_ms: int, duration_s: int = 0) -> CallRecord:
        """A call that ended, as the phone logs it then: when it began, how long it was connected."""
        contact = self.contact_for_number(number)
        record = CallRecord(
            id=self.new_id("calls"),
            number=number,
            kind=kind,
            date_ms=date_ms,
            duration_s=duration_s,
            name=contact.name if contact else "",
        )
        self.calls.append(record)
        self.dirty = True
        self._trim_calls()
        return record

    def _trim_calls(self) -> None:
        if len(self.calls) > CALLS_MAX:
            self.calls = self.calls[-CALLS_MAX:]

    # --- notifications -----------------------------------------------------
    def add_notification(self, package: str, title: str, text: str, *, target: str = "") -> Notification:
        app = BY_PACKAGE.get(package)
        uid = app.uid if app else 10999
        key = f"0|{package}|{self.new_id('notifications')}|null|{uid}"
        notification = Notification(key, package, title, text, now_ms())
        self.notifications.append(notification)
        if target:
            self.notification_targets[key] = target
        self.dirty = True
        self._trim_notifications()
        return notification

    def _trim_notifications(self) -> None:
        kept = keep_newest(
            self.notifications,
            group=lambda n: n.package,
            per_group=NOTIFICATIONS_PER_APP,
            most=NOTIFICATIONS_MAX,
            size=lambda n: len(n.title) + len(n.text),
            size_max=TEXT_MAX,
        )
        if kept is not None:
            self.notifications = kept
            keys = {n.key for n in kept}
            self.notification_targets = {k: t for k, t in self.notification_targets.items() if k in keys}

    def cancel_notifications(self, target: str) -> None:
        keys = {k for k, t in self.notification_targets.items() if t == target}
        if keys:
            self.notifications = [n for n in self.notifications if n.key not in keys]
            for key in keys:
                del self.notification_targets[key]
            self.dirty = True

    # --- whatsapp ----------------------------------------------------------
    def chat_for(self, who: str, *, create: bool) -> Chat | None:
        """The chat with a number or a contact's name; a new one when `create` and it is a number."""
        if not digits(who):
            matches = [c for c in self.find_contacts(who) if c.phones]
            if len(matches) != 1:
                return None
            who = matches[0].phones[0]
        key = number_key(who)
        chat = next((c for c in self.chats if _may_be(c.number, key) and same_number(c.number, who)), None)
        if chat is None and create:
            number = "+" + digits(who)
            chat = Chat(f"{digits(who)}@s.whatsapp.net", self.display_name(number), number)
            self.chats.append(chat)
            self.dirty = True
            self._drop_unused_chats()
        return chat

    def _drop_unused_chats(self) -> None:
        unused = [c for c in self.chats if not c.messages]  # oldest first; a new one last
        if len(unused) > UNUSED_CONVERSATIONS_MAX:
            dropped = {id(c) for c in unused[: len(unused) - UNUSED_CONVERSATIONS_MAX]}
            self.chats = [c for c in self.chats if id(c) not in dropped]

    def add_chat_message(self, chat: Chat, body: str, *, from_me: bool, date_ms: int = 0) -> ChatMessage:
        message = ChatMessage(self.new_id("chat_messages"), from_me, body, date_ms or now_ms(), read=from_me)
        chat.messages.append(message)
        self.dirty = True
        self._trim_chats()
        return message

    def _trim_chats(self) -> None:
        if (
            sum(len(c.messages) for c in self.chats) <= CHAT_MESSAGES_MAX
            and all(len(c.messages) <= CHAT_MESSAGES_PER_CHAT for c in self.chats)
            and sum(len(m.body) for c in self.chats for m in c.messages) <= TEXT_MAX
        ):
            return
        rows = sorted(
            ((c.jid, m) for c in self.chats for m in c.messages), key=lambda row: int(row[1].id)
        )  # oldest first: ids grow across all chats
        kept = keep_newest(
            rows,
            group=lambda row: row[0],
            per_group=CHAT_MESSAGES_PER_CHAT,
            most=CHAT_MESSAGES_MAX,
            size=lambda row: len(row[1].body),
            size_max=TEXT_MAX,
        )
        if kept is None:
            return
        keep = {id(message) for _, message in kept}
        emptied = set()
        for chat in self.chats:
            if chat.messages:
                chat.messages = [m for m in chat.messages if id(m) in keep]
                if not chat.messages:
                    emptied.add(chat.jid)
        self.chats = [c for c in self.chats if c.jid not in emptied]  # a chat goes with its last message

    # --- persistence -------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """The data stores as plain JSON values, copied so that the live state may change as soon
        as this returns. Quick enough for the event loop: one dict per row, no deep copies (the
        only lists inside rows, phones, emails, days and attendees, are copied too)."""
        return {
            "version": FORMAT_VERSION,
            "contacts": [
                {**vars(c), "phones": list(c.phones), "emails": list(c.emails)} for c in self.contacts
            ],
            "sms": [dict(vars(m)) for m in self.sms],
            "threads": dict(self.threads),
            "events": [{**vars(e), "attendees": [dict(vars(a)) for a in e.attendees]} for e in self.events],
            "alarms": [{**vars(a), "days": list(a.days)} for a in self.alarms],
            "notifications": [dict(vars(n)) for n in self.notifications],
            "notification_targets": dict(self.notification_targets),
            "chats": [
                {
                    "jid": c.jid,
                    "name": c.name,
                    "number": c.number,
                    "messages": [dict(vars(m)) for m in c.messages],
                }
                for c in self.chats
            ],
            "calls": [dict(vars(c)) for c in self.calls],
            "clipboard": self.clipboard,
            "wifi_enabled": self.wifi_enabled,
            "airplane_mode": self.airplane_mode,
            "bluetooth_enabled": self.bluetooth_enabled,
            "auto_rotate": self.auto_rotate,
            "volumes": dict(self.volumes),
            "brightness": self.brightness,
            "brightness_auto": self.brightness_auto,
            "dnd": self.dnd,
            "next_ids": dict(self.next_ids),
        }

    def to_json(self) -> str:
        return "".join(render_state(self.snapshot()))

    @classmethod
    def from_json(cls, text: str) -> SimState:
        """The state a file holds; ValueError says why it holds none."""
        from pydantic import ValidationError

        if not text.strip():
            raise ValueError("the file is empty")
        try:
            data = _file_format().validate_json(text)
        except ValidationError as exc:
            raise ValueError(validation_problem(exc)) from None
        state = cls(**{name: getattr(data, name) for name in type(data).model_fields if name != "version"})
        state._check_ids()
        state._trim_sms()
        state._drop_unused_threads()
        state._trim_notifications()
        state._trim_chats()
        state._drop_unused_chats()
        state._trim_calls()
        state.dirty = False
        return state

    def _check_ids(self) -> None:
        """Every id a number, and the next ids past every id in use, whatever the file says."""
        tables: dict[str, list[str]] = {
            "contacts": [c.id for c in self.contacts],
            "sms": [m.id for m in self.sms],
            "threads": [*self.threads, *(m.thread_id for m in self.sms)],
            "events": [e.id for e in self.events],
            "alarms": [a.id for a in self.alarms],
            "notifications": [
                n.key.split("|")[2] if n.key.count("|") == 4 else "0" for n in self.notifications
            ],
            "chat_messages": [m.id for c in self.chats for m in c.messages],
            "calls": [c.id for c in self.calls],
        }
        for table, ids in tables.items():
            bad = next((i for i in ids if not _NUMBER.fullmatch(i)), None)
            if bad is not None:
                raise ValueError(f"{table}: the id {bad!r} is not a number")
            if ids:
                self.next_ids[table] = max(self.next_ids.get(table, 1), max(int(i) for i in ids) + 1)

    @classmethod
    def load(cls, path: pathlib.Path) -> SimState:
        """The state saved in `path`; StateFileError if the file holds none. OSErrors pass through."""
        text = read_state_text(path, remedy=REMEDY)
        try:
            return cls.from_json(text)
        except ValueError as exc:
            raise StateFileError(path, f"not a simulator state file ({exc})", REMEDY) from None


_NUMBER = re.compile(r"[0-9]{1,18}")


def render_state(data: dict[str, Any]) -> Iterator[str]:
    """A snapshot as the state file's JSON, in pieces: one line per row, so that people can read
    and diff it, and so that a thread encoding it hands the interpreter back between rows."""
    for n, (key, value) in enumerate(data.items()):
        yield ("{" if n == 0 else ",") + f"\n {json.dumps(key)}: "
        if isinstance(value, list) and value:
            for i, row in enumerate(value):
                yield ("[" if i == 0 else ",") + "\n  " + json.dumps(row, ensure_ascii=False)
            yield "\n ]"
        else:
            yield json.dumps(value, ensure_ascii=False)
    yield "\n}\n"


@cache
def _file_format() -> TypeAdapter[Any]:
    """What a state file must hold. Unknown keys are errors rather than dropped, since the next
    save would otherwise lose them. Built on first use: most starts have no file to read."""
    from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

    class StateFile(BaseModel):
        model_config = ConfigDict(extra="forbid", strict=True)
        version: Literal[1]
        contacts: list[Contact]
        sms: list[SmsMessage]
        threads: dict[str, str]
        events: list[CalendarEvent]
        alarms: list[Alarm]
        notifications: list[Notification]
        notification_targets: dict[str, str]
        chats: list[Chat]
        calls: list[CallRecord] = []  # absent from files written before the sim kept a call log
        clipboard: str
        wifi_enabled: bool
        airplane_mode: bool
        # absent from files written before the sim kept the phone's settings (issue 27)
        bluetooth_enabled: bool = False
        auto_rotate: bool = True
        volumes: dict[Literal["music", "ring", "alarm", "notification"], int] = Field(
            default_factory=lambda: dict(DEFAULT_VOLUMES)  # type: ignore[arg-type]
        )
        brightness: int = Field(default=128, ge=0, le=255)
        brightness_auto: bool = True
        dnd: Literal["off", "priority", "alarms", "total"] = "off"
        next_ids: dict[str, int]

    return TypeAdapter(StateFile)
