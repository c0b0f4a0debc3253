"""SimDevice through its public Device API: it is production code, so every test checks real outcomes."""

from __future__ import annotations

import asyncio
import io
import json
import pathlib
import re
from collections.abc import AsyncIterator

import pytest

from phoneuse_runtime.device.base import Alarm, CalendarEvent, DeviceInfo, Foreground, Intent, SmsFilter
from phoneuse_runtime.device.sim.device import SimDevice
from phoneuse_runtime.kernel.errors import DeviceUnavailable, InvalidParams, Timeout, Unsupported
from phoneuse_runtime.kernel.events import Event
from phoneuse_runtime.screen.selector import Selector
from phoneuse_runtime.screen.ui import UiNode, focused_node, parse_hierarchy

MESSAGES = "com.google.android.apps.messaging"
LAUNCHER = "com.google.android.apps.nexuslauncher"
CHROME = "com.android.chrome"
WHATSAPP = "com.whatsapp"
DIALER = "com.google.android.dialer"


class Sim:
    """A started SimDevice and the events it emitted."""

    def __init__(self, device: SimDevice, events: list[Event]) -> None:
        self.device = device
        self.events = events

    async def screen(self) -> UiNode:
        return parse_hierarchy(await self.device.dump_hierarchy())

    async def find(self, **selector: str) -> UiNode:
        return Selector(**selector).require(await self.screen())  # type: ignore[arg-type]

    async def has(self, **selector: str) -> bool:
        return Selector(**selector).find(await self.screen()) is not None  # type: ignore[arg-type]

    async def tap(self, **selector: str) -> None:
        node = await self.find(**selector)
        await self.device.tap(*node.center)

    async def texts(self, resource_id: str) -> list[str]:
        return [n.text for n in Selector(resource_id=resource_id).find_all(await self.screen())]

    def payloads(self, event_type: str) -> list[dict[str, object]]:
        return [json.loads(e.payload_json) for e in self.events if e.event_type == event_type]


@pytest.fixture
async def sim() -> AsyncIterator[Sim]:
    events: list[Event] = []
    device = SimDevice()
    await device.start(events.append)
    yield Sim(device, events)
    await device.close()


async def test_start_announces_the_seed_phone(sim: Sim) -> None:
    assert sim.payloads("DEVICE_CONNECTED") == [
        {"device": "sim", "serial": "sim-0", "model": "Pixel 8 (simulated)"}
    ]
    assert await sim.device.describe() == DeviceInfo(
        kind="sim",
        serial="sim-0",
        model="Pixel 8 (simulated)",
        manufacturer="Google",
        android_version="14",
        sdk=34,
        width=1080,
        height=2400,
    )
    assert (await sim.device.foreground()).package == LAUNCHER
    names = {c.name for c in await sim.device.contacts()}
    assert {"Alice Johnson", "Bob Smith", "Bobby Tables", "Mom"} <= names
    assert await sim.device.screen_size() == (1080, 2400)
    assert await sim.device.get_clipboard() == ""
    alarm = (await sim.device.alarms())[0]
    assert (alarm.hour, alarm.minute, alarm.label) == (7, 0, "Wake up")


async def test_launch_app_changes_foreground_and_emits(sim: Sim) -> None:
    fg = await sim.device.launch_app(MESSAGES)
    assert fg.package == MESSAGES
    assert fg.activity == "com.google.android.apps.messaging.ui.ConversationListActivity"
    assert sim.payloads("APP_STATE_CHANGED")[-1] == {
        "package": MESSAGES,
        "activity": fg.activity,
        "previous_package": LAUNCHER,
    }
    assert await sim.texts("com.google.android.apps.messaging:id/conversation_name") == [
        "72345",
        "Alice Johnson",
        "Mom",
    ]


async def test_launch_of_a_missing_package_is_unsupported(sim: Sim) -> None:
    with pytest.raises(Unsupported, match="No activities found to run, monkey aborted"):
        await sim.device.launch_app("com.example.missing")
    assert (await sim.device.foreground()).package == LAUNCHER


async def test_home_icons_back_home_and_stop(sim: Sim) -> None:
    await sim.tap(text="WhatsApp", description="WhatsApp")
    assert (await sim.device.foreground()).package == WHATSAPP
    await sim.tap(text="Alice Johnson")
    assert (await sim.device.foreground()).activity == "com.whatsapp.Conversation"
    await sim.device.press_key(4)
    assert (await sim.device.foreground()).activity == "com.whatsapp.HomeActivity"
    await sim.device.press_key(4)
    assert (await sim.device.foreground()).package == LAUNCHER
    await sim.device.launch_app(CHROME)
    await sim.device.press_key(3)
    assert (await sim.device.foreground()).package == LAUNCHER
    assert (await sim.device.running_packages())[:2] == [LAUNCHER, CHROME]
    assert await sim.device.stop_app(CHROME) is True
    assert CHROME not in await sim.device.running_packages()
    assert await sim.device.stop_app(CHROME) is False
    await sim.device.launch_app(MESSAGES)
    assert await sim.device.stop_app(MESSAGES) is True  # stopping the front app reveals the one below
    assert await sim.device.foreground() == Foreground(
        LAUNCHER, "com.google.android.apps.nexuslauncher.NexusLauncherActivity"
    )
    assert sim.payloads("APP_STATE_CHANGED")[-1]["previous_package"] == MESSAGES


async def test_recents_lists_running_apps_and_switches(sim: Sim) -> None:
    await sim.device.launch_app(MESSAGES)
    await sim.device.launch_app("com.android.settings")
    await sim.device.press_key(187)
    cards = [n.description for n in Selector(resource_id="snapshot").find_all(await sim.screen())]
    assert cards == ["Settings", "Messages"]
    await sim.tap(resource_id="snapshot", description="Messages")
    assert (await sim.device.foreground()).package == MESSAGES


async def test_send_sms_through_the_messages_ui(sim: Sim) -> None:
    await sim.device.launch_app(MESSAGES)
    await sim.tap(resource_id="start_chat_fab")
    recipient = await sim.find(resource_id="recipient_text_view")
    assert recipient.focused
    await sim.device.input_text("bob")
    assert await sim.texts("com.google.android.apps.messaging:id/contact_name") == [
        "Bob Smith",
        "Bobby Tables",
    ]
    await sim.device.press_key(66)  # ambiguous: stays on the picker
    assert (await sim.device.foreground()).activity.endswith("ContactPickerActivity")
    await sim.device.input_text(" smith")
    await sim.device.press_key(66)
    assert (await sim.device.foreground()).activity.endswith("ConversationActivity")
    assert (await sim.find(resource_id="conversation_title")).text == "Bob Smith"

    await sim.tap(resource_id="compose_message_text")
    await sim.device.input_text("See you at 8")
    await sim.tap(description="Send SMS")

    sent = (await sim.device.sms_messages(SmsFilter(box="sent")))[0]
    assert (sent.address, sent.body, sent.box) == ("+1 415 555 0102", "See you at 8", "sent")
    assert "See you at 8" in await sim.texts("com.google.android.apps.messaging:id/message_text")
    assert (await sim.find(resource_id="compose_message_text")).text == "Text message"  # the hint again


async def test_unicode_typing_round_trips_through_the_dump(sim: Sim) -> None:
    await sim.device.start_intent(Intent(action="android.intent.action.SENDTO", data="smsto:+14155550101"))
    await sim.tap(resource_id="compose_message_text")
    text = "Olá 👋🏽 你好 مرحبا \"quoted\" 'single' $(rm -rf /) & <b>"
    await sim.device.input_text(text)
    assert (await sim.find(resource_id="compose_message_text")).text == text
    await sim.device.press_key(67)
    assert (await sim.find(resource_id="compose_message_text")).text == text[:-1]
    await sim.device.clear_text()
    field = await sim.find(resource_id="compose_message_text")
    assert field.text == "Text message" and field.focused


async def test_typing_with_no_focused_field_changes_nothing(sim: Sim) -> None:
    before = (await sim.screen()).children[0]
    await sim.device.input_text("ignored")
    after = (await sim.screen()).children[0]
    assert before == after
    assert focused_node(after) is None


async def test_swipe_scrolls_a_long_list(sim: Sim) -> None:
    for i in range(30):
        await sim.device.add_contact(f"Zed {i:02d}", [f"+1 555 010 {i:04d}"], [])
    await sim.device.launch_app("com.google.android.contacts")
    names = await sim.texts("com.google.android.contacts:id/cliv_name_textview")
    assert names[0] == "Alice Johnson" and "Zed 29" not in names
    listing = await sim.find(resource_id="contact_list")
    assert listing.scrollable
    for _ in range(10):
        if "Zed 29" in names:
            break
        await sim.device.swipe(540, 2000, 540, 600, 0)  # finger up: later rows come into view
        names = await sim.texts("com.google.android.contacts:id/cliv_name_textview")
    assert "Zed 29" in names and "Alice Johnson" not in names
    top, bottom = listing.bounds[1], listing.bounds[3]
    for row in Selector(resource_id="cliv_container").find_all(await sim.screen()):
        assert top <= row.bounds[1] and row.bounds[3] <= bottom
    await sim.device.swipe(540, 600, 540, 2000, 0)  # and back down
    assert "Zed 29" not in await sim.texts("com.google.android.contacts:id/cliv_name_textview")


async def test_contact_details_and_settings_switch(sim: Sim) -> None:
    await sim.device.launch_app("com.google.android.contacts")
    await sim.tap(resource_id="cliv_name_textview", text="Carol Diaz")
    assert await sim.texts("com.google.android.contacts:id/header") == ["+1 415 555 0104", "+1 415 555 0114"]
    await sim.device.launch_app("com.android.settings")
    switch = await sim.find(resource_id="switch_widget")
    assert switch.checked
    await sim.device.tap(*switch.center)
    assert not (await sim.find(resource_id="switch_widget")).checked


async def test_intents_resolve_like_android(sim: Sim) -> None:
    result = await sim.device.start_intent(
        Intent(action="android.intent.action.VIEW", data="https://example.com")
    )
    assert (
        result.handled_by == "com.android.chrome/com.google.android.apps.chrome.Main" and result.via == "sim"
    )
    assert (await sim.find(resource_id="url_bar")).text == "https://example.com"

    await sim.device.start_intent(Intent(action="android.intent.action.DIAL", data="tel:+14155550199"))
    assert (await sim.device.foreground()).package == DIALER
    assert (await sim.find(resource_id="digits")).text == "+14155550199"

    await sim.device.start_intent(
        Intent(action="android.intent.action.SENDTO", data="sms:5550100", extras={"sms_body": "Running late"})
    )
    assert (await sim.find(resource_id="compose_message_text")).text == "Running late"

    extras: dict[str, str | int | float | bool | list[str]] = {
        "android.intent.extra.alarm.HOUR": 6,
        "android.intent.extra.alarm.MINUTES": "45",
        "android.intent.extra.alarm.MESSAGE": "Gym",
    }
    await sim.device.start_intent(Intent(action="android.intent.action.SET_ALARM", extras=extras))
    assert any((a.hour, a.minute, a.label) == (6, 45, "Gym") for a in await sim.device.alarms())
    assert "6:45 AM" in await sim.texts("com.google.android.deskclock:id/digital_clock")

    await sim.device.start_intent(
        Intent(
            action="android.intent.action.INSERT",
            mime="vnd.android.cursor.dir/event",
            extras={"title": "Demo"},
        )
    )
    assert len(await sim.device.calendar_events()) == 2  # the editor saves nothing until Save
    await sim.tap(resource_id="save")
    assert "Demo" in [e.title for e in await sim.device.calendar_events()]

    result = await sim.device.start_intent(Intent(action="android.settings.WIFI_SETTINGS"))
    assert result.handled_by.startswith("com.android.settings/")
    result = await sim.device.start_intent(
        Intent(component="com.google.android.deskclock/com.android.deskclock.DeskClock")
    )
    assert result.handled_by == "com.google.android.deskclock/com.android.deskclock.DeskClock"


async def test_unresolvable_intents_fail_like_am_start(sim: Sim) -> None:
    with pytest.raises(Unsupported) as info:
        await sim.device.start_intent(Intent(action="android.intent.action.VIEW", data="foo://bar"))
    assert info.value.message == (
        "Error: Activity not started, unable to resolve Intent "
        "{ act=android.intent.action.VIEW dat=foo://bar }"
    )
    with pytest.raises(Unsupported, match=r"dat=https://example\.com/\.\.\. pkg=com\.whatsapp"):
        await sim.device.start_intent(
            Intent(action="android.intent.action.VIEW", data="https://example.com/x", package=WHATSAPP)
        )
    with pytest.raises(Unsupported, match="unable to resolve"):
        await sim.device.start_intent(
            Intent(action="android.intent.action.VIEW", data="https://x.org", package="a.b")
        )
    with pytest.raises(
        Unsupported, match=r"Activity class \{com\.whatsapp/com\.whatsapp\.Nope\} does not exist"
    ):
        await sim.device.start_intent(Intent(component="com.whatsapp/.Nope"))
    with pytest.raises(Unsupported):
        await sim.device.start_intent(Intent(kind="broadcast", action="x.PING", package="com.example.gone"))
    ok = await sim.device.start_intent(Intent(kind="broadcast", action="x.PING", package=WHATSAPP))
    assert ok.handled_by == WHATSAPP
    assert (await sim.device.foreground()).package == LAUNCHER


async def test_whatsapp_deep_link_opens_a_new_chat_and_sends(sim: Sim) -> None:
    sms_before = len(await sim.device.sms_messages())
    result = await sim.device.start_intent(
        Intent(action="android.intent.action.VIEW", data="https://wa.me/15551234567", package=WHATSAPP)
    )
    assert result.handled_by.startswith("com.whatsapp/")
    assert await sim.device.foreground() == Foreground(WHATSAPP, "com.whatsapp.Conversation")
    assert (await sim.find(resource_id="conversation_contact_name")).text == "+15551234567"
    assert not await sim.has(resource_id="com.whatsapp:id/send")  # only the voice button while empty
    await sim.tap(resource_id="com.whatsapp:id/entry")
    await sim.device.input_text("Hi from the agent 🤖")
    await sim.tap(resource_id="com.whatsapp:id/send", description="Send")
    assert await sim.texts("com.whatsapp:id/message_text") == ["Hi from the agent 🤖"]
    assert len(await sim.device.sms_messages()) == sms_before  # WhatsApp is not SMS
    await sim.device.press_key(4)  # hides the keyboard
    assert (await sim.device.foreground()).activity == "com.whatsapp.Conversation"
    await sim.device.press_key(4)
    assert "+15551234567" in await sim.texts("com.whatsapp:id/conversations_row_contact_name")


async def test_calls_outgoing_and_incoming(sim: Sim) -> None:
    with pytest.raises(InvalidParams):
        await sim.device.place_call("no digits")
    assert await sim.device.end_call() is False
    assert await sim.device.place_call("+1 415 555 0101") == "sim"
    assert (await sim.device.call_state()).state == "offhook"
    assert (await sim.find(resource_id="contactgrid_contact_name")).text == "Alice Johnson"
    await sim.tap(resource_id="com.google.android.dialer:id/incall_end_call", description="End call")
    assert (await sim.device.call_state()).state == "idle"
    assert (await sim.device.foreground()).package == LAUNCHER

    await sim.device.launch_app(MESSAGES)
    await sim.device.incoming_call("+1 415 555 0100")
    assert (await sim.device.call_state()).state == "ringing"
    await sim.tap(description="Answer")
    assert (await sim.device.call_state()).state == "offhook"
    assert await sim.device.end_call() is True
    assert (await sim.device.foreground()).package == MESSAGES
    states = [(p["state"], p["number"]) for p in sim.payloads("CALL_STATE_CHANGED")]
    assert states == [
        ("offhook", "+1 415 555 0101"),
        ("idle", "+1 415 555 0101"),
        ("ringing", "+1 415 555 0100"),
        ("offhook", "+1 415 555 0100"),
        ("idle", "+1 415 555 0100"),
    ]


async def test_receive_sms_updates_store_screen_and_events(sim: Sim) -> None:
    await sim.device.start_intent(Intent(action="android.intent.action.SENDTO", data="smsto:+14155550101"))
    message = await sim.device.receive_sms("+14155550101", "Running 5 min late")
    assert message.thread_id == "1" and message.box == "inbox"
    assert (await sim.device.sms_messages(SmsFilter(box="inbox")))[0].id == message.id
    assert (await sim.texts("com.google.android.apps.messaging:id/message_text"))[-1] == "Running 5 min late"
    assert sim.payloads("MESSAGE_RECEIVED") == [
        {
            "from": "+14155550101",
            "body": "Running 5 min late",
            "app": MESSAGES,
            "thread_id": "1",
            "message_id": message.id,
        }
    ]
    posted = sim.payloads("NOTIFICATION_POSTED")[0]
    assert posted["title"] == "Alice Johnson"
    assert re.fullmatch(r"0\|com\.google\.android\.apps\.messaging\|\d+\|null\|\d+", str(posted["key"]))
    assert (await sim.device.notifications())[0].key == posted["key"]


async def test_chat_message_notification_opens_the_chat_from_the_shade(sim: Sim) -> None:
    await sim.device.receive_chat_message(WHATSAPP, "Bob Smith", "Still on for tonight?")
    assert sim.payloads("MESSAGE_RECEIVED")[0]["thread_id"] == "14155550102@s.whatsapp.net"
    note = await sim.device.post_notification("com.google.android.calendar", "Standup", "in 10 minutes")
    assert sim.payloads("NOTIFICATION_POSTED")[-1]["key"] == note.key
    await sim.device.swipe(540, 10, 540, 1400, 0)  # pull the shade down
    assert (await sim.device.foreground()).package == "com.android.systemui"
    await sim.tap(resource_id="android:id/title", text="Bob Smith")
    assert (await sim.device.foreground()).activity == "com.whatsapp.Conversation"
    assert (await sim.texts("com.whatsapp:id/message_text"))[-1] == "Still on for tonight?"
    assert [n.title for n in await sim.device.notifications()] == ["Standup"]


async def test_set_screen(sim: Sim) -> None:
    with pytest.raises(InvalidParams):
        await sim.device.set_screen("<hierarchy><node")
    xml = (
        '<hierarchy rotation="0"><node class="android.widget.FrameLayout" package="com.example.bank" '
        'bounds="[0,0][1080,2400]"><node class="android.widget.EditText" '
        'resource-id="com.example.bank:id/pin" text="" clickable="true" bounds="[100,500][980,650]" />'
        "</node></hierarchy>"
    )
    await sim.device.launch_app(MESSAGES)
    await sim.device.set_screen(xml)
    assert (await sim.device.foreground()).package == "com.example.bank"
    await sim.tap(resource_id="pin")
    await sim.device.input_text("1234")
    pin = await sim.find(resource_id="pin")
    assert pin.focused and pin.text == "1234"
    await sim.device.press_key(4)  # the first BACK only hides the soft keyboard
    assert (await sim.device.foreground()).package == "com.example.bank"
    await sim.device.press_key(4)
    assert (await sim.device.foreground()).package == MESSAGES


async def test_shell_emulation(sim: Sim) -> None:
    shell = sim.device.shell
    missing = await shell("frobnicate --now", timeout_s=5)
    assert (missing.exit_code, missing.stderr) == (
        127,
        "/system/bin/sh: frobnicate: inaccessible or not found\n",
    )
    assert (await shell("echo hi there", timeout_s=5)).stdout == "hi there\n"
    assert (await shell("getprop ro.build.version.sdk", timeout_s=5)).stdout == "34\n"
    assert "package:com.whatsapp\n" in (await shell("pm list packages", timeout_s=5)).stdout
    await shell("monkey -p com.android.settings -c android.intent.category.LAUNCHER 1", timeout_s=5)
    focus = await shell("dumpsys window | grep mCurrentFocus", timeout_s=5)
    assert re.fullmatch(
        r"  mCurrentFocus=Window\{[0-9a-f]+ u0 com\.android\.settings/\.Settings\}\n", focus.stdout
    )
    await shell("input keyevent KEYCODE_HOME", timeout_s=5)
    assert (await sim.device.foreground()).package == LAUNCHER
    started = await shell("am start -a android.intent.action.VIEW -d https://example.com", timeout_s=5)
    assert started.exit_code == 0 and (await sim.device.foreground()).package == CHROME
    failed = await shell("am start -a android.intent.action.VIEW -d nope://x", timeout_s=5)
    assert failed.exit_code != 0 and "unable to resolve Intent" in failed.stderr


async def _started(task: asyncio.Task[object]) -> None:
    """Yields to the loop (no clock) until the task has run its first step and is waiting."""
    for _ in range(3):
        await asyncio.sleep(0)
    assert not task.done()


async def test_shell_sleep_times_out_and_cancels(sim: Sim) -> None:
    with pytest.raises(Timeout):
        await sim.device.shell("sleep 30", timeout_s=0.05)
    task: asyncio.Task[object] = asyncio.create_task(sim.device.shell("sleep 30", timeout_s=60))
    await _started(task)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert (await sim.device.shell("echo after", timeout_s=5)).stdout.strip() == "after"


@pytest.mark.parametrize(
    ("command", "stderr"),
    [
        (
            "input tap 1e999 5",
            "Error: Unknown command or bad arguments; usage: input [keyevent|tap|swipe|text] ...\n",
        ),
        (
            "input swipe 1 1 -1e999 2",
            "Error: Unknown command or bad arguments; usage: input [keyevent|tap|swipe|text] ...\n",
        ),
        ("sleep nan", "sleep: invalid number 'nan'\n"),
        ("sleep inf", "sleep: invalid number 'inf'\n"),
        ("sleep -1", "sleep: invalid number '-1'\n"),
    ],
)
async def test_shell_refuses_numbers_no_int_or_clock_holds(sim: Sim, command: str, stderr: str) -> None:
    """inf has no int (OverflowError, not ValueError), and asyncio.sleep(nan) never wakes."""
    result = await sim.device.shell(command, timeout_s=5)
    assert (result.exit_code, result.stderr) == (1, stderr)


async def test_a_cancelled_long_press_stops_and_does_nothing(sim: Sim) -> None:
    await sim.device.set_screen(
        '<hierarchy rotation="0"><node class="android.widget.EditText" package="com.example.form" '
        'text="" bounds="[0,0][1080,400]" /></hierarchy>'
    )
    task: asyncio.Task[object] = asyncio.create_task(sim.device.long_press(540, 200, 60_000))
    await _started(task)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert focused_node(await sim.screen()) is None  # the press never landed
    await sim.device.long_press(540, 200, 0)
    assert focused_node(await sim.screen()) is not None


async def test_state_persists_after_each_change_and_reloads(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "phone.json"
    first = SimDevice(state_file=path)
    await first.start(lambda _e: None)
    assert not path.exists()  # nothing written until something changes
    await first.send_sms("+1 650 555 0142", "persist me ✓")
    await first.flush()  # written behind the change by the device's own task, not at close
    assert "persist me ✓" in path.read_text(encoding="utf-8")
    contact = await first.add_contact("Zoe Park", ["+1 212 555 0123"], ["zoe@example.com"])
    await first.set_alarm(Alarm("", 22, 30, "Bed", ["SUN"]))
    await first.insert_event(CalendarEvent("", "Launch", 1_900_000_000_000, 1_900_000_360_000))
    await first.set_clipboard("copied")
    await first.close()
    assert list(tmp_path.iterdir()) == [path]  # no temp files left behind

    events: list[Event] = []
    second = SimDevice(state_file=path)
    await second.start(events.append)
    assert (await second.sms_messages(SmsFilter(box="sent")))[0].body == "persist me ✓"
    assert contact.id in [c.id for c in await second.contacts()]
    assert any(a.label == "Bed" and a.days == ["SUN"] for a in await second.alarms())
    assert any(e.title == "Launch" for e in await second.calendar_events())
    assert await second.get_clipboard() == "copied"
    newer = await second.add_contact("Another", [], ["a@example.com"])
    assert int(newer.id) == int(contact.id) + 1
    await second.close()
    assert [e.event_type for e in events] == ["DEVICE_CONNECTED", "DEVICE_DISCONNECTED"]


async def test_screenshot_is_a_png_of_the_screen(sim: Sim) -> None:
    from PIL import Image

    await sim.device.launch_app(MESSAGES)
    shot = await sim.device.screenshot()
    assert (shot.format, shot.width, shot.height, shot.via) == ("png", 1080, 2400, "sim")
    png = shot.data
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    with Image.open(io.BytesIO(png)) as image:
        assert image.size == (1080, 2400)
        colours = image.getcolors(maxcolors=1 << 20)
        assert colours is not None and len(colours) > 3  # something was drawn


async def test_data_validation_and_not_started() -> None:
    device = SimDevice()
    with pytest.raises(DeviceUnavailable):
        await device.foreground()
    await device.start(lambda _e: None)
    with pytest.raises(InvalidParams):
        await device.send_sms("", "hi")
    with pytest.raises(InvalidParams):
        await device.set_alarm(Alarm("", 25, 0))
    with pytest.raises(InvalidParams):
        await device.post_notification("", "t", "x")
    await device.close()
