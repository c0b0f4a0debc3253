"""STALE_SCREEN: a gesture at coordinates lands only on the windows of the screen its caller read.

A point (TAP, LONG_PRESS, SWIPE with x/y) was computed from the last screen the caller was given
(DUMP_UI, a settled action's screen, SCREENSHOT's marks): `SeenScreen`, the packages that screen
showed, kept per caller beside the device's refs (ref_memory.py). While the action runs its
gesture, `expecting` hands that screen to the device's primitives (a context variable, as the
front guard is), and the device checks, where it reads the front anyway (adb: the one shell
script that reads the focused window and injects the gesture; the sim: its stack), that the
window in front is one of them; else the gesture is not done (`StaleScreen`). A window of
another app coming up over it (an "isn't responding" dialog, a call, another app) makes the
point mean something else on screen.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from phoneuse_runtime.kernel.errors import StaleScreen
from phoneuse_runtime.screen.dialogs import SYSTEM_SERVER
from phoneuse_runtime.screen.ui import UiNode, front_package


@dataclass(frozen=True, slots=True)
class SeenScreen:
    """The last screen a caller was given: its app, and every package it showed (the app, the
    status bar, a keyboard, a dialog)."""

    app: str
    packages: frozenset[str]

    def shows(self, package: str) -> bool:
        return package in self.packages


def seen_screen(root: UiNode) -> SeenScreen:
    return SeenScreen(front_package(root), frozenset(n.package for n in root.walk() if n.package))


_EXPECTED: contextvars.ContextVar[SeenScreen | None] = contextvars.ContextVar(
    "phoneuse_expected_screen", default=None
)


@contextmanager
def expecting(seen: SeenScreen | None) -> Iterator[None]:
    """The gestures run inside check the front against `seen` (None: no check)."""
    token = _EXPECTED.set(seen)
    try:
        yield
    finally:
        _EXPECTED.reset(token)


def expected() -> SeenScreen | None:
    """The screen the current gesture was aimed at, or None (no check)."""
    return _EXPECTED.get()


def shown(package: str, activity: str) -> str:
    """What is in front, for the message: a system dialog by its window's title."""
    if package == SYSTEM_SERVER and activity:
        return f'a system dialog ("{activity}")'
    return package or "an unknown window"


def stale(package: str, activity: str, seen: SeenScreen) -> StaleScreen:
    """The failure of a gesture that found `package` (its window `activity`) in front."""
    return StaleScreen(
        f"{shown(package, activity)} is in front now, not {seen.app or 'the app'} of your last screen; "
        "read the screen again",
        details={"front": package, "screen": seen.app},
    )


def check_front(package: str, activity: str = "") -> None:
    """StaleScreen when the current gesture expects a screen and the window in front (`package`,
    its activity or title) is none of its windows (an unknown front is let through: nothing says
    it changed)."""
    seen = expected()
    if seen is not None and package and not seen.shows(package):
        raise stale(package, activity, seen)
