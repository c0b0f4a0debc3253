"""SimDevice behind the Device seam made for a phone at the end of a cable: filtered provider reads,
the call log, `find`, typed results (`Saved`, `Screenshot`, `DeviceInfo`), and a link that drops
and comes back."""

from __future__ import annotations

import asyncio
import json
import pathlib
from collections.abc import AsyncIterator

import pytest

from phoneuse_runtime.device.base import (
    CalendarEvent,
    CallFilter,
    ContactFilter,
    EventFilter,
    Saved,
    SmsFilter,
)
from phoneuse_runtime.device.sim import state as sim_state
from phoneuse_runtime.device.sim.device import SimDevice
from phoneuse_runtime.device.sim.seed import seed_state
from phoneuse_runtime.kernel.errors import DeviceUnavailable, InvalidParams
from phoneuse_runtime.kernel.events import Event
from phoneuse_runtime.screen.selector import Selector
from phoneuse_runtime.screen.ui import parse_hierarchy

ALICE, MOM, SHORT_CODE = "+14155550101", "+14155550100", "72345"
WAIT_S = 10.0  # bounds a wait that should end promptly; the tests never sleep


class Phone:
    def __init__(self, device: SimDevice, events: list[Event]) -> None:
        self.device = device
        self.events = events

    def link_events(self) -> list[tuple[str, dict[str, object]]]:
        return [
            (e.event_type, json.loads(e.payload_json))
            for e in self.events
            if e.event_type in ("DEVICE_CONNECTED", "DEVICE_DISCONNECTED")
        ]


@pytest.fixture
async def phone() -> AsyncIterator[Phone]:
    events: list[Event] = []
    device = SimDevice()
    await device.start(events.append)
    yield Phone(device, events)
    await device.close()


# --- SMS ------------------------------------------------------------------------------------------


async def test_sms_rows_come_newest_first_by_id(phone: Phone) -> None:
    rows = await phone.device.sms_messages()
    assert [m.id for m in rows] == ["6", "5", "4", "3", "2", "1"]  # the seed's, highest _id first
    assert [m.id for m in await phone.device.sms_messages(SmsFilter(limit=2))] == ["6", "5"]
    assert await phone.device.sms_messages(SmsFilter(limit=0)) == []


async def test_sms_filters_narrow_together(phone: Phone) -> None:
    device = phone.device
    assert [m.id for m in await device.sms_messages(SmsFilter(box="sent"))] == ["5", "2"]
    assert [m.id for m in await device.sms_messages(SmsFilter(box="inbox", address=ALICE))] == ["3", "1"]
    # The address as the phone compares numbers: another way of writing the same one matches.
    written = await device.sms_messages(SmsFilter(address="+1 (415) 555-0101"))
    assert [m.id for m in written] == ["3", "2", "1"]
    assert [m.id for m in await device.sms_messages(SmsFilter(address=SHORT_CODE))] == ["6"]
    assert await device.sms_messages(SmsFilter(address="+1 415 555 0199")) == []

    [mark] = await device.sms_messages(SmsFilter(box="sent", limit=1))
    assert mark.id == "5"
    await device.send_sms(MOM, "new one")
    await device.receive_sms(ALICE, "a reply")
    await device.send_sms(ALICE, "and another")
    # Every box shares one _id sequence: above the newest sent row is also what arrived since.
    since = await device.sms_messages(SmsFilter(above_id=int(mark.id)))
    assert [(m.id, m.box) for m in since] == [("9", "sent"), ("8", "inbox"), ("7", "sent"), ("6", "inbox")]
    to_alice = SmsFilter(box="sent", above_id=int(mark.id), address=ALICE)
    assert [m.body for m in await device.sms_messages(to_alice)] == ["and another"]
    newest_date = since[0].date_ms
    recent = await device.sms_messages(SmsFilter(since_ms=newest_date))
    assert all(m.date_ms >= newest_date for m in recent) and "9" in [m.id for m in recent]
    assert len(await device.sms_messages(SmsFilter(since_ms=newest_date + 3_600_000))) == 0


# --- contacts, calendar ---------------------------------------------------------------------------


async def test_contact_filters(phone: Phone) -> None:
    device = phone.device
    everyone = await device.contacts()
    assert [c.name for c in everyone] == sorted((c.name for c in everyone), key=str.casefold)
    assert [c.name for c in await device.contacts(ContactFilter(name="BOB"))] == ["Bob Smith", "Bobby Tables"]
    assert [c.name for c in await device.contacts(ContactFilter(name="son"))] == [
        "Alice Johnson",
        "Emma Wilson",
    ]
    assert [c.name for c in await device.contacts(ContactFilter(phone="(415) 555-0114"))] == ["Carol Diaz"]
    assert [c.name for c in await device.contacts(ContactFilter(id="7"))] == ["Mom"]
    assert len(await device.contacts(ContactFilter(name="o", limit=3))) == 3
    saved = await device.add_contact("Zoë", ["+49 30 1234567"], [])
    assert saved == Saved(id="9", via="sim")
    [zoe] = await device.contacts(ContactFilter(id=saved.id))
    assert (zoe.name, zoe.phones) == ("Zoë", ["+49 30 1234567"])


async def test_event_filters(phone: Phone) -> None:
    device = phone.device
    base = 1_900_000_000_000
    hour = 3_600_000
    ids = []
    for i, title in enumerate(("First", "Second", "Third")):
        saved = await device.insert_event(
            CalendarEvent("", title, base + i * hour, base + i * hour + hour // 2)
        )
        assert saved.via == "sim"
        ids.append(saved.id)
    [second] = await device.calendar_events(EventFilter(id=ids[1]))
    assert (second.title, second.start_ms, second.calendar) == ("Second", base + hour, "Personal")
    window = EventFilter(starts_after_ms=base + hour // 2, starts_before_ms=base + 2 * hour + 1)
    assert [e.title for e in await device.calendar_events(window)] == ["Second", "Third"]  # start order
    assert [e.title for e in await device.calendar_events(EventFilter(starts_after_ms=base, limit=1))] == [
        "First"
    ]


# --- the call log ---------------------------------------------------------------------------------


async def test_the_call_log_records_every_kind_of_call(phone: Phone) -> None:
    device = phone.device
    assert await device.call_log() == []  # the seed phone has none
    await device.place_call("+1 415 555 0100")
    assert await device.call_log() == []  # a call is logged when it ends, as Android does
    assert await device.end_call() is True
    await device.incoming_call("+1 212 555 0199")
    await device.end_call()  # declined while ringing
    await device.incoming_call("72345")
    await device.remote_hang_up()  # the caller gave up
    await device.incoming_call("+1 650 555 0142")
    answer = Selector(text="Answer").require(parse_hierarchy(await device.dump_hierarchy()))
    await device.tap(*answer.center)
    assert (await device.call_state()).state == "offhook"
    assert await device.remote_hang_up() is True
    assert await device.remote_hang_up() is False

    log = await device.call_log()
    assert [(c.id, c.kind, c.number, c.name) for c in log] == [
        ("4", "incoming", "+1 650 555 0142", "Frank Okafor"),
        ("3", "missed", "72345", ""),
        ("2", "rejected", "+1 212 555 0199", "Emma Wilson"),
        ("1", "outgoing", "+1 415 555 0100", "Mom"),
    ]
    assert all(c.duration_s == 0 for c in log)  # answered and ended within the second
    assert [c.date_ms for c in log] == sorted((c.date_ms for c in log), reverse=True)
    assert [c.id for c in await device.call_log(CallFilter(above_id=2))] == ["4", "3"]
    assert [c.id for c in await device.call_log(CallFilter(number="4155550100"))] == ["1"]
    assert [c.id for c in await device.call_log(CallFilter(limit=1))] == ["4"]
    assert await device.call_log(CallFilter(since_ms=log[0].date_ms + 3_600_000)) == []


async def test_the_call_log_is_bounded_and_persists(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "phone.json"
    device = SimDevice(state_file=path)
    await device.start(lambda _e: None)
    for i in range(sim_state.CALLS_MAX + 3):
        await device.place_call(f"+1 212 555 {i % 10_000:04d}")
        await device.end_call()
    log = await device.call_log()
    assert len(log) == sim_state.CALLS_MAX  # the oldest went first
    assert (log[0].id, log[-1].id) == (str(sim_state.CALLS_MAX + 3), "4")
    await device.close()

    again = SimDevice(state_file=path)
    await again.start(lambda _e: None)
    assert await again.call_log() == log
    await again.place_call("+1 212 555 9999")
    await again.end_call()
    assert (await again.call_log(CallFilter(limit=1)))[0].id == str(sim_state.CALLS_MAX + 4)
    await again.close()


async def test_a_state_file_from_before_the_call_log_loads(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "phone.json"
    old = json.loads(seed_state().to_json())
    del old["calls"]
    path.write_text(json.dumps(old), encoding="utf-8")
    device = SimDevice(state_file=path)
    await device.start(lambda _e: None)
    assert await device.call_log() == []
    assert len(await device.sms_messages()) == 6
    await device.close()


# --- find, describe, screenshot -------------------------------------------------------------------


async def test_find_waits_for_an_element_and_keeps_the_index(phone: Phone) -> None:
    device = phone.device
    chrome = await device.find(Selector(text="Chrome"))
    assert chrome is not None and chrome.description == "Chrome"
    assert await device.find(Selector(text="Chrome", index=5)) is None
    appears = asyncio.create_task(device.find(Selector(text="Incoming call"), timeout_ms=int(WAIT_S * 1000)))
    await asyncio.sleep(0)  # it has looked once and is waiting
    assert not appears.done()
    await device.incoming_call("+1 212 555 0199")
    node = await asyncio.wait_for(appears, WAIT_S)
    assert node is not None and node.text == "Incoming call"
    await device.end_call()


async def test_describe_and_screenshot_are_typed(phone: Phone) -> None:
    info = await phone.device.describe()
    assert info.as_json() == {
        "kind": "sim",
        "serial": "sim-0",
        "model": "Pixel 8 (simulated)",
        "manufacturer": "Google",
        "android_version": "14",
        "sdk": 34,
        "width": 1080,
        "height": 2400,
    }
    shot = await phone.device.screenshot()
    assert (shot.format, shot.width, shot.height, shot.via) == ("png", 1080, 2400, "sim")
    assert shot.data.startswith(b"\x89PNG")
    assert await phone.device.input_text("x") == "sim"
    assert await phone.device.set_clipboard("y") == "sim"
    assert (await phone.device.launch_app("com.android.chrome")).via == "sim"


# --- the link -------------------------------------------------------------------------------------


async def test_the_link_drops_and_comes_back(phone: Phone) -> None:
    device = phone.device
    assert device.link.up and device.link.serial == "sim-0"
    device.disconnect("cable pulled")
    assert (device.link.up, device.link.reason) == (False, "cable pulled")
    for primitive in (device.foreground(), device.dump_hierarchy(), device.sms_messages(), device.describe()):
        with pytest.raises(DeviceUnavailable, match="cable pulled"):
            await primitive
    with pytest.raises(DeviceUnavailable):
        await device.find(Selector(text="Chrome"), timeout_ms=1000)
    device.reconnect()
    assert (await device.foreground()).package == "com.google.android.apps.nexuslauncher"
    assert phone.link_events() == [
        ("DEVICE_CONNECTED", {"device": "sim", "serial": "sim-0", "model": "Pixel 8 (simulated)"}),
        ("DEVICE_DISCONNECTED", {"device": "sim", "serial": "sim-0", "reason": "cable pulled"}),
        ("DEVICE_CONNECTED", {"device": "sim", "serial": "sim-0", "model": "Pixel 8 (simulated)"}),
    ]


async def test_the_link_comes_back_by_itself_after_for_ms() -> None:
    back = asyncio.Event()
    events: list[Event] = []

    def emit(event: Event) -> None:
        events.append(event)
        if event.event_type == "DEVICE_CONNECTED" and len(events) > 1:
            back.set()

    device = SimDevice()
    await device.start(emit)
    with pytest.raises(InvalidParams):
        device.disconnect("never", for_ms=0)
    assert device.link.up
    device.disconnect("a blip", for_ms=50)
    assert not device.link.up
    await asyncio.wait_for(back.wait(), WAIT_S)
    assert device.link.up
    device.disconnect("closing soon", for_ms=60_000)
    await device.close()  # cancels the comeback
    assert [e.event_type for e in events] == [
        "DEVICE_CONNECTED",
        "DEVICE_DISCONNECTED",
        "DEVICE_CONNECTED",
        "DEVICE_DISCONNECTED",
    ]
    assert (device.link.up, device.link.reason) == (False, "closed")
