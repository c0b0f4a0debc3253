"""The simulated phone keeps bounded stores, as a phone does (state.LIMITS, in the spec too): what
the world sends pushes out the oldest, what the owner adds is refused past its limit."""

from __future__ import annotations

import json
import pathlib
import re
from collections.abc import AsyncIterator

import pytest

from phoneuse_runtime.device.base import Alarm, CalendarEvent, Intent, SmsFilter
from phoneuse_runtime.device.sim import state as limits
from phoneuse_runtime.device.sim.device import SimDevice
from phoneuse_runtime.kernel.errors import Unsupported

MESSAGES = "com.google.android.apps.messaging"
SEED_SMS = 6
SEED_THREADS = 3


@pytest.fixture
async def device() -> AsyncIterator[SimDevice]:
    sim = SimDevice()
    await sim.start(lambda _e: None)
    yield sim
    await sim.close()


def _number(i: int) -> str:
    return f"+1 212 555 {i:04d}"


async def test_a_conversation_keeps_its_newest_sms(device: SimDevice) -> None:
    sender = "+1 650 555 0199"
    for i in range(limits.SMS_PER_THREAD + 2):
        await device.receive_sms(sender, f"sms {i}")
    mine = [m.body for m in await device.sms_messages(SmsFilter(box="inbox")) if m.address == sender]
    assert len(mine) == limits.SMS_PER_THREAD
    assert "sms 0" not in mine and "sms 1" not in mine  # the oldest went
    assert mine[0] == f"sms {limits.SMS_PER_THREAD + 1}"
    assert len(await device.sms_messages()) == SEED_SMS + limits.SMS_PER_THREAD  # others untouched


async def test_the_phone_keeps_its_newest_sms_and_drops_emptied_conversations(device: SimDevice) -> None:
    extra = 10
    for i in range(limits.SMS_MAX + extra):
        await device.receive_sms(_number(i), f"from {i}")
    kept = await device.sms_messages()
    assert len(kept) == limits.SMS_MAX
    bodies = {m.body for m in kept}
    # The seed's six and the first few of the flood were the oldest.
    assert bodies == {f"from {i}" for i in range(extra, limits.SMS_MAX + extra)}
    state = _state(device)
    assert len(state.threads) == limits.SMS_MAX  # one per sender left; the emptied ones went
    assert _number(0) not in state.threads.values()
    assert state.thread_id_for(_number(0)) not in {m.thread_id for m in kept}  # a new conversation


async def test_the_sms_text_is_bounded_too(device: SimDevice) -> None:
    big = "x" * (limits.TEXT_MAX // 3)
    for i in range(4):
        await device.receive_sms(_number(i), f"{i}{big}")
    kept = [m.body[0] for m in await device.sms_messages()]
    assert kept == ["3", "2"]  # the newest that fit; everything older went, the seed's too


async def test_notifications_keep_the_newest_per_app_and_in_all(device: SimDevice) -> None:
    for i in range(limits.NOTIFICATIONS_PER_APP + 1):
        await device.post_notification("com.example.chatty", "t", f"n {i}")
    chatty = [n.text for n in await device.notifications()]
    assert len(chatty) == limits.NOTIFICATIONS_PER_APP
    assert "n 0" not in chatty and chatty[0] == f"n {limits.NOTIFICATIONS_PER_APP}"
    apps = limits.NOTIFICATIONS_MAX // limits.NOTIFICATIONS_PER_APP + 1
    for app in range(apps):
        for i in range(limits.NOTIFICATIONS_PER_APP):
            await device.post_notification(f"com.example.app{app}", "t", f"{app}/{i}")
    shown = await device.notifications()
    assert len(shown) == limits.NOTIFICATIONS_MAX
    assert {n.package for n in shown} == {f"com.example.app{a}" for a in range(1, apps)}


async def test_sms_notifications_that_went_leave_no_tap_targets(device: SimDevice) -> None:
    for i in range(limits.NOTIFICATIONS_PER_APP + 5):
        await device.receive_sms(_number(i), f"hello {i}")
    state = _state(device)
    assert len(state.notifications) == limits.NOTIFICATIONS_PER_APP
    assert set(state.notification_targets) == {n.key for n in state.notifications}


async def test_chats_keep_their_newest_messages(device: SimDevice) -> None:
    frank = "+1 650 555 0142"
    for i in range(limits.CHAT_MESSAGES_PER_CHAT + 1):
        await device.receive_chat_message("com.whatsapp", frank, f"c {i}")
    [chat] = [c for c in _state(device).chats if c.number == "+16505550142"]
    assert len(chat.messages) == limits.CHAT_MESSAGES_PER_CHAT and chat.messages[0].body == "c 1"
    others = limits.CHAT_MESSAGES_MAX // limits.CHAT_MESSAGES_PER_CHAT
    for n in range(others):
        for i in range(limits.CHAT_MESSAGES_PER_CHAT):
            await device.receive_chat_message("com.whatsapp", _number(n), f"w {n}/{i}")
    chats = _state(device).chats
    assert sum(len(c.messages) for c in chats) == limits.CHAT_MESSAGES_MAX
    # The seed's chats and Frank's were the oldest: they went with their last messages.
    assert [c.number for c in chats] == [f"+1212555{n:04d}" for n in range(others)]


async def test_conversations_opened_without_a_message_are_bounded(device: SimDevice) -> None:
    for i in range(limits.UNUSED_CONVERSATIONS_MAX + 5):
        await device.start_intent(Intent(action="android.intent.action.SENDTO", data=f"smsto:{_number(i)}"))
    state = _state(device)
    assert len(state.threads) == SEED_THREADS + limits.UNUSED_CONVERSATIONS_MAX
    assert _number(0) not in state.threads.values()
    assert _number(limits.UNUSED_CONVERSATIONS_MAX + 4) in state.threads.values()


async def test_what_the_owner_adds_is_refused_past_the_limit(device: SimDevice) -> None:
    for i in range(limits.ALARMS_MAX - len(await device.alarms())):
        await device.set_alarm(Alarm("", i % 24, i % 60))
    with pytest.raises(Unsupported, match="100 alarms"):
        await device.set_alarm(Alarm("", 6, 0))
    for i in range(limits.CONTACTS_MAX - len(await device.contacts())):
        await device.add_contact(f"Person {i}", [], [])
    with pytest.raises(Unsupported, match="contacts are full"):
        await device.add_contact("One too many", [], [])
    for i in range(limits.EVENTS_MAX - len(await device.calendar_events())):
        await device.insert_event(CalendarEvent("", f"Event {i}", 1_900_000_000_000, 1_900_000_000_000))
    with pytest.raises(Unsupported, match="calendar is full"):
        await device.insert_event(CalendarEvent("", "One too many", 1_900_000_000_000, 1_900_000_000_000))


async def test_a_state_file_past_the_limits_loads_within_them(tmp_path: pathlib.Path) -> None:
    from phoneuse_runtime.device.sim.seed import seed_state

    data = json.loads(seed_state().to_json())
    data["sms"] += [
        {"id": str(100 + i), "thread_id": "1", "address": "+14155550101", "body": f"old {i}", "date_ms": i}
        | {"box": "inbox", "read": True}
        for i in range(limits.SMS_PER_THREAD + 50)
    ]
    path = tmp_path / "phone.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    device = SimDevice(state_file=path)
    await device.start(lambda _e: None)
    alice = [m for m in await device.sms_messages() if m.thread_id == "1"]
    assert len(alice) == limits.SMS_PER_THREAD
    assert "old 49" not in {m.body for m in alice} and "old 50" in {m.body for m in alice}
    sent = await device.receive_sms("+1 415 555 0101", "new")
    assert int(sent.id) == 100 + limits.SMS_PER_THREAD + 50  # past every id in the file
    await device.close()


def _state(device: SimDevice) -> limits.SimState:
    phone = device._phone
    assert phone is not None
    return phone.state


def _screen(label: str, filler: int) -> str:
    return (
        '<hierarchy rotation="0"><node index="0" text="' + label + "x" * filler + '" resource-id="" '
        'class="android.widget.TextView" package="com.example.scenario" content-desc="" '
        'bounds="[0,0][1080,100]" /></hierarchy>'
    )


async def test_the_screens_shown_keep_a_bounded_total_and_the_oldest_close(device: SimDevice) -> None:
    filler = limits.SCREENS_XML_MAX // 3 - 1000  # three fit, a fourth pushes the first out
    for i in range(4):
        await device.set_screen(_screen(f"screen {i} ", filler))
    shown = []
    for _ in range(6):
        found = re.search(r"screen (\d) ", await device.dump_hierarchy())
        if found is None:  # BACK left the scenario's screens
            break
        shown.append(int(found.group(1)))
        await device.press_key(4)  # BACK
    assert shown == [3, 2, 1]  # screen 0 was closed
