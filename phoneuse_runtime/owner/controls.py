"""The owner's controls: the apps and screens the agent never drives.

An approval is worth only what the agent cannot do around it. On the phone itself the agent
could tap Approve in the Iris app, pull down the notification shade and answer the approval
notification there, type into the runtime's own Termux, or switch the runtime's guard off in
Settings (accessibility, developer options, device admin, the default SMS app, app permissions).
So, for every caller but the owner (`Caller.owner`):

- a UI action (an `ActionSpec` with `drives_ui`: TAP, LONG_PRESS, SWIPE, SCROLL, TYPE_TEXT,
  CLEAR_TEXT, PRESS_KEY) while one of the `owner_apps` is in front is refused with
  PERMISSION_DENIED; the front is checked after the action got its turn on the phone: by the
  phone itself in the action's own command where the backend can (front_guard.py: adb), else
  read just before it runs (runtime.py). The notification shade and the lock screen are the system UI's
  (`com.android.systemui`), which the default list holds;
- a UI action that brings one of them to the front (a tap on its icon on the home screen, on its
  card in recents, on a link or a button of another app that opens it) is undone and refused:
  the runtime reads the front after the action, presses HOME, which leaves the owner's app as it
  was (its task and screens kept, in the background), and answers PERMISSION_DENIED
  (`brought_refusal`, runtime.py): on a phone that guards the front in the action's own command
  (adb) the front after is what the action's settle looked at last, so it costs no round trip,
  and with `settle_ms=0` the next look or guarded UI action judges it (`_brought_before`); on
  the other backends the front is read after the action.
  The system UI is the exception: the shade coming down, or the lock screen, is where the
  phone goes by itself, and shows only what NOTIFICATION_POSTED events tell; nothing in it is
  tapped (the point above);
- OPEN_APP, CLOSE_APP, OPEN_URL and START_INTENT aimed at one of them (by package, component or
  app_target), and START_INTENT of whatever reaches a screen that changes who guards the phone,
  judged by family (`guards`), not by name: the namespaces `android.settings.*`,
  `android.app.action.*` (device admin, policy, provisioning), `android.app.role.*`,
  `android.content.pm.action.*`, `android.telecom.action.*` (the default dialer); any action
  whose last part speaks of settings, installing, permissions, defaults, roles, admins, app info,
  managing, provisioning, passwords, accessibility or power usage (`SHOW_APP_INFO`,
  `INSTALL_PACKAGE`, `ACTION_CHANGE_DEFAULT`), or is `DELETE`; and any `package:` data. They are
  refused with PERMISSION_DENIED before any hold.

PERMISSION_DENIED, not DENIED: no person declined anything; this server does not let an agent
do it, as with SHELL without --allow-shell. The owner changes the list with `owner_apps`
(config.toml, PHONEUSE_OWNER_APPS); removing `com.android.settings` lets the agent into
Settings, every screen of it (one screen cannot be kept apart: the others are a tap away).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from phoneuse_runtime.config.owner import SYSTEM_UI

if TYPE_CHECKING:
    from phoneuse_runtime.config.sections import OwnerSettings
    from phoneuse_runtime.device.base import Foreground

# What an intent can reach, by family rather than by name (a list of names is only as good
# as the memory of whoever wrote it): the namespaces whose every action opens a settings,
# device-policy, role, package-manager or telecom-account screen...
GUARD_NAMESPACES = (
    "android.settings.",
    "android.app.action.",  # device admin and policy, provisioning, passwords
    "android.app.role.",
    "android.content.pm.action.",
    "android.telecom.action.",  # the default dialer, phone accounts, call settings
)
# ...and the words that, in the last part of any action's name, say it manages apps,
# permissions, defaults, roles or the device's guard ("SHOW_APP_INFO", "INSTALL_PACKAGE",
# "ACTION_CHANGE_DEFAULT", "MANAGE_APP_PERMISSIONS", "REQUEST_ROLE", "ADD_DEVICE_ADMIN").
GUARD_WORDS = (
    "SETTINGS",
    "INSTALL",
    "PERMISSION",
    "DEFAULT",
    "ROLE",
    "ADMIN",
    "APP_INFO",
    "APPLICATION_DETAILS",
    "MANAGE",
    "PROVISION",
    "PASSWORD",
    "ACCESSIBILITY",
    "POWER_USAGE",
)
GUARD_NAMES = frozenset({"DELETE"})  # the whole last part: android.intent.action.DELETE uninstalls
# A `package:` URI names an app to the package manager (app details, uninstall, install).
GUARD_SCHEME = "package"


def guards(action: str, data: str) -> bool:
    """Whether an intent with this action and data reaches a screen that changes who guards
    the phone (settings, device policy, roles, permissions, the package installer)."""
    if data.strip().lower().startswith(GUARD_SCHEME + ":"):
        return True
    if not action:
        return False
    if action.lower().startswith(GUARD_NAMESPACES):
        return True
    last = action.rsplit(".", 1)[-1].upper()
    return last in GUARD_NAMES or any(word in last for word in GUARD_WORDS)


HOW = "the agent never drives the owner's own controls (the owner_apps setting lists them)"


def package_refusal(owner: OwnerSettings, package: str, *, what: str) -> str | None:
    """Why `package` may not be opened, closed or sent an intent; None when it may."""
    if package.strip() in owner.owner_apps:
        return f"{what} {package.strip()} is one of the owner's controls: {HOW}"
    return None


# Whoever holds these decides every app's permissions: never changed by an agent, whatever
# `owner_apps` says (issue 27).
PERMISSION_CONTROLLERS = frozenset(
    {"com.google.android.permissioncontroller", "com.android.permissioncontroller"}
)


def permission_refusal(owner: OwnerSettings, package: str) -> str | None:
    """Why `package`'s permissions may not be granted or revoked; None when they may: the
    permission controller's, and those of the owner's controls (the Iris app, Termux, ...)."""
    if package.strip() in PERMISSION_CONTROLLERS:
        return f"{package.strip()} is the permission controller, which decides every app's permissions: {HOW}"
    return package_refusal(owner, package, what="app")


def intent_refusal(
    owner: OwnerSettings, *, action: str, package: str, component: str, data: str = ""
) -> str | None:
    """Why an intent may not be sent; None when it may."""
    action = action.strip()
    if guards(action, data) and "com.android.settings" in owner.owner_apps:
        what = f"intent action {action}" if action else f"intent data {data.strip()[:64]!r}"
        return f"{what} reaches the owner's settings or what guards the phone: {HOW}"
    for target, what in ((package, "package"), (component.split("/", 1)[0], "component of")):
        if target:
            refusal = package_refusal(owner, target, what=what)
            if refusal:
                return refusal
    return None


def brought_refusal(owner: OwnerSettings, front: Foreground) -> str | None:
    """Why a UI action that left `front` in front is undone; None when it may stay."""
    if front.package in owner.owner_apps and front.package != SYSTEM_UI:
        return (
            f"it brought {front.package} to the front, one of the owner's controls: {HOW}; "
            "the runtime pressed HOME to leave it as it was"
        )
    return None


def front_refusal(owner: OwnerSettings, front: Foreground) -> str | None:
    """Why a UI action may not run with `front` in front; None when it may."""
    if front.package in owner.owner_apps:
        shown = "the notification shade or lock screen" if front.package == SYSTEM_UI else front.package
        return f"{shown} is in front, one of the owner's controls: {HOW}; open another app first"
    return None
