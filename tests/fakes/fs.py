"""The phone's file system as the shell user (uid 2000) sees it: an in-memory tree.

Only /data/local/tmp and shared storage (/sdcard, which is /storage/emulated/0) are writable;
/system and friends are readable; /data itself cannot be listed. Errors are the OSError
subclasses a phone's syscalls would map to, so sync and the shell can report them alike.
"""

from __future__ import annotations

import posixpath
import stat as st
from dataclasses import dataclass, field

SHARED = "/storage/emulated/0"
WRITABLE = ("/data/local/tmp", SHARED)
UNLISTABLE = ("/data", "/data/data", "/data/app", "/data/system")
PRIVATE = ("/data/data/", "/data/system/", "/data/app/")
ELF = b"\x7fELF\x02\x01\x01\x00"


@dataclass
class Node:
    mode: int  # st_mode, with the file type bits
    data: bytes = b""
    mtime: int = 1_700_000_000

    @property
    def is_dir(self) -> bool:
        return st.S_ISDIR(self.mode)


def canonical(path: str, cwd: str = "/") -> str:
    """An absolute, normalised path, with /sdcard resolved to the shared storage it links to."""
    full = posixpath.normpath(posixpath.join(cwd, path)) if path else cwd
    full = "/" + full.lstrip("/")
    for alias in ("/sdcard", "/storage/self/primary", "/mnt/sdcard"):
        if full == alias or full.startswith(alias + "/"):
            full = SHARED + full[len(alias) :]
    return full


def _under(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == root or path.startswith(root + "/") for root in roots)


@dataclass
class FileSystem:
    nodes: dict[str, Node] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.nodes:
            for path in (
                "/",
                "/data",
                "/data/local",
                "/data/local/tmp",
                "/data/data",
                "/data/app",
                "/dev",
                "/proc",
                "/product",
                "/storage",
                "/storage/emulated",
                SHARED,
                *(f"{SHARED}/{d}" for d in ("Alarms", "DCIM", "Documents", "Download", "Movies", "Music")),
                f"{SHARED}/Pictures",
                "/system",
                "/system/bin",
                "/system/etc",
                "/vendor",
            ):
                self.nodes[path] = Node(0o040771 if _under(path, WRITABLE) else 0o040755)
            self.nodes["/dev/null"] = Node(0o020666)
            self.nodes["/system/etc/hosts"] = Node(
                0o100644, b"127.0.0.1       localhost\n::1             ip6-localhost\n"
            )

    # --- queries -------------------------------------------------------------------

    def stat(self, path: str) -> Node | None:
        try:
            path = self.follow(canonical(path))
        except OSError:
            return None
        if _under(path, PRIVATE):
            return None
        return self.nodes.get(path)

    # --- symlinks (issue 27: the path rules resolve them on the phone) --------------------
    def lstat(self, path: str) -> Node | None:
        return self.nodes.get(canonical(path))

    def symlink(self, target: str, path: str) -> None:
        """`ln -s target path`: the link is stored as given, relative or absolute."""
        self.nodes[canonical(path)] = Node(st.S_IFLNK | 0o777, target.encode())

    def follow(self, path: str) -> str:
        """`path` (canonical) with every link on it followed; a missing tail is kept. A component
        inside an app's private directory cannot be looked at by the shell user (EACCES), and
        more than 40 links is ELOOP, as the kernel says."""
        parts = [p for p in path.split("/") if p]
        done, hops = "/", 0
        while parts:
            here = posixpath.join(done, parts.pop(0))
            if any(here.startswith(root) and here.count("/") > root.count("/") for root in PRIVATE):
                raise PermissionError(13, "Permission denied", here)
            node = self.nodes.get(canonical(here))
            if node is None or not st.S_ISLNK(node.mode):
                done = canonical(here)
                continue
            hops += 1
            if hops > 40:
                raise OSError(40, "Too many levels of symbolic links", path)
            target = node.data.decode()
            parts = [p for p in target.split("/") if p] + parts
            done = "/" if target.startswith("/") else done
        return done

    def exists(self, path: str) -> bool:
        return self.stat(path) is not None

    def read(self, path: str) -> bytes:
        path = self.follow(canonical(path))
        if _under(path, PRIVATE):
            raise PermissionError(13, "Permission denied", path)
        node = self.nodes.get(path)
        if node is None:
            raise FileNotFoundError(2, "No such file or directory", path)
        if node.is_dir:
            raise IsADirectoryError(21, "Is a directory", path)
        return node.data

    def list(self, path: str) -> list[tuple[str, Node]]:
        path = canonical(path)
        if path in UNLISTABLE or _under(path, PRIVATE):
            raise PermissionError(13, "Permission denied", path)
        node = self.nodes.get(path)
        if node is None:
            raise FileNotFoundError(2, "No such file or directory", path)
        if not node.is_dir:
            raise NotADirectoryError(20, "Not a directory", path)
        prefix = path.rstrip("/") + "/"
        names = {p[len(prefix) :] for p in self.nodes if p.startswith(prefix) and p != path}
        direct = sorted(name for name in names if "/" not in name)
        return [(name, self.nodes[prefix + name]) for name in direct]

    # --- changes -------------------------------------------------------------------

    def _check_writable(self, path: str) -> None:
        if not _under(path, WRITABLE):
            if path.startswith(("/system", "/vendor", "/product")):
                raise OSError(30, "Read-only file system", path)
            raise PermissionError(13, "Permission denied", path)

    def write(self, path: str, data: bytes, mode: int = 0o100644, mtime: int | None = None) -> None:
        """Creates or replaces a file, creating missing parent directories (as adbd's push does)."""
        path = self.follow(canonical(path))
        self._check_writable(path)
        existing = self.nodes.get(path)
        if existing is not None and existing.is_dir:
            raise IsADirectoryError(21, "Is a directory", path)
        self.mkdir(posixpath.dirname(path), parents=True)
        file_mode = st.S_IFREG | (st.S_IMODE(mode) or 0o644)
        self.nodes[path] = Node(file_mode, bytes(data), mtime if mtime is not None else 1_700_000_000)

    def append(self, path: str, data: bytes) -> None:
        path = self.follow(canonical(path))
        node = self.nodes.get(path)
        old = node.data if node is not None and not node.is_dir else b""
        self.write(path, old + data, node.mode if node else 0o100644)

    def mkdir(self, path: str, *, parents: bool = False) -> None:
        path = canonical(path)
        node = self.nodes.get(path)
        if node is not None:
            if node.is_dir and parents:
                return
            raise FileExistsError(17, "File exists", path)
        parent = posixpath.dirname(path)
        if parent not in self.nodes:
            if not parents:
                raise FileNotFoundError(2, "No such file or directory", path)
            self.mkdir(parent, parents=True)
        self._check_writable(path)
        self.nodes[path] = Node(0o040771)

    def remove(self, path: str, *, recursive: bool = False) -> None:
        path = canonical(path)
        node = self.nodes.get(path)
        if node is None:
            raise FileNotFoundError(2, "No such file or directory", path)
        if node.is_dir:
            if not recursive:
                raise IsADirectoryError(21, "Is a directory", path)
            for child in [p for p in self.nodes if p.startswith(path.rstrip("/") + "/")]:
                if _under(child, WRITABLE) and child not in WRITABLE:
                    del self.nodes[child]
        if path in WRITABLE or not _under(path, WRITABLE):
            self._check_writable(posixpath.dirname(path) if path not in WRITABLE else "/")
        del self.nodes[path]

    def chmod(self, path: str, mode: int) -> None:
        path = canonical(path)
        node = self.nodes.get(path)
        if node is None:
            raise FileNotFoundError(2, "No such file or directory", path)
        self._check_writable(path)
        node.mode = st.S_IFMT(node.mode) | st.S_IMODE(mode)
