"""The fake phone's apps, driven the way the runtime drives a phone over adb: intents with
`am start`, taps with `input tap` on what the screen shows, keys with `input keyevent`; results
read back through providers, dumpsys, and the phone's state."""

from __future__ import annotations

import pytest

from .phone import FakePhone
from .seed import CHROME
from .state import ManualClock, Package
from .widgets import COMPOSE

MESSAGES = "com.google.android.apps.messaging"
SEND = f"{MESSAGES}:id/send_message_button_icon"


@pytest.fixture
def phone() -> FakePhone:
    phone = FakePhone()
    phone.state.clock = ManualClock()
    return phone


async def compose(phone: FakePhone, number: str = "+15551234", body: str = "hi there") -> None:
    result = await phone.sh(
        f"am start -a android.intent.action.SENDTO -d smsto:{number} --es sms_body '{body}'"
    )
    assert result.stderr == ""


# --- Messages ------------------------------------------------------------------------------------------


async def test_sendto_opens_a_compose_screen_and_send_writes_a_sent_row(phone: FakePhone) -> None:
    await compose(phone)
    assert phone.state.log.intents[-1].extras["sms_body"] == "hi there"
    assert phone.state.log.intents[-1].resolved == f"{MESSAGES}/.ui.conversation.ConversationActivity"
    assert phone.state.focused_text() == "hi there" and phone.state.keyboard_shown
    [button] = phone.nodes(resourceId=SEND, description="Send SMS")
    assert button.bounds[3] <= 1280 - 96 - 420  # above the keyboard: Messages resizes
    await phone.tap_node(resourceId=SEND)
    [row] = phone.state.sms_box("sent")
    assert (row.address, row.body, row.type) == ("+15551234", "hi there", 2)
    assert phone.state.focused_text() == ""
    assert phone.nodes(resourceId=f"{MESSAGES}:id/message_text", text="hi there")
    query = await phone.sh("content query --uri content://sms/sent --projection address:body")
    assert query.stdout == "Row: 0 address=+15551234, body=hi there\n"
    assert phone.state.log.taps[-1].target == SEND


async def test_an_empty_compose_box_shows_its_hint_and_cannot_send(phone: FakePhone) -> None:
    await phone.sh("am start -a android.intent.action.SENDTO -d smsto:5550000")
    [field] = phone.nodes(resourceId=COMPOSE)
    assert (field.text, field.a11y_text) == ("", "Text message")
    [button] = phone.nodes(resourceId=SEND)
    assert button.enabled is False
    await phone.tap_node(resourceId=SEND)
    assert phone.state.sms == []


@pytest.mark.parametrize(("outcome", "kind"), [("failed", 5), ("outbox", 4)])
async def test_send_faults(phone: FakePhone, outcome: str, kind: int) -> None:
    phone.state.faults.sms_outcome = outcome  # type: ignore[assignment]
    await compose(phone)
    await phone.tap_node(resourceId=SEND)
    assert [r.type for r in phone.state.sms] == [kind]
    assert phone.state.sms_box("sent") == []


async def test_a_late_sms_sits_in_the_outbox_first(phone: FakePhone) -> None:
    clock = ManualClock()
    phone.state.clock = clock
    phone.state.faults.sms_delay_s = 5
    await compose(phone)
    await phone.tap_node(resourceId=SEND)
    assert phone.state.sms_box("sent") == [] and len(phone.state.sms_box("outbox")) == 1
    assert phone.nodes(text="Sending…")
    clock.advance(5)
    [row] = phone.state.sms_box("sent")
    assert row.id == 1 and phone.state.sms_box("outbox") == []


async def test_a_message_that_never_appears(phone: FakePhone) -> None:
    phone.state.faults.sms_outcome = "never"
    await compose(phone)
    await phone.tap_node(resourceId=SEND)
    assert phone.state.sms == [] and phone.state.focused_text() == ""


async def test_back_hides_the_keyboard_before_leaving(phone: FakePhone) -> None:
    await compose(phone)
    await phone.sh("input keyevent KEYCODE_BACK")
    assert not phone.state.keyboard_shown and phone.state.foreground().package == MESSAGES
    await phone.sh("input keyevent 4")
    assert phone.state.foreground().package == "com.google.android.apps.nexuslauncher"


# --- Phone ----------------------------------------------------------------------------------------------


async def test_call_and_hang_up(phone: FakePhone) -> None:
    clock = ManualClock()
    phone.state.clock = clock
    result = await phone.sh("am start -a android.intent.action.CALL -d tel:5551234")
    assert result.stdout == "Starting: Intent { act=android.intent.action.CALL dat=tel:xxxxxxx }\n"
    assert "mCallState=2" in (await phone.sh("dumpsys telephony.registry")).stdout
    assert phone.nodes(description="End call")
    clock.advance(42)
    await phone.sh("input keyevent KEYCODE_ENDCALL")
    assert (
        phone.state.call is None and "mCallState=0" in (await phone.sh("dumpsys telephony.registry")).stdout
    )
    calls = await phone.sh("content query --uri content://call_log/calls --projection number:type:duration")
    assert calls.stdout == "Row: 0 number=5551234, type=2, duration=42\n"
    assert phone.state.foreground().activity != "com.android.incallui.InCallActivity"


async def test_emergency_numbers_open_the_dialer_instead(phone: FakePhone) -> None:
    await phone.sh("am start -a android.intent.action.CALL -d tel:911")
    assert phone.state.call is None
    assert phone.state.foreground().fields["com.google.android.dialer:id/digits"] == "911"


async def test_endcall_without_a_call_turns_the_screen_off(phone: FakePhone) -> None:
    await phone.sh("input keyevent 6")
    assert not phone.state.screen_on and phone.state.locked
    assert "mWakefulness=Asleep" in (await phone.sh("dumpsys power")).stdout
    await phone.sh("input keyevent KEYCODE_WAKEUP")
    assert phone.nodes(text="Swipe up to open")
    await phone.sh("input swipe 360 1100 360 300")
    assert not phone.state.locked and phone.nodes(description="Messages")


async def test_incoming_call_answered_then_ended(phone: FakePhone) -> None:
    phone.state.incoming_call("+15550199")
    registry = (await phone.sh("dumpsys telephony.registry")).stdout
    assert "mCallState=1" in registry and "mCallIncomingNumber=+15550199" in registry
    await phone.tap_node(description="Answer")
    assert "mCallState=2" in (await phone.sh("dumpsys telephony.registry")).stdout
    await phone.tap_node(description="End call")
    assert [(c.number, c.type) for c in phone.state.call_log] == [("+15550199", 1)]


# --- Calendar, Clock, Chrome, launcher -------------------------------------------------------------------


async def test_calendar_insert_intent_then_save(phone: FakePhone) -> None:
    await phone.sh(
        "am start -a android.intent.action.INSERT -d content://com.android.calendar/events "
        "--el beginTime 1700000000000 --el endTime 1700003600000 --es title Dentist "
        "--es eventLocation 'Main St'"
    )
    assert phone.nodes(resourceId="com.google.android.calendar:id/title", text="Dentist")
    assert phone.state.events == []
    await phone.tap_node(resourceId="com.google.android.calendar:id/save")
    [event] = phone.state.events
    assert (event.title, event.dtstart, event.dtend, event.event_location, event.calendar_id) == (
        "Dentist",
        1700000000000,
        1700003600000,
        "Main St",
        1,
    )


async def test_calendar_ignores_times_sent_with_the_wrong_extra_type(phone: FakePhone) -> None:
    await phone.sh(
        "am start -a android.intent.action.INSERT -d content://com.android.calendar/events "
        "--ei beginTime 1700000 --es title Standup"
    )
    await phone.tap_node(text="Save")
    [event] = phone.state.events
    assert event.dtstart == 1_700_002_800_000  # the next full hour, not 1700000


async def test_set_alarm(phone: FakePhone) -> None:
    prefix = "android.intent.extra.alarm"
    await phone.sh(
        f"am start -a android.intent.action.SET_ALARM --ei {prefix}.HOUR 7 --ei {prefix}.MINUTES 30 "
        f"--es {prefix}.MESSAGE Wake --ez {prefix}.SKIP_UI true"
    )
    [alarm] = phone.state.alarms
    assert (alarm.hour, alarm.minutes, alarm.message, alarm.skip_ui) == (7, 30, "Wake", True)
    assert phone.state.foreground().package == "com.google.android.apps.nexuslauncher"
    await phone.sh(
        f"am start -a android.intent.action.SET_ALARM --ei {prefix}.HOUR 7 --ei {prefix}.MINUTES 30 "
        f"--es {prefix}.MESSAGE Wake"
    )
    assert len(phone.state.alarms) == 1 and phone.state.foreground().package == "com.google.android.deskclock"
    await phone.sh(f"am start -a android.intent.action.SET_ALARM --el {prefix}.HOUR 9")
    assert len(phone.state.alarms) == 1
    assert (
        "Next alarm clock information: \n    user:0 pendingSend:false time:"
        in (await phone.sh("dumpsys alarm")).stdout
    )


async def test_chrome_url_bar(phone: FakePhone) -> None:
    await phone.sh("am start -a android.intent.action.VIEW -d https://example.com/page")
    assert phone.nodes(resourceId=f"{CHROME}:id/url_bar", text="example.com")
    await phone.tap_node(resourceId=f"{CHROME}:id/url_bar")
    await phone.sh("input text wikipedia.org && input keyevent ENTER")
    assert phone.state.foreground().extra["url"] == "https://wikipedia.org"


async def test_launcher_icons_home_and_task_to_front(phone: FakePhone) -> None:
    await phone.tap_node(text="WhatsApp")
    assert phone.state.foreground().package == "com.whatsapp"
    assert phone.state.log.intents[-1].source == "ui"
    await phone.sh("input keyevent HOME")
    assert phone.state.foreground().package == "com.google.android.apps.nexuslauncher"
    again = await phone.sh(
        "am start -a android.intent.action.MAIN -c android.intent.category.LAUNCHER -n com.whatsapp/.Main"
    )
    assert again.stderr == "Warning: Activity not started, its current task has been brought to the front\n"
    assert phone.state.foreground().package == "com.whatsapp"


async def test_two_browsers_ask_which_one(phone: FakePhone) -> None:
    firefox = Package(
        "org.mozilla.firefox", "Firefox", system=False, handles=["android.intent.action.VIEW https"]
    )
    firefox.launcher = "org.mozilla.fenix.HomeActivity"
    firefox.activities = [firefox.launcher]
    phone.state.packages[firefox.name] = firefox
    await phone.sh("am start -a android.intent.action.VIEW -d https://example.com")
    assert phone.state.foreground().activity == "com.android.internal.app.ResolverActivity"
    assert phone.nodes(text="Open with")
    await phone.tap_node(text="Firefox")
    assert phone.state.foreground().package == "org.mozilla.firefox"


async def test_paste_and_ctrl_v(phone: FakePhone) -> None:
    phone.state.clipboard = "copied"
    await phone.sh("monkey -p com.google.android.keep -c android.intent.category.LAUNCHER 1")
    await phone.sh("input keyevent KEYCODE_PASTE")
    await phone.sh("input keycombination 113 50")
    assert phone.state.focused_text() == "copiedcopied"
    assert [t.method for t in phone.state.log.texts] == ["paste", "paste"]


async def test_notification_shade(phone: FakePhone) -> None:
    phone.state.receive_sms("+15550001", "Lunch?")
    await phone.sh("cmd statusbar expand-notifications")
    assert phone.nodes(resourceId="android:id/text", text="Lunch?")
    await phone.tap_node(text="Lunch?")
    assert phone.state.notifications == [] and not phone.state.shade_open
    assert phone.state.foreground().extra["address"] == "+15550001"


async def test_a_screen_supplied_as_xml(phone: FakePhone) -> None:
    phone.state.custom_screens["com.whatsapp/.Main"] = (
        '<?xml version="1.0"?><hierarchy rotation="0"><node index="0" class="android.widget.FrameLayout" '
        'package="com.whatsapp" bounds="[0,0][720,1280]"><node index="0" class="android.widget.EditText" '
        'resource-id="com.whatsapp:id/entry" package="com.whatsapp" text="" hint="Message" clickable="true" '
        'bounds="[20,1000][600,1100]"/></node></hierarchy>'
    )
    await phone.sh("monkey -p com.whatsapp -c android.intent.category.LAUNCHER 1")
    await phone.tap_node(resourceId="com.whatsapp:id/entry")
    await phone.sh("input text hello")
    assert phone.nodes(resourceId="com.whatsapp:id/entry", text="hello")
    assert 'text="hello"' in (await phone.sh("uiautomator dump /dev/tty")).stdout
