"""Every built-in action and query through gRPC on `--device adb:127.0.0.1:PORT`, against the
fake adbd and fake phone behind the real adb server; each test asserts what the phone received."""

from __future__ import annotations

import asyncio
import base64
import json
from datetime import datetime, timezone
from typing import Any

import pytest

from phoneuse_runtime.device.adb.device import AdbDevice
from phoneuse_runtime.rpc import protocol_pb2 as pb
from tests.device.adb.conftest import AdbServe, Served
from tests.fakes import seed
from tests.waiting import wait_until

V1 = ("cmd",)  # a daemon without shell_v2: stderr merged, the exit code from an echo
V2 = ("shell_v2", "cmd")
FEATURES = pytest.mark.parametrize("features", [V1, V2], ids=["shell_v1", "shell_v2"])
HOSTILE = ["'; rm -rf / #", "$(reboot)", "`reboot`", "a\"b'c\\d $HOME ${PATH} ; | & > <"]


def _keep_field(s: Served) -> str:
    return "com.google.android.keep:id/edit_note_text"


async def _open_keep(s: Served) -> None:
    await s.client.ok("OPEN_APP", {"package": seed.KEEP})


@FEATURES
async def test_ui_gestures_and_screen(serve_adb: AdbServe, features: tuple[str, ...]) -> None:
    s = await serve_adb(features=features)
    c = s.client
    shot = await c.ok("SCREENSHOT")
    assert shot["via"] == "uiautomator2" and shot["format"] == "jpeg" and shot["width"] == 720
    dump = await c.ok("DUMP_UI", {"include_xml": "true", "format": "json"})
    assert dump["package"] == seed.LAUNCHER and "<hierarchy" in dump["xml"]
    tapped = await c.ok("TAP", {"text": "Keep Notes"})
    icon = next(e for e in dump["elements"] if e["text"] == "Keep Notes")
    left, top, right, bottom = icon["bounds"]
    assert (tapped["x"], tapped["y"]) == ((left + right) // 2, (top + bottom) // 2)
    assert (s.state.log.taps[-1].x, s.state.log.taps[-1].y) == (tapped["x"], tapped["y"])
    assert s.state.foreground().package == seed.KEEP
    await c.ok("TAP", {"x": "10", "y": "600"})
    assert (s.state.log.taps[-1].x, s.state.log.taps[-1].y) == (10, 600)
    await c.ok("LONG_PRESS", {"x": "20", "y": "700", "duration_ms": "900"})
    assert s.state.log.taps[-1].duration_ms == 900
    await c.ok("SWIPE", {"direction": "up"})
    swipe = s.state.log.swipes[-1]
    # An agent's gesture on Android 11+: `input` in the script that checks the front first.
    assert swipe.y1 > swipe.y2 and swipe.source == "input"
    await c.ok("PRESS_KEY", {"key": "BACK"})
    assert s.state.log.keys[-1].code == 4
    await c.ok("PRESS_KEY", {"key": "HOME"})
    waited = await c.ok("WAIT_FOR", {"text": "Chrome"}, timeout_ms=3000)
    assert waited["element"]["text"] == "Chrome"
    assert await c.fail("TAP", {"text": "No such thing"}) == "ELEMENT_NOT_FOUND"
    # WAIT_FOR waits on the phone (waitForExists), not by dumping every 100 ms.
    dumps = s.state.log.rpc_counts()["dumpWindowHierarchy"]
    assert await c.fail("WAIT_FOR", {"text": "Never"}, timeout_ms=1500) == "TIMEOUT"
    assert s.state.log.rpc_counts()["dumpWindowHierarchy"] == dumps


async def test_a_tap_by_selector_takes_fewer_round_trips_than_u2s_click(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    before_rpc, before_open = len(s.state.log.rpc), len(s.opened())
    await s.client.ok("TAP", {"text": "Chrome", "settle_ms": "0"})  # settling's looks: the next test
    methods = [call.method for call in s.state.log.rpc[before_rpc:]]
    # u2's d(text=...).click() is waitForExists + objInfo + click: three streams; ours is one, a
    # JSON-RPC batch of objInfo and click whose guarded selector is also the owner's-controls
    # check (front_guard.py: never a tap in front of the owner's controls).
    assert methods == ["objInfo", "click"]
    assert len(s.opened()) - before_open == 1


async def test_a_settled_tap_reports_what_changed_for_one_dump_more(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    await s.client.ok("DUMP_UI")  # the screen the agent saw: what the account of changes is about
    before_rpc, before_open = len(s.state.log.rpc), len(s.opened())
    tapped = await s.client.ok("TAP", {"text": "Keep Notes"})
    methods = [call.method for call in s.state.log.rpc[before_rpc:]]
    opened = s.opened()[before_open:]
    # The tap's batch reads the screen after it (settling's first look), one more look agrees:
    # two streams (6 before: the front's read, a look before, objInfo, click and two looks).
    assert methods == ["objInfo", "click", "dumpWindowHierarchy", "dumpWindowHierarchy"]
    assert opened == ["tcp:9008", "tcp:9008"], opened
    assert tapped["settle"]["settled"] is True and tapped["settle"]["looks"] == 2
    assert s.state.foreground().package == seed.KEEP
    # Another app in front: the launcher's elements counted, Keep's screen in the compact form.
    account = tapped["changes"]
    assert (account["app"], account["went_more"] > 0, "went" in account) == (seed.KEEP, True, False)
    assert set(account["screen"].splitlines()) <= set((await s.client.ok("DUMP_UI"))["screen"].splitlines())
    # The settled screen is remembered: the next action's account starts from it, with no look.
    before_open = len(s.opened())
    back = await s.client.ok("PRESS_KEY", {"key": "BACK"})
    assert back["changes"]["was_app"] == seed.KEEP and '"Keep Notes"' in back["changes"]["screen"]
    assert len(s.opened()) - before_open == 3  # the key (BACK leaves: no front check), two looks


async def test_a_settled_tap_with_no_screen_seen_yet_looks_before(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    before_open = len(s.opened())
    tapped = await s.client.ok("TAP", {"text": "Keep Notes"})
    assert len(s.opened()) - before_open == 3  # a look before, the tap's batch, one look
    assert tapped["changes"]["app"] == seed.KEEP and tapped["changes"]["went_more"] > 0
    assert tapped["ui_fingerprint"] == (await s.client.ok("DUMP_UI"))["ui_fingerprint"]


UNICODE = {
    "arabic": "مرحبا بالعالم",
    "hebrew": "שלום עולם",
    "cjk": "你好，世界 こんにちは 안녕하세요",  # noqa: RUF001 (a CJK comma, on purpose)
    "emoji": "😀👍🏽🇫🇷 done",
    "accented": "Crème brûlée à l'œuf, ñandú",
}


@pytest.mark.parametrize("name", list(UNICODE))
async def test_type_text_unicode_with_the_u2_input_method(serve_adb: AdbServe, name: str) -> None:
    phone_state = seed.default_state()
    u2 = seed.u2_app_package()
    phone_state.packages[u2.name] = u2
    from tests.fakes.phone import FakePhone

    s = await serve_adb(FakePhone(phone_state))
    await _open_keep(s)
    text = UNICODE[name]
    typed = await s.client.ok("TYPE_TEXT", {"text": text, "resource_id": _keep_field(s)})
    assert typed["via"] == "uiautomator2 ime"
    assert typed["verified"] is True and typed["read_back"] == text
    assert s.state.log.texts[-1].text == text and s.state.log.texts[-1].method.startswith("ime:")
    # The user's own keyboard is back.
    assert s.state.setting("secure", "default_input_method") == seed.LATIN_IME


async def test_type_text_without_the_input_method_pastes(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    await _open_keep(s)
    await s.client.ok("SET_CLIPBOARD", {"text": "the user's clip"})
    text = UNICODE["arabic"] + " " + UNICODE["emoji"]
    typed = await s.client.ok("TYPE_TEXT", {"text": text, "resource_id": _keep_field(s)})
    assert typed["via"] == "clipboard paste" and typed["verified"] is True
    assert s.state.log.texts[-1].method == "paste"
    assert s.state.clipboard == "the user's clip"  # restored


@pytest.mark.parametrize("hostile", HOSTILE)
async def test_hostile_text_arrives_as_text_and_runs_nothing(serve_adb: AdbServe, hostile: str) -> None:
    s = await serve_adb()
    await _open_keep(s)
    typed = await s.client.ok("TYPE_TEXT", {"text": hostile, "resource_id": _keep_field(s)})
    assert typed["read_back"] == hostile
    extras = json.dumps({"note": hostile, "n": 5})
    await s.client.ok(
        "START_INTENT",
        {"action": "android.intent.action.VIEW", "data": "https://example.com", "extras": extras},
    )
    intent = s.state.log.intents[-1]
    assert intent.extras["note"] == hostile and intent.extra_types["note"] == "s"
    ran = {argv[0].rsplit("/", 1)[-1] for argv in s.state.log.commands if argv}
    assert not ran & {"rm", "reboot"}, ran


async def test_apps_and_intents(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    c = s.client
    opened = await c.ok("OPEN_APP", {"name": "chrome"})
    assert opened["package"] == seed.CHROME and opened["via"] == "am start -n"
    assert s.state.foreground().package == seed.CHROME
    await c.query(pb.QueryType.APP_STATE)  # the app list (labels) is read once and cached
    streams = len(s.opened())
    state, _, _ = await c.query(pb.QueryType.APP_STATE)
    assert state[0]["package"] == seed.CHROME and state[0]["foreground"] is True
    assert state[0]["activity"] == seed.CHROME_MAIN and state[0]["ui_fingerprint"]
    assert all(app["running"] and not app["foreground"] for app in state[1:])
    assert {app["package"] for app in state} == {seed.CHROME, *s.state.processes}
    # The foreground and the running apps in one shell stream; the screen in one u2 call.
    assert [o for o in s.opened()[streams:] if o.startswith("shell")] == [
        o for o in s.opened()[streams:] if "dumpsys window windows" in o and "ps -A" in o
    ]
    assert len([o for o in s.opened()[streams:] if o.startswith("shell")]) == 1
    closed = await c.ok("CLOSE_APP", {"package": seed.CHROME})
    assert closed["was_running"] is True
    assert seed.CHROME not in s.state.processes
    assert await c.fail("OPEN_APP", {"package": "com.not.installed"}) in ("UNSUPPORTED", "INVALID_PARAMS")
    url = await c.ok("OPEN_URL", {"url": "https://example.com/a?b=c&d=e"})
    assert s.state.log.intents[-1].data == "https://example.com/a?b=c&d=e"
    assert url["handled_by"].startswith(seed.CHROME)
    assert await c.fail("START_INTENT", {"action": "com.example.NOBODY"}) == "UNSUPPORTED"


async def test_messaging_and_calls(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    c = s.client
    body = "On my way; $(rm -rf /) `x` 'y' 🚗"
    sent = await c.ok("SEND_MESSAGE", {"to": "+15551234567", "body": body}, timeout_ms=20_000)
    assert sent["verified"] is True and sent["via"] == "sms intent + send button"
    sendto = next(i for i in reversed(s.state.log.intents) if i.action == "android.intent.action.SENDTO")
    assert sendto.data == "smsto:+15551234567" and sendto.extras["sms_body"] == body
    row = s.state.sms_box("sent")[-1]
    assert (str(row.id), row.body) == (sent["message_id"], body)
    send_tap = s.state.log.taps[-1]
    assert send_tap.target.endswith("send_message_button_icon") or "Send" in send_tap.target
    call = await c.ok("MAKE_CALL", {"to": "+15550100"})
    assert s.state.log.intents[-1].action == "android.intent.action.CALL"
    assert s.state.log.intents[-1].data == "tel:+15550100"
    assert call["via"] == "am start CALL"
    ended = await c.ok("END_CALL")
    assert ended["ended"] is True and s.state.log.keys[-1].code == 6


async def test_contacts_calendar_alarm_clipboard_shell(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    c = s.client
    added = await c.ok(
        "ADD_CONTACT", {"name": "Zoë O'Brien, Jr.", "phone": "+1 555 0100", "email": "z@x.org"}
    )
    assert added["verified"] is True
    found, total, _ = await c.query(pb.QueryType.CONTACTS, {"name": "zoë"})
    assert total == 1 and found[0]["name"] == "Zoë O'Brien, Jr."
    event = await c.ok(
        "CREATE_EVENT",
        {"title": "Stand-up: 10:30, room \\4", "start": "2030-05-01T10:30:00Z", "location": "A, B"},
    )
    assert event["verified"] is True and event["via"] == "content insert"
    stored = next(e for e in s.state.events if str(e.id) == event["event_id"])
    assert stored.title == "Stand-up: 10:30, room \\4" and stored.calendar_id == 1
    assert stored.event_timezone == "UTC" and stored.dtstart == int(
        datetime(2030, 5, 1, 10, 30, tzinfo=timezone.utc).timestamp() * 1000
    )
    alarm = await c.ok(
        "SET_ALARM", {"hour": "7", "minute": "30", "label": "gym; rm -rf /", "days": "MON,FRI"}
    )
    assert alarm["via"] == "SET_ALARM intent"
    intent = s.state.log.intents[-1]
    assert intent.extras["android.intent.extra.alarm.HOUR"] == 7
    assert intent.extras["android.intent.extra.alarm.MESSAGE"] == "gym; rm -rf /"
    clip = await c.ok("SET_CLIPBOARD", {"text": "📋 clip"})
    assert clip["verified"] is True and s.state.clipboard == "📋 clip"
    shell = await c.ok("SHELL", {"command": "echo hello; echo oops >&2; exit 3"})
    assert shell["exit_code"] == 3 and "hello" in shell["stdout"]


async def test_events_are_polled_while_subscribed(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    c = s.client
    stream = c.stub.Subscribe(
        pb.SubscribeRequest(
            subscriber_id="t", event_types=["MESSAGE_RECEIVED", "APP_STATE_CHANGED", "NOTIFICATION_POSTED"]
        ),
        metadata=(("authorization", f"Bearer {_token()}"),),
    )
    got: dict[str, Any] = {}

    async def read() -> None:
        async for event in stream:
            payload = json.loads(event.payload_json)
            if event.event_type == "NOTIFICATION_POSTED" and payload["package"] != "com.whatsapp":
                continue  # the SMS app's own notification of the message
            got.setdefault(event.event_type, payload)
            if len(got) == 3:
                return

    reader = asyncio.ensure_future(read())
    device = s.client.app.runtime.device
    assert isinstance(device, AdbDevice) and device._pollers is not None
    pollers = device._pollers
    # A whole poll with the stream subscribed has taken stock of every source (the first counted
    # may have begun before it subscribed): what comes after it is new.
    polled = pollers.polls
    await wait_until(lambda: pollers.polls >= polled + 2, what="a whole poll with the stream subscribed")
    s.state.receive_sms("+15550199", "hello, there")
    s.state.notify("com.whatsapp", "Bob", "lunch?")
    await c.ok("OPEN_APP", {"package": seed.CHROME})
    await asyncio.wait_for(reader, 10)
    stream.cancel()
    assert (
        got["MESSAGE_RECEIVED"]["from"] == "+15550199" and got["MESSAGE_RECEIVED"]["body"] == "hello, there"
    )
    assert got["APP_STATE_CHANGED"]["package"] == seed.CHROME
    assert got["NOTIFICATION_POSTED"]["title"] == "Bob" and got["NOTIFICATION_POSTED"]["text"] == "lunch?"


def _token() -> str:
    from tests.conftest import TOKEN

    return TOKEN


async def test_create_event_through_the_app_when_the_provider_refuses_adb(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    s.state.faults.denied_providers.add("com.android.calendar")  # the shell may not; the app may
    # The read-back is refused too: the event is saved, and the answer says it was not verified.
    answer = await s.client.ok(
        "CREATE_EVENT", {"title": "Dentist: 3:00 'sharp'", "start": "2030-06-02T15:00:00Z"}, timeout_ms=20_000
    )
    assert answer["verified"] is False and answer["via"] == "calendar intent + save"
    assert "calendar" in answer["verify_error"]
    insert = next(i for i in reversed(s.state.log.intents) if i.action == "android.intent.action.INSERT")
    assert insert.extra_types["beginTime"] == "l" and insert.extra_types["endTime"] == "l"
    assert insert.extras["title"] == "Dentist: 3:00 'sharp'"
    assert s.state.log.taps[-1].target.endswith(":id/save")
    assert any(e.title == "Dentist: 3:00 'sharp'" for e in s.state.events)


async def test_screenshot_falls_back_to_screencap_through_sync(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    s.state.faults.u2_screenshot_null = True
    streams = len(s.opened())
    shot = await s.client.ok("SCREENSHOT")
    assert shot["via"] == "screencap" and shot["format"] == "png"
    assert (shot["width"], shot["height"]) == s.state.screen_size
    assert base64.b64decode(shot["image_base64"]).startswith(b"\x89PNG")
    opened = s.opened()[streams:]
    assert any("screencap -p" in o for o in opened) and any(o.startswith("sync") for o in opened)


async def test_create_event_in_a_named_time_zone(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    event = await s.client.ok(
        "CREATE_EVENT", {"title": "Lunch", "start": "2030-07-01T12:00:00", "timezone": "Europe/Paris"}
    )
    assert event["verified"] is True and event["verify_error"] is None
    stored = next(e for e in s.state.events if str(e.id) == event["event_id"])
    # Noon in Paris (summer time, UTC+2) is 10:00 UTC; the provider keeps the zone's name.
    assert stored.event_timezone == "Europe/Paris"
    assert stored.dtstart == int(datetime(2030, 7, 1, 10, 0, tzinfo=timezone.utc).timestamp() * 1000)
    assert await s.client.fail("CREATE_EVENT", {"title": "x", "start": "0", "timezone": "Mars/Base"}) == (
        "INVALID_PARAMS"
    )


async def test_contacts_query_filters_and_a_denied_provider(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    s.state.add_contact("Ann Lee", phones=["+1 (555) 010-0001"])
    s.state.add_contact("Bob Stone", phones=["+15550100002"], emails=["bob@x.org"])
    found, total, _ = await s.client.query(pb.QueryType.CONTACTS, {"phone": "5550100002"})
    assert total == 1 and found[0]["name"] == "Bob Stone" and found[0]["emails"] == ["bob@x.org"]
    s.state.faults.denied_providers.add("com.android.contacts")
    assert await s.client.fail("ADD_CONTACT", {"name": "X", "phone": "+1555"}) == "PERMISSION_DENIED"
