"""The simulated phone's data stores (the providers' tables), and their JSON form on disk.

Ids are strings of increasing integers, like a content provider's `_id` column. Every
mutation sets `dirty`, so the device can persist after each primitive.
"""

from __future__ import annotations

import json
import pathlib
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from ...errors import InvalidParams
from ...events import now_ms
from ...files import atomic_write_text
from ...numbers import digits, same_number
from ..base import Alarm, CalendarEvent, Contact, Notification, SmsBox, SmsMessage
from .catalog import BY_PACKAGE

FORMAT_VERSION = 1


def require_number(number: str) -> str:
    if not digits(number):
        raise InvalidParams(f"not a phone number: {number!r}")
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
    clipboard: str = ""
    wifi_enabled: bool = True
    airplane_mode: bool = False
    next_ids: dict[str, int] = field(default_factory=dict)
    dirty: bool = False

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
        for thread_id, first in self.threads.items():
            if same_number(first, address) or (
                not digits(first)
                and not digits(address)
                and first.strip().casefold() == address.strip().casefold()
            ):
                return thread_id
        thread_id = self.new_id("threads")
        self.threads[thread_id] = address.strip()
        self.dirty = True
        return thread_id

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
        return message

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
        stored = CalendarEvent(**{**asdict(event), "id": self.new_id("events")})
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
        stored = Alarm(self.new_id("alarms"), alarm.hour, alarm.minute, alarm.label, days, alarm.enabled)
        self.alarms.append(stored)
        self.dirty = True
        return stored

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
        return notification

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
        chat = next((c for c in self.chats if same_number(c.number, who)), None)
        if chat is None and create:
            number = "+" + digits(who)
            chat = Chat(f"{digits(who)}@s.whatsapp.net", self.display_name(number), number)
            self.chats.append(chat)
            self.dirty = True
        return chat

    def add_chat_message(self, chat: Chat, body: str, *, from_me: bool, date_ms: int = 0) -> ChatMessage:
        message = ChatMessage(self.new_id("chat_messages"), from_me, body, date_ms or now_ms(), read=from_me)
        chat.messages.append(message)
        self.dirty = True
        return message

    # --- persistence -------------------------------------------------------
    def to_json(self) -> str:
        data = asdict(self)
        del data["dirty"]
        data["version"] = FORMAT_VERSION
        return json.dumps(data, ensure_ascii=False, indent=1)

    @classmethod
    def from_json(cls, text: str) -> SimState:
        try:
            data: dict[str, Any] = json.loads(text)
            if data.get("version") != FORMAT_VERSION:
                raise ValueError(f"unknown state format version {data.get('version')!r}")
            return cls(
                contacts=[Contact(**c) for c in data["contacts"]],
                sms=[SmsMessage(**m) for m in data["sms"]],
                threads=dict(data["threads"]),
                events=[CalendarEvent(**e) for e in data["events"]],
                alarms=[Alarm(**a) for a in data["alarms"]],
                notifications=[Notification(**n) for n in data["notifications"]],
                notification_targets=dict(data["notification_targets"]),
                chats=[
                    Chat(c["jid"], c["name"], c["number"], [ChatMessage(**m) for m in c["messages"]])
                    for c in data["chats"]
                ],
                clipboard=str(data["clipboard"]),
                wifi_enabled=bool(data["wifi_enabled"]),
                airplane_mode=bool(data["airplane_mode"]),
                next_ids={str(k): int(v) for k, v in data["next_ids"].items()},
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise InvalidParams(f"not a simulator state file: {exc}") from exc

    def save(self, path: pathlib.Path) -> None:
        """Writes atomically, so a crash never leaves half a file."""
        atomic_write_text(path, self.to_json())
        self.dirty = False

    @classmethod
    def load(cls, path: pathlib.Path) -> SimState:
        return cls.from_json(path.read_text(encoding="utf-8"))
