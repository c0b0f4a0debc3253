"""Files in shared storage over adb (PUSH_FILE, PULL_FILE): toybox's readlink, stat, sha256sum
and dd through the shell, adb's sync protocol for whole files.

- Symlinks are followed on the phone with `readlink -f` (toybox: the path's last name may be
  missing, not a folder before it), climbing to the nearest folder that exists for a file a push
  will create; a name on the way that exists but does not resolve (a link into a directory the
  shell user cannot search, such as another app's /data/data) is refused, never guessed.
- `stat -c '%s %F'`, not sync's STAT, for the size: STAT's is 32 bits, and a phone's video passes
  4 GiB.
- A chunk at an offset is `dd if=F bs=B skip=S count=C` over `exec:` (raw bytes on every Android,
  no pty's CRLF, stderr sent to /dev/null): B is the largest power of two, up to 64 KiB, that
  divides both the offset and the chunk's size, so chunks of 1 MiB read 64 KiB at a time and any
  offset still works. Every toybox dd (and toolbox's before it) has these operands.
- `sha256sum` (toybox from Android 8.1); where the phone has none, the hash is taken over sync,
  streamed.
- A whole file goes by sync (SEND from a local file read in 4 KiB pieces, RECV streamed into
  the destination), never held in memory; a chunk added to a file goes to /data/local/tmp by sync
  and is appended with `cat`.
"""

from __future__ import annotations

import contextlib
import hashlib
import posixpath
import struct
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

import adbutils

from phoneuse_runtime.device.adb.shell import command
from phoneuse_runtime.device.adb.worker import Budget
from phoneuse_runtime.device.base import PhoneFile, ShellResult, copy_bounded
from phoneuse_runtime.kernel.errors import InvalidParams, PermissionDenied, Unsupported
from phoneuse_runtime.kernel.limits import clip

Shell = Callable[[Budget, str], ShellResult]


class TimedSync(adbutils.Sync):  # type: ignore[misc]  # adbutils ships no types
    """adbutils' sync, each socket wait bounded by the call's budget. Its own opens the
    connection with no timeout, so a phone that froze mid-transfer would hold the phone's worker
    (and every call after it) for good; this one fails at the call's deadline instead. Overrides
    the private `_prepare_sync` (tests/device/adb/test_adbutils_private.py holds it to adbutils)."""

    def __init__(self, device: adbutils.AdbDevice, budget: Budget) -> None:
        super().__init__(device)
        self._budget = budget

    @contextlib.contextmanager
    def _prepare_sync(self, path: str, cmd: str) -> Iterator[adbutils.AdbConnection]:
        with self._device.open_transport(timeout=self._budget.wait_s()) as c:
            c.send_command("sync:")
            c.check_okay()
            encoded = path.encode("utf-8")
            c.conn.send(cmd.encode("utf-8") + struct.pack("<I", len(encoded)) + encoded)
            yield c


MAX_CLIMB = 64  # folders a push may create below the nearest existing one
MAX_BLOCK = 64 * 1024
CHUNK_DIR = "/data/local/tmp"
NOT_FOUND = 127  # the shell's exit code for a command it has not


def resolve(budget: Budget, sh: Shell, path: str) -> str:
    """`path` with every symlink followed, as `readlink -f` on the phone says."""
    missing: list[str] = []
    here = path
    for _ in range(MAX_CLIMB):
        result = sh(budget, command("readlink", "-f", here))
        out = result.stdout.strip()
        if result.exit_code == 0 and out.startswith("/") and "\n" not in out:
            return posixpath.join(out, *reversed(missing)) if missing else out
        if result.exit_code == NOT_FOUND:
            raise Unsupported(
                "this phone has no readlink -f (toybox, Android 6+): its paths cannot be resolved"
            )
        if info(budget, sh, here).kind != "missing":
            # It is there (stat without -L is an lstat) but does not resolve: a link into the unknown.
            raise PermissionDenied(f"path rule no-symlink-out: {clip(here)} cannot be resolved on the phone")
        if here in ("", "/"):
            break
        missing.append(posixpath.basename(here))
        here = posixpath.dirname(here)
        if not missing[-1]:
            break
    raise InvalidParams(f"{clip(path)}: no folder on its way exists on the phone")


KINDS = {"regular file": "file", "regular empty file": "file", "directory": "dir"}


def info(budget: Budget, sh: Shell, path: str) -> PhoneFile:
    result = sh(budget, command("stat", "-c", "%s %F", path))
    if result.exit_code != 0:
        text = result.stdout + result.stderr
        if "No such file" in text:
            return PhoneFile(path, "missing")
        if result.exit_code == NOT_FOUND:
            raise Unsupported("this phone has no stat (toybox, Android 6+)")
        raise PermissionDenied(f"{clip(path)}: {text.strip()[:200]}")
    size, _, kind = result.stdout.strip().partition(" ")
    found = KINDS.get(kind, "other")
    return PhoneFile(path, found, int(size) if found == "file" and size.isdigit() else 0)  # type: ignore[arg-type]


def sha256(budget: Budget, sh: Shell, sync: adbutils.Sync, path: str) -> str:
    result = sh(budget, command("sha256sum", path))
    digest = result.stdout.split(" ", 1)[0].strip()
    if result.exit_code == 0 and len(digest) == 64:
        return digest.lower()
    if result.exit_code != NOT_FOUND and "not found" not in result.stdout + result.stderr:
        raise PermissionDenied(f"{clip(path)}: {(result.stdout + result.stderr).strip()[:200]}")
    hashing = hashlib.sha256()  # an older phone: hash it here, as it streams by
    for chunk in sync.iter_content(path):
        hashing.update(chunk)
    return hashing.hexdigest()


def block_for(offset: int, length: int) -> int:
    """The largest power of two up to MAX_BLOCK dividing both `offset` and `length`."""
    block = MAX_BLOCK
    while block > 1 and (offset % block or length % block):
        block //= 2
    return block


def read(budget: Budget, device: adbutils.AdbDevice, path: str, offset: int, length: int) -> bytes:
    block = block_for(offset, length)
    line = command("dd", f"if={path}", f"bs={block}", f"skip={offset // block}", f"count={length // block}")
    with device.open_transport(timeout=budget.wait_s()) as c:
        c.send_command("exec:" + line + " 2>/dev/null")
        c.check_okay()
        data = c.read_until_close(encoding=None)
    assert isinstance(data, bytes)
    return data[:length]


def pull(sync: adbutils.Sync, path: str, dest: BinaryIO, limit: int) -> int:
    return copy_bounded(sync.iter_content(path), dest, limit=limit, path=path)


def write(
    budget: Budget, sh: Shell, sync: adbutils.Sync, path: str, source: Path | bytes, *, append: bool
) -> None:
    if not append:
        sync.push(source, path, mode=0o660)
        return
    chunk = f"{CHUNK_DIR}/phoneuse-chunk-{uuid.uuid4().hex}"
    sync.push(source, chunk, mode=0o600)
    result = sh(budget, f"cat {command(chunk)} >> {command(path)} && rm -f {command(chunk)}")
    if result.exit_code != 0:
        sh(budget, command("rm", "-f", chunk))
        raise PermissionDenied(f"{clip(path)}: {(result.stdout + result.stderr).strip()[:200]}")
