"""The apps' forms that an intent opens and a button finishes: the messaging app's send button
(SEND_MESSAGE through `smsto:`) and a calendar app's Save (an event added through the INSERT
intent when the provider refuses). Which buttons, and the wait for one to appear; the backend's
core (device.py) only starts the intent and calls `tap_when_shown`."""

from __future__ import annotations

import time

from phoneuse_runtime.device.adb.ui import Ui
from phoneuse_runtime.device.adb.worker import Budget
from phoneuse_runtime.kernel.errors import ElementNotFound
from phoneuse_runtime.screen.selector import Selector
from phoneuse_runtime.screen.ui import UiNode, parse_hierarchy

BUTTON_S = 8.0  # how long a form's button is looked for

# The send button of the SMS apps the runtime knows, most specific first; then any element
# whose description starts with "Send" (what accessibility requires of an icon button).
SEND_BUTTONS: tuple[Selector, ...] = (
    Selector(resource_id="com.google.android.apps.messaging:id/send_message_button_icon"),
    Selector(resource_id="com.google.android.apps.messaging:id/send_message_button_container"),
    Selector(resource_id="com.android.messaging:id/send_message_button"),
    Selector(resource_id="com.samsung.android.messaging:id/send_button1"),
    Selector(resource_id="send_message_button"),
    Selector(resource_id="send_button"),
)
SEND_PREFIX = "Send"
# The Save/Done button of a calendar app's event editor, for the INSERT intent path.
SAVE_BUTTONS: tuple[Selector, ...] = (
    Selector(resource_id="com.google.android.calendar:id/save"),
    Selector(resource_id="com.android.calendar:id/action_done"),
    Selector(resource_id="save"),
    Selector(resource_id="action_done"),
    Selector(text="Save"),
    Selector(text="SAVE"),
    Selector(description="Save"),
    Selector(text="Done"),
)


def first_button(root: UiNode, selectors: tuple[Selector, ...], *, starts_with: str = "") -> UiNode | None:
    """The first enabled element a selector picks, in order; else, given `starts_with`, the
    first enabled clickable or described element whose description starts with it."""
    for selector in selectors:
        node = selector.find(root)
        if node is not None and node.enabled:
            return node
    if starts_with:
        for node in root.walk():
            if (
                node.enabled
                and (node.clickable or node.description)
                and node.description.startswith(starts_with)
            ):
                return node
    return None


def tap_when_shown(
    ui: Ui,
    budget: Budget,
    buttons: tuple[Selector, ...],
    *,
    poll_s: float,
    missing: str,
    starts_with: str = "",
) -> None:
    """Reads the screen every `poll_s` until one of `buttons` shows (within `BUTTON_S` and the
    budget) and taps its centre; ElementNotFound(`missing`) when none did."""
    give_up = time.monotonic() + min(BUTTON_S, budget.left())
    while True:
        button = first_button(parse_hierarchy(ui.dump(budget)), buttons, starts_with=starts_with)
        if button is not None:
            break
        if time.monotonic() + poll_s >= give_up:
            raise ElementNotFound(missing)
        time.sleep(poll_s)  # the UI poll (wait_poll_ms) while the app opens its form
    ui.tap(budget, *button.center)
