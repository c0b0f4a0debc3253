"""Screens and the builder that turns one into a UiNode tree plus its behaviour.

A `Screen` is one activity on the back stack; it keeps its own UI state (field texts,
which field has focus, scroll offsets) and rebuilds its tree on every look. While it
builds, it registers what tapping a node does in side tables keyed by the node's
identity, so the XML a client sees carries nothing but what a phone would show.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from phoneuse_runtime.device.sim.catalog import SYSTEMUI, label_of
from phoneuse_runtime.screen.ui import Bounds, UiNode

if TYPE_CHECKING:
    from phoneuse_runtime.device.sim.phone import SimPhone

WIDTH, HEIGHT = 1080, 2400
STATUS_BAR = 128  # the status bar's height; app content starts below it
TOOLBAR = 168

FRAME = "android.widget.FrameLayout"
LINEAR = "android.widget.LinearLayout"
TEXT = "android.widget.TextView"
EDIT = "android.widget.EditText"
BUTTON = "android.widget.Button"
IMAGE_BUTTON = "android.widget.ImageButton"
IMAGE = "android.widget.ImageView"
SWITCH = "android.widget.Switch"
RECYCLER = "androidx.recyclerview.widget.RecyclerView"
VIEW = "android.view.View"

Action = Callable[[], None]


@dataclass
class Scroller:
    key: str
    offset: int
    max_offset: int


@dataclass
class View:
    """A built screen: the tree and what its nodes do."""

    root: UiNode
    taps: dict[int, Action] = field(default_factory=dict)
    long_taps: dict[int, Action] = field(default_factory=dict)
    scrollers: dict[int, Scroller] = field(default_factory=dict)


class Screen:
    """One activity instance on the back stack."""

    package: str = ""
    activity: str = ""
    system_bars: bool = True  # False for custom screens, which bring their own windows
    rotation: int = 0  # quarter turns from portrait while this screen is in front (a custom one's dump says)
    secure: bool = False  # its window sets FLAG_SECURE: a screenshot draws it black, as a phone does

    def __init__(self) -> None:
        self.fields: dict[str, str] = {}
        self.focus: str | None = None
        self.keyboard = False  # the soft keyboard is up; the first BACK only hides it, as on a phone
        self.scroll: dict[str, int] = {}

    @property
    def title(self) -> str:
        return label_of(self.package)

    def render(self, phone: SimPhone) -> View:
        builder = Builder(self)
        self.build(builder, phone)
        return builder.view

    def build(self, b: Builder, phone: SimPhone) -> None:
        raise NotImplementedError

    def submit(self, phone: SimPhone, key: str) -> None:
        """ENTER in the focused field; most fields ignore it."""

    def back(self, phone: SimPhone) -> bool:
        """BACK inside the screen (e.g. browser history); False lets the stack pop it."""
        return False

    def edit(self, change: Callable[[str], str]) -> None:
        if self.focus is not None:
            self.fields[self.focus] = change(self.fields.get(self.focus, ""))

    def same_as(self, other: Screen) -> bool:
        """Whether `other` is this screen again (same conversation, ...): then it replaces this one."""
        return False

    def value(self, key: str) -> str:
        return self.fields.get(key, "")


def clip(node: UiNode, area: Bounds) -> UiNode | None:
    """The node as uiautomator reports it inside `area`: clipped bounds, invisible parts dropped."""
    left, top, right, bottom = node.bounds
    cl, ct, cr, cb = max(left, area[0]), max(top, area[1]), min(right, area[2]), min(bottom, area[3])
    if cl >= cr or ct >= cb:
        return None
    node.bounds = (cl, ct, cr, cb)
    node.children = [c for c in (clip(child, area) for child in node.children) if c is not None]
    return node


class Builder:
    """Builds one screen's window; every helper takes absolute bounds."""

    def __init__(self, screen: Screen) -> None:
        self.screen = screen
        self.window = UiNode(class_name=FRAME, package=screen.package, bounds=(0, 0, WIDTH, HEIGHT))
        self.view = View(self.window)
        self.content = self.add(self.window, LINEAR, (0, STATUS_BAR, WIDTH, HEIGHT), rid="android:id/content")

    def add(
        self,
        parent: UiNode | None,
        cls: str,
        bounds: Bounds,
        *,
        text: str = "",
        rid: str = "",
        desc: str = "",
        on_tap: Action | None = None,
        on_long_tap: Action | None = None,
        checkable: bool = False,
        checked: bool = False,
        selected: bool = False,
        enabled: bool = True,
    ) -> UiNode:
        node = UiNode(
            text=text,
            resource_id=rid,
            class_name=cls,
            package=self.screen.package,
            description=desc,
            bounds=bounds,
            clickable=on_tap is not None,
            long_clickable=on_long_tap is not None,
            focusable=on_tap is not None,
            checkable=checkable,
            checked=checked,
            selected=selected,
            enabled=enabled,
        )
        if on_tap is not None:
            self.view.taps[id(node)] = on_tap
        if on_long_tap is not None:
            self.view.long_taps[id(node)] = on_long_tap
        if parent is not None:
            parent.children.append(node)
        return node

    def text(
        self, parent: UiNode | None, bounds: Bounds, text: str, *, rid: str = "", desc: str = ""
    ) -> UiNode:
        return self.add(parent, TEXT, bounds, text=text, rid=rid, desc=desc)

    def field(self, parent: UiNode | None, bounds: Bounds, key: str, *, rid: str, hint: str) -> UiNode:
        """An EditText bound to `screen.fields[key]`; empty, it reports its hint as text, like a phone."""
        screen = self.screen

        def focus() -> None:
            screen.focus = key
            screen.keyboard = True

        value = screen.fields.get(key, "")
        node = self.add(parent, EDIT, bounds, text=value or hint, rid=rid, on_tap=focus, on_long_tap=focus)
        node.hint = hint
        node.focused = screen.focus == key
        return node

    def toolbar(
        self,
        title: str,
        *,
        rid: str = "",
        title_rid: str = "",
        back: Action | None = None,
        actions: Sequence[tuple[str, Action]] = (),
    ) -> int:
        """A top app bar with an optional Navigate-up arrow; returns the y where content starts."""
        bar = self.add(self.content, VIEW, (0, STATUS_BAR, WIDTH, STATUS_BAR + TOOLBAR), rid=rid)
        left = 40
        if back is not None:
            self.add(
                bar,
                IMAGE_BUTTON,
                (16, STATUS_BAR + 24, 136, STATUS_BAR + 144),
                desc="Navigate up",
                on_tap=back,
            )
            left = 160
        right = WIDTH - 16
        for desc, action in reversed(actions):
            self.add(
                bar,
                IMAGE_BUTTON,
                (right - 120, STATUS_BAR + 24, right, STATUS_BAR + 144),
                desc=desc,
                on_tap=action,
            )
            right -= 136
        self.text(bar, (left, STATUS_BAR + 44, right - 16, STATUS_BAR + 124), title, rid=title_rid)
        return STATUS_BAR + TOOLBAR

    def scroll_list(
        self,
        parent: UiNode,
        bounds: Bounds,
        rows: Sequence[tuple[int, Callable[[Bounds], UiNode]]],
        *,
        key: str,
        rid: str,
        stick_to_end: bool = False,
        cls: str = RECYCLER,
    ) -> UiNode:
        """A list of (height, make_row) rows, scrolled by `screen.scroll[key]`; only visible rows appear."""
        left, top, right, bottom = bounds
        max_offset = max(0, sum(height for height, _ in rows) - (bottom - top))
        offset = self.screen.scroll.get(key, max_offset if stick_to_end else 0)
        offset = min(max(offset, 0), max_offset)
        box = self.add(parent, cls, bounds, rid=rid)
        box.scrollable = max_offset > 0
        box.focusable = True
        if max_offset > 0:
            self.view.scrollers[id(box)] = Scroller(key, offset, max_offset)
        y = top - offset
        for height, make_row in rows:
            if y + height > top and y < bottom:
                row = clip(make_row((left, y, right, y + height)), bounds)
                if row is not None:
                    box.children.append(row)
            y += height
        return box

    def row(
        self,
        bounds: Bounds,
        lines: Sequence[tuple[str, str]],
        *,
        rid: str = "",
        desc: str = "",
        on_tap: Action | None = None,
        on_long_tap: Action | None = None,
    ) -> UiNode:
        """A list row of stacked TextViews, each (text, resource-id)."""
        left, top, right, bottom = bounds
        node = self.add(None, LINEAR, bounds, rid=rid, desc=desc, on_tap=on_tap, on_long_tap=on_long_tap)
        line_h = min(72, (bottom - top - 24) // max(1, len(lines)))
        for i, (line, line_rid) in enumerate(lines):
            y = top + 16 + i * line_h
            self.text(node, (left + 48, y, right - 48, y + line_h), line, rid=line_rid)
        return node


def bubble_height(text: str) -> int:
    """Rough height of a chat bubble: about 34 characters a line at 56 px a line."""
    lines = sum(max(1, -(-len(part) // 34)) for part in text.split("\n"))
    return 72 + 56 * lines


def status_bar(*, wifi: bool, airplane: bool, bluetooth: bool = False, dnd: bool = False) -> UiNode:
    """The system status bar window, drawn over every app."""

    def node(cls: str, bounds: Bounds, *, text: str = "", rid: str = "", desc: str = "") -> UiNode:
        return UiNode(
            text=text, resource_id=rid, class_name=cls, package=SYSTEMUI, description=desc, bounds=bounds
        )

    bar = node(FRAME, (0, 0, WIDTH, STATUS_BAR), rid="com.android.systemui:id/status_bar")
    bar.children.append(
        node(TEXT, (64, 36, 220, 96), text=time.strftime("%H:%M"), rid="com.android.systemui:id/clock")
    )
    icons = node(LINEAR, (620, 36, 1016, 96), rid="com.android.systemui:id/system_icons")
    if dnd:
        icons.children.append(node(IMAGE, (620, 36, 680, 96), desc="Do Not Disturb."))
    if bluetooth:
        icons.children.append(node(IMAGE, (690, 36, 750, 96), desc="Bluetooth on."))
    if airplane:
        icons.children.append(node(IMAGE, (760, 36, 820, 96), desc="Airplane mode."))
    elif wifi:
        icons.children.append(node(IMAGE, (760, 36, 820, 96), desc="Wifi signal full."))
    icons.children.append(node(IMAGE, (830, 36, 890, 96), desc="Phone signal full." if not airplane else ""))
    icons.children.append(node(IMAGE, (900, 36, 1016, 96), desc="Battery 85 percent."))
    bar.children.append(icons)
    return bar
