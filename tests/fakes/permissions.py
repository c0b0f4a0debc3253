"""`pm grant`, `pm revoke` and the permissions `dumpsys package PKG` prints, as the phone does them.

PermissionManagerService's refusals, thrown to the shell (exit 255, `Exception occurred while
executing 'grant':` on stderr): an unknown package or permission (`IllegalArgumentException:
Unknown package: X`), one the app never asked for (`SecurityException: Package X has not requested
permission Y`), and an install-time one (`SecurityException: Permission Y requested by X is not a
changeable permission type` from Android 12, `Permission Y is not a changeable permission type`
before). Only the runtime ("dangerous") permissions below change.
"""

from __future__ import annotations

from .intents import CommandError
from .state import Package, PhoneState

P = "android.permission."
RUNTIME = frozenset(
    P + name
    for name in (
        "CAMERA",
        "RECORD_AUDIO",
        "READ_CONTACTS",
        "WRITE_CONTACTS",
        "READ_CALENDAR",
        "WRITE_CALENDAR",
        "ACCESS_FINE_LOCATION",
        "ACCESS_COARSE_LOCATION",
        "READ_SMS",
        "SEND_SMS",
        "RECEIVE_SMS",
        "READ_PHONE_STATE",
        "CALL_PHONE",
        "READ_CALL_LOG",
        "POST_NOTIFICATIONS",
        "READ_MEDIA_IMAGES",
        "READ_EXTERNAL_STORAGE",
    )
)
# Install-time permissions the framework defines (normal or signature): granted at install.
KNOWN = RUNTIME | {
    P + n for n in ("INTERNET", "ACCESS_NETWORK_STATE", "VIBRATE", "WAKE_LOCK", "FOREGROUND_SERVICE")
}


SENSITIVE = "USER_SENSITIVE_WHEN_GRANTED|USER_SENSITIVE_WHEN_DENIED"


def installed(state: PhoneState, pkg: Package) -> None:
    """What installing `pkg` grants: its install-time permissions; runtime ones wait for a grant."""
    pkg.granted |= {p for p in pkg.requested if p not in RUNTIME}


def change(state: PhoneState, package: str, permission: str, *, grant: bool) -> None:
    """`pm grant|revoke PACKAGE PERMISSION`; CommandError as PermissionManagerService throws."""
    pkg = state.packages.get(package)
    if pkg is None:
        raise CommandError("java.lang.IllegalArgumentException", f"Unknown package: {package}")
    if permission not in KNOWN and not permission.startswith(package):
        raise CommandError("java.lang.IllegalArgumentException", f"Unknown permission: {permission}")
    if permission not in pkg.requested:
        raise CommandError(
            "java.lang.SecurityException", f"Package {package} has not requested permission {permission}"
        )
    if permission not in RUNTIME:
        by = f" requested by {package}" if state.sdk >= 31 else ""
        raise CommandError(
            "java.lang.SecurityException", f"Permission {permission}{by} is not a changeable permission type"
        )
    if grant:
        pkg.granted.add(permission)
    else:
        pkg.granted.discard(permission)


def dump_lines(pkg: Package) -> tuple[str, str]:
    """The permission sections of `dumpsys package PKG`: those above `User 0:` and those in it."""
    if not pkg.requested:
        return "    install permissions:\n      android.permission.INTERNET: granted=true\n", ""
    above = "    requested permissions:\n" + "".join(f"      {p}\n" for p in pkg.requested)
    install = [p for p in pkg.requested if p not in RUNTIME and p in pkg.granted]
    if install:
        above += "    install permissions:\n" + "".join(f"      {p}: granted=true\n" for p in install)
    runtime = [p for p in pkg.requested if p in RUNTIME]
    user = ""
    if runtime:
        user = "      runtime permissions:\n" + "".join(
            f"        {p}: granted={'true' if p in pkg.granted else 'false'}, "
            f"flags=[ {'USER_SET|' if p in pkg.granted else ''}{SENSITIVE}]\n"
            for p in runtime
        )
    return above, user
