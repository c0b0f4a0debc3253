"""Installing, uninstalling, granting and revoking through `pm`, and reading the result back.

`pm` (PackageManagerShellCommand) answers an install or uninstall on stdout with `Success` or
`Failure [CODE: message]` (`Failure [INSTALL_FAILED_VERSION_DOWNGRADE]`, `Failure
[DELETE_FAILED_INTERNAL_ERROR]`, `Failure [not installed for 0]`), and a refused grant or revoke
with a Java exception on stderr, exit 255: `Exception occurred while executing 'grant':` and
`java.lang.SecurityException: Permission android.permission.INTERNET requested by com.foo is not
a changeable permission type` (Android 12+; `Permission X is not a changeable permission type`
before), `Package com.foo has not requested permission android.permission.CAMERA`,
`java.lang.IllegalArgumentException: Unknown package: com.foo` or `Unknown permission: X`.
Each becomes a typed error here, with pm's own words.

The read-back is `dumpsys package PKG`: its `Package [PKG]` block (versionName, versionCode,
pkgFlags with SYSTEM) and its permissions: `install permissions:` and, under `User 0:`, `runtime
permissions:`, each line `android.permission.X: granted=true[, flags=[ ... ]]`; before Android 6,
`grantedPermissions:` lists the granted names alone.
"""

from __future__ import annotations

import re

from phoneuse_runtime.device.adb.apps import check_package
from phoneuse_runtime.device.adb.shell import command
from phoneuse_runtime.device.base import PackageState
from phoneuse_runtime.kernel.errors import InvalidParams, PermissionDenied, RuntimeFailure, Unsupported
from phoneuse_runtime.util.apk import PERMISSION_NAME

REMOTE_DIR = "/data/local/tmp"  # the shell user's own directory, which pm may read
_FAILURE = re.compile(r"Failure \[([^\]:]+)(?::\s*([^\]]*))?\]")
_EXCEPTION = re.compile(r"\b(java\.lang\.\w+Exception|Error):\s*(.+)")
_GRANTED = re.compile(r"^\s+([\w.]+): granted=(true|false)")
_VERSION_NAME = re.compile(r"^\s+versionName=(.*)$", re.MULTILINE)
_VERSION_CODE = re.compile(r"^\s+versionCode=(\d+)", re.MULTILINE)
_FLAGS = re.compile(r"^\s+pkgFlags=\[([^\]]*)\]", re.MULTILINE)

# Install failures that say the APK itself is not one this phone can read: the caller's to fix.
_BAD_APK = ("INSTALL_PARSE_FAILED", "INSTALL_FAILED_INVALID_APK", "INSTALL_FAILED_INVALID_URI")


def check_permission(permission: str) -> str:
    """A permission name as Android writes them; anything else never reaches a command line."""
    if not PERMISSION_NAME.match(permission):
        raise InvalidParams(f"{permission!r} is not an Android permission name")
    return permission


def install_command(phone_path: str) -> str:
    """`pm install -r PATH`: -r replaces an installed app, keeping its data (as `adb install -r`)."""
    return command("pm", "install", "-r", phone_path)


def uninstall_command(package: str) -> str:
    return command("pm", "uninstall", check_package(package))


def permission_command(package: str, permission: str, *, granted: bool) -> str:
    verb = "grant" if granted else "revoke"
    return command("pm", verb, check_package(package), check_permission(permission))


def dump_command(package: str) -> str:
    return command("dumpsys", "package", check_package(package))


def list_command(package: str) -> str:
    """`pm list packages PKG`: every installed package whose name contains PKG (read exactly)."""
    return command("pm", "list", "packages", check_package(package))


def pm_failure(output: str, *, what: str) -> RuntimeFailure | None:
    """The typed error for an install's or uninstall's answer; None for `Success`."""
    if any(line.strip() == "Success" for line in output.splitlines()):
        return None
    found = _FAILURE.search(output)
    said = found.group(0) if found else (output.strip().splitlines() or ["no answer"])[-1][:300]
    code = found.group(1).strip() if found else ""
    if code.startswith(_BAD_APK):
        return InvalidParams(f"{what}: the phone cannot read this APK: {said}")
    if code.startswith("not installed"):
        return InvalidParams(f"{what}: the package is not installed ({said})")
    if code == "DELETE_FAILED_INTERNAL_ERROR":
        return Unsupported(
            f"{what}: the phone refused ({said}): a system app, or not installed; "
            "pm uninstalls only apps the user installed"
        )
    exception = _EXCEPTION.search(output)
    if exception and not found:
        return Unsupported(f"{what}: pm failed: {exception.group(0).strip()[:300]}")
    return Unsupported(f"{what}: the phone refused: {said}")


def permission_failure(exit_code: int, output: str, *, what: str) -> RuntimeFailure | None:
    """The typed error for a grant's or revoke's answer; None when it went through."""
    exception = _EXCEPTION.search(output)
    if exception is None:
        if exit_code == 0:
            return None
        return Unsupported(f"{what}: pm exited {exit_code}: {output.strip()[:300]}")
    kind, message = exception.group(1), exception.group(2).strip()[:300]
    if "not a changeable permission type" in message:
        return Unsupported(
            f"{what}: {message} (an install-time permission: the system grants it when the app "
            "is installed, and only a runtime one is granted or revoked)"
        )
    if "has not requested permission" in message:
        return InvalidParams(f"{what}: {message}")
    if "Unknown package" in message or "Unknown permission" in message:
        return InvalidParams(f"{what}: {message}")
    if kind == "java.lang.SecurityException":
        return PermissionDenied(f"{what}: the phone refused: {message}")
    return Unsupported(f"{what}: pm failed: {kind}: {message}")


def _package_block(dump: str, package: str) -> str | None:
    """The lines of the first `Package [PKG]` block (they stop at the next line indented as much)."""
    lines = dump.splitlines()
    head = f"Package [{package}]"
    for i, line in enumerate(lines):
        if line.strip().startswith(head):
            indent = len(line) - len(line.lstrip())
            block = []
            for rest in lines[i + 1 :]:
                if rest.strip() and len(rest) - len(rest.lstrip()) <= indent:
                    break
                block.append(rest)
            return "\n".join(block)
    return None


def parse_package_dump(dump: str, package: str) -> PackageState | None:
    """`PackageState` from `dumpsys package PKG`; None when the package is not in it."""
    block = _package_block(dump, package)
    if block is None:
        return None
    name = _VERSION_NAME.search(block)
    code = _VERSION_CODE.search(block)
    flags = _FLAGS.search(block)
    granted: set[str] = set()
    denied: set[str] = set()
    section = ""
    for line in block.splitlines():
        stripped = line.strip()
        if stripped.endswith(":") and " " not in stripped.rstrip(":").strip():
            section = stripped[:-1]
            continue
        if stripped.startswith(("runtime permissions:", "install permissions:")):
            section = stripped.split(":", 1)[0]
            continue
        found = _GRANTED.match(line)
        if found:
            (granted if found.group(2) == "true" else denied).add(found.group(1))
        elif section == "grantedPermissions" and PERMISSION_NAME.match(stripped):
            granted.add(stripped)
    return PackageState(
        package=package,
        version_name=name.group(1).strip() if name else "",
        version_code=int(code.group(1)) if code else None,
        system="SYSTEM" in (flags.group(1).split() if flags else []),
        granted=frozenset(granted),
        denied=frozenset(denied - granted),
    )


def listed(output: str, package: str) -> bool:
    """Whether `pm list packages` printed exactly `package:PKG` (its filter is a substring)."""
    return any(line.strip() == f"package:{package}" for line in output.splitlines())
