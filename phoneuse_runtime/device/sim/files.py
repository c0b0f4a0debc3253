"""The simulated phone's shared storage: files, folders and symlinks in memory, bounded in bytes.

What the shell user of a phone sees: `/sdcard` is a link to /storage/emulated/0, folders are
made as a push makes them, an app's folder under Android/data holds its files, and a link may
point anywhere (the seed has one into /data/data, as a careless app or a hostile one could
leave). Only shared storage and /data/local/tmp are writable; /data/data cannot be read. Not kept
in the state file: a restart begins with the seed's files.
"""

from __future__ import annotations

import hashlib
import posixpath
from dataclasses import dataclass, field
from typing import BinaryIO

from phoneuse_runtime.device.base import PhoneFile, copy_bounded
from phoneuse_runtime.kernel.errors import InvalidParams, PermissionDenied

SHARED = "/storage/emulated/0"
# What the simulated phone's shared storage holds at most: past it a write fails as a full
# phone's does (ENOSPC), so the sim is bounded however much is pushed.
STORAGE_BYTES = 64 * 1024 * 1024
MAX_LINKS = 40  # Linux's ELOOP limit
WRITABLE = (SHARED, "/data/local/tmp")
UNREADABLE = ("/data/data", "/data/user", "/data/system")
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + bytes(range(256)) * 16 + b"\xff\xd9"


@dataclass
class SimFiles:
    files: dict[str, bytes] = field(default_factory=dict)
    dirs: set[str] = field(default_factory=set)
    links: dict[str, str] = field(default_factory=dict)  # path -> target, as `ln -s` leaves it

    @classmethod
    def seeded(cls) -> SimFiles:
        fs = cls(dirs={"/", "/storage", "/storage/emulated", "/data", "/data/data", "/data/local/tmp"})
        fs.links["/sdcard"] = SHARED
        for name in ("Alarms", "DCIM/Camera", "Documents", "Download", "Music", "Pictures", "Android/data"):
            fs.mkdirs(f"{SHARED}/{name}")
        fs.put(f"{SHARED}/DCIM/Camera/IMG_20240601_101500.jpg", JPEG)
        fs.put(f"{SHARED}/Download/notes.txt", b"Buy milk\nCall Alice back\n")
        fs.put(f"{SHARED}/Android/data/com.whatsapp/files/key", b"not yours\n")
        fs.mkdirs("/data/data/com.android.providers.contacts/databases")
        fs.files["/data/data/com.android.providers.contacts/databases/contacts2.db"] = b"SQLite format 3\x00"
        # A link an app left in shared storage, pointing at another app's private files.
        fs.links[f"{SHARED}/Download/contacts"] = "/data/data/com.android.providers.contacts/databases"
        return fs

    # --- what a path is ------------------------------------------------------------------
    def resolve(self, path: str) -> str:
        """`readlink -f`: every link followed; a missing tail is kept as it is."""
        parts = [p for p in path.split("/") if p]
        done = "/"
        hops = 0
        while parts:
            name = parts.pop(0)
            here = posixpath.normpath(posixpath.join(done, name))
            target = self.links.get(here)
            if target is None:
                done = here
                continue
            hops += 1
            if hops > MAX_LINKS:
                raise InvalidParams(f"{path}: too many levels of symbolic links")
            parts = [p for p in target.split("/") if p] + parts
            done = "/" if target.startswith("/") else done
        return done

    def info(self, path: str) -> PhoneFile:
        if path in self.files:
            return PhoneFile(path, "file", len(self.files[path]))
        if path in self.dirs:
            return PhoneFile(path, "dir")
        return PhoneFile(path, "missing")

    def used(self) -> int:
        return sum(len(data) for data in self.files.values())

    # --- reads and writes (resolved paths) ------------------------------------------------
    def read(self, path: str) -> bytes:
        if any(path == root or path.startswith(root + "/") for root in UNREADABLE):
            raise PermissionDenied(f"{path}: Permission denied")
        if path in self.dirs:
            raise InvalidParams(f"{path}: Is a directory")
        data = self.files.get(path)
        if data is None:
            raise InvalidParams(f"{path}: No such file or directory")
        return data

    def sha256(self, path: str) -> str:
        return hashlib.sha256(self.read(path)).hexdigest()

    def pull(self, path: str, dest: BinaryIO, *, limit: int) -> int:
        return copy_bounded([self.read(path)], dest, limit=limit, path=path)

    def write(self, path: str, data: bytes, *, append: bool) -> None:
        if not any(path.startswith(root + "/") for root in WRITABLE):
            raise PermissionDenied(f"{path}: Permission denied")
        if path in self.dirs:
            raise InvalidParams(f"{path}: Is a directory")
        old = self.files.get(path, b"") if append else b""
        self.room_for(path, len(old) + len(data))
        self.mkdirs(posixpath.dirname(path))
        self.files[path] = old + data

    def room_for(self, path: str, size: int) -> None:
        """ENOSPC unless the file `path` can become `size` bytes long."""
        if self.used() - len(self.files.get(path, b"")) + size > STORAGE_BYTES:
            raise PermissionDenied(f"{path}: No space left on device")

    def put(self, path: str, data: bytes) -> None:
        self.mkdirs(posixpath.dirname(path))
        self.files[path] = data

    def mkdirs(self, path: str) -> None:
        while path not in self.dirs:
            if path in self.files:
                raise InvalidParams(f"{path}: Not a directory")
            self.dirs.add(path)
            path = posixpath.dirname(path)
