"""App actions end to end: OPEN_APP, CLOSE_APP, OPEN_URL and START_INTENT on the sim."""

from __future__ import annotations

from typing import Any

import pytest

from phoneuse_runtime.device.base import Intent, IntentResult, SmsFilter
from phoneuse_runtime.rpc import protocol_pb2 as pb

from ..conftest import Client, ServerFactory
from .conftest import (
    CALENDAR,
    CHROME,
    CLOCK,
    CONTACTS,
    DIALER,
    LAUNCHER,
    MESSAGES,
    URL_BAR,
    WHATSAPP,
    elements,
    failure,
    front,
    one,
    own,
    sim,
    texts,
)

CHROME_MAIN = "com.android.chrome/com.google.android.apps.chrome.Main"


def _record_intents(monkeypatch: pytest.MonkeyPatch, client: Client) -> list[Intent]:
    """The intents the handlers hand to the device, in order (the device still handles them)."""
    device = sim(client)
    seen: list[Intent] = []
    original = device.start_intent

    async def spy(intent: Intent) -> IntentResult:
        seen.append(intent)
        return await original(intent)

    monkeypatch.setattr(device, "start_intent", spy)
    return seen


# --- OPEN_APP / CLOSE_APP -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "package", "label"),
    [
        ({"package": CHROME}, CHROME, "Chrome"),
        ({"name": "Chrome"}, CHROME, "Chrome"),
        ({"name": "cHrOmE"}, CHROME, "Chrome"),
        ({"name": "  whatsapp "}, WHATSAPP, "WhatsApp"),
        ({"name": "What"}, WHATSAPP, "WhatsApp"),
        ({"name": "Clo"}, CLOCK, "Clock"),
        # "Contacts" is exact, though "Contacts Storage" starts with it too.
        ({"name": "contacts"}, CONTACTS, "Contacts"),
        # Packages without a launcher entry ("Phone Services", ...) never make a name ambiguous.
        ({"name": "Pho"}, DIALER, "Phone"),
    ],
)
async def test_open_app(client: Client, params: dict[str, str], package: str, label: str) -> None:
    result = await client.ok("OPEN_APP", params)
    assert (result["package"], result["label"]) == (package, label)
    assert result["activity"]
    assert await front(client) == (package, result["activity"])


async def test_open_app_with_an_ambiguous_name_lists_the_candidates(client: Client) -> None:
    code, message, details = await failure(client, "OPEN_APP", {"name": "C"})
    assert code == "INVALID_PARAMS"
    assert "'C' matches several apps" in message
    for label in ("Calendar", "Chrome", "Clock", "Contacts"):
        assert label in message
    assert sorted(details["candidates"], key=lambda c: c["label"]) == [
        {"package": CALENDAR, "label": "Calendar"},
        {"package": CHROME, "label": "Chrome"},
        {"package": CLOCK, "label": "Clock"},
        {"package": CONTACTS, "label": "Contacts"},
    ]
    assert (await front(client))[0] == LAUNCHER


@pytest.mark.parametrize(
    ("params", "code", "fragment"),
    [
        ({"package": "com.not.installed"}, "UNSUPPORTED", "com.not.installed is not installed"),
        ({"name": "Telegram"}, "INVALID_PARAMS", "no app named 'Telegram'"),
        # Installed, but without a launcher entry: no name reaches it, its package does.
        ({"name": "System UI"}, "INVALID_PARAMS", "apps without a launcher icon open by package"),
        ({"package": "com.android.phone"}, "UNSUPPORTED", "No activities found"),
        # The owner's controls (owner/controls.py), by package or by name.
        ({"package": "com.android.systemui"}, "PERMISSION_DENIED", "one of the owner's controls"),
        ({"name": "Settings"}, "PERMISSION_DENIED", "com.android.settings is one of the owner's controls"),
        ({"package": CHROME, "name": "Chrome"}, "INVALID_PARAMS", "give either package or name"),
        ({}, "INVALID_PARAMS", "give either package or name"),
        ({"package": ""}, "INVALID_PARAMS", "give either package or name"),
    ],
)
async def test_open_app_failures(client: Client, params: dict[str, str], code: str, fragment: str) -> None:
    got, message, _ = await failure(client, "OPEN_APP", params)
    assert got == code
    assert fragment in message
    assert (await front(client))[0] == LAUNCHER


@pytest.mark.parametrize(
    ("name", "suggestions"),
    [
        ("Chrme", ["Chrome"]),
        ("Whatsup", ["WhatsApp"]),
        ("Setings", ["Settings"]),
        ("Telegram", []),
    ],
)
async def test_open_app_by_an_unknown_name_suggests_the_closest(
    client: Client, name: str, suggestions: list[str]
) -> None:
    code, message, details = await failure(client, "OPEN_APP", {"name": name})
    assert code == "INVALID_PARAMS"
    assert details == {"suggestions": suggestions}
    assert message.startswith(f"no app named {name!r}")
    if suggestions:
        assert f"did you mean {suggestions[0]!r}?" in message
    else:
        assert "did you mean" not in message
    assert (await front(client))[0] == LAUNCHER


async def test_close_app_reports_whether_it_was_running(client: Client) -> None:
    await client.ok("OPEN_APP", {"package": CLOCK})
    first = await client.ok("CLOSE_APP", {"package": CLOCK, "settle_ms": "0"})  # its own result
    assert first == {"package": CLOCK, "was_running": True, "via": "sim"}
    assert (await front(client))[0] == LAUNCHER
    state, _, _ = await client.query(pb.APP_STATE, {"package": CLOCK})
    assert state[0]["running"] is False
    second = await client.ok("CLOSE_APP", {"package": CLOCK})
    assert second["was_running"] is False
    never = await client.ok("CLOSE_APP", {"package": "com.not.installed"})
    assert never["was_running"] is False


async def test_close_app_in_the_background_keeps_the_foreground(client: Client) -> None:
    await client.ok("OPEN_APP", {"package": CLOCK})
    await client.ok("OPEN_APP", {"package": CHROME})
    assert (await client.ok("CLOSE_APP", {"package": CLOCK}))["was_running"] is True
    assert (await front(client))[0] == CHROME
    # Reopened after a stop, an app starts fresh on its first screen.
    await client.ok("OPEN_URL", {"url": "https://example.com/"})
    await client.ok("CLOSE_APP", {"package": CHROME})
    await client.ok("OPEN_APP", {"package": CHROME})
    assert (await one(client, resource_id=URL_BAR))["text"] == "Search or type URL"


# --- OPEN_URL -----------------------------------------------------------------------------------


async def test_open_url_https_opens_chrome(client: Client) -> None:
    result = await client.ok("OPEN_URL", {"url": "https://example.com/path?q=1#top", "settle_ms": "0"})
    assert result == {"url": "https://example.com/path?q=1#top", "handled_by": CHROME_MAIN, "via": "sim"}
    assert (await front(client))[0] == CHROME
    assert (await one(client, resource_id=URL_BAR))["text"] == "https://example.com/path?q=1#top"
    assert [e["text"] for e in await elements(client, class_="android.webkit.WebView")] == ["Example Domain"]
    upper = await client.ok("OPEN_URL", {"url": "HTTP://www.google.com/"})
    assert upper["handled_by"] == CHROME_MAIN


async def test_open_url_wa_me_opens_whatsapp(client: Client) -> None:
    result = await client.ok("OPEN_URL", {"url": "https://wa.me/14155550102"})
    assert result["handled_by"] == "com.whatsapp/.deeplink.DeepLinkActivity"
    assert (await front(client))[0] == WHATSAPP
    assert await texts(client, WHATSAPP + ":id/conversation_contact_name") == ["Bob Smith"]
    assert await texts(client, WHATSAPP + ":id/message_text") == ["Game tonight at 8?"]


@pytest.mark.parametrize(
    ("url", "code", "fragment"),
    [
        ("javascript:alert(document.cookie)", "PERMISSION_DENIED", "'javascript'"),
        ("file:///data/data/com.whatsapp/databases/msgstore.db", "PERMISSION_DENIED", "'file'"),
        ("content://com.android.contacts/contacts/1", "PERMISSION_DENIED", "allowed: http, https"),
        ("intent://scan/#Intent;scheme=zxing;end", "PERMISSION_DENIED", "'intent'"),
        ("geo:37.42,-122.08", "PERMISSION_DENIED", "'geo'"),
        ("example.com", "INVALID_PARAMS", "has no scheme"),
        ("//example.com/path", "INVALID_PARAMS", "has no scheme"),
        ("", "INVALID_PARAMS", "url"),
        ("  \n", "INVALID_PARAMS", "url is empty"),
    ],
)
async def test_open_url_refusals(client: Client, url: str, code: str, fragment: str) -> None:
    got, message, _ = await failure(client, "OPEN_URL", {"url": url})
    assert got == code
    assert fragment in message
    assert (await front(client))[0] == LAUNCHER


async def test_open_url_with_more_schemes_allowed(make_client: ServerFactory) -> None:
    client = await make_client(url_schemes=frozenset({"https", "geo", "tel"}))
    dialed = await client.ok("OPEN_URL", {"url": "tel:+14155550101"})
    assert dialed["handled_by"] == "com.google.android.dialer/.extensions.GoogleDialtactsActivity"
    assert await texts(client, DIALER + ":id/digits") == ["+14155550101"]
    # Allowed by the server, but no app on this phone handles geo: URIs.
    code, message, _ = await failure(client, "OPEN_URL", {"url": "geo:37.42,-122.08?q=pizza"})
    assert code == "UNSUPPORTED"
    assert "unable to resolve Intent" in message and "dat=geo:37.42,-122.08" in message
    # http is no longer among this server's schemes.
    code, message, _ = await failure(client, "OPEN_URL", {"url": "http://example.com/"})
    assert code == "PERMISSION_DENIED"
    assert "allowed: geo, https, tel" in message


async def test_open_url_app_target_picks_the_handler(client: Client) -> None:
    code, message, _ = await failure(
        client, "OPEN_URL", {"url": "https://example.com/"}, app_target="com.not.installed"
    )
    assert code == "UNSUPPORTED"
    assert "pkg=com.not.installed" in message
    result = await client.ok("OPEN_URL", {"url": "https://example.com/"}, app_target=CHROME)
    assert result["handled_by"] == CHROME_MAIN


PHONE_SCHEMES = frozenset({"http", "https", "tel", "smsto"})  # START_INTENT data is held to url_schemes


# --- START_INTENT -------------------------------------------------------------------------------


async def test_start_intent_dial(make_client: ServerFactory) -> None:
    client = await make_client(url_schemes=PHONE_SCHEMES)
    result = await client.ok(
        "START_INTENT",
        {"action": "android.intent.action.DIAL", "data": "tel:+1%20415%20555%200101", "settle_ms": "0"},
    )
    assert result == {
        "kind": "activity",
        "handled_by": "com.google.android.dialer/.extensions.GoogleDialtactsActivity",
        "via": "sim",
    }
    assert await texts(client, DIALER + ":id/digits") == ["+1 415 555 0101"]
    state = await sim(client).call_state()
    assert state.state == "idle"  # DIAL only fills the dial pad


async def test_start_intent_sendto_prefills_the_conversation(make_client: ServerFactory) -> None:
    client = await make_client(url_schemes=PHONE_SCHEMES)
    body = 'Running late; "10 min" — $(rm -rf /) 🏃'
    result = await client.ok(
        "START_INTENT",
        {
            "action": "android.intent.action.SENDTO",
            "data": "smsto:+14155550101",
            "extras": '{"sms_body": "Running late; \\"10 min\\" — $(rm -rf /) 🏃"}',
        },
    )
    assert result["handled_by"] == ("com.google.android.apps.messaging/.ui.conversation.ConversationActivity")
    assert await texts(client, MESSAGES + ":id/compose_message_text") == [body]
    assert await texts(client, MESSAGES + ":id/conversation_title") == ["Alice Johnson"]
    sent = await sim(client).sms_messages(SmsFilter(box="sent"))
    assert all(m.body != body for m in sent)  # prefilled, not sent


async def test_start_intent_set_alarm_with_int_extras_creates_an_alarm(client: Client) -> None:
    before = await sim(client).alarms()
    prefix = "android.intent.extra.alarm."
    extras = (
        f'{{"{prefix}HOUR": 6, "{prefix}MINUTES": 45, "{prefix}MESSAGE": "Run; \\"fast\\"", '
        f'"{prefix}DAYS": ["2", "4", "6"], "{prefix}SKIP_UI": true}}'
    )
    result = await client.ok("START_INTENT", {"action": "android.intent.action.SET_ALARM", "extras": extras})
    assert result["handled_by"] == "com.google.android.deskclock/com.android.deskclock.HandleApiCalls"
    after = await sim(client).alarms()
    assert len(after) == len(before) + 1
    alarm = after[-1]
    assert (alarm.hour, alarm.minute, alarm.label, alarm.days) == (
        6,
        45,
        'Run; "fast"',
        ["MON", "WED", "FRI"],
    )
    assert (await front(client))[0] == LAUNCHER  # SKIP_UI


async def test_start_intent_extras_arrive_verbatim(client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _record_intents(monkeypatch, client)
    extras = (
        '{"long": 4294967296123, "negative": -2147483649, "int": 7, "float": 2.5, "bool": true, '
        '"off": false, "list": ["a", "b;c", "$(id)", "\\"q\\""], "empty": "", '
        '"text": "semi;colon \'single\' \\"double\\" $(rm -rf /) `id` \\\\ \\n 日本 🙂"}'
    )
    result = await client.ok(
        "START_INTENT",
        {
            "kind": "broadcast",
            "action": "com.example.action.PING",
            "package": WHATSAPP,
            "categories": "android.intent.category.DEFAULT,com.example.CAT",
            "extras": extras,
            "settle_ms": "0",
        },
    )
    assert result == {"kind": "broadcast", "handled_by": WHATSAPP, "via": "sim"}
    assert len(seen) == 1
    got = seen[0].extras
    expected: dict[str, Any] = {
        "long": 4294967296123,
        "negative": -2147483649,
        "int": 7,
        "float": 2.5,
        "bool": True,
        "off": False,
        "list": ["a", "b;c", "$(id)", '"q"'],
        "empty": "",
        "text": "semi;colon 'single' \"double\" $(rm -rf /) `id` \\ \n 日本 🙂",
    }
    assert got == expected
    # Types too: a bool is not an int, an int is not a float.
    assert {k: type(v) for k, v in got.items()} == {k: type(v) for k, v in expected.items()}
    assert seen[0].categories == ["android.intent.category.DEFAULT", "com.example.CAT"]
    assert (seen[0].kind, seen[0].action, seen[0].package) == (
        "broadcast",
        "com.example.action.PING",
        WHATSAPP,
    )


@pytest.mark.parametrize(
    ("extras", "fragment"),
    [
        ('{"k": null}', "extras.k"),
        ('{"k": [1, 2]}', "extras.k"),
        ('{"k": ["a", 1]}', "extras.k"),
        ('["not", "an", "object"]', "extras"),
    ],
)
async def test_start_intent_refuses_extras_it_cannot_type(client: Client, extras: str, fragment: str) -> None:
    code, message, _ = await failure(client, "START_INTENT", {"action": "a.b.C", "extras": extras})
    assert code == "INVALID_PARAMS"
    assert fragment in message


async def test_start_intent_unresolvable_is_unsupported(make_client: ServerFactory) -> None:
    client = await make_client(url_schemes=PHONE_SCHEMES)
    code, message, _ = await failure(
        client, "START_INTENT", {"action": "com.example.action.NOTHING", "data": "tel:+14155550101"}
    )
    assert code == "UNSUPPORTED"
    assert "unable to resolve Intent" in message
    assert "act=com.example.action.NOTHING" in message
    assert "+14155550101" not in message  # am masks phone numbers in dat=
    code, message, _ = await failure(
        client, "START_INTENT", {"component": "com.android.chrome/.NoSuchActivity"}
    )
    assert code == "UNSUPPORTED"
    assert "does not exist" in message
    code, _, _ = await failure(
        client, "START_INTENT", {"action": "android.intent.action.VIEW", "package": "x.y"}
    )
    assert code == "UNSUPPORTED"
    assert (await front(client))[0] == LAUNCHER


async def test_start_intent_explicit_component(client: Client) -> None:
    result = await client.ok(
        "START_INTENT", {"component": "com.google.android.calendar/com.android.calendar.AllInOneActivity"}
    )
    assert result["handled_by"] == "com.google.android.calendar/com.android.calendar.AllInOneActivity"
    assert (await front(client))[0] == CALENDAR
    launched = await client.ok("START_INTENT", {"action": "android.intent.action.MAIN", "package": CHROME})
    assert launched["handled_by"].startswith(CHROME + "/")
    assert (await front(client))[0] == CHROME


async def test_start_intent_broadcast_and_service(client: Client) -> None:
    broadcast = await client.ok(
        "START_INTENT", {"kind": "broadcast", "action": "com.example.action.PING", "settle_ms": "0"}
    )
    assert broadcast == {"kind": "broadcast", "handled_by": "android", "via": "sim"}
    service = await client.ok(
        "START_INTENT", {"kind": "service", "component": "com.whatsapp/com.whatsapp.SyncService"}
    )
    assert own(service) == {
        "kind": "service",
        "handled_by": "com.whatsapp/com.whatsapp.SyncService",
        "via": "sim",
    }
    code, message, _ = await failure(
        client, "START_INTENT", {"kind": "service", "component": "com.not.installed/.Svc"}
    )
    assert code == "UNSUPPORTED"
    assert "no service started" in message
    code, message, _ = await failure(
        client, "START_INTENT", {"kind": "broadcast", "action": "x.PING", "package": "com.not.installed"}
    )
    assert code == "UNSUPPORTED"
    assert "com.not.installed is not installed" in message
    code, message, _ = await failure(client, "START_INTENT", {"kind": "job", "action": "x"})
    assert code == "INVALID_PARAMS"
    assert "kind" in message
    assert (await front(client))[0] == LAUNCHER


async def test_start_intent_uses_app_target_as_package(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = _record_intents(monkeypatch, client)
    await client.ok("START_INTENT", {"action": "android.intent.action.MAIN"}, app_target=CLOCK)
    assert seen[-1].package == CLOCK
    assert (await front(client))[0] == CLOCK
    await client.ok(
        "START_INTENT", {"action": "android.intent.action.MAIN", "package": CHROME}, app_target=CLOCK
    )
    assert seen[-1].package == CHROME  # an explicit package wins
    assert (await front(client))[0] == CHROME
    assert await client.fail("START_INTENT", {}) == "INVALID_PARAMS"


@pytest.mark.parametrize(
    "url", [" https://example.com/ ", "https://example.com/\n", "\thttps://example.com/"]
)
async def test_open_url_ignores_surrounding_whitespace(client: Client, url: str) -> None:
    result = await client.ok("OPEN_URL", {"url": url})
    assert (result["url"], result["handled_by"]) == ("https://example.com/", CHROME_MAIN)
    assert (await one(client, resource_id=URL_BAR))["text"] == "https://example.com/"
