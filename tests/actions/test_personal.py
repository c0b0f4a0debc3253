"""Calls, calendar, contacts, alarms and the clipboard end to end, read back from the sim's stores."""

from __future__ import annotations

from datetime import datetime

import pytest

from phoneuse_runtime.rpc import protocol_pb2 as pb

from ..conftest import Client
from .conftest import DIALER, LAUNCHER, MESSAGES, failure, front, sim, texts


def _ms(iso: str) -> int:
    return int(datetime.fromisoformat(iso).timestamp() * 1000)


# --- MAKE_CALL / END_CALL -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("to", "number", "contact"),
    [
        ("Mom", "+1 415 555 0100", "Mom"),
        ("frank", "+1 650 555 0142", "Frank Okafor"),
        ("+44 20 7946 0958", "+44 20 7946 0958", None),
        ("72345", "72345", None),
    ],
)
async def test_make_call_then_end_call(client: Client, to: str, number: str, contact: str | None) -> None:
    result = await client.ok("MAKE_CALL", {"to": to})
    assert result == {"number": number, "contact": contact, "state": "offhook", "via": "sim"}
    state = await sim(client).call_state()
    assert (state.state, state.number) == ("offhook", number)
    assert (await front(client)) == (DIALER, "com.android.incallui.InCallActivity")
    assert await texts(client, DIALER + ":id/contactgrid_status_text") == ["On call"]
    assert await client.ok("END_CALL") == {"ended": True, "via": "sim"}
    assert (await sim(client).call_state()).state == "idle"
    assert (await front(client))[0] == LAUNCHER
    assert await client.ok("END_CALL") == {"ended": False, "via": "sim"}


async def test_a_second_call_while_one_is_up_is_unsupported(client: Client) -> None:
    await client.ok("MAKE_CALL", {"to": "alice"})
    code, message, _ = await failure(client, "MAKE_CALL", {"to": "mom"})
    assert code == "UNSUPPORTED"
    assert "already offhook" in message
    state = await sim(client).call_state()
    assert (state.state, state.number) == ("offhook", "+1 415 555 0101")
    assert (await client.ok("END_CALL"))["ended"] is True


async def test_call_from_the_previous_app_returns_to_it(client: Client) -> None:
    await client.ok("OPEN_APP", {"package": MESSAGES})
    await client.ok("MAKE_CALL", {"to": "Carol"})
    assert (await sim(client).call_state()).number == "+1 415 555 0104"
    await client.ok("END_CALL")
    assert (await front(client))[0] == MESSAGES


@pytest.mark.parametrize(
    ("to", "fragment"), [("bob", "matches several contacts"), ("Nobody", "no contact named")]
)
async def test_make_call_to_a_bad_name_is_invalid_params(client: Client, to: str, fragment: str) -> None:
    code, message, _ = await failure(client, "MAKE_CALL", {"to": to})
    assert code == "INVALID_PARAMS"
    assert fragment in message
    assert (await sim(client).call_state()).state == "idle"


# --- CREATE_EVENT -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("start", "end", "start_ms", "end_ms"),
    [
        # With an offset: 10:00 at +01:00 is 09:00 UTC.
        (
            "2026-12-01T10:00:00+01:00",
            None,
            _ms("2026-12-01T09:00:00+00:00"),
            _ms("2026-12-01T10:00:00+00:00"),
        ),
        (
            "2026-12-01T10:00:00Z",
            "2026-12-01T12:30:00Z",
            _ms("2026-12-01T10:00:00+00:00"),
            _ms("2026-12-01T12:30:00+00:00"),
        ),
        # Naive means UTC.
        (
            "2026-12-01T10:00:00",
            "2026-12-01T10:15:00",
            _ms("2026-12-01T10:00:00+00:00"),
            _ms("2026-12-01T10:15:00+00:00"),
        ),
        # Epoch milliseconds, and an end with another offset.
        ("1796112000000", "2026-12-01T04:00:00-05:00", 1796112000000, _ms("2026-12-01T09:00:00+00:00")),
        # A zero-length event is allowed.
        (
            "2026-12-01T10:00:00Z",
            "2026-12-01T10:00:00Z",
            _ms("2026-12-01T10:00:00+00:00"),
            _ms("2026-12-01T10:00:00+00:00"),
        ),
    ],
)
async def test_create_event_times(
    client: Client, start: str, end: str | None, start_ms: int, end_ms: int
) -> None:
    params = {"title": "Planning ☕", "start": start, "location": 'Room 4; "north"', "description": "a\nb"}
    if end is not None:
        params["end"] = end
    result = await client.ok("CREATE_EVENT", params)
    assert (result["start_ms"], result["end_ms"]) == (start_ms, end_ms)
    assert (result["title"], result["all_day"], result["verified"]) == ("Planning ☕", False, True)
    stored = [e for e in await sim(client).calendar_events() if e.id == result["event_id"]]
    assert len(stored) == 1
    event = stored[0]
    assert (event.title, event.start_ms, event.end_ms, event.all_day) == (
        "Planning ☕",
        start_ms,
        end_ms,
        False,
    )
    assert (event.location, event.description, event.calendar) == ('Room 4; "north"', "a\nb", "Personal")


async def test_create_event_reads_times_without_offset_in_its_time_zone(client: Client) -> None:
    result = await client.ok(
        "CREATE_EVENT", {"title": "Call", "start": "2026-12-01T09:00:00", "timezone": "America/New_York"}
    )
    # 09:00 in New York in December (UTC-5) is 14:00 UTC; a time with an offset keeps it.
    assert result["start_ms"] == _ms("2026-12-01T14:00:00+00:00")
    assert result["end_ms"] == _ms("2026-12-01T15:00:00+00:00")
    assert (result["verified"], result["verify_error"]) == (True, None)
    with_offset = await client.ok(
        "CREATE_EVENT", {"title": "Call", "start": "2026-12-01T09:00:00Z", "timezone": "America/New_York"}
    )
    assert with_offset["start_ms"] == _ms("2026-12-01T09:00:00+00:00")


@pytest.mark.parametrize(
    ("start", "day"),
    [
        ("2026-12-01T15:30:00+09:00", "2026-12-01"),  # the date as written, whatever the offset
        ("2026-12-01", "2026-12-01"),
        ("1796112000000", "2026-12-01"),  # 2026-12-01T08:00Z
    ],
)
async def test_create_all_day_event(client: Client, start: str, day: str) -> None:
    result = await client.ok("CREATE_EVENT", {"title": "Holiday", "start": start, "all_day": "true"})
    midnight = _ms(day + "T00:00:00+00:00")
    assert (result["start_ms"], result["end_ms"], result["all_day"]) == (
        midnight,
        midnight + 86_400_000,
        True,
    )
    stored = [e for e in await sim(client).calendar_events() if e.id == result["event_id"]]
    assert [(e.start_ms, e.end_ms, e.all_day) for e in stored] == [(midnight, midnight + 86_400_000, True)]


async def test_create_event_in_a_named_calendar_and_the_agenda_shows_it(client: Client) -> None:
    events_before = len(await sim(client).calendar_events())
    result = await client.ok(
        "CREATE_EVENT",
        {"title": "Board game night 🎲", "start": "2026-12-05T18:00:00Z", "calendar": "Family"},
    )
    events = await sim(client).calendar_events()
    assert len(events) == events_before + 1
    assert [e.calendar for e in events if e.id == result["event_id"]] == ["Family"]
    await client.ok("OPEN_APP", {"name": "Calendar"})
    assert "Board game night 🎲" in await texts(client, "com.google.android.calendar:id/title")


@pytest.mark.parametrize(
    ("params", "fragment"),
    [
        ({"title": "", "start": "2026-12-01T10:00:00Z"}, "title"),
        ({"title": "t"}, "start"),
        ({"title": "t", "start": "next tuesday"}, "ISO-8601"),
        ({"title": "t", "start": "2026-13-01T10:00:00"}, "ISO-8601"),
        (
            {"title": "t", "start": "2026-12-01T10:00:00Z", "end": "2026-12-01T09:59:59Z"},
            "end is before start",
        ),
        ({"title": "t", "start": "2026-12-01T10:00:00Z", "all_day": "maybe"}, "all_day"),
        ({"title": "t", "start": "2026-12-01T10:00:00", "timezone": "Mars/Olympus"}, "unknown time zone"),
        ({"title": "t", "start": "2026-12-01T10:00:00", "timezone": "../etc/passwd"}, "unknown time zone"),
        # Both read in the zone: the end is still before the start.
        (
            {
                "title": "t",
                "start": "2026-12-01T10:00:00",
                "end": "2026-12-01T09:30:00",
                "timezone": "Asia/Tokyo",
            },
            "end is before start",
        ),
    ],
)
async def test_create_event_bad_params(client: Client, params: dict[str, str], fragment: str) -> None:
    before = await sim(client).calendar_events()
    code, message, _ = await failure(client, "CREATE_EVENT", params)
    assert code == "INVALID_PARAMS"
    assert fragment in message
    assert await sim(client).calendar_events() == before


# --- ADD_CONTACT --------------------------------------------------------------------------------


async def test_add_contact_then_query_and_use_it(client: Client) -> None:
    added = await client.ok(
        "ADD_CONTACT", {"name": "Łukasz Żółć", "phone": "+48 (22) 123-45-67", "email": "lukasz@example.pl"}
    )
    assert (added["name"], added["verified"], added["via"]) == ("Łukasz Żółć", True, "sim")
    found, total, _ = await client.query(pb.CONTACTS, {"name": "łukasz"})
    assert total == 1
    assert found[0]["id"] == added["contact_id"]
    assert (found[0]["phones"], found[0]["emails"]) == (["+48 (22) 123-45-67"], ["lukasz@example.pl"])
    # The new contact is now a name other actions resolve.
    sent = await client.ok("SEND_MESSAGE", {"to": "łukasz", "body": "Cześć!"})
    assert (sent["to"], sent["contact"]) == ("+48 (22) 123-45-67", "Łukasz Żółć")
    only_name = await client.ok("ADD_CONTACT", {"name": "Nameless Number"})
    found, _, _ = await client.query(pb.CONTACTS, {"id": only_name["contact_id"]})
    assert (found[0]["phones"], found[0]["emails"]) == ([], [])


@pytest.mark.parametrize(
    ("params", "fragment"),
    [
        ({"name": "X", "phone": "call me maybe"}, "is not a phone number"),
        ({"name": "X", "phone": "12"}, "is not a phone number"),
        ({"name": "X", "phone": "+-()"}, "is not a phone number"),
        ({"name": "X", "email": "not-an-email"}, "is not an email address"),
        ({"name": "", "phone": "+1 555 0100"}, "name"),
        ({"phone": "+1 555 0100"}, "name"),
    ],
)
async def test_add_contact_bad_params(client: Client, params: dict[str, str], fragment: str) -> None:
    _, before, _ = await client.query(pb.CONTACTS, {})
    code, message, _ = await failure(client, "ADD_CONTACT", params)
    assert code == "INVALID_PARAMS"
    assert fragment in message
    _, after, _ = await client.query(pb.CONTACTS, {})
    assert after == before


# --- SET_ALARM ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("days", "expected"),
    [
        ("", []),
        ("sun,sat", ["SAT", "SUN"]),
        ('["Sunday", "monday", "MON"]', ["MON", "SUN"]),
        ("Tuesday, thurs , wed", ["TUE", "WED", "THU"]),
        ("Saturdays,WEDNES", ["WED", "SAT"]),
        ("mon,tue,wed,thu,fri,sat,sun", ["MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN"]),
    ],
)
async def test_set_alarm_normalises_days(client: Client, days: str, expected: list[str]) -> None:
    result = await client.ok("SET_ALARM", {"hour": "6", "minute": "30", "label": "Run 🏃", "days": days})
    assert (result["hour"], result["minute"], result["label"], result["days"]) == (6, 30, "Run 🏃", expected)
    assert result["verified"] is True
    stored = [a for a in await sim(client).alarms() if a.id == result["alarm_id"]]
    assert [(a.hour, a.minute, a.label, a.days, a.enabled) for a in stored] == [
        (6, 30, "Run 🏃", expected, True)
    ]


@pytest.mark.parametrize(
    "days", ["mon-fri", "weekdays", "Monkey", "mo", "tuesdayss", "sun,funday", "mon fri"]
)
async def test_set_alarm_refuses_what_is_not_a_day(client: Client, days: str) -> None:
    before = await sim(client).alarms()
    code, message, _ = await failure(client, "SET_ALARM", {"hour": "7", "days": days})
    assert code == "INVALID_PARAMS"
    assert "unknown day" in message
    assert await sim(client).alarms() == before


async def test_set_alarm_shows_in_the_clock_app(client: Client) -> None:
    await client.ok("SET_ALARM", {"hour": "23", "minute": "59", "label": "Midnight snack"})
    await client.ok("OPEN_APP", {"name": "clock"})
    assert "11:59 PM" in await texts(client, "com.google.android.deskclock:id/digital_clock")
    assert "Midnight snack" in await texts(client, "com.google.android.deskclock:id/label")


# --- SET_CLIPBOARD ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "👩‍👩‍👧‍👦 🇺🇦 👍🏽 日本語 中文 한국어 مرحبا שלום e\u0301",
        "quotes \"double\" 'single' `back` $(rm -rf /); && | <xml/> \\ %s {0}",
        "line 1\nline 2\r\n\ttabbed\x00nul",
        "",
        "x" * 100_000,
    ],
)
async def test_set_clipboard_round_trips(client: Client, text: str) -> None:
    result = await client.ok("SET_CLIPBOARD", {"text": text})
    assert (result["length"], result["verified"]) == (len(text), True)
    assert await sim(client).get_clipboard() == text


async def test_set_clipboard_too_long_is_invalid_params(client: Client) -> None:
    await client.ok("SET_CLIPBOARD", {"text": "kept"})
    code, message, _ = await failure(client, "SET_CLIPBOARD", {"text": "x" * 100_001})
    assert code == "INVALID_PARAMS"
    assert "text" in message
    assert await sim(client).get_clipboard() == "kept"
