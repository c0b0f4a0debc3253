"""The adb backend's parsers on outputs captured on real phones (the shared real data; see
tests/fakes/golden.py): the foreground on the default display (foldables list one per display),
getprop, wm size, uiautomator dumps."""

from __future__ import annotations

import pytest

from phoneuse_runtime.device.adb import apps, dumpsys
from phoneuse_runtime.device.adb.shell import (
    oriented_size,
    parse_getprop,
    parse_rows,
    parse_wm_size,
    provider_failure,
)
from phoneuse_runtime.device.adb.status import parse_screen_on
from phoneuse_runtime.screen.ui import parse_hierarchy
from tests.fakes.golden import golden, golden_files

LINE = ("jp.naver.line.android", "jp.naver.line.android.activity.main.MainActivity")
FOCUS = {
    # the Flip4 lists its cover screen's SubHomeActivity (system UI) before the main display's app
    "window-displays-grep-mFocusedApp_galaxy-z-flip4_android12.txt": LINE,
    "window-displays-grep-mCurrentFocus_galaxy-z-flip4_android12.txt": LINE,
    "window-grep-mCurrentFocus_moto-razr-2022-foldable_three-lines.txt": (
        "com.YostarJP.BlueArchive",
        "com.yostarjp.bluearchive.MxUnityPlayerActivity",
    ),
    "window-grep-mCurrentFocus_xiaomi-14_launcher.txt": ("com.miui.home", "com.miui.home.launcher.Launcher"),
    "window-windows-grep-focus_google-photos_2018_appwindowtoken.txt": (
        "com.google.android.apps.photos",
        "com.google.android.apps.photos.home.HomeActivity",
    ),
    # asleep, the notification shade has the focus on display 0
    "window_mtk-tb8168p1_android13_asleep.txt": (dumpsys.SYSTEM_UI, "NotificationShade"),
    "window-windows_excerpt_android13-14_bilibili_no-mCurrentFocus.txt": None,
}


@pytest.mark.parametrize("name", sorted(FOCUS))
def test_the_foreground_is_the_default_displays(name: str) -> None:
    assert dumpsys.parse_window_focus(golden("dumpsys", name)) == FOCUS[name]


def test_every_window_capture_is_covered() -> None:
    assert {p.name for p in golden_files("dumpsys", "window*")} == set(FOCUS)


RESUMED = {
    "activity-activities_mtk-tb8168p1_android13_asleep.txt": (
        "com.mediatek.camera",
        "com.mediatek.camera.CameraLauncher",
    ),
    "activity-activities-grep-mResumedActivity_cyanogenmod-trebuchet_awesome-adb-doc.txt": (
        "com.cyanogenmod.trebuchet",
        "com.android.launcher3.Launcher",
    ),
}


@pytest.mark.parametrize("name", sorted(RESUMED))
def test_the_resumed_activity(name: str) -> None:
    assert dumpsys.parse_resumed_activity(golden("dumpsys", name)) == RESUMED[name]


def test_getprop_of_every_capture_names_the_model_and_version() -> None:
    files = golden_files("getprop")
    assert len(files) == 4
    for path in files:
        props = parse_getprop(path.read_text(encoding="utf-8", errors="replace"))
        assert props.get("ro.product.model") and props.get("ro.build.version.release"), path.name
        assert props["ro.build.version.sdk"].isdigit(), path.name


WM = {
    "wm-size_1080x1920_awesome-adb-doc.txt": (1080, 1920),
    "wm-size_galaxy-note3_bogus-640x480.txt": (640, 480),
    "wm-size_unknown-phone_bogus-512x480.txt": (512, 480),
    "wm-size_with-override_awesome-adb-doc.txt": (480, 1024),  # the override is what apps lay out for
}


@pytest.mark.parametrize("name", sorted(WM))
def test_wm_size(name: str) -> None:
    assert parse_wm_size(golden("wm", name)) == WM[name]


def test_every_uidump_parses_and_the_landscape_one_is_turned() -> None:
    files = golden_files("uidump")
    assert len(files) == 12
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        xml = text[text.index("<?xml") :] if "<?xml" in text else text[text.index("<hierarchy") :]
        root = parse_hierarchy(xml)
        assert any(node.text or node.description for node in root.walk()), path.name
    landscape = golden(
        "uidump", "samsung-tab-a-sm-t377a_android6.0.1_dev-settings_landscape-rot1_with-dump-status-line.xml"
    )
    assert 'rotation="1"' in landscape
    assert oriented_size((800, 1280), 1) == (1280, 800)


CALL_STATE = {
    "telephony.registry_qcom-cn-esim_android8or9_blog.txt": ("idle", ""),
    # no phone on this board: no mCallState line at all
    "telephony.registry_mtk-tb8168p1_android13_nosim.txt": ("idle", ""),
}


@pytest.mark.parametrize("name", sorted(CALL_STATE))
def test_the_call_state(name: str) -> None:
    assert dumpsys.parse_call_state(golden("dumpsys", name)) == CALL_STATE[name]


def test_a_notification_dump_without_notifications_lists_none() -> None:
    """The default (redacted) dump of a board with no active notification."""
    assert (
        dumpsys.parse_notifications(
            golden("dumpsys", "notification_mtk-tb8168p1_android13_redacted-default.txt")
        )
        == []
    )


POWER = {
    "power_mtk-tb8168p1_android13_asleep.txt": False,
    "power_samsung-sm-t377a_android6.0.1_crlf-doubled-lines.txt": True,
    "power_samsung_2019_awake_head.txt": True,
    # no mWakefulness before Android 5: the Display Power State's mScreenOn (issue 27, DEVICE_STATUS)
    "power_display-power-state_excerpt_android4.4-tvbox.txt": True,
}


@pytest.mark.parametrize("name", sorted(POWER))
def test_the_screen_state_from_dumpsys_power(name: str) -> None:
    assert parse_screen_on(golden("dumpsys", name)) == POWER[name]


def test_content_query_rows_with_null_and_empty_values() -> None:
    text = golden("content", "content-query_row-with-NULL-and-empty-values_catch-notes_2016.txt")
    columns = ["source", "parent_id", "timestamp", "sharekey", "hashcodes", "photo_thumb", "altitude"]
    columns += ["api_pending_op", "depth", "short_text", "_id", "note_mode", "nodeid", "source_url"]
    (row,) = parse_rows(text, columns)
    assert (row["source"], row["hashcodes"], row["photo_thumb"], row["_id"]) == (
        "",
        "",
        "",
        "1",
    )  # NULL and empty
    assert row["timestamp"] == "1481856516807"


def test_a_providers_refusal_is_a_failure() -> None:
    text = golden("content", "content-query_error-unhandled-uri_catch-notes_2016_truncated.txt")
    assert provider_failure(text)


def test_pm_list_packages() -> None:
    """`pm list packages` (the form the backend runs, without -f) on a real device."""
    text = golden("pm", "pm-list-packages-e_humane-aipin_android12L.txt")
    found = apps.parse_packages(text)
    assert "humane.settings.service" in found
    assert len(found) == text.count("package:")


def test_the_real_anr_dialog_is_a_system_dialog() -> None:
    from phoneuse_runtime.screen.dialogs import find_dialog

    root = parse_hierarchy(golden("uidump", "anr-dialog_system-ui-not-responding_package-android.xml"))
    dialog = find_dialog(root)
    assert dialog is not None
    assert (dialog.kind, dialog.label, dialog.title) == ("anr", "System UI", "System UI isn't responding")
    assert dialog.buttons == ("Close app", "Wait")
    assert dialog.button_ids == ("android:id/aerr_close", "android:id/aerr_wait")
    # The other real screens show none.
    for path in golden_files("uidump", "*.xml"):
        if "anr-dialog" not in path.name and "samsung-tab" not in path.name:
            assert find_dialog(parse_hierarchy(path.read_text(encoding="utf-8"))) is None, path.name


def test_another_of_the_systems_alerts_is_other_and_an_apps_own_is_none() -> None:
    from phoneuse_runtime.screen.dialogs import find_dialog
    from phoneuse_runtime.screen.ui import UiNode

    def alert(package: str) -> UiNode:
        title = UiNode(class_name="android.widget.TextView", package=package, text="Allow USB debugging?")
        title.resource_id = "android:id/alertTitle"
        ok = UiNode(class_name="android.widget.Button", package=package, text="Allow", clickable=True)
        ok.resource_id = "android:id/button1"
        return UiNode(class_name="android.widget.FrameLayout", package=package, children=[title, ok])

    found = find_dialog(alert("android"))
    assert found is not None and (found.kind, found.title, found.buttons) == (
        "other",
        "Allow USB debugging?",
        ("Allow",),
    )
    assert find_dialog(alert("com.example.app")) is None
