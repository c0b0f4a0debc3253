"""UI actions end to end: touch, scroll, typing, keys, waiting and reading the screen of the sim."""

from __future__ import annotations

import asyncio
import base64
import io
import itertools
import types
import xml.etree.ElementTree as ET
from typing import Any

import pytest
from PIL import Image

from phoneuse_runtime.device.sim import widgets as sim_widgets

from ..conftest import Client
from .conftest import (
    CHROME,
    CLOCK,
    CONTACTS,
    LAUNCHER,
    LOGIN_XML,
    MESSAGES,
    SYSTEMUI,
    URL_BAR,
    WHATSAPP,
    center,
    elements,
    failure,
    first_look,
    front,
    one,
    own,
    texts,
)

ELEMENT_KEYS = {
    "text",
    "resource_id",
    "description",
    "class",
    "package",
    "bounds",
    "clickable",
    "focused",
    "enabled",
    "checked",
    "scrollable",
}


async def _fingerprint_and_clock(client: Client) -> tuple[str, str]:
    dump = await client.ok("DUMP_UI", {"format": "json"})
    clock = [e["text"] for e in dump["elements"] if e["resource_id"] == "com.android.systemui:id/clock"]
    return dump["ui_fingerprint"], "".join(clock)


async def _add_contacts(client: Client, count: int) -> list[str]:
    """Contacts that sort after every seed contact, so they start below the fold of the Contacts list."""
    names = [f"Zed {i:02d}" for i in range(1, count + 1)]
    for i, name in enumerate(names):
        await client.ok("ADD_CONTACT", {"name": name, "phone": f"+1 555 01{i:02d}"})
    return names


# --- TAP / LONG_PRESS ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("selector", "label", "package"),
    [
        ({"text": "Chrome"}, "Chrome", CHROME),
        ({"description": "Clock"}, "Clock", CLOCK),
        # Index 0 of the launcher's TextViews is the "At a glance" card; the icons follow in order.
        ({"class_name": "android.widget.TextView", "index": "1"}, "Messages", MESSAGES),
        ({"class_name": "TextView", "index": "8"}, "WhatsApp", WHATSAPP),
        # (Settings, one of the owner's controls, is refused: tests/redteam/test_owner_entry_points.py)
        ({"text": "Contacts", "class_name": "TextView", "index": "0"}, "Contacts", CONTACTS),
    ],
)
async def test_tap_by_selector_opens_the_app_from_the_launcher(
    client: Client, selector: dict[str, str], label: str, package: str
) -> None:
    assert (await front(client))[0] == LAUNCHER
    icon = await one(client, text=label, package=LAUNCHER)
    screen = (await client.ok("DUMP_UI"))["screen"].splitlines()
    result = await client.ok("TAP", selector)
    assert (result["x"], result["y"]) == center(icon)
    # Named as the compact form names it: its ref on the screen the agent read, and its label
    # (a labelled icon: no id).
    element = result["element"]
    assert element["text"] == label and set(element) <= {"ref", "text", "description"}
    line = next(line for line in screen if line.startswith(element["ref"] + " "))
    assert f'"{label}"' in line
    assert result["via"] == "sim"
    assert (await front(client))[0] == package


async def test_tap_by_resource_id_short_and_full_form(client: Client) -> None:
    await client.ok("OPEN_APP", {"package": MESSAGES})
    short = await client.ok("TAP", {"resource_id": "start_chat_fab"})
    assert short["element"]["text"] == "Start chat" and "resource_id" not in short["element"]
    assert await front(client) == (
        MESSAGES,
        "com.google.android.apps.messaging.ui.contact.ContactPickerActivity",
    )
    await client.ok("PRESS_KEY", {"key": "BACK"})  # hides the keyboard
    await client.ok("PRESS_KEY", {"key": "BACK"})
    assert (await front(client))[1].endswith("ConversationListActivity")
    full = await client.ok("TAP", {"resource_id": MESSAGES + ":id/start_chat_fab"})
    assert full["element"] == short["element"]
    assert (await front(client))[1].endswith("ContactPickerActivity")
    # A short id matches the whole name after ":id/", never a suffix of it.
    await client.ok("PRESS_KEY", {"key": "HOME"})
    await client.ok("OPEN_APP", {"package": MESSAGES})
    code, message, _ = await failure(client, "TAP", {"resource_id": "chat_fab"})
    assert code == "ELEMENT_NOT_FOUND"
    assert "resource_id='chat_fab'" in message


async def test_tap_and_long_press_by_point(client: Client) -> None:
    icon = await one(client, text="Chrome", package=LAUNCHER)
    x, y = center(icon)
    tapped = await client.ok("TAP", {"x": str(x), "y": str(y)})
    assert own(tapped) == {"x": x, "y": y, "element": None, "via": "sim"}
    assert (await front(client))[0] == CHROME
    bar = await one(client, resource_id=URL_BAR)
    assert bar["focused"] is False
    bx, by = center(bar)
    pressed = await client.ok("LONG_PRESS", {"x": str(bx), "y": str(by), "duration_ms": "30"})
    assert own(pressed) == {"x": bx, "y": by, "element": None, "via": "sim"}
    assert (await one(client, resource_id=URL_BAR))["focused"] is True


async def test_long_press_by_selector(client: Client) -> None:
    await client.ok("OPEN_APP", {"package": CHROME})
    result = await client.ok("LONG_PRESS", {"resource_id": "url_bar", "duration_ms": "30"})
    assert result["element"]["resource_id"] == "url_bar"  # a field: its id, short (Chrome's own)
    assert (result["x"], result["y"]) == center(await one(client, resource_id=URL_BAR))
    assert (await one(client, resource_id=URL_BAR))["focused"] is True


@pytest.mark.parametrize(
    ("action", "params", "fragment"),
    [
        ("TAP", {"text": "No such button"}, "text='No such button'"),
        ("TAP", {"description": "Chrome", "class_name": "Button"}, "class_name='Button'"),
        ("LONG_PRESS", {"resource_id": "nothing_here"}, "resource_id='nothing_here'"),
        ("TAP", {"text": "Not yet", "wait_ms": "150"}, "text='Not yet'"),
    ],
)
async def test_selector_matching_nothing_is_element_not_found(
    client: Client, action: str, params: dict[str, str], fragment: str
) -> None:
    code, message, details = await failure(client, action, params)
    assert code == "ELEMENT_NOT_FOUND"
    assert fragment in message
    assert details == {}
    assert (await front(client))[0] == LAUNCHER


async def test_index_out_of_range_is_element_not_found_and_says_so(client: Client) -> None:
    code, message, _ = await failure(client, "TAP", {"text": "Chrome", "index": "3"})
    assert code == "ELEMENT_NOT_FOUND"
    assert "index=3" in message
    assert "1 matched, index out of range" in message
    code, message, _ = await failure(client, "TAP", {"class_name": "TextView", "index": "40"})
    assert code == "ELEMENT_NOT_FOUND"
    assert "index out of range" in message
    assert (await front(client))[0] == LAUNCHER


async def test_wait_ms_finds_an_element_that_appears_later(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    await client.ok("OPEN_APP", {"package": MESSAGES})
    sender = "+1 555 0123"
    assert await client.fail("TAP", {"text": sender}) == "ELEMENT_NOT_FOUND"
    looked = first_look(monkeypatch, client)

    async def arrive() -> dict[str, Any]:
        await looked.wait()  # the TAP has looked once and found nothing
        return await client.ok("SIM_RECEIVE_SMS", {"from": sender, "body": "Your table is ready"})

    tapped, received = await asyncio.gather(client.ok("TAP", {"text": sender, "wait_ms": "5000"}), arrive())
    assert tapped["element"]["text"] == sender and "resource_id" not in tapped["element"]
    package, activity = await front(client)
    assert (package, activity.rsplit(".", 1)[-1]) == (MESSAGES, "ConversationActivity")
    assert await texts(client, MESSAGES + ":id/message_text") == ["Your table is ready"]
    assert received["message_id"]


# --- SWIPE / SCROLL -----------------------------------------------------------------------------


async def test_swipe_by_coordinates_pulls_down_the_shade(client: Client) -> None:
    params = {"x1": "540", "y1": "10", "x2": "540", "y2": "1400", "duration_ms": "20"}
    result = await client.ok("SWIPE", params)
    assert own(result) == {"x1": 540, "y1": 10, "x2": 540, "y2": 1400, "duration_ms": 20, "via": "sim"}
    assert (await front(client))[0] == SYSTEMUI
    assert await texts(client, SYSTEMUI + ":id/no_notifications") == ["No notifications"]
    await client.ok("PRESS_KEY", {"key": "BACK"})
    assert (await front(client))[0] == LAUNCHER


@pytest.mark.parametrize(
    ("direction", "distance", "path"),
    [
        ("up", "0.5", (540, 1800, 540, 600)),
        ("down", "0.5", (540, 600, 540, 1800)),
        ("left", "0.5", (810, 1200, 270, 1200)),
        ("right", "0.5", (270, 1200, 810, 1200)),
        ("up", "0.25", (540, 1500, 540, 900)),
    ],
)
async def test_swipe_by_direction_moves_the_finger_that_way(
    client: Client, direction: str, distance: str, path: tuple[int, int, int, int]
) -> None:
    result = await client.ok("SWIPE", {"direction": direction, "distance": distance, "duration_ms": "10"})
    assert (result["x1"], result["y1"], result["x2"], result["y2"]) == path
    assert result["duration_ms"] == 10


async def test_swipe_up_reveals_later_rows_and_down_goes_back(client: Client) -> None:
    await _add_contacts(client, 12)
    await client.ok("OPEN_APP", {"package": CONTACTS})
    names = CONTACTS + ":id/cliv_name_textview"
    top = await texts(client, names)
    assert top[0] == "Alice Johnson"
    await client.ok("SWIPE", {"direction": "up", "distance": "0.5", "duration_ms": "10"})
    scrolled = await texts(client, names)
    assert scrolled[0] != "Alice Johnson"
    assert scrolled[-1] > top[-1]  # later names came into view
    await client.ok("SWIPE", {"direction": "down", "distance": "0.5", "duration_ms": "10"})
    assert await texts(client, names) == top


async def test_scroll_down_until_an_offscreen_contact_is_visible(client: Client) -> None:
    names = await _add_contacts(client, 15)
    await client.ok("OPEN_APP", {"package": CONTACTS})
    last = names[-1]
    assert await elements(client, text=last) == []
    found = await client.ok("SCROLL", {"text": last})
    assert found["swipes"] >= 1
    assert found["element"]["text"] == last
    assert found["element"]["resource_id"] == CONTACTS + ":id/cliv_name_textview"
    shown = await one(client, text=last)
    assert shown["bounds"] == found["element"]["bounds"]
    # Tapping what SCROLL found opens that contact.
    await client.ok("TAP", {"text": last})
    assert await texts(client, CONTACTS + ":id/large_title") == [last]
    await client.ok("PRESS_KEY", {"key": "BACK"})
    # Already visible: no swipe at all.
    again = await client.ok("SCROLL", {"text": last})
    assert (again["swipes"], again["element"]["text"]) == (0, last)
    # At the end, something that is not in the list: the end is reached and nothing matches.
    code, message, _ = await failure(client, "SCROLL", {"text": "Nobody Here"})
    assert code == "ELEMENT_NOT_FOUND"
    assert "text='Nobody Here'" in message and "end" in message
    back_up = await client.ok("SCROLL", {"direction": "up", "text": "Alice Johnson"})
    assert back_up["swipes"] >= 1 and back_up["element"]["text"] == "Alice Johnson"


async def test_scroll_without_selector_moves_one_page_and_reports_the_end(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The status bar's clock shows another minute at every look, as when a minute turns
    # mid-scroll: the end is still the end.
    minutes = itertools.count()
    clock = types.SimpleNamespace(strftime=lambda _fmt: f"12:{next(minutes) % 60:02d}")
    monkeypatch.setattr(sim_widgets, "time", clock)
    await client.ok("OPEN_APP", {"package": CONTACTS})  # eight seed contacts fit on one screen
    result = await client.ok("SCROLL", {})
    assert own(result) == {"swipes": 1, "reached_end": True, "element": None, "via": "sim"}
    code, _, _ = await failure(client, "SCROLL", {"text": "Nobody Here", "max_swipes": "3"})
    assert code == "ELEMENT_NOT_FOUND"


# --- TYPE_TEXT / CLEAR_TEXT ---------------------------------------------------------------------

UNICODE_SAMPLES = [
    "Hello 👋🏽 family 👩‍👩‍👧‍👦 flags 🇯🇵🇧🇷",
    "日本語のテキスト 中文 한국어",
    "مرحبا بالعالم שלום",
    "e\u0301 n\u0303 a\u0308 — café naïve Zoë",
    "He said \"hi\" & 'bye' <b>bold</b> ]]> &amp;",
    "$(rm -rf /); `id` && echo $HOME | cat > /dev/null; %s %d {0} \\n \\u0000",
    "line one\nline two\n\nline four",
    "tab\there and a CR\r\nthere",
]


@pytest.mark.parametrize("text", UNICODE_SAMPLES)
async def test_type_text_round_trips_any_unicode(client: Client, text: str) -> None:
    await client.ok("OPEN_APP", {"package": CHROME})
    result = await client.ok("TYPE_TEXT", {"resource_id": "url_bar", "text": text})
    assert result["typed"] == text
    assert result["read_back"] == text
    assert result["verified"] is True, result["verify_error"]
    assert result["verify_error"] is None
    assert result["submitted"] is False
    assert result["field"]["resource_id"] == "url_bar" and result["field"]["text"] == text
    bar = await one(client, resource_id=URL_BAR)
    assert (bar["text"], bar["focused"]) == (text, True)


async def test_type_text_into_the_field_showing_a_given_text(client: Client) -> None:
    await client.ok("OPEN_APP", {"package": CHROME})
    # An empty field shows its hint, as Android reports it.
    by_hint = await client.ok("TYPE_TEXT", {"field_text": "Search or type URL", "text": "first"})
    assert (by_hint["read_back"], by_hint["verified"]) == ("first", True)
    by_text = await client.ok("TYPE_TEXT", {"field_text": "first", "text": "second"})
    assert (by_text["read_back"], by_text["verified"]) == ("second", True)
    assert by_text["field"]["resource_id"] == "url_bar"
    code, _, _ = await failure(client, "TYPE_TEXT", {"field_text": "first", "text": "third"})
    assert code == "ELEMENT_NOT_FOUND"


async def test_type_text_into_the_focused_field_without_selector(client: Client) -> None:
    await client.ok("OPEN_APP", {"package": MESSAGES})
    await client.ok("TAP", {"text": "Start chat"})  # the recipient field has focus
    result = await client.ok("TYPE_TEXT", {"text": "Frank"})
    assert result["field"]["resource_id"] == "recipient_text_view"
    assert (result["read_back"], result["verified"]) == ("Frank", True)
    # The picker filtered on what was typed.
    assert await texts(client, MESSAGES + ":id/contact_name") == ["Frank Okafor"]


async def test_type_text_with_clear_false_appends(client: Client) -> None:
    await client.ok("OPEN_APP", {"package": CHROME})
    # Into an empty field (which shows its hint), appending is just the typed text.
    first = await client.ok("TYPE_TEXT", {"resource_id": "url_bar", "text": "abc", "clear": "false"})
    assert (first["read_back"], first["verified"]) == ("abc", True), first["verify_error"]
    more = await client.ok("TYPE_TEXT", {"resource_id": "url_bar", "text": " déf 🙂", "clear": "false"})
    assert (more["read_back"], more["verified"]) == ("abc déf 🙂", True), more["verify_error"]
    replaced = await client.ok("TYPE_TEXT", {"resource_id": "url_bar", "text": "xyz"})
    assert (replaced["read_back"], replaced["verified"]) == ("xyz", True)


async def test_type_text_the_hint_itself_is_verified(client: Client) -> None:
    await client.ok("OPEN_APP", {"package": CHROME})
    result = await client.ok("TYPE_TEXT", {"resource_id": "url_bar", "text": "Search or type URL"})
    assert (result["read_back"], result["verified"]) == ("Search or type URL", True)


async def test_type_text_without_focused_field_or_selector_is_element_not_found(client: Client) -> None:
    code, message, _ = await failure(client, "TYPE_TEXT", {"text": "hello"})
    assert code == "ELEMENT_NOT_FOUND"
    assert "no text field has focus" in message
    await client.ok("OPEN_APP", {"package": CHROME})  # the omnibox is not focused until tapped
    assert await client.fail("TYPE_TEXT", {"text": "hello"}) == "ELEMENT_NOT_FOUND"
    assert (await one(client, resource_id=URL_BAR))["text"] == "Search or type URL"


@pytest.mark.parametrize(
    ("typed", "url", "title"),
    [
        ("example.com", "https://example.com", "Example Domain"),
        (
            "weather in Paris",
            "https://www.google.com/search?q=weather+in+Paris",
            "weather in Paris - Google Search",
        ),
    ],
)
async def test_type_text_submit_in_chrome_navigates(client: Client, typed: str, url: str, title: str) -> None:
    await client.ok("OPEN_APP", {"package": CHROME})
    result = await client.ok("TYPE_TEXT", {"resource_id": "url_bar", "text": typed, "submit": "true"})
    assert (result["read_back"], result["verified"], result["submitted"]) == (typed, True, True)
    bar = await one(client, resource_id=URL_BAR)
    assert (bar["text"], bar["focused"]) == (url, False)
    page = await elements(client, class_="android.webkit.WebView")
    assert [p["text"] for p in page] == [title]
    assert (await front(client))[0] == CHROME


async def test_clear_text_empties_the_field(client: Client) -> None:
    await client.ok("OPEN_URL", {"url": "https://example.com/"})
    assert (await one(client, resource_id=URL_BAR))["text"] == "https://example.com/"
    result = await client.ok("CLEAR_TEXT", {"resource_id": "url_bar"})
    assert result["verified"] is True
    assert result["field"]["resource_id"] == "url_bar"
    assert result["field"]["text"] == "Search or type URL"  # an empty field shows its hint
    # Clearing the focused field, without a selector.
    await client.ok("TYPE_TEXT", {"text": "typed"})
    again = await client.ok("CLEAR_TEXT", {})
    assert again["verified"] is True
    await client.ok("PRESS_KEY", {"key": "HOME"})
    assert await client.fail("CLEAR_TEXT", {}) == "ELEMENT_NOT_FOUND"


# --- PRESS_KEY ----------------------------------------------------------------------------------


async def test_press_key_back_home_and_keycodes(client: Client) -> None:
    await client.ok("OPEN_URL", {"url": "https://example.com/"})
    await client.ok("OPEN_URL", {"url": "https://www.google.com/"})
    back = await client.ok("PRESS_KEY", {"key": "BACK"})
    assert own(back) == {"key": "BACK", "keycode": 4, "via": "sim"}
    assert (await one(client, resource_id=URL_BAR))["text"] == "https://example.com/"
    home = await client.ok("PRESS_KEY", {"key": "KEYCODE_HOME"})
    assert home["keycode"] == 3
    assert (await front(client))[0] == LAUNCHER
    await client.ok("OPEN_APP", {"package": CHROME})
    numeric = await client.ok("PRESS_KEY", {"key": "3"})
    assert (numeric["key"], numeric["keycode"]) == ("3", 3)
    assert (await front(client))[0] == LAUNCHER
    lower = await client.ok("PRESS_KEY", {"key": " recents "})
    assert lower["keycode"] == 187
    assert await texts(client, LAUNCHER + ":id/title") == ["Chrome"]
    assert (await client.ok("PRESS_KEY", {"key": "keycode_back"}))["keycode"] == 4
    assert await texts(client, LAUNCHER + ":id/title") == []


@pytest.mark.parametrize("key", ["0", "400", "KEYCODE_", "-4", "BACKK"])
async def test_press_key_rejects_unknown_keys(client: Client, key: str) -> None:
    code, message, _ = await failure(client, "PRESS_KEY", {"key": key})
    assert code == "INVALID_PARAMS"
    assert "unknown key" in message


# --- WAIT_FOR -----------------------------------------------------------------------------------


async def test_wait_for_an_element_to_appear(client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    looked = first_look(monkeypatch, client)

    async def show() -> dict[str, Any]:
        await looked.wait()
        return await client.ok("SIM_SET_SCREEN", {"xml": LOGIN_XML})

    waited: dict[str, Any]
    waited, _ = await asyncio.gather(client.ok("WAIT_FOR", {"text": "Sign in", "poll_ms": "20"}), show())
    assert waited["gone"] is False
    assert waited["element"]["resource_id"] == "com.example.bank:id/sign_in"
    assert waited["element"]["class"] == "android.widget.Button"
    assert waited["waited_ms"] >= 0


async def test_wait_for_an_element_to_go(client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    await client.ok("SIM_INCOMING_CALL", {"from": "+1 212 555 0199"})
    assert await texts(client, "com.google.android.dialer:id/contactgrid_status_text") == ["Incoming call"]
    looked = first_look(monkeypatch, client)

    async def decline() -> dict[str, Any]:
        await looked.wait()
        return await client.ok("END_CALL")

    waited, ended = await asyncio.gather(
        client.ok("WAIT_FOR", {"text": "Incoming call", "gone": "true", "poll_ms": "20"}), decline()
    )
    assert (waited["gone"], waited["element"]) == (True, None)
    assert ended["ended"] is True


async def test_wait_for_returns_at_once_when_already_so(client: Client) -> None:
    present = await client.ok("WAIT_FOR", {"description": "Chrome"})
    assert present["element"]["text"] == "Chrome" and present["gone"] is False
    absent = await client.ok("WAIT_FOR", {"text": "Not on screen", "gone": "true"})
    assert (absent["element"], absent["gone"]) == (None, True)
    assert absent["waited_ms"] < 1000


async def test_wait_for_times_out_at_timeout_ms(client: Client) -> None:
    response = await client.execute(
        "WAIT_FOR", {"text": "Chrome", "gone": "true", "poll_ms": "20"}, timeout_ms=400
    )
    assert response.error.startswith("TIMEOUT: ")
    assert "400 ms" in response.error
    assert 380 <= response.duration_ms < 1400
    assert (await front(client))[0] == LAUNCHER


async def test_wait_for_needs_a_selector(client: Client) -> None:
    code, message, _ = await failure(client, "WAIT_FOR", {"gone": "true"})
    assert code == "INVALID_PARAMS"
    assert "selector" in message


# --- SCREENSHOT / DUMP_UI -----------------------------------------------------------------------


def _decode(result: dict[str, Any]) -> Image.Image:
    data = base64.b64decode(result["image_base64"], validate=True)
    assert result["size_bytes"] == len(data)
    image = Image.open(io.BytesIO(data))
    image.load()
    return image


async def test_screenshot_is_one_a_model_can_take(client: Client) -> None:
    # The sim's 1080x2400 PNG is over 1568 px: scaled and sent as JPEG, with the scale back.
    result = await client.ok("SCREENSHOT")
    image = _decode(result)
    assert image.format == "JPEG" and result["format"] == "jpeg"
    assert image.size == (result["width"], result["height"]) == (706, 1568)
    assert (result["original_width"], result["original_height"]) == (1080, 2400)
    assert result["scale"] == round(706 / 1080, 6) and result["size_bytes"] <= 1_000_000
    assert (result["secure"], result["hint"]) == (False, None)
    # The status bar is drawn dark over a light screen.
    assert image.convert("RGB").getpixel((5, 5)) != image.convert("RGB").getpixel((5, 700))
    full = await client.ok("SCREENSHOT", {"format": "png", "max_side": "2400", "max_bytes": "2000000"})
    assert _decode(full).format == "PNG" and (full["width"], full["height"], full["scale"]) == (
        1080,
        2400,
        1.0,
    )


async def test_screenshot_shrinks_to_max_bytes(client: Client) -> None:
    result = await client.ok("SCREENSHOT", {"format": "png", "max_bytes": "20000"})
    assert result["size_bytes"] <= 20_000 and _decode(result).size == (result["width"], result["height"])
    assert result["width"] < 706 and result["scale"] == round(result["width"] / 1080, 6)


async def test_screenshot_jpeg_scaled_by_max_side(client: Client) -> None:
    result = await client.ok("SCREENSHOT", {"format": "jpeg", "quality": "60", "max_side": "480"})
    image = _decode(result)
    assert image.format == "JPEG" and result["format"] == "jpeg"
    assert image.size == (result["width"], result["height"]) == (216, 480)
    assert (result["original_width"], result["original_height"]) == (1080, 2400)
    larger = await client.ok("SCREENSHOT", {"format": "png", "max_side": "4000", "max_bytes": "2000000"})
    assert _decode(larger).size == (1080, 2400)


async def test_dump_ui_elements_shape(client: Client) -> None:
    dump = await client.ok("DUMP_UI", {"format": "json"})
    assert dump["package"] == LAUNCHER
    assert dump["xml"] is None
    assert dump["via"] == "sim"
    assert dump["elements"]
    for element in dump["elements"]:
        assert set(element) == ELEMENT_KEYS
        bounds = element["bounds"]
        assert len(bounds) == 4 and all(type(v) is int for v in bounds)
        assert bounds[0] <= bounds[2] and bounds[1] <= bounds[3]
        assert all(
            type(element[k]) is bool for k in ("clickable", "focused", "enabled", "checked", "scrollable")
        )
    chrome = [e for e in dump["elements"] if e["text"] == "Chrome"]
    assert chrome and chrome[0]["class"] == "android.widget.TextView" and chrome[0]["clickable"] is True


async def test_dump_ui_include_xml_is_parseable(client: Client) -> None:
    await client.ok("OPEN_APP", {"package": MESSAGES})
    dump = await client.ok("DUMP_UI", {"include_xml": "true", "format": "json"})
    root = ET.fromstring(dump["xml"])
    assert root.tag == "hierarchy"
    nodes = list(root.iter("node"))
    assert {n.get("package") for n in nodes} == {MESSAGES, SYSTEMUI}
    xml_texts = {n.get("text") for n in nodes}
    assert {e["text"] for e in dump["elements"]} <= xml_texts
    assert "Alice Johnson" in xml_texts


async def test_ui_fingerprint_follows_the_screen(client: Client) -> None:
    home, home_clock = await _fingerprint_and_clock(client)
    again, again_clock = await _fingerprint_and_clock(client)
    assert again == home or again_clock != home_clock  # only the status-bar clock may have ticked
    await client.ok("TAP", {"text": "Chrome"})
    chrome, _ = await _fingerprint_and_clock(client)
    assert chrome != home
    await client.ok("TYPE_TEXT", {"resource_id": "url_bar", "text": "a"})
    typed, _ = await _fingerprint_and_clock(client)
    assert typed != chrome
    await client.ok("PRESS_KEY", {"key": "HOME"})
    back_home, back_clock = await _fingerprint_and_clock(client)
    assert back_home == home or back_clock != home_clock
    # A key the simulator ignores changes nothing on screen.
    await client.ok("PRESS_KEY", {"key": "VOLUME_UP"})
    same, same_clock = await _fingerprint_and_clock(client)
    assert same == back_home or same_clock != back_clock


async def test_type_text_with_characters_xml_cannot_carry_keeps_the_screen_readable(client: Client) -> None:
    await client.ok("OPEN_APP", {"package": CHROME})
    result = await client.ok("TYPE_TEXT", {"resource_id": "url_bar", "text": "bell\x07 nul\x00 end"})
    # uiautomator's dumper shows such characters as "."; the read-back says the text differs.
    assert result["read_back"] == "bell. nul. end"
    assert result["verified"] is False
    assert "bell. nul. end" in result["verify_error"]
    assert (await one(client, resource_id=URL_BAR))["text"] == "bell. nul. end"
    assert (await client.ok("CLEAR_TEXT", {}))["verified"] is True


async def test_dump_ui_names_the_system_ui_when_only_it_is_shown(client: Client) -> None:
    await client.ok("SWIPE", {"x1": "540", "y1": "10", "x2": "540", "y2": "1400", "duration_ms": "10"})
    assert (await front(client))[0] == SYSTEMUI
    assert (await client.ok("DUMP_UI"))["package"] == SYSTEMUI
    await client.ok("PRESS_KEY", {"key": "BACK"})
    assert (await client.ok("DUMP_UI"))["package"] == LAUNCHER
