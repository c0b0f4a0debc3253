"""Calendar attendees over adb: the runtime served on `--device adb:127.0.0.1:PORT` reads the
fake phone's content://com.android.calendar/attendees (CalendarContract's columns) in one query
per read of events, and its memory makes each guest one person with the contact they are."""

from __future__ import annotations

from typing import Any

from phoneuse_runtime.device.adb.providers import ATTENDEE_IDS_LISTED
from phoneuse_runtime.memory import Memory
from phoneuse_runtime.rpc import protocol_pb2 as pb
from tests.device.adb.conftest import AdbServe, Served
from tests.fakes import seed
from tests.fakes.phone import FakePhone

HOUR = 3_600_000
START = 1_900_000_000_000  # 2030


async def _fed(serve_adb: AdbServe, phone: FakePhone) -> Served:
    s = await serve_adb(phone, memory_ingest=True)
    memory = s.client.app.component("memory")
    assert isinstance(memory, Memory)
    await memory.settled()
    return s


async def _nodes(s: Served, filters: dict[str, str]) -> list[dict[str, Any]]:
    results, total, _ = await s.client.query(pb.MEMORY, filters, limit=100)
    assert total == len(results)
    return results


def _attendee_reads(s: Served) -> list[str]:
    return [o for o in s.opened() if "com.android.calendar/attendees" in o]


def _event_reads(s: Served) -> list[str]:
    return [o for o in s.opened() if "com.android.calendar/events" in o and "deleted=0" in o]


async def test_guests_are_read_in_one_query_and_each_is_one_person(serve_adb: AdbServe) -> None:
    phone = FakePhone()
    state = phone.state
    seed.add_contact(state, "Alice Johnson", ["+1 415 555 0101"], ["alice.johnson@example.com"])
    seed.add_contact(state, "Bob Smith", ["+1 415 555 0102"])
    review = seed.add_event(state, "Design review", START, START + HOUR)
    seed.add_attendee(state, review, "Alice J.", "ALICE.Johnson@Example.COM", status=1, relationship=2)
    seed.add_attendee(state, review, "Bob Smith", None, status=4)  # typed in by name only
    seed.add_attendee(state, review, "Zoë O'Brien, Jr., attendeeName=x", "zoe@example.net", status=2)
    seed.add_attendee(state, review, None, None)  # a row with nobody in it names no one
    seed.add_event(state, "Dentist", START + 24 * HOUR, START + 25 * HOUR)
    gone = seed.add_event(state, "Cancelled", START + 2 * HOUR, START + 3 * HOUR)
    seed.add_attendee(state, gone, "Ghost", "ghost@example.com")
    state.events[-1].deleted = 1  # the provider's join hides a deleted event's guests
    s = await _fed(serve_adb, phone)

    # One attendees query per read of events, with the ids that read returned.
    reads, events = _attendee_reads(s), _event_reads(s)
    assert reads and len(reads) == len(events)
    assert all(f"event_id IN ({review},{review + 1})" in r for r in reads)

    [meeting] = await _nodes(s, {"kind": "event", "q": "design review"})
    guests = await _nodes(s, {"related_to": meeting["id"], "relation": "attends"})
    assert sorted(g["name"] for g in guests) == [
        "Alice Johnson",
        "Bob Smith",
        "Zoë O'Brien, Jr., attendeeName=x",
    ]
    # Alice by her address in another case, Bob by his name: each the contact they are.
    [alice] = await _nodes(s, {"kind": "person", "q": "alice"})
    [bob] = await _nodes(s, {"kind": "person", "q": "bob smith"})
    assert {alice["id"], bob["id"]} <= {g["id"] for g in guests}
    assert set(alice["sources"]) == set(bob["sources"]) == {"contacts", "calendar"}
    assert "Alice J." in alice["aliases"] and alice["name"] == "Alice Johnson"
    assert alice["attrs"]["emails"] == ["alice.johnson@example.com"]  # the contact's spelling
    [zoe] = [g for g in guests if g["id"] not in (alice["id"], bob["id"])]
    assert (zoe["sources"], zoe["attrs"]["emails"]) == (["calendar"], ["zoe@example.net"])
    assert await _nodes(s, {"q": "ghost"}) == []
    [dentist] = await _nodes(s, {"kind": "event", "q": "dentist"})
    assert await _nodes(s, {"related_to": dentist["id"], "relation": "attends"}) == []


async def test_a_phone_that_refuses_attendees_still_gives_its_events(serve_adb: AdbServe) -> None:
    phone = FakePhone()
    review = seed.add_event(phone.state, "Design review", START, START + HOUR)
    seed.add_attendee(phone.state, review, "Alice Johnson", "alice@example.com")
    phone.state.faults.denied_providers.add("com.android.calendar/attendees")
    s = await _fed(serve_adb, phone)
    assert _attendee_reads(s)  # asked, refused
    [meeting] = await _nodes(s, {"kind": "event", "q": "design review"})
    assert await _nodes(s, {"related_to": meeting["id"], "relation": "attends"}) == []
    assert await _nodes(s, {"kind": "person"}) == []
    # Creating an event reads it back through the same path: verified, not failed.
    created = await s.client.ok("CREATE_EVENT", {"title": "Lunch", "start": "2030-05-01T12:00:00Z"})
    assert created["verified"] is True


async def test_many_events_ask_for_a_range_of_ids(serve_adb: AdbServe) -> None:
    phone = FakePhone()
    ids = [
        seed.add_event(phone.state, f"Slot {i}", START + i * HOUR, START + i * HOUR + 1)
        for i in range(ATTENDEE_IDS_LISTED + 1)
    ]
    seed.add_attendee(phone.state, ids[-1], "Priya Natarajan", "priya@example.com", relationship=2)
    s = await _fed(serve_adb, phone)
    reads = _attendee_reads(s)
    assert reads and all(f"event_id>={ids[0]}" in r and f"event_id<={ids[-1]}" in r for r in reads)
    assert all(len(r) < 4096 for r in reads)  # short enough for any adbd's service string
    [priya] = await _nodes(s, {"kind": "person", "q": "priya"})
    [slot] = await _nodes(s, {"related_to": priya["id"], "relation": "attends"})
    assert slot["name"] == f"Slot {ATTENDEE_IDS_LISTED}"
