"""The sim's package manager: the apps INSTALL_APP put on it, and every app's permissions.

The built-in apps (catalog.py) stay: the sim's screens draw them, so only an app installed here
can be uninstalled (a built-in one answers UNSUPPORTED, as a system app does on a phone). An
installed app is what its APK's manifest says (util/apk.py): package, version, permissions. A
permission is granted or revoked as Android does it from a shell: only a runtime ("dangerous")
one the app asked for; an install-time one is granted at install and is not a changeable
permission type; one it did not ask for is refused. The table lives in memory (not the state file).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from phoneuse_runtime.device.base import AppInfo, PackageState
from phoneuse_runtime.device.sim.catalog import BY_PACKAGE, CONTACTS, DIALER, MESSAGES, WHATSAPP
from phoneuse_runtime.kernel.errors import InvalidParams, Unsupported
from phoneuse_runtime.util.apk import Manifest

P = "android.permission."
# The runtime permissions (protectionLevel dangerous) of the framework's manifest that the sim knows.
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
        "READ_MEDIA_VIDEO",
        "READ_EXTERNAL_STORAGE",
        "BODY_SENSORS",
        "NEARBY_WIFI_DEVICES",
    )
)
# What the built-in apps asked for and hold at first.
_BUILT_IN: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    MESSAGES: ((P + "SEND_SMS", P + "READ_SMS", P + "READ_CONTACTS"), (P + "SEND_SMS", P + "READ_SMS")),
    DIALER: ((P + "CALL_PHONE", P + "READ_CALL_LOG", P + "READ_CONTACTS"), (P + "CALL_PHONE",)),
    CONTACTS: ((P + "READ_CONTACTS", P + "WRITE_CONTACTS"), (P + "READ_CONTACTS", P + "WRITE_CONTACTS")),
    WHATSAPP: (
        (P + "CAMERA", P + "READ_CONTACTS", P + "RECORD_AUDIO", P + "INTERNET"),
        (P + "READ_CONTACTS",),
    ),
}


@dataclass
class SimPackage:
    package: str
    version_name: str
    version_code: int | None
    requested: tuple[str, ...]
    granted: set[str]
    system: bool


@dataclass
class SimPackages:
    installed: dict[str, SimPackage] = field(default_factory=dict)  # by INSTALL_APP
    _built_in: dict[str, SimPackage] = field(default_factory=dict)

    def _find(self, package: str) -> SimPackage | None:
        if package in self.installed:
            return self.installed[package]
        app = BY_PACKAGE.get(package)
        if app is None:
            return None
        found = self._built_in.get(package)
        if found is None:
            requested, granted = _BUILT_IN.get(package, ((), ()))
            held = set(granted) | {p for p in requested if p not in RUNTIME}
            found = self._built_in[package] = SimPackage(package, "1.0", 1, requested, held, app.system)
        return found

    def apps(self) -> list[AppInfo]:
        return [
            AppInfo(p.package, p.package.rsplit(".", 1)[-1].title(), "", False)
            for p in self.installed.values()
        ]

    def install(self, manifest: Manifest) -> None:
        old = self._find(manifest.package)
        if old is not None and manifest.package not in self.installed:
            raise Unsupported(
                f"Failure [INSTALL_FAILED_UPDATE_INCOMPATIBLE: {manifest.package} is one of the sim's "
                "built-in apps, signed otherwise]"
            )
        if old is not None and old.version_code and (manifest.version_code or 0) < old.version_code:
            raise Unsupported(
                f"Failure [INSTALL_FAILED_VERSION_DOWNGRADE]: {manifest.package} {old.version_name} is newer"
            )
        kept = old.granted if old is not None else set()  # -r keeps what was granted
        install_time = {p for p in manifest.permissions if p not in RUNTIME}
        self.installed[manifest.package] = SimPackage(
            manifest.package,
            manifest.version_name,
            manifest.version_code,
            manifest.permissions,
            install_time | (kept & set(manifest.permissions)),
            system=False,
        )

    def uninstall(self, package: str) -> None:
        if package in self.installed:
            del self.installed[package]
            return
        if package in BY_PACKAGE:
            raise Unsupported(
                f"Failure [DELETE_FAILED_INTERNAL_ERROR]: {package} is one of the sim's built-in apps, "
                "which stay (its screens draw them); the sim uninstalls the apps INSTALL_APP installed"
            )
        raise InvalidParams(f"Failure [not installed for 0]: {package} is not installed")

    def set_permission(self, package: str, permission: str, *, granted: bool) -> None:
        found = self._find(package)
        if found is None:
            raise InvalidParams(f"java.lang.IllegalArgumentException: Unknown package: {package}")
        if permission not in found.requested:
            raise InvalidParams(
                f"java.lang.SecurityException: Package {package} has not requested permission {permission}"
            )
        if permission not in RUNTIME:
            raise Unsupported(
                f"java.lang.SecurityException: Permission {permission} requested by {package} is not a "
                "changeable permission type (an install-time permission, granted at install)"
            )
        if granted:
            found.granted.add(permission)
        else:
            found.granted.discard(permission)

    def state(self, package: str) -> PackageState | None:
        found = self._find(package)
        if found is None:
            return None
        return PackageState(
            package=package,
            version_name=found.version_name,
            version_code=found.version_code,
            system=found.system,
            granted=frozenset(found.granted),
            denied=frozenset(p for p in found.requested if p in RUNTIME and p not in found.granted),
        )
