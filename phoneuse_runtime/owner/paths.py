"""The path rules: which files on the phone and on the runtime's side an agent may move.

On the phone, only shared storage (`/sdcard/...`, `/storage/emulated/0/...`), and not the parts
of it that belong to apps (`Android/data/<pkg>/`, `Android/obb/`): those are another app's
private files, readable by the shell user on older phones. A path is checked twice: as given,
before anything happens (`phone_path`, in an action's `check`, before any hold), and once the
phone has followed its symlinks (`resolved_phone_path`), so a link in shared storage that points
into `/data/data` is refused as well.

On the runtime's side, only a plain file name inside `DATA_DIR/files/` (`runtime_file`): no
directory, no `..`, no absolute path, no symlink that leads out. INSTALL_APP's APK names the same
files the same way.

Every refusal is PERMISSION_DENIED naming its rule (`path rule <name>: ...`); a path that is no
path at all (empty, a NUL byte, too long) is INVALID_PARAMS.
"""

from __future__ import annotations

import os
import posixpath
from pathlib import Path

from phoneuse_runtime.kernel.errors import InvalidParams, PermissionDenied
from phoneuse_runtime.kernel.limits import clip

# Where shared storage is reached from a shell, and where it really is (what `readlink -f
# /sdcard` prints: /storage/emulated/0 from Android 4.2 on, /storage/emulated/legacy on 4.x's
# first multi-user phones). Paths are answered in the canonical form.
SHARED = "/storage/emulated/0"
SHARED_ALIASES = ("/sdcard", "/storage/self/primary", SHARED)
SHARED_RESOLVED = (SHARED, "/storage/emulated/legacy")
# Shared storage's folders that belong to apps (each app's own `<pkg>/` in data and obb; the
# media provider refuses them to other apps from Android 11 on, older phones let the shell in).
APP_PRIVATE = ("android/data", "android/obb")
# Linux's PATH_MAX counts the NUL; a name is at most 255 bytes (NAME_MAX) on every file system
# a phone or the runtime's host uses.
MAX_PATH_BYTES = 4095
MAX_NAME_BYTES = 255

RULE_DOTDOT = "no-dotdot"
RULE_SHARED = "shared-storage-only"
RULE_APP_PRIVATE = "no-app-private"
RULE_SYMLINK = "no-symlink-out"
RULE_FILES_DIR = "files-dir-only"

FILES_DIR = "files"  # DATA_DIR/files: the runtime's side of PUSH_FILE, PULL_FILE, INSTALL_APP


def refused(rule: str, what: str) -> PermissionDenied:
    return PermissionDenied(f"path rule {rule}: {what}")


def _well_formed(path: str, what: str, limit: int) -> None:
    if not path:
        raise InvalidParams(f"{what}: empty")
    if "\x00" in path:
        raise InvalidParams(f"{what}: a NUL byte is in {clip(path)}")
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in path):
        raise InvalidParams(f"{what}: a control character is in {clip(path)}")
    size = len(path.encode("utf-8", "surrogatepass"))
    if size > limit:
        raise InvalidParams(f"{what}: {size} bytes, at most {limit}")


def phone_path(path: str) -> str:
    """`path` checked as given and in its canonical form (under /storage/emulated/0): absolute,
    in shared storage, no `..`, not an app's own folder. Touches nothing."""
    _well_formed(path, "path", MAX_PATH_BYTES)
    parts = path.split("/")
    if ".." in parts:
        raise refused(RULE_DOTDOT, f"{clip(path)} climbs with '..'; name the file itself")
    if any(len(p.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES for p in parts):
        raise InvalidParams(f"path: a name in {clip(path)} is longer than {MAX_NAME_BYTES} bytes")
    normal = posixpath.normpath(path) if path.startswith("/") else ""
    for alias in SHARED_ALIASES:
        if normal.startswith(alias + "/"):
            return _not_app_private(SHARED + normal[len(alias) :], path)
    raise refused(
        RULE_SHARED,
        f"{clip(path)} is not a file in the phone's shared storage (/sdcard/... or {SHARED}/...)",
    )


def resolved_phone_path(resolved: str, asked: str) -> str:
    """The path the phone resolved `asked` to (every symlink followed), held to the same rules:
    a link out of shared storage, or into an app's folder, is refused."""
    for root in SHARED_RESOLVED:
        if resolved.startswith(root + "/"):
            return _not_app_private(SHARED + resolved[len(root) :], asked)
    raise refused(RULE_SYMLINK, f"{clip(asked)} leads out of shared storage (to {clip(resolved)})")


def _not_app_private(canonical: str, asked: str) -> str:
    # Shared storage ignores case (sdcardfs, then FUSE), so Android/DATA is Android/data.
    inside = canonical[len(SHARED) + 1 :].lower()
    for private in APP_PRIVATE:
        if inside == private or inside.startswith(private + "/"):
            raise refused(
                RULE_APP_PRIVATE,
                f"{clip(asked)} is in {private.replace('android', 'Android')}/, which belongs to "
                "the apps it holds, not shared storage",
            )
    return canonical


def runtime_name(name: str) -> str:
    """`name` checked as a file name in the files directory: one plain name, no directory."""
    _well_formed(name, "name", MAX_NAME_BYTES)
    if name.startswith("/") or "/" in name or "\\" in name:
        raise refused(RULE_FILES_DIR, f"{clip(name)} is a path; name a file in DATA_DIR/{FILES_DIR}/ only")
    if name in (".", "..") or name.startswith("."):
        raise refused(
            RULE_DOTDOT if name.startswith("..") else RULE_FILES_DIR,
            f"{clip(name)}: a name may not start with '.' (the runtime's own partial files do)",
        )
    return name


def files_dir(data_dir: Path) -> Path:
    """DATA_DIR/files, made 0700 if missing."""
    from phoneuse_runtime.util.files import private_dir

    return private_dir(data_dir / FILES_DIR)


def runtime_file(directory: Path, name: str) -> Path:
    """The file `name` in the files directory `directory`, with every symlink followed, refused
    when that leads out of it (a link put there by hand, or a name that is a path)."""
    runtime_name(name)
    root = Path(os.path.realpath(directory))
    target = Path(os.path.realpath(directory / name))
    if target.parent != root:
        raise refused(RULE_SYMLINK, f"{clip(name)} leads out of DATA_DIR/{FILES_DIR}/")
    return target
