# ruff: noqa: E501  (the recorded shapes keep their phones' long lines)
"""system_settings.py on what each Android version's tools print (from AOSP's sources: VolumeCtrl in
frameworks/base/cmds/media (up to Android 10) and services/core/.../media (10+), SettingsProvider's
`settings get`, NotificationShellCmd), and the refusals it tells apart."""

from __future__ import annotations

import pytest

from phoneuse_runtime.device.adb import system_settings as ss
from phoneuse_runtime.device.base import ShellResult, Volume
from phoneuse_runtime.kernel.errors import InvalidParams, PermissionDenied, Unsupported

# `media volume --stream 3 --get` on Android 9: the old VolumeCtrl's "[v]" lines
MEDIA_VOLUME_9 = """[v] will control stream=3 (STREAM_MUSIC)
[v] will get volume
[v] Connecting to AudioService
[v] volume is 7 in range [0..15]
"""
# `cmd media_session volume --stream 4 --get` on Android 13: MediaShellCommand's "[V]"
MEDIA_SESSION_13 = """[V] will control stream=4 (STREAM_ALARM)
[V] will get volume
[V] Connecting to AudioService
[V] volume is 6 in range [1..7]
"""
# Samsung's media stream has 25 steps (One UI), and a "volume" with no range is no answer
SAMSUNG_25 = "[V] volume is 18 in range [0..25]\n"


def test_volume_lines_of_each_version() -> None:
    assert ss.parse_volume(MEDIA_VOLUME_9) == Volume(level=7, min=0, max=15)
    assert ss.parse_volume(MEDIA_SESSION_13) == Volume(level=6, min=1, max=7)
    assert ss.parse_volume(SAMSUNG_25).max == 25
    with pytest.raises(ValueError, match="no volume"):
        ss.parse_volume("[V] will get volume\n")


class Phone:
    """A shell that answers each command line from a table, recording what it was asked."""

    def __init__(self, answers: dict[str, ShellResult]) -> None:
        self.answers = answers
        self.asked: list[str] = []

    def __call__(self, cmd: str) -> ShellResult:
        self.asked.append(cmd)
        return self.answers.get(cmd, ShellResult(0, "", ""))


def test_settings_get_reads_null_as_unset() -> None:
    phone = Phone({"settings get global bluetooth_on": ShellResult(0, "null\n", "")})
    assert ss.setting(phone, "global", "bluetooth_on") is None
    assert ss.switch(phone, "bluetooth") is False
    phone = Phone({"settings get global wifi_on": ShellResult(0, "2\n", "")})  # on in airplane mode
    assert ss.switch(phone, "wifi") is True


def test_zen_mode_values() -> None:
    for value, mode in (("0", "off"), ("1", "priority"), ("2", "total"), ("3", "alarms")):
        assert ss.dnd(Phone({"settings get global zen_mode": ShellResult(0, value + "\n", "")})) == mode
    with pytest.raises(Unsupported, match=r"none of 0\.\.3"):
        ss.dnd(Phone({"settings get global zen_mode": ShellResult(0, "7\n", "")}))


def test_the_refusals_are_told_apart() -> None:
    refused = ShellResult(
        255,
        "",
        "Exception occurred while executing 'put':\njava.lang.SecurityException: Permission denial: writing to settings requires:android.permission.WRITE_SECURE_SETTINGS\n",
    )
    with pytest.raises(PermissionDenied, match="WRITE_SECURE_SETTINGS"):
        ss.checked(refused, "turning auto-rotate off")
    with pytest.raises(Unsupported, match="Can't find service"):
        ss.checked(ShellResult(20, "", "cmd: Can't find service: bluetooth_manager\n"), "Bluetooth")
    with pytest.raises(Unsupported, match="Unknown command: set_dnd"):
        ss.checked(ShellResult(255, "Unknown command: set_dnd\n", ""), "DND")
    not_shell = ShellResult(255, "error: permission denied: callingUid=10234 callingPackage=com.termux\n", "")
    with pytest.raises(PermissionDenied, match="callingUid"):  # set_dnd from an app's uid
        ss.checked(not_shell, "DND")
    assert ss.checked(ShellResult(0, "enabled\n", ""), "x") == "enabled\n"


def test_an_invalid_volume_index_sets_nothing() -> None:
    error = ShellResult(
        0,
        "[V] will set volume to index=9\n",
        "Error: invalid volume index 9 for stream 2 (should be in [0..7])\n",
    )
    phone = Phone({"cmd media_session volume --stream 2 --set 9": error})
    with pytest.raises(InvalidParams, match=r"\[0\.\.7\]"):
        ss.set_volume(phone, "ring", 9, sdk=33)


@pytest.mark.parametrize(
    ("sdk", "wifi", "bluetooth", "volume"),
    [
        (28, "svc wifi disable", "svc bluetooth disable", "media volume --stream 3 --set 4"),
        (29, "svc wifi disable", "svc bluetooth disable", "cmd media_session volume --stream 3 --set 4"),
        (
            30,
            "cmd wifi set-wifi-enabled disabled",
            "svc bluetooth disable",
            "cmd media_session volume --stream 3 --set 4",
        ),
        (
            33,
            "cmd wifi set-wifi-enabled disabled",
            "cmd bluetooth_manager disable",
            "cmd media_session volume --stream 3 --set 4",
        ),
    ],
)
def test_each_version_gets_its_own_tool(sdk: int, wifi: str, bluetooth: str, volume: str) -> None:
    phone = Phone({})
    ss.set_switch(phone, "wifi", False, sdk=sdk)
    ss.set_switch(phone, "bluetooth", False, sdk=sdk)
    ss.set_volume(phone, "music", 4, sdk=sdk)
    assert phone.asked == [wifi, bluetooth, volume]


@pytest.mark.parametrize(
    ("serial", "link"),
    [
        ("192.168.1.5:5555", "adb over Wi-Fi (192.168.1.5:5555)"),
        (
            "adb-1A2B3C4D-xYz12a._adb-tls-connect._tcp",
            "adb over wireless debugging (adb-1A2B3C4D-xYz12a._adb-tls-connect._tcp)",
        ),
        ("127.0.0.1:5555", None),  # an emulator's port, or a tunnel: not the phone's Wi-Fi
        ("localhost:5037", None),
        ("emulator-5554", None),
        ("R58M123ABC", None),  # USB
    ],
)
def test_which_serials_are_links_over_wifi(serial: str, link: str | None) -> None:
    from phoneuse_runtime.device.adb.device import AdbDevice

    device = AdbDevice(device=f"adb:{serial}")  # no I/O before start
    assert device.network_links() == ([link] if link else [])
