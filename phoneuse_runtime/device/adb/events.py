"""Events the phone does not push over adb, found by polling it every `poll_ms`, and only while
someone subscribes to them from outside (the bus's `demanded`: a Subscribe stream, a connected
Iris device; the memory's own subscription makes no poll):
- APP_STATE_CHANGED: the foreground app (dumpsys window), compared with the last poll;
- SYSTEM_DIALOG: the same read, its focused window a system dialog's (the device's watch says
  each once: `Device.front_read`);
- MESSAGE_RECEIVED: inbox rows above a high-water `_id`, set when the backend first connects and
  kept over drops (what arrived meanwhile is reported on reconnection), and set again when
  interest resumes after a lapse (what arrived while nobody listened is not replayed);
- NOTIFICATION_POSTED: keys in `dumpsys notification --noredact` not seen at the last poll.

A source that is not wanted is forgotten, so the first poll after interest returns only takes
stock. Failures are logged once per kind of failure and never stop the loop; a failure that
suggests the phone is gone makes the link check at once (the device's `on_failure`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Protocol

from phoneuse_runtime.device.base import SYSTEM_SOURCE, Foreground, Link, Notification, SmsFilter, SmsMessage
from phoneuse_runtime.kernel.errors import RuntimeFailure
from phoneuse_runtime.kernel.events import AppStateChanged, EventSink, MessageReceived, NotificationPosted

log = logging.getLogger(__name__)

APP_STATE = "APP_STATE_CHANGED"
MESSAGES = "MESSAGE_RECEIVED"
NOTIFICATIONS = "NOTIFICATION_POSTED"
DIALOGS = "SYSTEM_DIALOG"


class Polled(Protocol):
    """What the pollers read from the phone (the adb device's primitives)."""

    link: Link

    async def foreground(self) -> Foreground: ...

    def front_read(self, front: Foreground) -> None: ...

    async def sms_messages(self, where: SmsFilter = ...) -> list[SmsMessage]: ...

    async def notifications(self) -> list[Notification]: ...

    async def highest_sms_id(self) -> int: ...


class Pollers:
    """The polling loop and what it remembers between polls."""

    def __init__(
        self,
        phone: Polled,
        emit: EventSink,
        wanted: Callable[[str], bool],
        *,
        poll_ms: int,
        on_failure: Callable[[RuntimeFailure], None],
    ) -> None:
        self.phone = phone
        self.emit = emit
        self.wanted = wanted
        self.poll_s = poll_ms / 1000
        self.on_failure = on_failure
        self.sms_mark: int | None = None  # set by the device when it connects
        self._foreground: Foreground | None = None
        self._notification_keys: set[str] | None = None
        self._messages_active = False
        self._logged: set[str] = set()
        self.ticks = 0  # wake-ups of the loop with the phone linked, wanted or not
        self.polls = 0  # ticks that read the phone, for tests

    async def run(self) -> None:
        while True:
            await asyncio.sleep(self.poll_s)  # the poll interval (--poll-ms)
            if not self.phone.link.up:
                continue
            await self.tick()

    async def tick(self) -> None:
        """One poll of every wanted source."""
        self.ticks += 1
        read = False
        if self.wanted(APP_STATE) or self.wanted(DIALOGS):
            read = await self._guard("the foreground app", self._app_state) or read
        else:
            self._foreground = None
        if self.wanted(MESSAGES):
            read = await self._guard("new SMS", self._messages) or read
        elif self._messages_active:  # interest lapsed: take stock again when it returns
            self._messages_active = False
            self.sms_mark = None
        if self.wanted(NOTIFICATIONS):
            read = await self._guard("notifications", self._notifications) or read
        else:
            self._notification_keys = None
        if read:
            self.polls += 1

    async def _guard(self, what: str, poll: Callable[[], Awaitable[None]]) -> bool:
        try:
            await poll()
        except RuntimeFailure as failure:
            key = f"{what}:{failure.code}"
            if key not in self._logged:  # once per kind, not once a second
                self._logged.add(key)
                log.warning("polling %s failed: %s", what, failure.message)
            self.on_failure(failure)
        return True

    async def _app_state(self) -> None:
        now = await self.phone.foreground()
        if self.wanted(DIALOGS):
            self.phone.front_read(now)
        before = self._foreground
        self._foreground = now
        if not self.wanted(APP_STATE) or before is None:
            return
        if (now.package, now.activity) == (before.package, before.activity):
            return
        self.emit(
            AppStateChanged(
                package=now.package, activity=now.activity, previous_package=before.package
            ).to_event(SYSTEM_SOURCE)
        )

    async def _messages(self) -> None:
        self._messages_active = True
        if self.sms_mark is None:
            self.sms_mark = await self.phone.highest_sms_id()
            return
        arrived = await self.phone.sms_messages(SmsFilter(box="inbox", above_id=self.sms_mark))
        self.sms_mark = report_messages(self.emit, arrived, self.sms_mark)

    async def _notifications(self) -> None:
        listed = await self.phone.notifications()
        self._notification_keys = report_notifications(self.emit, listed, self._notification_keys)


def report_messages(emit: EventSink, arrived: list[SmsMessage], mark: int) -> int:
    """MESSAGE_RECEIVED for each inbox row above `mark`, oldest first; returns the new mark."""
    for message in sorted(arrived, key=lambda m: int(m.id)):
        if int(message.id) <= mark:
            continue
        mark = int(message.id)
        payload = MessageReceived.model_validate(
            {
                "from": message.address,
                "body": message.body,
                "app": "sms",
                "thread_id": message.thread_id,
                "message_id": message.id,
            }
        )
        emit(payload.to_event(SYSTEM_SOURCE))
    return mark


def report_notifications(emit: EventSink, listed: list[Notification], seen: set[str] | None) -> set[str]:
    """NOTIFICATION_POSTED for each notification whose key was not `seen` at the last poll (none
    on the first, which only takes stock); returns the keys seen now."""
    if seen is not None:
        for n in listed:
            if n.key not in seen:
                event = NotificationPosted(package=n.package, title=n.title, text=n.text, key=n.key)
                emit(event.to_event(SYSTEM_SOURCE))
    return {n.key for n in listed}
