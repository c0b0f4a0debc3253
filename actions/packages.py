"""The phone's apps and permissions, the owner's to decide (issue 27): INSTALL_APP, UNINSTALL_APP,
GRANT_PERMISSION, REVOKE_PERMISSION.

Each is one of the `owner_actions`: held for the owner's approval under every approvals mode but
off, even with nothing paired (the terminal's `approvals` answers). Before any hold, the owner's
own apps are refused (owner/controls.py): no uninstalling the Iris app or Termux, no permission
changed on the permission controller or on one of the `owner_apps`, no APK installed whose
package is one of them (a replacement of the Iris app).

INSTALL_APP's `apk` is a bare file name in the runtime's files directory (DATA_DIR/files/: no
`/`, no `..`, a regular file, not a symlink), whose manifest is read before the hold (util/apk.py),
so the approval names the APK (its sha256), its package, version and permissions; or an absolute
path on the phone under its shared storage (/sdcard/, /storage/emulated/0/) or /data/local/tmp/,
copied off the phone and read the same way before the hold (a read: no act). Either way the
runtime installs a private copy of the bytes it checked: an APK swapped after the owner read its
approval is refused (CONFLICT).
Every action answers with what the phone reads back afterwards (`verified`).
"""

from __future__ import annotations

import asyncio
import os
import posixpath
import shutil
import stat
import tempfile
from pathlib import Path

from pydantic import Field, field_validator

from phoneuse_runtime.config.settings import Settings
from phoneuse_runtime.device.base import PackageState
from phoneuse_runtime.kernel.capabilities import APPS
from phoneuse_runtime.kernel.errors import Conflict, InvalidParams, PermissionDenied
from phoneuse_runtime.kernel.params import Params
from phoneuse_runtime.kernel.registry import ActionContext, ActionResult, ActionSpec
from phoneuse_runtime.owner.controls import package_refusal, permission_refusal
from phoneuse_runtime.owner.paths import files_dir, phone_path, runtime_file, runtime_name
from phoneuse_runtime.util.apk import (
    PACKAGE_NAME,
    PERMISSION_NAME,
    ApkError,
    Manifest,
    file_sha256,
    read_apk,
)

# Where an APK on the phone may be named: its shared storage, and the shell user's own directory.
SHELL_TMP = "/data/local/tmp/"  # the shell's own directory, beside shared storage
MAX_APK_BYTES = 1024 * 1024 * 1024  # the copy the runtime installs; Play's own limit is 4 GB with splits
SHOWN_PERMISSIONS = 40  # in the approval's text; the result lists them all


def _package(value: str) -> str:
    if not PACKAGE_NAME.match(value):
        raise ValueError(f"{value[:80]!r} is not an Android package name, e.g. com.example.app")
    return value


class InstallAppParams(Params):
    apk: str = Field(
        min_length=1,
        max_length=1024,
        description="a file name in the runtime's files directory (DATA_DIR/files), e.g. notes.apk, "
        "or an absolute path on the phone under /sdcard/, /storage/emulated/0/ or /data/local/tmp/",
    )

    @field_validator("apk")
    @classmethod
    def _printable(cls, value: str) -> str:
        if not value.isprintable():
            raise ValueError("apk has control characters")
        return value

    @property
    def on_phone(self) -> bool:
        return self.apk.startswith("/")


class InstallAppResult(ActionResult):
    apk: str
    package: str
    version_name: str
    version_code: int | None
    permissions: list[str] = Field(description="the permissions its manifest asks for")
    sha256: str = Field(description="of the APK installed")
    replaced: bool = Field(description="an older install of the package was replaced, its data kept")
    granted: list[str] = Field(description="the permissions it holds now, read back")
    verified: bool = Field(description="the phone lists the package afterwards, at the APK's versionCode")


class UninstallAppParams(Params):
    package: str = Field(min_length=1, max_length=255, description="e.g. com.example.notes")

    @field_validator("package")
    @classmethod
    def _name(cls, value: str) -> str:
        return _package(value)


class UninstallAppResult(ActionResult):
    package: str
    verified: bool = Field(description="the phone no longer lists the package")


class PermissionParams(Params):
    package: str = Field(min_length=1, max_length=255, description="e.g. com.example.notes")
    permission: str = Field(min_length=1, max_length=255, description="e.g. android.permission.CAMERA")

    @field_validator("package")
    @classmethod
    def _name(cls, value: str) -> str:
        return _package(value)

    @field_validator("permission")
    @classmethod
    def _permission(cls, value: str) -> str:
        if not PERMISSION_NAME.match(value):
            raise ValueError(
                f"{value[:80]!r} is not an Android permission name, e.g. android.permission.CAMERA"
            )
        return value


class PermissionResult(ActionResult):
    package: str
    permission: str
    granted: bool = Field(description="whether the package holds the permission now, read back")
    verified: bool = Field(description="the read-back shows the change asked for")


# --- where an APK may come from ----------------------------------------------------------------


def local_apk(settings: Settings, name: str) -> Path:
    """The APK named `name` in the files directory, by the files' path rules (owner/paths.py:
    one plain name, nothing leading out of it), a regular file and not a symlink."""
    runtime_name(name)
    folder = files_dir(settings.data_dir)
    path = runtime_file(folder, name)
    try:
        info = (folder / name).lstat()
    except FileNotFoundError:
        raise InvalidParams(
            f"apk {name!r}: no such file in the runtime's files directory ({folder})"
        ) from None
    except OSError as exc:
        raise InvalidParams(f"apk {name!r}: {exc.strerror or exc}") from exc
    if stat.S_ISLNK(info.st_mode):
        raise PermissionDenied(
            f"apk {name!r} is a symlink: only a regular file of the files directory is read"
        )
    if not stat.S_ISREG(info.st_mode):
        raise InvalidParams(f"apk {name!r} is not a regular file")
    if info.st_size > MAX_APK_BYTES:
        raise InvalidParams(f"apk {name!r} is {info.st_size} bytes, past the {MAX_APK_BYTES} an APK may be")
    return path


def phone_apk(path: str) -> str:
    """An absolute path on the phone: in shared storage by the files' path rules (owner/paths.py:
    no '..', not an app's own folder), or in the shell's own /data/local/tmp/."""
    if path.startswith(SHELL_TMP):
        if ".." in path.split("/") or posixpath.normpath(path) != path.rstrip("/") or "//" in path:
            raise PermissionDenied(
                f"apk {path!r}: a path on the phone is written plainly, with no '..' and no '//'"
            )
        return path
    phone_path(path)
    if posixpath.normpath(path) != path.rstrip("/") or "//" in path:
        raise PermissionDenied(f"apk {path!r}: a path on the phone is written plainly, with no '//'")
    return path


def _owners_package(ctx: ActionContext, package: str, *, what: str) -> None:
    """PERMISSION_DENIED for one of the owner's controls, unless the owner asks."""
    if not ctx.caller.owner:
        refusal = package_refusal(ctx.settings.owner, package, what=what)
        if refusal is not None:
            raise PermissionDenied(f"{ctx.name}: {refusal}")


def _manifest(path: Path, shown: str) -> Manifest:
    try:
        return read_apk(path)
    except ApkError as exc:
        raise InvalidParams(f"apk {shown!r} is not an APK this runtime can read: {exc}") from exc


def describe_apk(shown: str, manifest: Manifest, sha256: str, size: int) -> str:
    """What the owner reads: the APK, its package and version, and the permissions it asks for."""
    perms = list(manifest.permissions)
    listed = ", ".join(perms[:SHOWN_PERMISSIONS]) or "none"
    more = f" and {len(perms) - SHOWN_PERMISSIONS} more" if len(perms) > SHOWN_PERMISSIONS else ""
    code = f" (versionCode {manifest.version_code})" if manifest.version_code is not None else ""
    return (
        f"APK {shown} ({size} bytes, sha256 {sha256}) installs package {manifest.package} "
        f"{manifest.version_name or '(no versionName)'}{code}, asking for {len(perms)} "
        f"permission{'s' if len(perms) != 1 else ''}: {listed}{more}"
    )


# --- INSTALL_APP ------------------------------------------------------------------------------


def _check_install(ctx: ActionContext, p: InstallAppParams) -> None:
    """Before any hold: the path's rules; for a file of the files directory, its manifest read
    (a malformed APK is INVALID_PARAMS) and its package not one of the owner's controls."""
    if p.on_phone:
        phone_apk(p.apk)
        return
    path = local_apk(ctx.settings, p.apk)
    _owners_package(ctx, _manifest(path, p.apk).package, what="the APK's package")


async def _describe_install(ctx: ActionContext, p: InstallAppParams) -> str:
    """What the owner is asked about, read before any hold: the APK's package, version and
    permissions (an owner's app is refused here). An APK on the phone is copied off it to be
    read (a read, never an act); the install copies it again and compares."""
    if not p.on_phone:
        path = local_apk(ctx.settings, p.apk)

        def read() -> str:  # hashing a large APK is no work for the event loop
            manifest = _manifest(path, p.apk)
            _owners_package(ctx, manifest.package, what="the APK's package")
            return describe_apk(p.apk, manifest, file_sha256(path), path.stat().st_size)

        return await asyncio.to_thread(read)
    work = await _workdir(ctx.settings.data_dir)
    try:
        copy = work / "app.apk"
        await ctx.device.pull_apk(phone_apk(p.apk), copy, max_bytes=MAX_APK_BYTES)
        manifest = await asyncio.to_thread(_manifest, copy, p.apk)
        _owners_package(ctx, manifest.package, what="the APK's package")
        sha256 = await asyncio.to_thread(file_sha256, copy)
        return describe_apk(p.apk, manifest, sha256, copy.stat().st_size)
    finally:
        await asyncio.to_thread(shutil.rmtree, work, True)


async def _workdir(data_dir: Path) -> Path:
    """A private directory of the data dir for an APK's copy, which the caller removes."""
    await asyncio.to_thread(data_dir.mkdir, parents=True, exist_ok=True)
    return Path(await asyncio.to_thread(tempfile.mkdtemp, prefix=".install-", dir=data_dir))


def _copy(source: Path, dest: Path) -> None:
    """A private copy, read through a descriptor that does not follow a symlink swapped in."""
    fd = os.open(source, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as src, dest.open("wb") as out:
        copied = 0
        while chunk := src.read(1 << 20):
            copied += len(chunk)
            if copied > MAX_APK_BYTES:
                raise InvalidParams(f"the APK grew past the {MAX_APK_BYTES} bytes an APK may be")
            out.write(chunk)


async def install_app(ctx: ActionContext, p: InstallAppParams) -> InstallAppResult:
    work = await _workdir(ctx.settings.data_dir)
    try:
        copy = work / "app.apk"
        if p.on_phone:
            await ctx.device.pull_apk(phone_apk(p.apk), copy, max_bytes=MAX_APK_BYTES)
        else:
            await asyncio.to_thread(_copy, local_apk(ctx.settings, p.apk), copy)
        manifest = await asyncio.to_thread(_manifest, copy, p.apk)
        _owners_package(ctx, manifest.package, what="the APK's package")  # swapped after the approval
        sha256 = await asyncio.to_thread(file_sha256, copy)
        size = copy.stat().st_size
        if ctx.about and describe_apk(p.apk, manifest, sha256, size) != ctx.about:
            raise Conflict(
                f"apk {p.apk!r} changed after it was read for the approval: nothing was installed; ask again"
            )
        before = await ctx.device.package_state(manifest.package)
        via = await ctx.device.install_apk(local=copy)
        after = await ctx.device.package_state(manifest.package)
    finally:
        await asyncio.to_thread(shutil.rmtree, work, True)
    verified = after is not None and (
        manifest.version_code is None or after.version_code in (None, manifest.version_code)
    )
    return InstallAppResult(
        apk=p.apk,
        package=manifest.package,
        version_name=manifest.version_name,
        version_code=manifest.version_code,
        permissions=list(manifest.permissions),
        sha256=sha256,
        replaced=before is not None,
        granted=sorted(after.granted) if after else [],
        verified=verified,
        via=via,
    )


# --- UNINSTALL_APP ------------------------------------------------------------------------------


def _check_uninstall(ctx: ActionContext, p: UninstallAppParams) -> None:
    _owners_package(ctx, p.package, what="package")


async def uninstall_app(ctx: ActionContext, p: UninstallAppParams) -> UninstallAppResult:
    if await ctx.device.package_state(p.package) is None:
        raise InvalidParams(f"{p.package} is not installed")
    via = await ctx.device.uninstall_app(p.package)
    after = await ctx.device.package_state(p.package)
    return UninstallAppResult(package=p.package, verified=after is None, via=via)


# --- GRANT_PERMISSION, REVOKE_PERMISSION -------------------------------------------------------


def _check_permission(ctx: ActionContext, p: PermissionParams) -> None:
    if not ctx.caller.owner:
        refusal = permission_refusal(ctx.settings.owner, p.package)
        if refusal is not None:
            raise PermissionDenied(f"{ctx.name}: {refusal}")


async def _set(ctx: ActionContext, p: PermissionParams, *, granted: bool) -> PermissionResult:
    via = await ctx.device.set_permission(p.package, p.permission, granted=granted)
    after: PackageState | None = await ctx.device.package_state(p.package)
    holds = after is not None and p.permission in after.granted
    return PermissionResult(
        package=p.package, permission=p.permission, granted=holds, verified=holds == granted, via=via
    )


async def grant_permission(ctx: ActionContext, p: PermissionParams) -> PermissionResult:
    return await _set(ctx, p, granted=True)


async def revoke_permission(ctx: ActionContext, p: PermissionParams) -> PermissionResult:
    return await _set(ctx, p, granted=False)


HELD = (
    "One of the `owner_actions`: held for the owner's approval under every approvals mode but "
    "`off`, even with nothing paired (the terminal's `approvals` answers). "
)

ACTIONS = (
    ActionSpec(
        "INSTALL_APP",
        InstallAppParams,
        install_app,
        InstallAppResult,
        "Install (or update, keeping its data) an APK from the runtime's files directory or the phone",
        requires=frozenset({APPS}),
        check=_check_install,
        describe=_describe_install,
        notes=HELD
        + "`apk` is a bare file name in DATA_DIR/files (no '/', no '..', a regular file, not a symlink) "
        "or a path on the phone under /sdcard/, /storage/emulated/0/ or /data/local/tmp/; a path "
        "breaking these rules is PERMISSION_DENIED, naming the rule. A local APK's binary manifest is "
        "read before the hold: a malformed one is INVALID_PARAMS, one whose package is one of "
        "`owner_apps` (the Iris app, Termux, ...) PERMISSION_DENIED, and the approval names the APK, "
        "its sha256, package, version and permissions. An APK on the phone is copied off it and read "
        "the same way before the hold. The runtime installs a private copy of the bytes it read "
        "(`pm install -r` on adb); an APK changed after the approval was read is CONFLICT. The "
        "phone's refusal (`Failure [INSTALL_FAILED_...]`) is UNSUPPORTED with pm's words.",
    ),
    ActionSpec(
        "UNINSTALL_APP",
        UninstallAppParams,
        uninstall_app,
        UninstallAppResult,
        "Uninstall an app",
        requires=frozenset({APPS}),
        check=_check_uninstall,
        notes=HELD
        + "One of `owner_apps` (the Iris app, Termux, ...) is PERMISSION_DENIED before any hold; a "
        "package not installed is INVALID_PARAMS; a system app the phone will not remove "
        "(`Failure [DELETE_FAILED_INTERNAL_ERROR]`) UNSUPPORTED.",
    ),
    ActionSpec(
        "GRANT_PERMISSION",
        PermissionParams,
        grant_permission,
        PermissionResult,
        "Grant an app a runtime permission",
        requires=frozenset({APPS}),
        check=_check_permission,
        notes=HELD
        + "The permission controller's and `owner_apps`' permissions are PERMISSION_DENIED before any "
        "hold. An install-time permission (`not a changeable permission type`) is UNSUPPORTED; one the "
        "app did not ask for, an unknown package or permission, INVALID_PARAMS.",
    ),
    ActionSpec(
        "REVOKE_PERMISSION",
        PermissionParams,
        revoke_permission,
        PermissionResult,
        "Revoke a runtime permission from an app",
        requires=frozenset({APPS}),
        check=_check_permission,
        notes=HELD + "Refused as GRANT_PERMISSION is.",
    ),
)
