"""The owner's-controls check (owner/controls.py) done by the phone, in the action's own command.

A UI action must never run while one of the owner's apps is in front. The runtime used to read
what is in front before each UI action (`Device.foreground`): a device round trip of its own,
and a moment between the read and the action in which the front could change. A backend whose
phone can check the front in the same command that acts (`Device.guards_front`) is handed the
packages that must not be in front (`FrontGuard`, for the action's task, as the deadline is);
each of its UI primitives then refuses, on the phone and before it acts, while one of them is
in front, raising `FrontRefused` with what it found there. The runtime turns that into
PERMISSION_DENIED for an owner's app, or into a hold for a package in `approve_ui_in` (then runs
the action again once approved: the refusing primitive did nothing).

On adb (device/adb): uiautomator2's element calls take a selector that UiAutomator resolves in
the active window only (an `instance` in the selector: UiObject, not UiObject2) and whose
package must not be a guarded one (`packageNameMatches`), so an element is found only while an
unguarded app holds the focus; typing's one shell script reads the focused window first and
types nothing while a guarded one has it, and so does, on Android 11+ (where `input` is `cmd
input`), the one script that injects a gesture at coordinates or a key with `input`; before
Android 11 those read the front in the same worker call, just before uiautomator2 acts.
"""

from __future__ import annotations

import contextvars
from dataclasses import dataclass

from phoneuse_runtime.device.base import Foreground
from phoneuse_runtime.kernel.errors import PermissionDenied


@dataclass(frozen=True, slots=True)
class FrontGuard:
    """The packages that must not be in front while the current action drives the UI."""

    refused: frozenset[str]

    def refuses(self, package: str) -> bool:
        return package in self.refused


class FrontRefused(PermissionDenied):
    """A guarded primitive found one of `FrontGuard.refused` in front and did nothing."""

    def __init__(self, front: Foreground) -> None:
        super().__init__(f"{front.package or 'an unknown app'} is in front")
        self.front = front


_GUARD: contextvars.ContextVar[FrontGuard | None] = contextvars.ContextVar(
    "phoneuse_front_guard", default=None
)


def set_guard(guard: FrontGuard | None) -> contextvars.Token[FrontGuard | None]:
    return _GUARD.set(guard)


def reset_guard(token: contextvars.Token[FrontGuard | None]) -> None:
    _GUARD.reset(token)


def current_guard() -> FrontGuard | None:
    """The guard of the action this task runs, or None (the owner's calls, reads, other backends)."""
    return _GUARD.get()
