"""The sim-only scenario actions end to end, and the UI actions on the screens they make."""

from __future__ import annotations

import pytest

from phoneuse_runtime.device.base import SmsFilter

from ..conftest import Client, ServerFactory
from .conftest import (
    DIALER,
    LAUNCHER,
    LOGIN_XML,
    MESSAGES,
    SYSTEMUI,
    center,
    elements,
    failure,
    front,
    one,
    sim,
    texts,
)

BANK = "com.example.bank"


async def test_receive_sms_updates_the_conversation_list(client: Client) -> None:
    await client.ok("OPEN_APP", {"package": MESSAGES})
    names = MESSAGES + ":id/conversation_name"
    assert "Frank Okafor" not in await texts(client, names)
    result = await client.ok("SIM_RECEIVE_SMS", {"from": "+1 650 555 0142", "body": "Lunch on Friday? 🥪"})
    assert result["via"] == "sim"
    inbox = await sim(client).sms_messages(SmsFilter(box="inbox"))
    row = next(m for m in inbox if m.id == result["message_id"])
    assert (row.address, row.body, row.thread_id, row.read) == (
        "+1 650 555 0142",
        "Lunch on Friday? 🥪",
        result["thread_id"],
        False,
    )
    # The screen that was open shows it at once: newest first, named from contacts, unread.
    assert (await texts(client, names))[0] == "Frank Okafor"
    assert (await texts(client, MESSAGES + ":id/conversation_snippet"))[0] == "Lunch on Friday? 🥪"
    container = (await elements(client, resource_id=MESSAGES + ":id/swipeableContainer"))[0]
    assert container["description"].startswith("Frank Okafor, Lunch on Friday? 🥪, ")
    assert container["description"].endswith(", Unread")
    # Opening the thread reads it.
    await client.ok("TAP", {"text": "Frank Okafor"})
    assert await texts(client, MESSAGES + ":id/message_text") == ["Lunch on Friday? 🥪"]
    assert next(m for m in await sim(client).sms_messages() if m.id == result["message_id"]).read is True


async def test_receive_sms_into_an_existing_thread(client: Client) -> None:
    before = await sim(client).sms_messages()
    alice_thread = next(m.thread_id for m in before if m.address == "+14155550101")
    result = await client.ok("SIM_RECEIVE_SMS", {"from": "+1 (415) 555-0101", "body": "Running 5 min late"})
    assert result["thread_id"] == alice_thread
    await client.ok("OPEN_APP", {"package": MESSAGES})
    await client.ok("TAP", {"text": "Alice Johnson"})
    assert (await texts(client, MESSAGES + ":id/message_text"))[-1] == "Running 5 min late"


async def test_receive_sms_posts_a_notification_that_opens_the_thread(make_client: ServerFactory) -> None:
    client = await make_client(owner_apps=frozenset())  # the shade is the owner's unless the list says not
    await client.ok("SIM_RECEIVE_SMS", {"from": "+1 555 0177", "body": "Your parcel is at the door"})
    notifications = await sim(client).notifications()
    assert (notifications[0].package, notifications[0].title, notifications[0].text) == (
        MESSAGES,
        "+1 555 0177",
        "Your parcel is at the door",
    )
    await client.ok("SWIPE", {"x1": "540", "y1": "20", "x2": "540", "y2": "1200", "duration_ms": "10"})
    assert (await front(client))[0] == SYSTEMUI
    await client.ok("TAP", {"description": "Messages notification: +1 555 0177"})
    assert await texts(client, MESSAGES + ":id/conversation_title") == ["+1 555 0177"]
    assert await sim(client).notifications() == []


async def test_post_notification(client: Client) -> None:
    result = await client.ok(
        "SIM_POST_NOTIFICATION", {"package": "com.whatsapp", "title": "Family 👪", "text": "3 new messages"}
    )
    assert result["key"].startswith("0|com.whatsapp|")
    newest = (await sim(client).notifications())[0]
    assert (newest.key, newest.title, newest.text) == (result["key"], "Family 👪", "3 new messages")
    assert await client.fail("SIM_POST_NOTIFICATION", {"package": ""}) == "INVALID_PARAMS"


async def test_incoming_call_rings_and_end_call_declines(client: Client) -> None:
    await client.ok("OPEN_APP", {"package": MESSAGES})
    rang = await client.ok("SIM_INCOMING_CALL", {"from": "+1 212 555 0199"})
    assert rang == {"number": "+1 212 555 0199", "state": "ringing", "via": "sim"}
    state = await sim(client).call_state()
    assert (state.state, state.number) == ("ringing", "+1 212 555 0199")
    assert await front(client) == (DIALER, "com.android.incallui.InCallActivity")
    assert await texts(client, DIALER + ":id/contactgrid_contact_name") == ["Emma Wilson"]
    assert await texts(client, DIALER + ":id/contactgrid_status_text") == ["Incoming call"]
    # BACK cannot dismiss a ringing call.
    await client.ok("PRESS_KEY", {"key": "BACK"})
    assert (await front(client))[0] == DIALER
    # A second call while one rings is refused.
    assert await client.fail("SIM_INCOMING_CALL", {"from": "+1 555 0100"}) == "UNSUPPORTED"
    assert await client.ok("END_CALL") == {"ended": True, "via": "sim"}
    assert (await sim(client).call_state()).state == "idle"
    assert (await front(client))[0] == MESSAGES
    assert (await client.ok("END_CALL"))["ended"] is False


async def test_incoming_call_answered_by_tapping(client: Client) -> None:
    await client.ok("SIM_INCOMING_CALL", {"from": "72345"})
    await client.ok("TAP", {"text": "Answer"})
    assert (await sim(client).call_state()).state == "offhook"
    assert await texts(client, DIALER + ":id/contactgrid_status_text") == ["On call"]
    await client.ok("TAP", {"description": "End call"})
    assert (await sim(client).call_state()).state == "idle"
    assert (await front(client))[0] == LAUNCHER


async def test_set_screen_then_tap_and_type(client: Client) -> None:
    shown = await client.ok("SIM_SET_SCREEN", {"xml": LOGIN_XML})
    assert shown["nodes"] == 10  # synthetic root + 7 app nodes + 2 status-bar nodes
    assert len(shown["ui_fingerprint"]) == 16
    dump = await client.ok("DUMP_UI", {"format": "json"})
    assert dump["package"] == BANK
    assert dump["ui_fingerprint"] == shown["ui_fingerprint"]
    assert (await front(client))[0] == BANK

    typed = await client.ok("TYPE_TEXT", {"resource_id": "username", "text": "zoë@example.com"})
    assert (typed["read_back"], typed["verified"]) == ("zoë@example.com", True)
    assert typed["field"]["resource_id"] == "username"  # the bank's own id, short
    assert (await one(client, resource_id=BANK + ":id/username"))["focused"] is True
    # A password field never shows its text back.
    secret = await client.ok("TYPE_TEXT", {"field_text": "Password", "text": "hunter2 🔑"})
    assert secret["verified"] is False
    assert secret["verify_error"] == "password fields do not show their text"
    assert secret["field"]["resource_id"] == "password"
    # Focus moved: the username field kept its text and lost focus.
    username = await one(client, resource_id=BANK + ":id/username")
    assert (username["text"], username["focused"]) == ("zoë@example.com", False)
    # The focused field, without a selector; appending.
    more = await client.ok("TYPE_TEXT", {"resource_id": "username", "text": ".au", "clear": "false"})
    assert (more["read_back"], more["verified"]) == ("zoë@example.com.au", True)

    tapped = await client.ok("TAP", {"text": "Sign in"})
    assert tapped["element"]["text"] == "Sign in" and "resource_id" not in tapped["element"]  # labelled
    assert (tapped["x"], tapped["y"]) == (540, 1030)
    sign_in = await one(client, text="Sign in")
    by_point = await client.ok("TAP", {"x": str(center(sign_in)[0]), "y": str(center(sign_in)[1])})
    assert by_point["element"] is None
    # BACK leaves a scenario screen.
    await client.ok("PRESS_KEY", {"key": "BACK"})  # hides the keyboard
    await client.ok("PRESS_KEY", {"key": "BACK"})
    assert (await front(client))[0] == LAUNCHER


async def test_set_screen_accepts_a_bare_node_root(client: Client) -> None:
    xml = (
        '<node index="0" text="Only me" resource-id="x:id/only" class="android.widget.TextView" '
        'package="x" content-desc="" bounds="[0,0][1080,200]" />'
    )
    shown = await client.ok("SIM_SET_SCREEN", {"xml": xml})
    assert shown["nodes"] == 1
    assert (await one(client, resource_id="x:id/only"))["text"] == "Only me"


@pytest.mark.parametrize(
    ("xml", "fragment"),
    [
        ("<hierarchy><node text='unclosed'></hierarchy>", "not a uiautomator hierarchy"),
        ("this is not xml at all", "not a uiautomator hierarchy"),
        ("<html><body><p>Sign in</p></body></html>", "root element is <html>"),
        ("<window><node text='x' /></window>", "root element is <window>"),
        (
            '<?xml version="1.0"?><!DOCTYPE hierarchy [<!ENTITY x "boom">]>'
            '<hierarchy><node text="&x;" /></hierarchy>',
            "DOCTYPE",
        ),
        ("<!DOCTYPE hierarchy><hierarchy />", "DOCTYPE"),
        ('<hierarchy><node bounds="[0,0][wide,1]" /></hierarchy>', "bad bounds"),
        ('<hierarchy><node index="first" bounds="[0,0][1,1]" /></hierarchy>', "first"),
        ("", "xml"),
    ],
)
async def test_set_screen_refuses_what_is_not_a_hierarchy(client: Client, xml: str, fragment: str) -> None:
    code, message, _ = await failure(client, "SIM_SET_SCREEN", {"xml": xml})
    assert code == "INVALID_PARAMS"
    assert fragment in message
    assert (await client.ok("DUMP_UI"))["package"] == LAUNCHER  # the screen is untouched


@pytest.mark.parametrize(
    ("action", "params"),
    [
        ("SIM_RECEIVE_SMS", {"from": "+1 555 0100", "body": "hi"}),
        ("SIM_INCOMING_CALL", {"from": "+1 555 0100"}),
    ],
)
async def test_the_from_param_is_spelled_from(client: Client, action: str, params: dict[str, str]) -> None:
    renamed = {("from_" if k == "from" else k): v for k, v in params.items()}
    code, message, _ = await failure(client, action, renamed)
    assert code == "INVALID_PARAMS"
    assert "unknown param(s) from_" in message and "from" in message.split("allowed: ")[1]
    missing = {k: v for k, v in params.items() if k != "from"}
    code, message, _ = await failure(client, action, missing)
    assert code == "INVALID_PARAMS"
    assert "from" in message
    result = await client.ok(action, params)
    assert result["via"] == "sim"


@pytest.mark.parametrize("action", ["SIM_RECEIVE_SMS", "SIM_INCOMING_CALL"])
async def test_a_sender_that_is_not_a_number_is_invalid_params(client: Client, action: str) -> None:
    params = {"from": "Alice", "body": "hi"} if action == "SIM_RECEIVE_SMS" else {"from": "Alice"}
    code, message, _ = await failure(client, action, params)
    assert code == "INVALID_PARAMS"
    assert "not a phone number" in message


SEARCH_XML = (
    "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
    '<node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.example.shop" '
    'content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" '
    'focused="false" scrollable="false" long-clickable="false" password="false" selected="false" '
    'bounds="[0,0][1080,2400]">'
    '<node index="0" text="Search products" resource-id="com.example.shop:id/search_src_text" '
    'class="android.widget.AutoCompleteTextView" package="com.example.shop" content-desc="" '
    'checkable="false" checked="false" clickable="true" enabled="true" focusable="true" focused="true" '
    'scrollable="false" long-clickable="true" password="false" selected="false" '
    'bounds="[40,160][1040,280]" />'
    "</node></hierarchy>"
)


async def test_an_autocomplete_field_is_a_text_field(client: Client) -> None:
    """AutoCompleteTextView (search boxes, address fields) extends EditText on Android."""
    await client.ok("SIM_SET_SCREEN", {"xml": SEARCH_XML})
    typed = await client.ok("TYPE_TEXT", {"text": "running shoes"})
    assert typed["field"]["resource_id"] == "search_src_text"
    assert (typed["read_back"], typed["verified"]) == ("running shoes", True)
    assert (await client.ok("CLEAR_TEXT", {"resource_id": "search_src_text"}))["verified"] is True
