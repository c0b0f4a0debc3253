"""Building blocks for screens: the window decor every activity has, and nodes shaped like the
platform widgets (TextView, Button, EditText, ...), plus the layout constants of a 720x1280 phone
(status bar, navigation bar, keyboard) and the resource ids the apps' behaviour refers to.
"""

from __future__ import annotations

from . import seed
from .state import ActivityRecord, PhoneState
from .ui import Bounds, UiNode

STATUS_BAR = 48
NAV_BAR = 96
KEYBOARD = 420
COMPOSE = f"{seed.MESSAGES}:id/compose_message_text"
SEND = f"{seed.MESSAGES}:id/send_message_button_icon"
DIGITS = f"{seed.DIALER}:id/digits"
CAL_TITLE = f"{seed.CALENDAR}:id/title"
CAL_LOCATION = f"{seed.CALENDAR}:id/location"
URL_BAR = f"{seed.CHROME}:id/url_bar"
NOTE = f"{seed.KEEP}:id/edit_note_text"


class Frame:
    """The rectangle an activity draws in."""

    def __init__(self, state: PhoneState) -> None:
        self.width, self.height = state.screen_size
        self.top = STATUS_BAR
        self.bottom = self.height - NAV_BAR
        if state.keyboard_shown:
            self.bottom -= KEYBOARD


def node(cls: str, pkg: str, bounds: Bounds, **kw: object) -> UiNode:
    return UiNode(class_name=cls, package=pkg, bounds=bounds, **kw)  # type: ignore[arg-type]


def text(pkg: str, value: str, bounds: Bounds, rid: str = "", **kw: object) -> UiNode:
    return node("android.widget.TextView", pkg, bounds, text=value, resource_id=rid, **kw)


def button(
    pkg: str,
    bounds: Bounds,
    action: str,
    *,
    label: str = "",
    desc: str = "",
    rid: str = "",
    cls: str = "android.widget.Button",
    enabled: bool = True,
) -> UiNode:
    return node(
        cls,
        pkg,
        bounds,
        text=label,
        content_desc=desc,
        resource_id=rid,
        action=action,
        clickable=True,
        focusable=True,
        enabled=enabled,
    )


def edit(rec: ActivityRecord, pkg: str, rid: str, hint: str, bounds: Bounds) -> UiNode:
    return node(
        "android.widget.EditText",
        pkg,
        bounds,
        resource_id=rid,
        key=rid,
        hint=hint,
        text=rec.fields.get(rid, ""),
        editable=True,
        clickable=True,
        focusable=True,
        long_clickable=True,
        focused=rec.focus == rid,
    )


def app_window(pkg: str, frame: Frame, content: list[UiNode]) -> UiNode:
    """The decor every activity window has around its content view."""
    full = (0, 0, frame.width, frame.height)
    inner = node(
        "android.widget.FrameLayout",
        pkg,
        (0, frame.top, frame.width, frame.bottom),
        resource_id="android:id/content",
        children=content,
    )
    return node(
        "android.widget.FrameLayout",
        pkg,
        full,
        children=[node("android.widget.LinearLayout", pkg, full, children=[inner])],
    )


def toolbar(pkg: str, frame: Frame, title: str, *, back: bool = False, rid: str = "") -> UiNode:
    bar = (0, frame.top, frame.width, frame.top + 112)
    kids = [text(pkg, title, (112 if back else 32, frame.top + 28, frame.width - 32, frame.top + 84), rid)]
    if back:
        kids.insert(
            0,
            button(
                pkg,
                (0, frame.top, 112, frame.top + 112),
                "nav:back",
                desc="Navigate up",
                cls="android.widget.ImageButton",
            ),
        )
    return node("android.view.ViewGroup", pkg, bar, resource_id=f"{pkg}:id/toolbar", children=kids)


def rows(top: int, height: int, count: int, width: int) -> list[Bounds]:
    return [(0, top + i * height, width, top + (i + 1) * height) for i in range(count)]
