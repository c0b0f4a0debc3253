"""System UI windows: status bar, navigation bar, notification shade, keyguard, and the
keyboard's window while it shows (apps resize above it, taps on it reach the keyboard).
"""

from __future__ import annotations

import time

from . import seed
from .state import PhoneState, SystemDialog
from .ui import UiNode
from .widgets import KEYBOARD, NAV_BAR, STATUS_BAR, button, node, rows, text


def status_bar(state: PhoneState) -> UiNode:
    pkg, (w, _) = seed.SYSTEMUI, state.screen_size
    now = time.strftime("%I:%M", time.localtime(state.clock.now())).lstrip("0")
    return node(
        "android.widget.FrameLayout",
        pkg,
        (0, 0, w, STATUS_BAR),
        resource_id=f"{pkg}:id/status_bar",
        children=[
            text(pkg, now, (24, 0, 120, STATUS_BAR), f"{pkg}:id/clock", content_desc=now),
            node(
                "android.widget.LinearLayout",
                pkg,
                (w - 120, 0, w - 16, STATUS_BAR),
                resource_id=f"{pkg}:id/battery",
                content_desc="Battery 100 percent.",
            ),
        ],
    )


def nav_bar(state: PhoneState) -> UiNode:
    pkg, (w, h) = seed.SYSTEMUI, state.screen_size
    top, third = h - NAV_BAR, w // 3
    keys = [
        ("back", "Back", "nav:back"),
        ("home", "Home", "nav:home"),
        ("recent_apps", "Overview", "nav:recents"),
    ]
    return node(
        "android.widget.FrameLayout",
        pkg,
        (0, top, w, h),
        resource_id=f"{pkg}:id/navigation_bar_frame",
        children=[
            button(
                pkg,
                (i * third, top, (i + 1) * third, h),
                action,
                desc=desc,
                rid=f"{pkg}:id/{rid}",
                cls="android.widget.ImageView",
            )
            for i, (rid, desc, action) in enumerate(keys)
        ],
    )


def keyboard(state: PhoneState) -> UiNode:
    w, h = state.screen_size
    ime = state.setting("secure", "default_input_method") or seed.LATIN_IME
    pkg = ime.split("/")[0]
    return node(
        "android.widget.FrameLayout",
        pkg,
        (0, h - NAV_BAR - KEYBOARD, w, h - NAV_BAR),
        resource_id=f"{pkg}:id/keyboard_holder" if pkg == seed.GBOARD else "",
    )


def shade(state: PhoneState) -> UiNode:
    pkg, (w, h) = seed.SYSTEMUI, state.screen_size
    items = []
    for note, (left, top, right, bottom) in zip(
        reversed(state.notifications), rows(STATUS_BAR + 200, 160, len(state.notifications), w), strict=False
    ):
        app = state.packages.get(note.package)
        items.append(
            node(
                "android.widget.FrameLayout",
                pkg,
                (left, top, right, bottom),
                clickable=True,
                focusable=True,
                resource_id=f"{pkg}:id/expandableNotificationRow",
                action=f"notif:{note.key}",
                children=[
                    text(
                        pkg,
                        app.label if app else note.package,
                        (left + 40, top + 10, right, top + 50),
                        "android:id/app_name_text",
                    ),
                    text(pkg, note.title, (left + 40, top + 55, right - 40, top + 100), "android:id/title"),
                    text(pkg, note.text, (left + 40, top + 105, right - 40, bottom - 10), "android:id/text"),
                ],
            )
        )
    if state.notifications:
        items.append(
            button(
                pkg,
                (w - 240, h - 220, w - 32, h - 140),
                "notif:clear",
                label="Clear all",
                rid=f"{pkg}:id/dismiss_text",
            )
        )
    return node(
        "android.widget.FrameLayout",
        pkg,
        (0, 0, w, h),
        resource_id=f"{pkg}:id/notification_panel",
        children=items,
    )


def keyguard(state: PhoneState) -> UiNode:
    pkg, (w, h) = seed.SYSTEMUI, state.screen_size
    now = time.strftime("%I:%M", time.localtime(state.clock.now())).lstrip("0")
    return node(
        "android.widget.FrameLayout",
        pkg,
        (0, 0, w, h),
        resource_id=f"{pkg}:id/keyguard_root_view",
        children=[
            text(pkg, now, (0, 300, w, 460), f"{pkg}:id/lockscreen_clock_view"),
            text(pkg, "Swipe up to open", (0, h - 260, w, h - 200), f"{pkg}:id/keyguard_indication_text"),
        ],
    )


# The system's dialogs as AOSP draws them (frameworks/base core/res/res/layout/app_anr_dialog.xml
# and app_error_dialog.xml: an AlertDialog of package "android", its title in android:id/alertTitle,
# its buttons android:id/aerr_*; the permission controller's GrantPermissionsActivity, ids
# permission_*), and their windows' titles in `dumpsys window` (AppNotRespondingDialog and
# AppErrorDialog set "Application Not Responding: <process>" / "Application Error: <process>").
PERMISSION_CONTROLLER = "com.google.android.permissioncontroller"
GRANT_ACTIVITY = "com.android.permissioncontroller.permission.ui.GrantPermissionsActivity"


def dialog_window_title(dialog: SystemDialog) -> str:
    if dialog.kind == "anr":
        return f"Application Not Responding: {dialog.package}"
    if dialog.kind == "crash":
        return f"Application Error: {dialog.package}"
    return f"{PERMISSION_CONTROLLER}/{GRANT_ACTIVITY}"


def system_dialog(state: PhoneState, dialog: SystemDialog) -> UiNode:
    w, h = state.screen_size
    left, top, right, bottom = 28, h // 2 - 260, w - 28, h // 2 + 260
    if dialog.kind == "permission":
        pkg, rid = PERMISSION_CONTROLLER, "com.android.permissioncontroller:id/"
        message = f"Allow {dialog.label} to access this device's location?"
        choices = [
            ("permission_allow_foreground_only_button", "While using the app", "allow"),
            ("permission_allow_one_time_button", "Only this time", "allow"),
            ("permission_deny_button", "Don't allow", "deny"),
        ]
        title = text(pkg, message, (left + 40, top + 40, right - 40, top + 160), rid + "permission_message")
    else:
        pkg, rid = "android", "android:id/"
        said = "isn't responding" if dialog.kind == "anr" else "keeps stopping"
        title = text(
            pkg, f"{dialog.label} {said}", (left + 40, top + 40, right - 40, top + 120), rid + "alertTitle"
        )
        choices = (
            [("aerr_close", "Close app", "close"), ("aerr_wait", "Wait", "wait")]
            if dialog.kind == "anr"
            else [("aerr_app_info", "App info", "wait"), ("aerr_close", "Close app", "close")]
        )
    buttons = [
        button(
            pkg,
            (left, top + 200 + i * 120, right, top + 300 + i * 120),
            f"dialog:{act}",
            label=label,
            rid=rid + name,
        )
        for i, (name, label, act) in enumerate(choices)
    ]
    return node("android.widget.FrameLayout", pkg, (left, top, right, bottom), children=[title, *buttons])
