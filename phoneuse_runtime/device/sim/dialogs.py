"""The system's dialogs on the simulated phone (SIM_SHOW_DIALOG), drawn as AOSP draws them.

An "isn't responding" (`anr`) or "keeps stopping" (`crash`) dialog is system_server's (package
`android`, its window titled "Application Not Responding: PKG" / "Application Error: PKG"), its
title in `android:id/alertTitle` and its buttons `android:id/aerr_*`; a runtime permission
prompt is the permission controller's GrantPermissionsActivity (ids `permission_*`). Each is
shown over the app, whose screen stays beneath it; a button closes it ("Close app" stops the app).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from phoneuse_runtime.device.sim.catalog import label_of
from phoneuse_runtime.device.sim.widgets import BUTTON, FRAME, HEIGHT, TEXT, WIDTH, Screen, View
from phoneuse_runtime.screen.ui import UiNode

if TYPE_CHECKING:
    from phoneuse_runtime.device.sim.phone import SimPhone

DialogKind = Literal["anr", "crash", "permission"]
PERMISSION_CONTROLLER = "com.google.android.permissioncontroller"
GRANT_ACTIVITY = "com.android.permissioncontroller.permission.ui.GrantPermissionsActivity"
_WINDOW_TITLES = {"anr": "Application Not Responding", "crash": "Application Error"}


class DialogScreen(Screen):
    """A system dialog over whatever was in front."""

    system_bars = False  # it draws the screen beneath, with its bars, itself

    def __init__(self, kind: DialogKind, about: str) -> None:
        super().__init__()
        self.kind = kind
        self.about = about
        if kind == "permission":
            self.package, self.activity = PERMISSION_CONTROLLER, GRANT_ACTIVITY
        else:
            self.package, self.activity = "android", f"{_WINDOW_TITLES[kind]}: {about}"

    def _choices(self) -> list[tuple[str, str, bool]]:
        """(resource-id, label, whether it stops the app)."""
        if self.kind == "permission":
            rid = "com.android.permissioncontroller:id/"
            return [
                (rid + "permission_allow_foreground_only_button", "While using the app", False),
                (rid + "permission_allow_one_time_button", "Only this time", False),
                (rid + "permission_deny_button", "Don't allow", False),
            ]
        if self.kind == "anr":
            return [("android:id/aerr_close", "Close app", True), ("android:id/aerr_wait", "Wait", False)]
        return [("android:id/aerr_app_info", "App info", False), ("android:id/aerr_close", "Close app", True)]

    def render(self, phone: SimPhone) -> View:
        below = next((t.screens[-1] for t in reversed(phone.tasks[:-1]) if t.screens), None)
        windows: list[UiNode] = []
        if below is not None:
            root = phone.view_of(below).root
            windows = list(root.children) if root.class_name == "hierarchy" else [root]
        label = label_of(self.about)
        left, top, right = 28, HEIGHT // 2 - 300, WIDTH - 28
        if self.kind == "permission":
            title = UiNode(
                class_name=TEXT,
                package=self.package,
                text=f"Allow {label} to access this device's location?",
                resource_id="com.android.permissioncontroller:id/permission_message",
                bounds=(left + 40, top + 40, right - 40, top + 160),
            )
        else:
            said = "isn't responding" if self.kind == "anr" else "keeps stopping"
            title = UiNode(
                class_name=TEXT,
                package=self.package,
                text=f"{label} {said}",
                resource_id="android:id/alertTitle",
                bounds=(left + 40, top + 40, right - 40, top + 120),
            )
        view = View(UiNode())
        buttons = []
        for i, (rid, text, stops) in enumerate(self._choices()):
            node = UiNode(
                class_name=BUTTON,
                package=self.package,
                text=text,
                resource_id=rid,
                clickable=True,
                focusable=True,
                bounds=(left, top + 200 + i * 130, right, top + 310 + i * 130),
            )
            view.taps[id(node)] = self._answer(phone, stops)
            buttons.append(node)
        dialog = UiNode(
            class_name=FRAME,
            package=self.package,
            bounds=(left, top, right, top + 600),
            children=[title, *buttons],
        )
        view.root = UiNode(class_name="hierarchy", bounds=(0, 0, WIDTH, HEIGHT), children=[*windows, dialog])
        return view

    def _answer(self, phone: SimPhone, stops: bool) -> Callable[[], None]:
        def answer() -> None:
            phone.close(self)
            if stops:
                phone.stop(self.about)

        return answer
