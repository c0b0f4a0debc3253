"""The phone the simulator starts as when there is no state file.

SEED PHONE (times are relative to the moment the simulator starts; ids in brackets)

Contacts
  [1] Alice Johnson   +1 415 555 0101, alice.johnson@example.com   (starred)
  [2] Bob Smith       +1 415 555 0102
  [3] Bobby Tables    +1 415 555 0103      ("bob" is ambiguous, "bob smith" is exact)
  [4] Carol Diaz      +1 415 555 0104 (mobile), +1 415 555 0114 (work)
  [5] David Lee       +44 20 7946 0958
  [6] Emma Wilson     +1 212 555 0199, emma.wilson@example.org
  [7] Mom             +1 415 555 0100      (starred)
  [8] Frank Okafor    +1 650 555 0142

SMS threads (thread id: rows, oldest first)
  [1] Alice Johnson, +14155550101
        [1] inbox  "Hey! Are we still on for lunch tomorrow?"   3 h ago
        [2] sent   "Yes, 12:30 at the usual place"              2 h 50 min ago
        [3] inbox  "Perfect, see you there 🙂"                   2 h 45 min ago
  [2] Mom, +14155550100
        [4] inbox  "Call me when you get a chance"              1 day ago
        [5] sent   "Will do, after work ❤️"                      23 h 50 min ago
  [3] 72345 (a short code)
        [6] inbox  "Your verification code is 482913. It expires in 10 minutes."  5 min ago, unread

Calendar events
  [1] Team standup          tomorrow 09:30-09:45, location "Google Meet"; attendees
        Priya Natarajan <priya.natarajan@example.com> (organizer, accepted) and
        Alice Johnson <Alice.Johnson@Example.com> (invited): the contact [1], her address in another case
  [2] Dentist appointment   in 3 days 15:00-16:00, location "123 Main St"

Alarms
  [1] 07:00 "Wake up", MON-FRI, enabled

WhatsApp chats (jid: messages, oldest first)
  14155550101@s.whatsapp.net  Alice Johnson: in "Did you see the photos from Saturday?", out "Yes! Amazing 😍"
  14155550102@s.whatsapp.net  Bob Smith:     in "Game tonight at 8?"
  442079460958@s.whatsapp.net David Lee:     out "Happy birthday David! 🎉", in "Thanks mate!"

Clipboard empty, no notifications, no calls in the call log, Wi-Fi on, airplane mode off; the
launcher is in front.
"""

from __future__ import annotations

import datetime as dt

from phoneuse_runtime.device.base import Alarm, Attendee, CalendarEvent
from phoneuse_runtime.device.sim.state import SimState
from phoneuse_runtime.kernel.events import now_ms

SEED = __doc__

_MIN = 60_000
_HOUR = 60 * _MIN
_DAY = 24 * _HOUR


def _at(days: int, hour: int, minute: int) -> int:
    """Epoch ms of a local wall-clock time `days` after today."""
    today = dt.datetime.now().astimezone().replace(hour=0, minute=0, second=0, microsecond=0)
    moment = today + dt.timedelta(days=days, hours=hour, minutes=minute)
    return int(moment.timestamp() * 1000)


def seed_state() -> SimState:
    """A fresh copy of the documented seed phone."""
    now = now_ms()
    s = SimState()
    s.add_contact("Alice Johnson", ["+1 415 555 0101"], ["alice.johnson@example.com"], starred=True)
    s.add_contact("Bob Smith", ["+1 415 555 0102"], [])
    s.add_contact("Bobby Tables", ["+1 415 555 0103"], [])
    s.add_contact("Carol Diaz", ["+1 415 555 0104", "+1 415 555 0114"], [])
    s.add_contact("David Lee", ["+44 20 7946 0958"], [])
    s.add_contact("Emma Wilson", ["+1 212 555 0199"], ["emma.wilson@example.org"])
    s.add_contact("Mom", ["+1 415 555 0100"], [], starred=True)
    s.add_contact("Frank Okafor", ["+1 650 555 0142"], [])

    alice, mom = "+14155550101", "+14155550100"
    s.add_sms(alice, "Hey! Are we still on for lunch tomorrow?", "inbox", date_ms=now - 3 * _HOUR)
    s.add_sms(alice, "Yes, 12:30 at the usual place", "sent", date_ms=now - 3 * _HOUR + 10 * _MIN)
    s.add_sms(alice, "Perfect, see you there 🙂", "inbox", date_ms=now - 3 * _HOUR + 15 * _MIN)
    s.add_sms(mom, "Call me when you get a chance", "inbox", date_ms=now - _DAY)
    s.add_sms(mom, "Will do, after work ❤️", "sent", date_ms=now - _DAY + 10 * _MIN)
    s.add_sms(
        "72345",
        "Your verification code is 482913. It expires in 10 minutes.",
        "inbox",
        read=False,
        date_ms=now - 5 * _MIN,
    )

    team = [
        Attendee("Priya Natarajan", "priya.natarajan@example.com", "accepted", organizer=True),
        Attendee("Alice Johnson", "Alice.Johnson@Example.com", "invited"),
    ]
    s.add_event(
        CalendarEvent(
            "", "Team standup", _at(1, 9, 30), _at(1, 9, 45), location="Google Meet", attendees=team
        )
    )
    s.add_event(
        CalendarEvent("", "Dentist appointment", _at(3, 15, 0), _at(3, 16, 0), location="123 Main St")
    )
    s.add_alarm(Alarm("", 7, 0, "Wake up", ["MON", "TUE", "WED", "THU", "FRI"]))

    for who, lines in (
        ("+1 415 555 0101", [(False, "Did you see the photos from Saturday?"), (True, "Yes! Amazing 😍")]),
        ("+1 415 555 0102", [(False, "Game tonight at 8?")]),
        ("+44 20 7946 0958", [(True, "Happy birthday David! 🎉"), (False, "Thanks mate!")]),
    ):
        chat = s.chat_for(who, create=True)
        assert chat is not None
        for i, (mine, body) in enumerate(lines):
            message = s.add_chat_message(chat, body, from_me=mine, date_ms=now - 2 * _DAY + i * 5 * _MIN)
            message.read = True
    s.dirty = False
    return s
