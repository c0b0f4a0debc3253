"""System surfaces: the launcher's home screen, recents, the notification shade, and custom screens."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from phoneuse_runtime.device.base import Notification
from phoneuse_runtime.device.sim.catalog import HOME_APPS, LAUNCHER, SYSTEMUI, label_of
from phoneuse_runtime.device.sim.widgets import (
    BUTTON,
    FRAME,
    HEIGHT,
    STATUS_BAR,
    TEXT,
    WIDTH,
    Action,
    Builder,
    Screen,
    View,
)
from phoneuse_runtime.screen.ui import Bounds, UiNode, focused_node

if TYPE_CHECKING:
    from phoneuse_runtime.device.sim.phone import SimPhone

L = LAUNCHER + ":id/"
LAUNCHER_ACTIVITY = "com.google.android.apps.nexuslauncher.NexusLauncherActivity"


class HomeScreen(Screen):
    package = LAUNCHER
    activity = LAUNCHER_ACTIVITY

    def build(self, b: Builder, phone: SimPhone) -> None:
        workspace = b.add(b.content, FRAME, (0, STATUS_BAR, WIDTH, HEIGHT), rid=L + "workspace")
        b.text(
            workspace,
            (64, STATUS_BAR + 80, WIDTH - 64, STATUS_BAR + 200),
            "At a glance",
            rid=L + "smartspace_card_view",
        )
        for i, package in enumerate(HOME_APPS):
            col, line = i % 4, i // 4
            left, top = 24 + col * 258, 1500 + line * 330
            label = label_of(package)
            b.add(
                workspace,
                TEXT,
                (left, top, left + 258, top + 300),
                text=label,
                desc=label,
                on_tap=_launcher(phone, package),
            )
        b.add(
            b.content,
            FRAME,
            (48, HEIGHT - 220, WIDTH - 48, HEIGHT - 80),
            rid=L + "search_container_hotseat",
            desc="Google search",
        )


def _launcher(phone: SimPhone, package: str) -> Action:
    def launch() -> None:
        phone.launch(package)

    return launch


class RecentsScreen(Screen):
    """Overview: one card per running app, newest first."""

    package = LAUNCHER
    activity = LAUNCHER_ACTIVITY

    def build(self, b: Builder, phone: SimPhone) -> None:
        packages = [p for p in reversed(phone.running) if p != LAUNCHER]
        if not packages:
            b.text(b.content, (0, 1100, WIDTH, 1200), "No recent items", rid=L + "recents_empty_message")
            return
        rows: list[tuple[int, Callable[[Bounds], UiNode]]] = []
        for package in packages:

            def card(bounds: Bounds, package: str = package) -> UiNode:
                left, top, right, bottom = bounds
                node = b.add(
                    None,
                    FRAME,
                    (left + 80, top + 20, right - 80, bottom - 20),
                    rid=L + "snapshot",
                    desc=label_of(package),
                    on_tap=lambda: self.switch(phone, package),
                )
                b.text(
                    node, (left + 120, top + 40, right - 120, top + 110), label_of(package), rid=L + "title"
                )
                return node

            rows.append((520, card))
        b.scroll_list(
            b.content, (0, STATUS_BAR, WIDTH, HEIGHT - 260), rows, key="tasks", rid=L + "overview_panel"
        )
        b.add(
            b.content,
            BUTTON,
            (380, HEIGHT - 220, 700, HEIGHT - 100),
            text="Clear all",
            rid=L + "clear_all",
            on_tap=lambda: self.clear(phone),
        )

    def switch(self, phone: SimPhone, package: str) -> None:
        phone.switch_to(package)

    def clear(self, phone: SimPhone) -> None:
        for package in [p for p in phone.running if p != LAUNCHER]:
            phone.stop(package)
        phone.home()


class ShadeScreen(Screen):
    """The pulled-down notification shade."""

    package = SYSTEMUI
    activity = "NotificationShade"

    def build(self, b: Builder, phone: SimPhone) -> None:
        S = SYSTEMUI + ":id/"
        notifications = list(reversed(phone.state.notifications))
        rows: list[tuple[int, Callable[[Bounds], UiNode]]] = []
        for n in notifications:

            def row(bounds: Bounds, n: Notification = n) -> UiNode:
                left, top, right, _bottom = bounds
                node = b.add(
                    None,
                    FRAME,
                    bounds,
                    rid=S + "expandableNotificationRow",
                    desc=f"{label_of(n.package)} notification: {n.title}",
                    on_tap=lambda: phone.open_notification(n),
                )
                b.text(
                    node,
                    (left + 48, top + 20, right - 48, top + 70),
                    label_of(n.package),
                    rid="android:id/app_name_text",
                )
                b.text(node, (left + 48, top + 80, right - 48, top + 140), n.title, rid="android:id/title")
                b.text(node, (left + 48, top + 150, right - 48, top + 210), n.text, rid="android:id/text")
                return node

            rows.append((240, row))
        if not rows:
            b.text(b.content, (0, 600, WIDTH, 700), "No notifications", rid=S + "no_notifications")
        b.scroll_list(
            b.content,
            (0, STATUS_BAR + 300, WIDTH, HEIGHT - 240),
            rows,
            key="list",
            rid=S + "notification_stack_scroller",
        )
        if rows:
            b.add(
                b.content,
                BUTTON,
                (700, HEIGHT - 200, 1040, HEIGHT - 80),
                text="Clear all",
                rid=S + "dismiss_text",
                on_tap=lambda: self.clear(phone),
            )

    def clear(self, phone: SimPhone) -> None:
        phone.state.notifications.clear()
        phone.state.notification_targets.clear()
        phone.state.dirty = True
        phone.back()


class CustomScreen(Screen):
    """A screen a scenario supplied as XML: its EditTexts take focus and text; nothing else reacts."""

    system_bars = False

    def __init__(
        self, root: UiNode, *, rotation: int = 0, animate: bool = False, size: int = 0, secure: bool = False
    ) -> None:
        super().__init__()
        self.root = root
        self.secure = secure
        self.size = size  # characters of the XML it was made of: the phone keeps a bounded total
        self.rotation = rotation % 4
        self.package = next((n.package for n in root.walk() if n.package), "android")
        self.activity = "CustomScreen"
        # A screen that never stops moving (a spinner, a video): each look shows the next frame,
        # as its (first) window's description `frame N`.
        self.animate = animate
        self.frames = 0

    def render(self, phone: SimPhone) -> View:
        if self.animate:
            self.frames += 1
            window = self.root.children[0] if self.root.class_name == "hierarchy" else self.root
            window.description = f"frame {self.frames}"
        view = View(self.root)
        for node in self.root.walk():
            if node.editable:
                view.taps[id(node)] = view.long_taps[id(node)] = self._focuser(node)
        return view

    def _focuser(self, target: UiNode) -> Action:
        def focus() -> None:
            for node in self.root.walk():
                node.focused = node is target
            self.focus = "custom"
            self.keyboard = True

        return focus

    def edit(self, change: Callable[[str], str]) -> None:
        node = focused_node(self.root)
        if node is not None:
            node.text = change(node.text)

    def submit(self, phone: SimPhone, key: str) -> None:
        return None
