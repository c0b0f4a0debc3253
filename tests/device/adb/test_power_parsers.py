"""Issue 27's adb parsers: the lock screen in `dumpsys window policy` (real Android 13 capture, and
the shapes of AOSP's PhoneWindowManager/KeyguardServiceDelegate dumps of other versions), the
stay-on setting, and screenrecord's command line."""

from __future__ import annotations

import pytest

from phoneuse_runtime.device.adb import power, record
from phoneuse_runtime.device.adb.status import parse_screen_on
from tests.fakes.golden import golden

# Android 6 (M): KeyguardServiceDelegate without showingAndNotOccluded, numbers for the enums.
ANDROID_6_SECURE = """WINDOW MANAGER POLICY STATE (dumpsys window policy)
    mSafeMode=false mSystemReady=true mSystemBooted=true
    mShowingLockscreen=true mShowingDream=false mDreamingLockscreen=false
    KeyguardServiceDelegate
      showing=true
      showingLockscreen=true
      inputRestricted=true
      occluded=false
      secure=true
      dreaming=false
      systemIsReady=true
      deviceHasKeyguard=true
      enabled=true
      offReason=2
      currentUser=0
      bootCompleted=true
      screenState=2
      interactiveState=1
      KeyguardStateMonitor
        mIsShowing=true
        mSimSecure=false
        mInputRestricted=true
        mCurrentUserId=0
    mStatusBar=Window{3b2a1c5 u0 StatusBar}
"""
# Android 9 (P), unlocked, CRLF line ends as some captures have them.
ANDROID_9_OPEN = (
    "    KeyguardServiceDelegate\r\n      showing=false\r\n      showingAndNotOccluded=false\r\n"
    "      inputRestricted=false\r\n      occluded=false\r\n      secure=false\r\n      dreaming=false\r\n"
    "      KeyguardStateMonitor\r\n        mIsShowing=false\r\n        mSimSecure=false\r\n"
    "    mShowingDream=false mDreamingLockscreen=false\r\n"
)
# Android 4.4 (KitKat): no KeyguardServiceDelegate block; PhoneWindowManager's own flag.
ANDROID_4_4 = "    mShowingLockscreen=true mShowingDream=false mDreamingLockscreen=true\n"
# Android 14 with the delegate's block cut off (an OEM's dump): DisplayPolicy's line.
ANDROID_14_NO_DELEGATE = (
    "  DisplayPolicy\n    mAwake=true mScreenOnEarly=true mScreenOnFully=true\n    isKeyguardShowing=false\n"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (ANDROID_6_SECURE, (True, True)),
        (ANDROID_9_OPEN, (False, False)),
        (ANDROID_4_4, (True, None)),
        (ANDROID_14_NO_DELEGATE, (False, None)),
        ("", (None, None)),
    ],
    ids=["android6-secure", "android9-open", "android4.4", "android14-no-delegate", "empty"],
)
def test_the_lock_screen_in_dumpsys_window_policy(
    text: str, expected: tuple[bool | None, bool | None]
) -> None:
    assert power.parse_keyguard(text) == expected


def test_the_lock_screen_of_a_real_asleep_android_13_phone() -> None:
    # The whole `dumpsys window` of a MediaTek Android 13 board, asleep on a swipe lock screen.
    assert power.parse_keyguard(golden("dumpsys", "window_mtk-tb8168p1_android13_asleep.txt")) == (
        True,
        False,
    )
    assert parse_screen_on(golden("dumpsys", "power_mtk-tb8168p1_android13_asleep.txt")) is False


def test_the_stay_on_setting() -> None:
    assert power.parse_stay_on("null\n") == 0  # never set
    assert power.parse_stay_on("3\n") == 3
    assert power.parse_stay_on("Security exception: ...") is None
    assert power.restore_stay_on(3) == "settings put global stay_on_while_plugged_in 3"


def test_screenrecord_runs_detached_with_its_flags_quoted() -> None:
    script = record.start_script(
        "/sdcard/Movies/phoneuse-20261203-120000.mp4", max_s=30, size=(720, 1280), bit_rate=4_000_000
    )
    assert script == (
        "mkdir -p /sdcard/Movies; screenrecord --time-limit 30 --size 720x1280 --bit-rate 4000000 "
        "/sdcard/Movies/phoneuse-20261203-120000.mp4 "
        "> /data/local/tmp/phoneuse-screenrecord.log 2>&1 & echo $!"
    )
    assert "--size" not in record.start_script("/sdcard/Movies/a.mp4", max_s=5, size=None, bit_rate=None)
