"""The phone's settings on `--device termux`, through the real server: volume and brightness by
Termux:API (termux-volume, termux-brightness), Wi-Fi by termux-wifi-enable only before Android 10,
the rest through the phone's own adb (UNSUPPORTED, saying how to turn it on, without it); and the
phone's own adb over wireless debugging is a link no action cuts."""

from __future__ import annotations

import pytest

from phoneuse_runtime.device.termux.phone_settings import brightness_level, volumes
from tests.device.termux.conftest import ServeOwnAdb, TermuxServe
from tests.fakes.phone import FakePhone
from tests.fakes.termux.state import FakeTermux


async def test_volume_through_termux_volume(serve_termux: TermuxServe, termux: FakeTermux) -> None:
    client = await serve_termux()
    result = await client.ok("SET_VOLUME", {"stream": "music", "percent": "40"})
    assert (result["level"], result["max"], result["verified"], result["via"]) == (
        6,
        15,
        True,
        "termux-volume",
    )
    assert termux.state()["volumes"]["music"][0] == 6
    response = await client.execute("SET_VOLUME", {"stream": "ring", "level": "9"})
    assert response.error.startswith("INVALID_PARAMS: ") and "[0..7]" in response.error
    assert termux.state()["volumes"]["ring"][0] == 5  # termux-volume would have clamped it: never asked
    assert ["termux-volume", "ring", "9"] not in termux.state()["runs"]


async def test_brightness_through_termux_brightness(serve_termux: TermuxServe, termux: FakeTermux) -> None:
    client = await serve_termux()
    result = await client.ok("SET_BRIGHTNESS", {"level": "40"})
    # the level is read back; whether adaptive brightness is on, Termux:API never says
    assert (result["level"], result["auto"], result["verified"]) == (40, None, False)
    assert "adaptive brightness" in result["verify_error"]
    assert (termux.state()["brightness"], termux.state()["brightness_auto"]) == (40, False)
    await client.ok("SET_BRIGHTNESS", {"auto": "true"})
    assert termux.state()["brightness_auto"] is True


async def test_brightness_without_modify_system_settings(
    serve_termux: TermuxServe, termux: FakeTermux
) -> None:
    termux.update(lambda s: s["denied"].append("android.permission.WRITE_SETTINGS"))
    client = await serve_termux()
    response = await client.execute("SET_BRIGHTNESS", {"level": "40"})
    assert response.error.startswith("PERMISSION_DENIED: termux-brightness"), response.error
    assert "WRITE_SETTINGS" in response.error
    assert termux.state()["brightness"] == 102


@pytest.mark.parametrize("sdk", [28, 29, 34])
async def test_wifi_from_the_app_only_before_android_10(
    serve_termux: TermuxServe, termux: FakeTermux, sdk: int
) -> None:
    termux.update(lambda s: s["props"].update({"ro.build.version.sdk": str(sdk)}))
    client = await serve_termux()
    response = await client.execute("SET_WIFI", {"enabled": "false"})
    if sdk >= 29:
        assert response.error.startswith("UNSUPPORTED: "), response.error
        assert "from Android 10 on" in response.error and "Wireless debugging" in response.error
        assert termux.state()["wifi_enabled"] is True
        return
    assert response.success, response.error
    assert termux.state()["wifi_enabled"] is False
    # termux-wifi-enable is done; reading Wi-Fi back needs the phone's own adb
    assert '"verified":false' in response.result_json and "cannot be read back" in response.result_json


@pytest.mark.parametrize(
    ("action", "params"),
    [
        ("SET_BLUETOOTH", {"enabled": "true"}),
        ("SET_AIRPLANE_MODE", {"enabled": "true"}),
        ("SET_AUTO_ROTATE", {"enabled": "false"}),
        ("SET_DO_NOT_DISTURB", {"mode": "alarms"}),
    ],
)
async def test_the_rest_needs_the_phones_own_adb(
    serve_termux: TermuxServe, action: str, params: dict[str, str]
) -> None:
    client = await serve_termux()
    response = await client.execute(action, params)
    assert response.error.startswith("UNSUPPORTED: "), response.error
    assert "the phone's own adb" in response.error and "self_adb = off" in response.error


async def test_through_the_phones_own_adb_and_never_cutting_it(serve_own_adb: ServeOwnAdb) -> None:
    phone = FakePhone()
    served = await serve_own_adb(phone)
    client, fake = served.client, served.fake
    result = await client.ok("SET_DO_NOT_DISTURB", {"mode": "alarms"})
    assert (result["mode"], result["verified"], result["via"]) == ("alarms", True, "cmd notification")
    assert phone.state.setting("global", "zen_mode") == "3"
    assert (await client.ok("SET_BLUETOOTH", {"enabled": "true"}))["verified"] is True
    brightness = await client.ok("SET_BRIGHTNESS", {"auto": "true"})
    assert (brightness["auto"], brightness["verified"]) == (True, True)  # read back through adb
    for action, params in (("SET_WIFI", {"enabled": "false"}), ("SET_AIRPLANE_MODE", {"enabled": "false"})):
        response = await client.execute(action, params)
        assert response.error.startswith("PERMISSION_DENIED: "), response.error
        assert f"Termux's own adb ({fake.serial}), over wireless debugging" in response.error
    assert phone.state.setting("global", "wifi_on") == "1"


def test_termux_api_outputs_are_read() -> None:
    listed = volumes(
        [
            {"stream": "alarm", "volume": 6, "max_volume": 7},
            {"stream": "music", "volume": 0, "max_volume": 25},  # Samsung's 25-step media volume
            {"stream": "odd"},
        ]
    )
    assert listed["music"].max == 25 and listed["alarm"].level == 6 and "odd" not in listed
    assert brightness_level("setting brightness  auto to false\nsetting brightness to 40\n") is None
    assert brightness_level("setting brightness  auto to true\n102\n") == 102
    assert brightness_level("87\n") == 87
