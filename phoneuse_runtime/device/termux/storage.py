"""Shared storage from inside Termux (PUSH_FILE, PULL_FILE): plain file I/O in the runtime's own
process, through the link `termux-setup-storage` makes, `~/storage/shared` (to /storage/emulated/0),
or /storage/emulated/0 itself where Termux was given the storage permission another way.

The phone's paths (/storage/emulated/0/...) map onto that link; symlinks are followed by the
kernel (`os.path.realpath`) and a path whose real place is outside the shared storage comes back
as that real place, for the path rules to refuse. Files are streamed in blocks, never held whole.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import BinaryIO

from phoneuse_runtime.device.base import PhoneFile, copy_bounded
from phoneuse_runtime.kernel.errors import InvalidParams, PermissionDenied, Unsupported

SHARED = "/storage/emulated/0"
BLOCK = 1024 * 1024
SETUP = (
    "Termux has no shared storage: run termux-setup-storage in Termux and allow the storage "
    "permission, which links ~/storage/shared to the phone's shared storage"
)


def shared_root() -> Path:
    """~/storage/shared, with its link followed, else /storage/emulated/0 itself where Termux may
    read it (the storage permission granted by hand); Unsupported until one of them works."""
    link = Path.home() / "storage" / "shared"
    if link.is_dir():
        return Path(os.path.realpath(link))
    direct = Path(SHARED)
    if direct.is_dir() and os.access(direct, os.R_OK | os.X_OK):
        return direct
    raise Unsupported(SETUP)


def local(path: str) -> Path:
    """The local path of the phone's path `path` (canonical, under /storage/emulated/0)."""
    if path != SHARED and not path.startswith(SHARED + "/"):
        raise PermissionDenied(f"{path} is not in the shared storage")
    return shared_root() / path[len(SHARED) + 1 :]


def resolve(path: str) -> str:
    root = shared_root()
    real = Path(os.path.realpath(root / path[len(SHARED) + 1 :]))
    if real == root or root in real.parents:
        return SHARED + "/" + real.relative_to(root).as_posix()
    return str(real)


def info(path: str) -> PhoneFile:
    target = local(path)
    try:
        found = target.lstat()
    except FileNotFoundError:
        return PhoneFile(path, "missing")
    except OSError as exc:
        raise PermissionDenied(f"{path}: {exc.strerror}") from None
    if target.is_symlink():
        return PhoneFile(path, "other")
    if target.is_dir():
        return PhoneFile(path, "dir")
    return PhoneFile(path, "file", found.st_size) if target.is_file() else PhoneFile(path, "other")


def _opened(path: str, mode: str) -> BinaryIO:
    try:
        return local(path).open(mode)  # type: ignore[return-value]
    except FileNotFoundError:
        raise InvalidParams(f"{path}: no such file") from None
    except OSError as exc:
        raise PermissionDenied(f"{path}: {exc.strerror}") from None


def sha256(path: str) -> str:
    digest = hashlib.sha256()
    with _opened(path, "rb") as f:
        while block := f.read(BLOCK):
            digest.update(block)
    return digest.hexdigest()


def read(path: str, offset: int, length: int) -> bytes:
    with _opened(path, "rb") as f:
        f.seek(offset)
        return f.read(length)


def pull(path: str, dest: BinaryIO, limit: int) -> int:
    with _opened(path, "rb") as f:
        return copy_bounded(iter(lambda: f.read(BLOCK), b""), dest, limit=limit, path=path)


def write(path: str, source: Path | bytes, *, append: bool) -> None:
    target = local(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PermissionDenied(f"{path}: {exc.strerror}") from None
    with _opened(path, "ab" if append else "wb") as out:
        if isinstance(source, bytes):
            out.write(source)
            return
        with source.open("rb") as f:
            while block := f.read(BLOCK):
                out.write(block)
