"""The handlers against the Device seam as a phone at the end of a cable serves it: elements found
by `find` (waiting on the phone, a dump only to explain a failure), SMS verified by reading only
what is new in the sent box, stored rows read back by id, screenshots passed on untouched, and
each primitive's `via` reported. The devices here are the simulator with one primitive changed,
the way a real backend would answer."""

from __future__ import annotations

import asyncio
import base64
import io
import json
from datetime import datetime, timezone
from typing import Any, Literal

from PIL import Image

from phoneuse_runtime.device.base import (
    Alarm,
    CalendarEvent,
    Contact,
    ContactFilter,
    EventFilter,
    Foreground,
    Saved,
    Screenshot,
    SmsFilter,
    SmsMessage,
    remaining_s,
)
from phoneuse_runtime.device.sim.device import SimDevice
from phoneuse_runtime.kernel.errors import PermissionDenied, Unsupported
from phoneuse_runtime.screen.selector import Selector
from phoneuse_runtime.screen.ui import UiNode, parse_hierarchy
from phoneuse_runtime.util.numbers import digits

from ..conftest import Client, ServerFactory
from .conftest import LOGIN_XML, failure, sim

WAIT_S = 10.0
ImageFormat = Literal["png", "jpeg"]


class PhoneSideFind(SimDevice):
    """Resolves selectors on the phone, as uiautomator2's waitForExists does: `find` waits there
    in one call. Counts the dumps the runtime asks for (what would cross the cable)."""

    def __init__(self) -> None:
        super().__init__()
        self.dumps = 0
        self.finds: list[tuple[Selector, int]] = []
        self.waiting = asyncio.Event()

    async def dump_hierarchy(self) -> str:
        self.dumps += 1
        return await super().dump_hierarchy()

    async def find(self, selector: Selector, *, timeout_ms: int = 0) -> UiNode | None:
        self.finds.append((selector, timeout_ms))
        loop = asyncio.get_running_loop()
        give_up = loop.time() + timeout_ms / 1000
        while True:
            node = selector.find(parse_hierarchy(await SimDevice.dump_hierarchy(self)))  # on the phone
            if node is not None or loop.time() >= give_up:
                return node
            self.waiting.set()
            await asyncio.sleep(0.01)


async def test_tap_finds_its_element_without_a_dump(make_client: ServerFactory) -> None:
    device = PhoneSideFind()
    client = await make_client(device=device)
    tapped = await client.ok("TAP", {"text": "Chrome", "wait_ms": "250", "settle_ms": "0"})  # settling dumps
    assert tapped["element"]["description"] == "Chrome"
    assert device.finds == [(Selector(text="Chrome"), 250)]
    assert device.dumps == 0


async def test_a_missing_element_is_explained_by_one_dump(make_client: ServerFactory) -> None:
    device = PhoneSideFind()
    client = await make_client(device=device)
    # Without settling, whose look before the action is a dump too.
    code, message, _ = await failure(client, "TAP", {"text": "Chrome", "index": "3", "settle_ms": "0"})
    assert code == "ELEMENT_NOT_FOUND"
    assert message == "no element matches text='Chrome', index=3 (1 matched, index out of range)"
    assert device.dumps == 1
    code, message, _ = await failure(client, "LONG_PRESS", {"resource_id": "nope", "settle_ms": "0"})
    assert (code, message) == ("ELEMENT_NOT_FOUND", "no element matches resource_id='nope'")
    assert device.dumps == 2


async def test_wait_for_waits_on_the_phone_not_by_dumping(make_client: ServerFactory) -> None:
    device = PhoneSideFind()
    client = await make_client(device=device)

    async def show() -> dict[str, Any]:
        await device.waiting.wait()  # WAIT_FOR is waiting on the phone
        return await client.ok("SIM_SET_SCREEN", {"xml": LOGIN_XML})

    waited: dict[str, Any]
    waited, _ = await asyncio.gather(
        client.ok("WAIT_FOR", {"text": "Sign in"}, timeout_ms=8_000), asyncio.wait_for(show(), WAIT_S)
    )
    assert waited["element"]["resource_id"] == "com.example.bank:id/sign_in"
    [(selector, timeout_ms)] = device.finds  # one call, for the rest of the call's time
    assert selector == Selector(text="Sign in")
    assert 7_000 < timeout_ms <= 8_000
    dumps_by_set_screen = 1  # SIM_SET_SCREEN reads the screen it set
    assert device.dumps == dumps_by_set_screen


async def test_wait_for_gone_looks_with_find(make_client: ServerFactory) -> None:
    device = PhoneSideFind()
    client = await make_client(device=device)
    gone = await client.ok("WAIT_FOR", {"text": "Not here", "gone": "true"})
    assert (gone["gone"], gone["element"]) == (True, None)
    assert device.finds == [(Selector(text="Not here"), 0)]
    assert device.dumps == 0


# --- SCREENSHOT -----------------------------------------------------------------------------------


def _image(fmt: str, size: tuple[int, int] = (30, 60)) -> bytes:
    image = Image.new("RGB", size, (20, 120, 200))
    image.putpixel((3, 4), (255, 0, 0))
    out = io.BytesIO()
    image.save(out, fmt)
    return out.getvalue()


class FixedScreen(SimDevice):
    """A phone whose screencap gives these bytes."""

    def __init__(self, data: bytes, fmt: ImageFormat, size: tuple[int, int] = (30, 60)) -> None:
        super().__init__()
        self.shot = Screenshot(data=data, format=fmt, width=size[0], height=size[1], via="screencap")

    async def screenshot(self) -> Screenshot:
        return self.shot


def _decoded(result: dict[str, Any]) -> bytes:
    data = base64.b64decode(result["image_base64"], validate=True)
    assert result["size_bytes"] == len(data)
    return data


async def test_a_screenshot_that_fits_is_passed_on_untouched(make_client: ServerFactory) -> None:
    formats: tuple[ImageFormat, ...] = ("png", "jpeg")
    for fmt in formats:
        data = _image(fmt.upper())
        client = await make_client(device=FixedScreen(data, fmt))
        asked: list[dict[str, str]] = [
            {},
            {"format": fmt},
            {"max_side": "60"},
            {"format": fmt, "max_side": "4000"},
        ]
        for params in asked:
            result = await client.ok("SCREENSHOT", params)
            assert _decoded(result) == data, (fmt, params)
            assert (result["format"], result["width"], result["height"]) == (fmt, 30, 60)
            assert (result["original_width"], result["original_height"], result["via"]) == (
                30,
                60,
                "screencap",
            )


async def test_a_screenshot_is_re_encoded_only_to_shrink_or_convert(make_client: ServerFactory) -> None:
    data = _image("PNG")
    client = await make_client(device=FixedScreen(data, "png"))
    smaller = await client.ok("SCREENSHOT", {"max_side": "20"})
    assert smaller["format"] == "jpeg"  # re-encoded: JPEG, the smaller for a model, unless png is asked
    with Image.open(io.BytesIO(_decoded(smaller))) as image:
        assert (image.format, image.size, smaller["scale"]) == ("JPEG", (10, 20), round(10 / 30, 6))
    as_png = await client.ok("SCREENSHOT", {"format": "png", "max_side": "20"})
    with Image.open(io.BytesIO(_decoded(as_png))) as image:
        assert (image.format, image.size) == ("PNG", (10, 20))
    assert (smaller["original_width"], smaller["original_height"]) == (30, 60)
    as_jpeg = await client.ok("SCREENSHOT", {"format": "jpeg", "quality": "50"})
    with Image.open(io.BytesIO(_decoded(as_jpeg))) as image:
        assert (image.format, image.size, as_jpeg["format"]) == ("JPEG", (30, 60), "jpeg")


# --- SEND_MESSAGE ---------------------------------------------------------------------------------


class SlowSentBox(SimDevice):
    """Hands the SMS to the phone at once; the row reaches the sent box a few reads later (as a
    real phone's outbox moves it), or never. Records the filters of every read."""

    def __init__(self, *, reads_until_sent: int | None, readable: bool = True) -> None:
        super().__init__()
        self.reads_until_sent = reads_until_sent
        self.readable = readable
        self.reads: list[SmsFilter] = []
        self.pending: tuple[str, str] | None = None

    async def send_sms(self, number: str, body: str) -> str:
        self.pending = (number, body)
        return "termux-api"

    async def sms_messages(self, where: SmsFilter = SmsFilter()) -> list[SmsMessage]:
        self.reads.append(where)
        if not self.readable:
            raise PermissionDenied("Please grant the following permission to use this command: READ_SMS")
        if self.pending is not None and self.reads_until_sent is not None:
            self.reads_until_sent -= 1
            if self.reads_until_sent <= 0:
                await super().send_sms(*self.pending)
                self.pending = None
        return await super().sms_messages(where)


async def test_sms_verification_reads_only_what_is_new(make_client: ServerFactory) -> None:
    device = SlowSentBox(reads_until_sent=3)  # the third look after sending finds the row
    client = await make_client(device=device, wait_poll_ms=5)
    result = await client.ok("SEND_MESSAGE", {"to": "alice", "body": "on my way"})
    assert (result["verified"], result["verify_error"], result["via"]) == (True, None, "termux-api")
    assert result["message_id"] == "7"  # the seed's six rows, then this one
    assert device.reads[0] == SmsFilter(box="sent", limit=1)  # the high-water mark, before sending
    assert len(device.reads) == 4
    assert set(device.reads[1:]) == {SmsFilter(above_id=5)}


async def test_sms_that_never_reaches_the_sent_box_is_unverified(make_client: ServerFactory) -> None:
    device = SlowSentBox(reads_until_sent=None)
    client = await make_client(device=device, wait_poll_ms=20)
    response = await client.execute("SEND_MESSAGE", {"to": "+1 650 555 0199", "body": "lost"}, timeout_ms=600)
    assert response.success, response.error  # handed over, just not seen: within the call's time
    assert response.duration_ms < 600
    result = _json(response.result_json)
    assert (result["verified"], result["message_id"]) == (False, None)
    assert result["verify_error"] == "no matching message reached the sent store within 10000 ms"


async def test_sms_with_an_unreadable_sent_box_is_sent_unverified(make_client: ServerFactory) -> None:
    device = SlowSentBox(reads_until_sent=None, readable=False)
    client = await make_client(device=device)
    result = await client.ok("SEND_MESSAGE", {"to": "+1 650 555 0199", "body": "blind"})
    assert (result["verified"], result["message_id"], result["via"]) == (False, None, "termux-api")
    assert result["verify_error"] == (
        "the sent box cannot be read to verify the send: "
        "Please grant the following permission to use this command: READ_SMS"
    )
    assert device.pending == ("+1 650 555 0199", "blind")  # it was handed to the phone
    assert len(device.reads) == 1  # no polling of a box it cannot read


class NormalisingMessages(SimDevice):
    """Stores the address the way Messages does, normalised: "+16505550199" for "+1 (650) 555-0199"."""

    async def send_sms(self, number: str, body: str) -> str:
        return await super().send_sms("+" + digits(number), body)


async def test_sms_is_verified_whatever_form_the_phone_stores_the_number_in(
    make_client: ServerFactory,
) -> None:
    client = await make_client(device=NormalisingMessages())
    result = await client.ok("SEND_MESSAGE", {"to": "+1 (650) 555-0199", "body": "hello"})
    assert (result["verified"], result["message_id"], result["to"]) == (True, "7", "+1 (650) 555-0199")
    [row] = await sim(client).sms_messages(SmsFilter(above_id=6))
    assert (row.address, row.body) == ("+16505550199", "hello")


def _json(text: str) -> dict[str, Any]:
    value: dict[str, Any] = json.loads(text)
    return value


# --- rows read back by id, and `via` --------------------------------------------------------------


class ContentProvider(SimDevice):
    """Stores rows as `content insert` would, says so in `via`, and records the reads back."""

    def __init__(self, *, alarms_listed: bool = True, tells_ids: bool = True) -> None:
        super().__init__()
        self.alarms_listed = alarms_listed
        self.tells_ids = tells_ids
        self.event_reads: list[EventFilter] = []
        self.contact_reads: list[ContactFilter] = []

    def _saved(self, saved: Saved) -> Saved:
        return Saved(saved.id if self.tells_ids else "", "content insert")

    async def insert_event(self, event: CalendarEvent, *, timezone: str | None = None) -> Saved:
        return self._saved(await super().insert_event(event, timezone=timezone))

    async def calendar_events(self, where: EventFilter = EventFilter()) -> list[CalendarEvent]:
        self.event_reads.append(where)
        return await super().calendar_events(where)

    async def add_contact(self, name: str, phones: list[str], emails: list[str]) -> Saved:
        return self._saved(await super().add_contact(name, phones, emails))

    async def contacts(self, where: ContactFilter = ContactFilter()) -> list[Contact]:
        self.contact_reads.append(where)
        return await super().contacts(where)

    async def set_alarm(self, alarm: Alarm) -> Saved:
        saved = await super().set_alarm(alarm)
        return Saved(saved.id if self.tells_ids else "", "AlarmClock intent")

    async def alarms(self) -> list[Alarm]:
        if not self.alarms_listed:
            raise Unsupported("the clock app does not list its alarms")
        return await super().alarms()

    async def input_text(self, text: str, *, replace: bool = False) -> str:
        await super().input_text(text, replace=replace)
        return "adb keyboard"

    async def set_clipboard(self, text: str) -> str:
        await super().set_clipboard(text)
        return "clipper broadcast"

    async def launch_app(self, package: str) -> Foreground:
        front = await super().launch_app(package)
        return Foreground(front.package, front.activity, via="monkey")


async def test_stored_rows_are_read_back_by_id(make_client: ServerFactory) -> None:
    device = ContentProvider()
    client = await make_client(device=device)
    event = await client.ok("CREATE_EVENT", {"title": "Review", "start": "2030-05-01T10:00:00Z"})
    assert (event["verified"], event["via"], event["event_id"]) == (True, "content insert", "3")
    assert device.event_reads == [EventFilter(id="3")]
    start_ms = int(datetime(2030, 5, 1, 10, tzinfo=timezone.utc).timestamp() * 1000)
    assert (event["start_ms"], event["end_ms"]) == (start_ms, start_ms + 3_600_000)
    contact = await client.ok("ADD_CONTACT", {"name": "Ada Lovelace", "phone": "+44 20 7946 0000"})
    assert (contact["verified"], contact["via"], contact["contact_id"]) == (True, "content insert", "9")
    assert device.contact_reads == [ContactFilter(id="9")]
    alarm = await client.ok("SET_ALARM", {"hour": "6", "minute": "45", "label": "Run"})
    assert (alarm["verified"], alarm["verify_error"], alarm["via"]) == (True, None, "AlarmClock intent")


async def test_rows_whose_id_the_phone_does_not_tell_are_found_by_what_they_hold(
    make_client: ServerFactory,
) -> None:
    device = ContentProvider(tells_ids=False)
    client = await make_client(device=device)
    event = await client.ok("CREATE_EVENT", {"title": "Review", "start": "2030-05-01T10:00:00Z"})
    assert (event["verified"], event["event_id"]) == (True, "3")
    contact = await client.ok("ADD_CONTACT", {"name": "Ada Lovelace"})
    assert (contact["verified"], contact["contact_id"]) == (True, "9")
    assert device.contact_reads == [ContactFilter(name="Ada Lovelace")]
    alarm = await client.ok("SET_ALARM", {"hour": "6", "minute": "45", "label": "Run"})
    assert (alarm["verified"], alarm["alarm_id"]) == (True, "")


async def test_an_alarm_the_phone_cannot_list_is_set_unverified(make_client: ServerFactory) -> None:
    device = ContentProvider(alarms_listed=False)
    client = await make_client(device=device)
    alarm = await client.ok("SET_ALARM", {"hour": "7", "minute": "15", "days": "mon,fri"})
    assert alarm == {
        "alarm_id": "2",
        "hour": 7,
        "minute": 15,
        "label": "",
        "days": ["MON", "FRI"],
        "verified": False,
        "verify_error": "the phone's alarms cannot be read back: the clock app does not list its alarms",
        "via": "AlarmClock intent",
    }
    device.alarms_listed = True
    assert any((a.id, a.hour, a.minute) == ("2", 7, 15) for a in await device.alarms())


async def test_results_report_the_primitives_via(make_client: ServerFactory) -> None:
    client = await make_client(device=ContentProvider())
    assert (await client.ok("SET_CLIPBOARD", {"text": "hi"}))["via"] == "clipper broadcast"
    assert (await client.ok("OPEN_APP", {"name": "Chrome"}))["via"] == "monkey"
    typed = await client.ok("TYPE_TEXT", {"resource_id": "url_bar", "text": "example.org"})
    assert (typed["via"], typed["verified"]) == ("adb keyboard", True)


async def test_the_sim_reports_sim_as_its_via(client: Client) -> None:
    assert (await client.ok("SET_CLIPBOARD", {"text": "hi"}))["via"] == "sim"
    assert (await client.ok("OPEN_APP", {"name": "Chrome"}))["via"] == "sim"
    assert (await client.ok("CREATE_EVENT", {"title": "x", "start": "2030-01-01T00:00:00Z"}))["via"] == "sim"
    assert remaining_s(-1.0) == -1.0  # the test's own context has no call's deadline
    assert sim(client).link.up
