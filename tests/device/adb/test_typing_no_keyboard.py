"""TYPE_TEXT on a phone without uiautomator2's keyboard (issue 26 §4): uiautomator2 3.x installs
its AdbKeyboard (com.github.uiautomator/.AdbKeyboard, in app-uiautomator.apk) only on its first
`send_keys`, so many phones have u2.jar but no keyboard. Typing then pastes: the owner's clipboard
read, the text set, checked and pasted, the clipboard put back, and the field read back, in at
most 3 device round trips with settling's look (two JSON-RPC batches; the keyboard is found
missing at connect, with `wm size`). Through gRPC against the fake adbd and phone (which lists no
such input method, as `ime list -s -a` on such a phone) behind the real adb server; streams
counted at the fake adbd, JSON-RPC methods at the fake server."""

from __future__ import annotations

import pytest

from phoneuse_runtime.device.adb.device import AdbDevice
from tests.device.adb.conftest import AdbServe, Served
from tests.fakes import apps, seed
from tests.fakes.phone import FakePhone

KEEP_FIELD = "com.google.android.keep:id/edit_note_text"
NO_SETTLE = {"settle_ms": "0"}  # the typing's own round trips; settling's looks are test_settle's
OWNERS_CLIP = "the owner's copied IBAN DE89 3704 0044 0532 0130 00"
TEXTS = {
    "ascii": "hello world",
    "cjk": "你好\uff0c世界 こんにちは 안녕하세요",
    "emoji": "🚲 👩‍👩‍👧‍👦 🇵🇹 👍🏽",
    "rtl": "مرحبا بالعالم שלום עולם",
    "combining": "e\u0301 a\u0308 n\u0303 \u0915\u094d\u0937",
    "shell": 'it\'s "quoted" $HOME; a & b | c\nsecond line',
}


async def _keep_focused(s: Served) -> None:
    await s.client.ok("OPEN_APP", {"package": seed.KEEP})
    await s.client.ok("TAP", {"resource_id": KEEP_FIELD})  # the field has focus


def _methods(s: Served, since: int) -> list[str]:
    return [call.method for call in s.state.log.rpc[since:]]


def _phone(*, keyboard: bool) -> FakePhone:
    state = seed.default_state()  # u2.jar (pushed at connect) and no AdbKeyboard
    if keyboard:  # what uiautomator2's first send_keys installs: app-uiautomator.apk
        u2 = seed.u2_app_package()
        state.packages[u2.name] = u2
    return FakePhone(state)


@pytest.mark.parametrize("keyboard", [False, True], ids=["no keyboard", "keyboard"])
@pytest.mark.parametrize("name", list(TEXTS))
async def test_typing_takes_at_most_three_round_trips_in_any_script(
    serve_adb: AdbServe, name: str, keyboard: bool
) -> None:
    s = await serve_adb(_phone(keyboard=keyboard))
    await _keep_focused(s)
    s.state.clipboard = OWNERS_CLIP
    text = TEXTS[name]
    for _ in range(2):
        before, rpcs = len(s.opened()), len(s.state.log.rpc)
        typed = await s.client.ok("TYPE_TEXT", {"text": text, **NO_SETTLE})
        streams = s.opened()[before:]
        assert len(streams) <= 3, (streams, _methods(s, rpcs))
        assert typed["via"] == ("uiautomator2 ime" if keyboard else "clipboard paste")
        assert typed["verified"] is True and typed["read_back"] == text
        assert s.state.log.texts[-1].text == text
        assert s.state.clipboard == OWNERS_CLIP  # read before, put back after
    assert [t.text for t in s.state.log.texts].count(text) == 2  # typed once each time


async def test_typing_is_two_batches_and_settling_at_most_one_look_more(serve_adb: AdbServe) -> None:
    s = await serve_adb(_phone(keyboard=False))
    await _keep_focused(s)
    methods = [
        "getClipboard",
        "objInfo",
        "setClipboard",
        "getClipboard",
        "clearTextField",
        "pasteClipboard",
        "setClipboard",
        "dumpWindowHierarchy",  # the read back, and settling's first look
    ]
    before, rpcs = len(s.opened()), len(s.state.log.rpc)
    typed = await s.client.ok("TYPE_TEXT", {"text": "batched", **NO_SETTLE})
    assert typed["read_back"] == "batched"
    # The keyboard was found missing at connect (`ime list`, with `wm size`): no script.
    assert s.opened()[before:] == ["tcp:9008", "tcp:9008"]
    assert _methods(s, rpcs) == methods
    # Settling (its default): its first look is the read back; a second one when it wants it.
    before, rpcs = len(s.opened()), len(s.state.log.rpc)
    typed = await s.client.ok("TYPE_TEXT", {"text": "settled"})
    assert typed["read_back"] == "settled"
    assert len(s.opened()[before:]) <= 3
    assert _methods(s, rpcs)[: len(methods)] == methods


async def test_an_empty_clipboard_stays_empty(serve_adb: AdbServe) -> None:
    s = await serve_adb(_phone(keyboard=False))
    await _keep_focused(s)
    assert s.state.clipboard is None
    typed = await s.client.ok("TYPE_TEXT", {"text": "nothing copied", **NO_SETTLE})
    assert typed["read_back"] == "nothing copied"
    assert s.state.clipboard is None


async def test_typing_after_what_the_field_holds_without_clear(serve_adb: AdbServe) -> None:
    s = await serve_adb(_phone(keyboard=False))
    await _keep_focused(s)
    await s.client.ok("TYPE_TEXT", {"text": "abc", **NO_SETTLE})
    typed = await s.client.ok("TYPE_TEXT", {"text": " déf", "clear": "false", **NO_SETTLE})
    assert typed["read_back"] == "abc déf" and typed["verified"] is True
    typed = await s.client.ok("TYPE_TEXT", {"text": "new", **NO_SETTLE})  # clear: in place of it
    assert typed["read_back"] == "new"


async def test_no_field_focused_types_nothing_and_restores_the_clipboard(serve_adb: AdbServe) -> None:
    s = await serve_adb(_phone(keyboard=False))
    s.state.clipboard = OWNERS_CLIP
    texts = len(s.state.log.texts)
    for _ in range(2):
        assert await s.client.fail("TYPE_TEXT", {"text": "nowhere", **NO_SETTLE}) == "ELEMENT_NOT_FOUND"
        assert len(s.state.log.texts) == texts
        assert s.state.clipboard == OWNERS_CLIP


@pytest.mark.parametrize("clear", ["true", "false"])
async def test_an_owners_app_in_front_is_never_typed_into(serve_adb: AdbServe, clear: str) -> None:
    s = await serve_adb(_phone(keyboard=False))
    await _keep_focused(s)
    s.state.clipboard = OWNERS_CLIP
    apps.launch_package(s.state, seed.SETTINGS, source="test")  # the owner opened Settings
    texts = len(s.state.log.texts)
    params = {"text": "switch the guard off", "clear": clear, **NO_SETTLE}
    response = await s.client.execute("TYPE_TEXT", params)
    assert not response.success
    if clear == "true":  # else the handler finds no field focused first (ELEMENT_NOT_FOUND)
        assert response.error.startswith("PERMISSION_DENIED: TYPE_TEXT: com.android.settings is in front")
    assert len(s.state.log.texts) == texts  # nothing typed, nothing cleared
    assert s.state.clipboard == OWNERS_CLIP


async def test_a_clipboard_that_cannot_be_read_is_not_used_again(serve_adb: AdbServe) -> None:
    s = await serve_adb(_phone(keyboard=False))
    s.state.faults.clipboard_unreadable = True  # reads answer null: what it held is unknowable
    await _keep_focused(s)
    typed = await s.client.ok("TYPE_TEXT", {"text": "Olá 你好 🚲", **NO_SETTLE})
    assert typed["via"] == "uiautomator2 set_text" and typed["read_back"] == "Olá 你好 🚲"
    assert [t.text for t in s.state.log.texts].count("Olá 你好 🚲") == 1  # never pasted as well
    s.state.clipboard = OWNERS_CLIP  # copied since
    before, rpcs = len(s.opened()), len(s.state.log.rpc)
    typed = await s.client.ok("TYPE_TEXT", {"text": "again", "clear": "false", **NO_SETTLE})
    assert typed["via"] == "uiautomator2 set_text" and typed["read_back"] == "Olá 你好 🚲again"
    assert len(s.opened()) - before <= 3, (s.opened()[before:], _methods(s, rpcs))
    assert "setClipboard" not in _methods(s, rpcs)  # the clipboard is left alone
    assert s.state.clipboard == OWNERS_CLIP


async def test_the_screen_the_paste_read_is_the_next_read_only(serve_adb: AdbServe) -> None:
    s = await serve_adb(_phone(keyboard=False))
    await _keep_focused(s)
    device = s.client.app.runtime.device
    assert isinstance(device, AdbDevice)
    await device.input_text("read in the batch", replace=True)
    rpcs = len(s.state.log.rpc)
    assert 'text="read in the batch"' in await device.dump_hierarchy()  # the batch's own dump
    assert _methods(s, rpcs) == []
    await device.input_text("!")
    await device.press_key(4)  # another call after the typing (BACK: the keyboard goes)
    assert s.state.keyboard_shown is False
    rpcs = len(s.state.log.rpc)
    await device.dump_hierarchy()
    assert _methods(s, rpcs) == ["dumpWindowHierarchy"]  # read again: the typing's is stale


@pytest.mark.parametrize("answered", [5, 6], ids=["before the paste", "after the paste"])
async def test_a_server_lost_while_pasting_is_not_sent_the_paste_again(
    serve_adb: AdbServe, answered: int
) -> None:
    s = await serve_adb(_phone(keyboard=False))
    await _keep_focused(s)
    s.state.clipboard = OWNERS_CLIP
    texts = len(s.state.log.texts)
    # The first batch's 5 calls answered, then UiAutomation goes: the paste (6th) fails, or runs
    # and the calls after it fail.
    s.state.faults.u2_disconnect_after_calls = answered
    response = await s.client.execute("TYPE_TEXT", {"text": "once at most", **NO_SETTLE})
    assert not response.success
    assert response.error.startswith("DEVICE_UNAVAILABLE: typing: "), response.error
    said = "the text was not typed" if answered == 5 else "the text may have been typed"
    assert said in response.error, response.error
    typed = [t.text for t in s.state.log.texts[texts:] if t.method == "paste"]
    assert typed == ([] if answered == 5 else ["once at most"])  # once at most, never sent again
    assert s.state.clipboard == OWNERS_CLIP  # put back once the server was restarted
