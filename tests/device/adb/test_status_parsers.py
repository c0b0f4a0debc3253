"""DEVICE_STATUS's parsers (device/adb/status.py) on real captures (the shared real data, skipped
where absent) and on the outputs of several Android versions as AOSP's sources print them."""

from __future__ import annotations

import pytest

from phoneuse_runtime.device.adb import apps, status
from phoneuse_runtime.device.base import DeviceInfo
from tests.fakes.golden import golden, golden_files

BATTERY = {
    # (level, status, plugged, °C)
    "battery_mtk-tb8168p1_android13.txt": (58, "charging", "usb", 37.0),
    "battery_nexus5-era_awesome-adb-doc.txt": (44, "charging", "usb", 28.0),
    # Samsung's extra lines after AOSP's (a second, lower-case "charge counter"; unindented ones)
    "battery_samsung_2018_sec-extras.txt": (84, "charging", "usb", 32.6),
}


@pytest.mark.parametrize("name", sorted(BATTERY))
def test_dumpsys_battery_on_real_phones(name: str) -> None:
    assert status.parse_battery(golden("dumpsys", name)) == BATTERY[name]


def test_every_real_battery_capture_is_covered() -> None:
    assert {p.name for p in golden_files("dumpsys", "battery_*")} == set(BATTERY)


# Android 14's BatteryService prints a Dock line; Android 4.4 had no Wireless line and a level out
# of a scale other than 100 on some boards.
ANDROID_14_ON_A_WIRELESS_PAD = """Current Battery Service state:
  AC powered: false
  USB powered: false
  Wireless powered: true
  Dock powered: false
  Max charging current: 0
  Max charging voltage: 0
  Charge counter: 3894000
  status: 5
  health: 2
  present: true
  level: 100
  scale: 100
  voltage: 4389
  temperature: 301
  technology: Li-ion
  Capacity level: 5
"""
ANDROID_4_ON_BATTERY = """Current Battery Service state:
  AC powered: false
  USB powered: false
  status: 3
  health: 2
  present: true
  level: 37
  scale: 50
  voltage: 3801
  temperature: -15
  technology: Li-ion
"""
EMULATOR_WITH_BATTERY_ABSENT = "Current Battery Service state:\n  present: false\n  level: -1\n"


def test_dumpsys_battery_of_other_android_versions() -> None:
    assert status.parse_battery(ANDROID_14_ON_A_WIRELESS_PAD) == (100, "full", "wireless", 30.1)
    assert status.parse_battery(ANDROID_4_ON_BATTERY) == (74, "discharging", "none", -1.5)
    # Nothing it cannot say is made up.
    assert status.parse_battery(EMULATOR_WITH_BATTERY_ABSENT) == (None, None, None, None)
    assert status.parse_battery("Can't find service: battery\n") == (None, None, None, None)


def test_the_keyguard_from_a_real_window_dump() -> None:
    # The MTK board asleep, its lock screen showing (KeyguardServiceDelegate: showing=true).
    assert status.parse_locked(golden("dumpsys", "window_mtk-tb8168p1_android13_asleep.txt")) is True


def test_the_keyguard_of_other_android_versions() -> None:
    android_9 = (
        "WINDOW MANAGER POLICY STATE (dumpsys window policy)\n"
        "    mShowingLockscreen=false mShowingDream=false mDreamingLockscreen=false "
        "mDreamingSleepToken=null\n"
        "    KeyguardServiceDelegate\n      showing=false\n      showingAndNotOccluded=false\n"
    )
    android_5 = "    mShowingLockscreen=true mShowingDream=false mDreamingLockscreen=false\n"
    android_12_no_delegate = (
        "  DisplayPolicy\n    mShowingDream=false mDreamingLockscreen=true\n    isKeyguardShowing=false\n"
    )
    assert status.parse_locked(android_9) is False
    assert status.parse_locked(android_5) is True
    assert status.parse_locked(android_12_no_delegate) is False
    # `showingAndNotOccluded=` and `mDreamingLockscreen=` are not the keyguard's state
    assert status.parse_locked("      showingAndNotOccluded=true\n    mDreamingLockscreen=true\n") is None


def test_cmd_wifi_status_of_android_11_to_15() -> None:
    android_11 = (
        "Wifi is enabled\nWifi scanning is always available\n"
        'Wifi is connected to "Home 5G"\nWifiInfo: SSID: "Home 5G", BSSID: 02:00:00:00:00:00, MAC: ...\n'
    )
    android_14 = (
        "Wifi is enabled\nWifi scanning is always available\n==== Primary ClientModeManager instance ====\n"
        "Wifi is not connected\n"
    )
    assert status.parse_wifi(android_11) == (True, True, "Home 5G")
    assert status.parse_wifi(android_14) == (True, False, None)
    assert status.parse_wifi("Wifi is disabled\nWifi scanning is only available when wifi is enabled\n") == (
        False,
        False,
        None,
    )
    # Before Android 11 there is no `status`: nothing said.
    assert status.parse_wifi("Unknown command: status\n") == (None, None, None)
    assert status.parse_wifi("cmd: Can't find service: wifi\n") == (None, None, None)


def test_settings_get() -> None:
    assert status.parse_setting("1\n") == 1 and status.parse_setting("0\r\n\r\n") == 0
    assert status.parse_setting("null\n") is None and status.parse_setting("") is None


def test_df_of_toybox_and_of_old_toolbox() -> None:
    toybox = (
        "Filesystem      1K-blocks    Used Available Use% Mounted on\n"
        "/dev/block/dm-5 115653564 5392004 110130488   5% /data\n"
    )
    toolbox = (
        "Filesystem               Size     Used     Free   Blksize\n"
        "/data                   12.5G     2.1G    10.4G   4096\n"
    )
    assert status.parse_df(toybox) == (110130488 * 1024, 115653564 * 1024)
    assert status.parse_df(toolbox) == (int(10.4 * 2**30), int(12.5 * 2**30))
    assert status.parse_df("df: /data: Permission denied\n") == (None, None)


def test_meminfo_and_uptime() -> None:
    linux_4 = "MemTotal:        5847532 kB\nMemFree:          160560 kB\nMemAvailable:    2232264 kB\n"
    linux_3_10 = "MemTotal:        1899548 kB\nMemFree:          302284 kB\nBuffers:           34512 kB\n"
    assert status.parse_meminfo(linux_4) == (2232264 * 1024, 5847532 * 1024)
    assert status.parse_meminfo(linux_3_10) == (None, 1899548 * 1024)  # no MemAvailable: null
    assert status.parse_uptime("350735.47 234388.90\n") == 350735.47
    assert status.parse_uptime("") is None


def test_screen_on_of_android_4_to_14() -> None:
    assert status.parse_screen_on("  mWakefulness=Dozing\n") is False
    assert status.parse_screen_on("  mWakefulness=Dreaming\n") is True
    assert status.parse_screen_on("Display Power State:\n  mScreenOn=false\n") is False


def test_the_whole_script_output_cut_at_its_marks() -> None:
    info = DeviceInfo("adb", "s", "Pixel 7", "Google", "14", 34, 1080, 2400)
    out = "\n".join(
        [
            "@@status:battery",
            ANDROID_14_ON_A_WIRELESS_PAD,
            "@@status:power",
            "  mWakefulness=Awake",
            "@@status:wifi",
            "Unknown command: status",
            "@@status:setting:wifi_on",
            "1",
            "@@status:setting:mobile_data",
            "null",
            "@@status:setting:airplane_mode_on",
            "0",
            "@@status:df",
            "df: /data: No such file",
        ]
    )
    read = status.read_status(out, info)
    assert (read.battery_level, read.plugged, read.screen_on) == (100, "wireless", True)
    # Wi-Fi on from the setting, its network unknown without `cmd wifi status`
    assert (read.wifi_enabled, read.wifi_connected, read.wifi_ssid) == (True, None, None)
    assert (read.mobile_data, read.airplane_mode, read.bluetooth_enabled) == (None, False, None)
    assert (read.locked, read.storage_free_bytes, read.memory_total_bytes, read.uptime_s) == (None,) * 4
    assert (read.model, read.android_version, read.sdk) == ("Pixel 7", "14", 34)
    assert status.sections("").get("battery") is None


def test_pm_list_packages_with_paths_and_versions() -> None:
    # -f on a real Android 6 tablet: paths (doubled line breaks), no versions
    text = golden("pm", "pm-list-packages-f-3_samsung-sm-t377a_android6.0.1_partial.txt")
    found = apps.parse_package_versions(text)
    assert len(found) == 18 == text.count("package:") and set(found.values()) == {None}
    assert all("/" not in name and "=" not in name for name in found)
    # Android 9+: --show-versioncode, with -f and -U; the path may hold "="
    listed = (
        "package:/data/app/~~Qz8xVq3nT0yq2dJf1w==/com.whatsapp-kX4b1tq7Rr2m9yWc0p==/base.apk=com.whatsapp "
        "versionCode:242578007 uid:10160\n"
        "package:com.android.chrome versionCode:647814033\n"
    )
    assert apps.parse_package_versions(listed) == {"com.whatsapp": 242578007, "com.android.chrome": 647814033}
    refused = "Error: Unknown option: --show-versioncode\n"
    assert apps.versions_refused(refused) and not apps.versions_refused(listed)
