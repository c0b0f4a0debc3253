# ruff: noqa: E501  (the recorded shapes keep their phones' long lines)
"""Reading what Android's tools print (dumpsys, cmd package, ps, am), in the shapes phones print it."""

from __future__ import annotations

import pytest

from phoneuse_runtime.device.adb import apps, dumpsys
from phoneuse_runtime.device.base import Intent
from phoneuse_runtime.kernel.errors import InvalidParams
from phoneuse_runtime.screen.dialogs import dialog_of_window

WINDOW_14 = """
WINDOW MANAGER WINDOWS (dumpsys window windows)
  Window #0 Window{8e1d2f u0 NavigationBar0}:
  ...
  mCurrentFocus=Window{3c4d5e u0 com.android.settings/com.android.settings.Settings}
  mFocusedApp=ActivityRecord{c0ffee u0 com.android.settings/.Settings t12}
"""
WINDOW_DIALOG = """
  mCurrentFocus=Window{3c4d5e u0 PopupWindow:1f2e3d}
  mFocusedApp=AppWindowToken{422df168 token=Token{422def98 ActivityRecord{422dee38 u0 com.example/.ui.Play t14}}}
"""
ACTIVITIES_12 = "    topResumedActivity=ActivityRecord{9f1 u0 com.android.chrome/com.google.android.apps.chrome.Main t5}\n"
ACTIVITIES_9 = "    mResumedActivity: ActivityRecord{41b3 u0 com.whatsapp/.HomeActivity t7}\n"


def test_foreground_from_window_then_activities() -> None:
    assert dumpsys.parse_window_focus(WINDOW_14) == ("com.android.settings", "com.android.settings.Settings")
    assert dumpsys.parse_window_focus(WINDOW_DIALOG) == ("com.example", "com.example.ui.Play")
    assert dumpsys.parse_window_focus("nothing here") is None
    # The shade (Android 12+) or the status bar's expanded panel (older) in front of the app.
    for title in ("NotificationShade", "StatusBar"):
        focus = (
            f"  mCurrentFocus=Window{{3c4d5e u0 {title}}}\n  mFocusedApp=ActivityRecord{{c u0 com.x/.A t1}}"
        )
        assert dumpsys.parse_window_focus(focus) == ("com.android.systemui", title)
    # The system's dialog about the System UI is the system's window, not the shade (its title
    # names the package it is about).
    anr = "  mCurrentFocus=Window{1a2b u0 Application Not Responding: com.android.systemui}\n"
    assert dumpsys.parse_window_focus(anr) == ("android", "Application Not Responding: com.android.systemui")
    assert dialog_of_window(*dumpsys.parse_window_focus(anr) or ("", "")) == ("anr", "com.android.systemui")
    crash = "  mCurrentFocus=Window{1a2b u0 Application Error: com.whatsapp:pushservice}\n"
    assert dialog_of_window(*dumpsys.parse_window_focus(crash) or ("", "")) == ("crash", "com.whatsapp")
    assert dialog_of_window(*dumpsys.parse_window_focus(WINDOW_14) or ("", "")) == (None, "")
    assert dumpsys.parse_resumed_activity(ACTIVITIES_12) == (
        "com.android.chrome",
        "com.google.android.apps.chrome.Main",
    )
    assert dumpsys.parse_resumed_activity(ACTIVITIES_9) == ("com.whatsapp", "com.whatsapp.HomeActivity")


NOTIFICATIONS = """
  Notification List:
    NotificationRecord(0x0e8e8d0d: pkg=com.google.android.apps.messaging user=UserHandle{0} id=12 tag=null importance=4 key=0|com.google.android.apps.messaging|12|null|10123: Notification(channel=msgs shortcut=null contentView=null vibrate=null sound=null defaults=0x0 flags=0x10 color=0x00000000 vis=PRIVATE))
      uid=10123 userId=0
      opPkg=com.google.android.apps.messaging
      key=0|com.google.android.apps.messaging|12|null|10123
      notification=
          extras={
            android.title=String (Alice)
            android.text=SpannableString (Are we still on for 7:30? (bring snacks))
            android.subText=null
          }
      mCreationTimeMs=1700000000123
    NotificationRecord(0x1a2b3c4d: pkg=com.android.systemui user=UserHandle{0} id=7 tag=null importance=2 key=0|com.android.systemui|7|null|10020: Notification(channel=BAT))
          extras={
            android.title=String [length=11]
          }
  Snoozed notifications:
"""


def test_notifications_with_noredact() -> None:
    found = dumpsys.parse_notifications(NOTIFICATIONS)
    assert [(n.package, n.key, n.title, n.text, n.posted_ms) for n in found] == [
        (
            "com.google.android.apps.messaging",
            "0|com.google.android.apps.messaging|12|null|10123",
            "Alice",
            "Are we still on for 7:30? (bring snacks)",
            1700000000123,
        ),
        ("com.android.systemui", "0|com.android.systemui|7|null|10020", "", "", 0),
    ]


def test_call_state_and_processes() -> None:
    assert dumpsys.parse_call_state("  mCallState=2\n  mCallIncomingNumber=+15550100\n") == (
        "offhook",
        "+15550100",
    )
    assert dumpsys.parse_call_state("  mCallState=0\n  mCallIncomingNumber=+1555\n") == ("idle", "")
    ps = (
        "USER PID PPID VSZ RSS WCHAN ADDR S NAME\n"
        "root 1 0 1 1 0 0 S init\n"
        "u0_a12 1318 123 1 1 0 0 S com.whatsapp\n"
        "u0_a12 1319 123 1 1 0 0 S com.whatsapp:remote\n"
        "shell 99 1 1 1 0 0 S /system/bin/sh\n"
    )
    assert dumpsys.parse_ps_packages(ps) == ["com.whatsapp"]


def test_launcher_components_and_labels() -> None:
    assert apps.parse_components("com.android.settings/.Settings\ncom.x/com.y.Main\n") == [
        ("com.android.settings", "com.android.settings.Settings"),
        ("com.x", "com.y.Main"),
    ]
    resolved = "priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=false\ncom.a/.Main\n"
    assert apps.parse_components(resolved) == [("com.a", "com.a.Main")]
    assert apps.parse_packages("package:com.a\npackage:com.b\n") == ["com.a", "com.b"]
    dump = (
        "  Activity #0:\n    ActivityInfo:\n      name=com.x.Main\n      packageName=com.x\n"
        "      labelRes=0x0 nonLocalizedLabel=Notes Pro icon=0x7f\n"
        "  Activity #1:\n    ActivityInfo:\n      packageName=com.y\n      labelRes=0x7f nonLocalizedLabel=null\n"
    )
    assert apps.parse_plain_labels(dump) == {"com.x": "Notes Pro"}
    built = apps.build_apps(
        {"com.android.chrome": None, "com.x": 7, "org.thing.some_app": None, "com.lib": None},
        [("com.android.chrome", "com.google.Main"), ("com.x", "com.x.Main"), ("org.thing.some_app", "o.M")],
        {"com.x": "Notes Pro"},
        {"com.android.chrome"},
    )
    assert [(a.package, a.label, bool(a.launch_activity), a.system, a.version_code) for a in built] == [
        ("com.android.chrome", "Chrome", True, True, None),
        ("com.lib", "Lib", False, False, None),
        ("com.x", "Notes Pro", True, False, 7),
        ("org.thing.some_app", "Some App", True, False, None),
    ]


def test_package_names_are_checked() -> None:
    assert apps.check_package("com.whatsapp") == "com.whatsapp"
    for bad in ("whatsapp", "com.x; reboot", "-p", "com..x"):
        with pytest.raises(InvalidParams):
            apps.check_package(bad)


def test_intent_extras_keep_their_types_and_text() -> None:
    intent = Intent(
        action="android.intent.action.SENDTO",
        data="smsto:+15551234",
        categories=["c1"],
        package="com.pkg",
        extras={
            "text": "'; rm -rf / #",
            "flag": True,
            "n": 7,
            "big": 2**40,
            "f": 1.5,
            "list": ["a,b", "c"],
        },
    )
    assert apps.intent_args(intent, longs=frozenset({"n"})) == [
        "am", "start", "-a", "android.intent.action.SENDTO", "-d", "smsto:+15551234", "-c", "c1",
        "-p", "com.pkg",
        "--es", "text", "'; rm -rf / #",
        "--ez", "flag", "true",
        "--el", "n", "7",
        "--el", "big", str(2**40),
        "--ef", "f", "1.5",
        "--esa", "list", "a\\,b,c",
    ]  # fmt: skip
    assert apps.intent_args(Intent(kind="broadcast", action="X"))[:2] == ["am", "broadcast"]


def test_am_failures() -> None:
    out = "Starting: Intent { act=X }\nError: Activity not started, unable to resolve Intent { act=X }\n"
    assert apps.am_failure(out) == "Error: Activity not started, unable to resolve Intent { act=X }"
    assert apps.am_failure("Starting: Intent { act=android.intent.action.VIEW }\n") is None
    denied = "java.lang.SecurityException: Permission Denial: starting Intent"
    assert apps.am_denied(denied)
