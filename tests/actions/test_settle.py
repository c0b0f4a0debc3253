"""Settling: every UI action waits for the screen to stop changing and says what changed (sim)."""

from __future__ import annotations

import itertools
import os
import types
from pathlib import Path
from typing import Any

import pytest

from phoneuse_runtime.device.sim import widgets as sim_widgets
from phoneuse_runtime.kernel.limits import SETTLE_CHANGES_MAX, SETTLE_DEFAULT_MS, SETTLE_MAX_MS
from phoneuse_runtime.screen.refs import element_refs
from phoneuse_runtime.screen.selector import Selector
from phoneuse_runtime.screen.settle import Changes, changes, steady_fingerprint
from phoneuse_runtime.screen.ui import parse_hierarchy

from ..conftest import Client, ServerFactory
from .conftest import CHROME, CONTACTS, LAUNCHER, LOGIN_XML, SETTINGS, center, failure, one

SETTLE_KEYS = {"settle", "ui_fingerprint", "changes"}


async def _fingerprint(client: Client) -> str:
    dump = await client.ok("DUMP_UI")
    fp: str = dump["ui_fingerprint"]
    return fp


async def test_a_tap_that_opens_an_app_settles_and_gives_the_new_screen_in_compact_form(
    client: Client,
) -> None:
    x, y = center(await one(client, text="Chrome", package=LAUNCHER))
    tapped = await client.ok("TAP", {"x": str(x), "y": str(y)})
    settle = tapped["settle"]
    # The sim draws at once: the first two looks after the tap agree.
    assert settle == {
        "settled": True,
        "waited_ms": settle["waited_ms"],
        "looks": 2,
        "bound_ms": SETTLE_DEFAULT_MS,
    }
    assert tapped["ui_fingerprint"] == await _fingerprint(client)
    account = tapped["changes"]
    # Another app in front: the launcher's elements only counted, Chrome's screen as DUMP_UI's
    # compact form writes it (the status bar left out), not as objects.
    assert (account["app"], account["was_app"]) == (CHROME, LAUNCHER)
    assert "appeared" not in account and "went" not in account
    assert account["went_more"] >= 1
    dump = (await client.ok("DUMP_UI", {"max_elements": "1000"}))["screen"].splitlines()
    lines = account["screen"].splitlines()
    assert lines and set(lines) <= set(dump)  # the same lines, the same refs
    assert not any(line.startswith("==") or '"12:' in line for line in lines)
    url_bar = next(line for line in lines if "#url_bar" in line)
    # TAP ref= on a ref the account gave, with no DUMP_UI between.
    await client.ok("SIM_SET_SCREEN", {"xml": LOGIN_XML})
    await client.ok("OPEN_APP", {"package": CHROME})
    again = await client.ok("TAP", {"ref": url_bar.split()[0]})
    assert again["element"] == {
        "ref": url_bar.split()[0],
        "text": again["element"]["text"],
        "resource_id": "url_bar",
    }


async def test_rows_coming_within_an_app_are_named_as_the_compact_form_names_them(
    client: Client,
) -> None:
    await client.ok("SIM_SET_SCREEN", {"xml": LOGIN_XML})
    await client.ok("DUMP_UI")
    typed = await client.ok("TYPE_TEXT", {"resource_id": "username", "text": "ana"})
    account = typed["changes"]
    assert "screen" not in account and "app" not in account  # the same screen, one field changed
    field = next(c for c in account["changed"] if c.get("resource_id") == "username")
    # A text field keeps its id, short as `#username` in DUMP_UI; the package prefix dropped.
    assert f"{field['ref']} input " in (await client.ok("DUMP_UI"))["screen"]
    for entry in account["changed"]:
        assert ":id/" not in entry.get("resource_id", "")
        assert all(v not in ("", None) for k, v in entry.items() if k != "was")


async def test_toggling_a_setting_reports_the_switch_and_its_summary_as_changed(
    make_client: ServerFactory,
) -> None:
    client = await make_client(owner_apps=frozenset())  # Settings is the owner's by default
    await client.ok("OPEN_APP", {"package": SETTINGS})
    switch = (await client.ok("DUMP_UI", {"format": "json"}))["elements"]
    wifi = next(e for e in switch if e["resource_id"] == "android:id/switch_widget")
    x, y = center(wifi)
    tapped = await client.ok("TAP", {"x": str(x), "y": str(y)})
    assert tapped["settle"]["settled"] is True
    changed = tapped["changes"]["changed"]
    assert all(c.pop("ref") for c in changed)  # each with its ref on the settled screen
    assert {
        "resource_id": "android:id/switch_widget",
        "checked": not wifi["checked"],
        "was": {"checked": wifi["checked"]},
    } in changed
    assert "appeared" not in tapped["changes"] and "went" not in tapped["changes"]
    assert tapped["ui_fingerprint"] == await _fingerprint(client)


async def test_typing_reports_the_field_text_that_changed(client: Client) -> None:
    await client.ok("SIM_SET_SCREEN", {"xml": LOGIN_XML})
    typed = await client.ok("TYPE_TEXT", {"resource_id": "com.example.bank:id/username", "text": "ana"})
    changed = typed["changes"]["changed"]
    field = next(c for c in changed if c.get("resource_id") == "username")
    assert field["text"] == "ana" and "text" in field["was"]
    assert typed["ui_fingerprint"] == await _fingerprint(client)
    cleared = await client.ok("CLEAR_TEXT", {})
    assert cleared["settle"]["settled"] is True
    field = next(c for c in cleared["changes"]["changed"] if c.get("resource_id") == "username")
    assert field["was"]["text"] == "ana"
    assert cleared["ui_fingerprint"] == await _fingerprint(client)


@pytest.mark.parametrize(
    ("action", "params"),
    [
        ("PRESS_KEY", {"key": "HOME"}),
        ("OPEN_APP", {"package": CONTACTS}),
        ("OPEN_URL", {"url": "https://example.com/"}),
        ("SWIPE", {"direction": "up"}),
        ("SCROLL", {}),
        ("LONG_PRESS", {"x": "10", "y": "1000"}),
        ("CLOSE_APP", {"package": CHROME}),
        ("START_INTENT", {"action": "android.intent.action.VIEW", "data": "https://example.com/a"}),
    ],
)
async def test_every_ui_action_settles(client: Client, action: str, params: dict[str, str]) -> None:
    result = await client.ok(action, params)
    assert result["settle"]["settled"] is True
    assert result["ui_fingerprint"] == await _fingerprint(client)
    assert "changes" in result


async def test_settle_ms_0_skips_settling(client: Client) -> None:
    x, y = center(await one(client, text="Chrome", package=LAUNCHER))
    tapped = await client.ok("TAP", {"x": str(x), "y": str(y), "settle_ms": "0"})
    assert tapped == {"x": x, "y": y, "element": None, "via": "sim"}


async def test_a_screen_that_keeps_moving_ends_at_the_bound_unsettled(client: Client) -> None:
    await client.ok("SIM_SET_SCREEN", {"xml": LOGIN_XML, "animate": "true"})
    tapped = await client.ok("TAP", {"x": "10", "y": "1000", "settle_ms": "200"})
    settle = tapped["settle"]
    assert settle["settled"] is False and settle["bound_ms"] == 200 and settle["looks"] >= 2
    # What it saw last is reported, the frame counter included.
    assert [set(c["was"]) for c in tapped["changes"]["changed"]] == [{"description"}]


async def test_near_the_deadline_settling_stops_unsettled_not_timeout(client: Client) -> None:
    await client.ok("SIM_SET_SCREEN", {"xml": LOGIN_XML, "animate": "true"})
    tapped = await client.ok("TAP", {"x": "10", "y": "1000", "settle_ms": str(SETTLE_MAX_MS)}, timeout_ms=300)
    assert tapped["settle"]["settled"] is False and tapped["settle"]["bound_ms"] == SETTLE_MAX_MS


async def test_the_status_bar_clock_does_not_keep_a_screen_from_settling(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    minutes = itertools.count()
    clock = types.SimpleNamespace(strftime=lambda _fmt: f"12:{next(minutes) % 60:02d}")
    monkeypatch.setattr(sim_widgets, "time", clock)
    await client.ok("OPEN_APP", {"package": CONTACTS})
    result = await client.ok("PRESS_KEY", {"key": "VOLUME_UP"})
    assert result["settle"]["settled"] is True and result["settle"]["looks"] == 2
    assert "changes" not in result or not any(
        "12:" in str(entry) for part in result["changes"].values() if isinstance(part, list) for entry in part
    )


@pytest.mark.parametrize("value", ["-1", str(SETTLE_MAX_MS + 1), "soon"])
async def test_a_bad_settle_ms_is_invalid_params(client: Client, value: str) -> None:
    code, message, _ = await failure(client, "TAP", {"x": "1", "y": "1", "settle_ms": value})
    assert code == "INVALID_PARAMS" and "settle_ms" in message


async def test_dump_ui_takes_no_settle_ms(client: Client) -> None:
    code, _, _ = await failure(client, "DUMP_UI", {"settle_ms": "0"})
    assert code == "INVALID_PARAMS"


def _screen(rows: list[tuple[str, str]]) -> Any:
    nodes = "".join(
        f'<node index="{i}" text="{text}" resource-id="{rid}" class="android.widget.TextView" '
        f'package="app" content-desc="" bounds="[0,{i * 10}][100,{i * 10 + 10}]" />'
        for i, (text, rid) in enumerate(rows)
    )
    return parse_hierarchy(
        f'<hierarchy rotation="0"><node index="0" text="" resource-id="" class="android.widget.FrameLayout" '
        f'package="app" content-desc="" bounds="[0,0][100,2000]">{nodes}</node></hierarchy>'
    )


def test_the_account_is_bounded_and_counts_the_rest() -> None:
    before = _screen([])
    after = _screen([(f"row {i}", "") for i in range(SETTLE_CHANGES_MAX + 5)])
    account = changes(before, after)
    assert len(account.appeared) == SETTLE_CHANGES_MAX and account.appeared_more == 5
    back = changes(after, before)
    assert len(back.went) == SETTLE_CHANGES_MAX and back.went_more == 5


def test_a_text_changed_in_place_is_one_change_and_equal_rows_count_twice() -> None:
    before = _screen([("3 unread", "app:id/count"), ("Hi", ""), ("Hi", "")])
    after = _screen([("4 unread", "app:id/count"), ("Hi", ""), ("Hi", ""), ("Hi", "")])
    account = changes(before, after)
    assert [c.model_dump(exclude_defaults=True, exclude={"ref"}) for c in account.changed] == [
        {"text": "4 unread", "was": {"text": "3 unread"}}  # labelled: no id, as in the compact form
    ]
    count = Selector(text="4 unread").find(after)
    assert count is not None and account.changed[0].ref == element_refs(after)[id(count)]
    assert [a.text for a in account.appeared] == ["Hi"] and not account.went


def _app(package: str, rows: list[tuple[str, str]]) -> Any:
    nodes = "".join(
        f'<node index="{i}" text="{text}" resource-id="{rid}" class="android.widget.Button" clickable="true" '
        f'package="{package}" content-desc="" bounds="[0,{i * 10}][100,{i * 10 + 10}]" />'
        for i, (text, rid) in enumerate(rows)
    )
    return parse_hierarchy(
        f'<hierarchy rotation="0"><node index="0" text="" resource-id="" class="android.widget.FrameLayout" '
        f'package="{package}" content-desc="" bounds="[0,0][100,2000]">{nodes}</node></hierarchy>'
    )


def test_ids_are_short_for_the_apps_own_package_and_only_where_they_name_the_element() -> None:
    before = _app("com.app", [])
    after = _app("com.app", [("", "com.app:id/send"), ("", "android:id/button1"), ("OK", "com.app:id/ok")])
    account = changes(before, after)
    assert [a.model_dump(exclude_defaults=True, exclude={"ref"}) for a in account.appeared] == [
        {"resource_id": "send"},
        {"resource_id": "android:id/button1"},  # not the app's own: whole
        {"text": "OK"},  # its label names it
    ]


def test_another_app_in_front_gives_its_screen_and_counts_what_went() -> None:
    before = _app("com.old", [(f"old {i}", "") for i in range(SETTLE_CHANGES_MAX + 3)])
    after = _app("com.new", [("Hello", ""), ("", "com.new:id/go")])
    account = changes(before, after)
    assert (account.app, account.was_app) == ("com.new", "com.old")
    assert not account.appeared and not account.went
    assert account.went_more == SETTLE_CHANGES_MAX + 3
    refs = element_refs(after)
    hello, go = Selector(text="Hello").find(after), Selector(resource_id="com.new:id/go").find(after)
    assert hello is not None and go is not None
    assert account.screen.splitlines() == [
        f'{refs[id(hello)]} button "Hello" @50,5',
        f"{refs[id(go)]} button #go @50,15",
    ]


def test_most_of_a_screen_changing_in_one_app_gives_the_screen() -> None:
    before = _app("com.app", [(f"list {i}", "") for i in range(10)])
    after = _app("com.app", [(f"detail {i}", "") for i in range(12)])
    account = changes(before, after)
    assert account.app == "" and account.went_more == 10 and not account.appeared
    assert len(account.screen.splitlines()) == 12
    # A few rows more is no new screen.
    more = changes(before, _app("com.app", [(f"list {i}", "") for i in range(14)]))
    assert [a.text for a in more.appeared] == [f"list {i}" for i in range(10, 14)] and not more.screen
    # Nor a text changing on a screen of two: that stays a change, with what it was.
    small = changes(_app("com.app", [("Start", ""), ("", "com.app:id/x")]), _app("com.app", [("Stop", "")]))
    assert not small.screen and [(c.text, c.was) for c in small.changed] == [("Stop", {"text": "Start"})]
    # The smallest new screen: three elements, all new, none of the old left.
    three = changes(_app("com.app", [("a", "")]), _app("com.app", [("b", ""), ("c", ""), ("d", "")]))
    assert three.screen.count("\n") == 2 and three.went_more == 1 and not three.changed


# The real captures sit in shared/ beside the checkout (a worktree's is one level further up).
REPO = Path(__file__).resolve().parents[2]
REALDATA = next(
    (p for p in (d / "shared" / "realdata" / "uidump" for d in REPO.parents[:2]) if p.is_dir()),
    REPO.parent / "shared" / "realdata" / "uidump",
)
MULTIWINDOW = [
    "u2-multiwindow_brella_webview_1080x2400.xml",
    "u2-multiwindow_swapcard_1080x2400_217nodes.xml",
]


@pytest.mark.parametrize("name", MULTIWINDOW)
def test_a_real_status_bar_changing_changes_nothing_the_account_sees(name: str) -> None:
    path = Path(os.environ.get("PHONEUSE_REALDATA", REALDATA)) / name
    if not path.exists():
        pytest.skip(f"the real captures ({path.parent}) are not on this machine")
    xml = path.read_text(encoding="utf-8")
    before = parse_hierarchy(xml)
    after = parse_hierarchy(xml)
    bars = [w for w in after.children if w.package == "com.android.systemui"]
    assert bars  # the status bar's window, a strip over the app
    for node in bars[0].walk():  # the clock turns, a notification icon comes
        node.text, node.description = node.text + "1", node.description + "!"
    assert steady_fingerprint(before) == steady_fingerprint(after)
    assert changes(before, after) == Changes()
    # While a change in the app's own window is seen.
    app = next(w for w in after.children if w.package != "com.android.systemui")
    named = next(n for n in app.walk() if n.text)
    was, named.text = named.text, named.text + " (edited)"
    account = changes(before, after)
    assert [(c.text, c.was) for c in account.changed] == [(named.text, {"text": was})]
    assert steady_fingerprint(before) != steady_fingerprint(after)


@pytest.mark.parametrize("name", MULTIWINDOW)
def test_a_keyboard_window_coming_over_a_real_app_is_no_app_switch(name: str) -> None:
    path = Path(os.environ.get("PHONEUSE_REALDATA", REALDATA)) / name
    if not path.exists():
        pytest.skip(f"the real captures ({path.parent}) are not on this machine")
    after = parse_hierarchy(path.read_text(encoding="utf-8"))
    keyboard = next((w for w in after.children if "inputmethod" in w.package), None)
    before = parse_hierarchy(path.read_text(encoding="utf-8"))
    if keyboard is None:  # give this one a keyboard, over the lower part of the screen
        left, _, right, bottom = after.bounds
        keyboard = parse_hierarchy(
            f'<hierarchy><node class="android.widget.FrameLayout" package="com.example.ime" '
            f'bounds="[{left},{bottom // 2}][{right},{bottom}]"><node class="android.widget.Button" '
            f'text="q" clickable="true" package="com.example.ime" '
            f'bounds="[0,{bottom // 2}][90,{bottom // 2 + 90}]"/>'
            f"</node></hierarchy>"
        ).children[0]
        after.children.append(keyboard)
    else:
        before.children = [w for w in before.children if "inputmethod" not in w.package]
    account = changes(before, after)
    assert account.app == "" and account.was_app == ""
