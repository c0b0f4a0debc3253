"""SYSTEM_DIALOG: the system's dialogs about an app, found in the screens the runtime reads anyway.

An "isn't responding" (ANR) or "keeps stopping" (crash) dialog is system_server's (package
`android`), as AOSP lays it out (frameworks/base core/res/res/layout/app_anr_dialog.xml,
app_error_dialog.xml): its title in `android:id/alertTitle` ("System UI isn't responding",
"Messages keeps stopping"), its buttons `android:id/aerr_*` ("Close app", "Wait", "App info").
A runtime permission prompt is the permission controller's (com.google.android.permissioncontroller
or com.android.permissioncontroller; ids `permission_allow_button`, `permission_deny_button`, ...,
its question in `permission_message`). Any other alert of the system's own (package `android`,
an `android:id/alertTitle`) is `other`. `find_dialog` reads one from a screen's tree; `DialogWatch`
says each only once while it stays up (one event per dialog appearing, not one per read).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from phoneuse_runtime.screen.ui import UiNode

DialogKind = Literal["anr", "crash", "permission", "other"]
SYSTEM_SERVER = "android"  # the package of the system's own windows, its dialogs among them
PERMISSION_CONTROLLERS = frozenset(
    {"com.google.android.permissioncontroller", "com.android.permissioncontroller"}
)
# The English titles (anr_process, anr_activity_application, aerr_application_repeated, aerr_application).
_TITLE = re.compile(r"^(?P<label>.+?) (?P<said>isn't responding|keeps stopping|has stopped)$")
_KINDS: dict[str, DialogKind] = {"isn't responding": "anr", "keeps stopping": "crash", "has stopped": "crash"}
# The ANR dialog's "Wait", "Close app": on any language, by id.
ANR_IDS = frozenset({"android:id/aerr_wait"})
# "Allow <b>Maps</b> to access this device's location?"
_ASKS = re.compile(r"^Allow (?P<label>.+?) to ")


@dataclass(frozen=True, slots=True)
class SystemDialog:
    kind: DialogKind
    label: str  # the app it is about, as the dialog names it
    title: str
    buttons: tuple[str, ...]
    button_ids: tuple[str, ...]


def _buttons(nodes: list[UiNode]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    pressed = [n for n in nodes if n.clickable and (n.text or n.description)]
    return tuple(n.text or n.description for n in pressed), tuple(n.resource_id for n in pressed)


def find_dialog(root: UiNode) -> SystemDialog | None:
    """The system dialog the screen shows, if any."""
    nodes = list(root.walk())
    system = [n for n in nodes if n.package == SYSTEM_SERVER]
    errors = [n for n in system if n.resource_id.startswith("android:id/aerr_")]
    if errors:
        title = next((n.text for n in system if n.resource_id == "android:id/alertTitle"), "")
        match = _TITLE.match(title)
        ids = {n.resource_id for n in errors}
        kind: DialogKind = _KINDS[match.group("said")] if match else ("anr" if ids & ANR_IDS else "crash")
        buttons, button_ids = _buttons(system)
        return SystemDialog(kind, match.group("label") if match else "", title, buttons, button_ids)
    titled = next((n.text for n in system if n.resource_id == "android:id/alertTitle"), None)
    if titled is not None:  # another of the system's own alerts (an app's are drawn in its package)
        buttons, button_ids = _buttons(system)
        return SystemDialog("other", "", titled, buttons, button_ids)
    asked = [n for n in nodes if n.package in PERMISSION_CONTROLLERS]
    if any(n.resource_id.endswith(":id/permission_message") for n in asked):
        title = next((n.text for n in asked if n.resource_id.endswith(":id/permission_message")), "")
        match = _ASKS.match(title)
        buttons, button_ids = _buttons(asked)
        return SystemDialog("permission", match.group("label") if match else "", title, buttons, button_ids)
    return None


# The dialogs' windows as `dumpsys window` names them (AppNotRespondingDialog, AppErrorDialog
# set these titles; the permission prompt is the controller's GrantPermissionsActivity).
WINDOW_KINDS: dict[str, DialogKind] = {"Application Not Responding": "anr", "Application Error": "crash"}
GRANT_ACTIVITY = "GrantPermissionsActivity"


def dialog_of_window(package: str, title: str) -> tuple[DialogKind | None, str]:
    """(kind, the package it is about) of the focused window `package`/`title`, or (None, "")."""
    if package == SYSTEM_SERVER:
        kind, sep, process = title.partition(": ")
        if sep and kind in WINDOW_KINDS:
            return WINDOW_KINDS[kind], process.split(":", 1)[0]
    if package in PERMISSION_CONTROLLERS and title.endswith(GRANT_ACTIVITY):
        return "permission", ""
    return None, ""


class DialogWatch:
    """Which kind of system dialog the last read showed (a screen's tree, or the focused window
    an event poll read): a dialog is new when the read before showed none, or another kind."""

    def __init__(self) -> None:
        self._up: DialogKind | None = None

    def appeared(self, kind: DialogKind | None) -> bool:
        appeared = kind is not None and kind != self._up
        self._up = kind
        return appeared
