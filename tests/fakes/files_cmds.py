"""The toybox commands PUSH_FILE and PULL_FILE use (issue 27), answering as toybox 0.8 on
Android 10+ does: readlink (-f/-e/-m), realpath, stat -c, sha256sum, dd and ln -s.

Formats from toybox's sources: `readlink -f` prints the resolved path and fails silently (exit 1)
where a folder on the way is missing; `stat -c %s %F` names the type as "regular file",
"directory", "symbolic link"; dd reports "N+P records in" / "N+P records out" and "X bytes (Y)
copied, ..." on stderr; sha256sum prints "HEX  NAME" (two spaces), "-" for stdin.
"""

from __future__ import annotations

import posixpath
import stat as st

from .fs import canonical
from .shell import Proc
from .userland import TOYBOX, _digest, command, path_of, state_of

TYPES = {
    st.S_IFREG: "regular file",
    st.S_IFDIR: "directory",
    st.S_IFLNK: "symbolic link",
    st.S_IFCHR: "character special file",
}


@command("readlink", "realpath")
async def readlink(p: Proc) -> int:
    flags = {a for a in p.argv[1:] if a.startswith("-") and a != "--"}
    names = [a for a in p.argv[1:] if not a.startswith("-")]
    fs = state_of(p).files
    if p.argv[0] == "realpath":
        flags.add("-f")
    status = 0
    for name in names:
        path = path_of(p, name)
        if not flags & {"-f", "-e", "-m"}:
            node = fs.lstat(path)
            if node is None or not st.S_ISLNK(node.mode):
                status = 1
                continue
            await p.print(node.data.decode() + "\n")
            continue
        try:
            resolved = fs.follow(path)
        except OSError:
            status = 1
            continue
        parent_ok = fs.stat(posixpath.dirname(resolved)) is not None
        exists = fs.stat(resolved) is not None
        if "-m" not in flags and (not parent_ok or ("-e" in flags and not exists)):
            status = 1
            continue
        await p.print(resolved + "\n")
    return status


@command("stat")
async def stat_(p: Proc) -> int:
    """toybox stat: `-c FORMAT` with %s (size), %F (type), %n (name), %Y (mtime); -L follows links."""
    args = p.argv[1:]
    fmt = "%n"
    follow = False
    names: list[str] = []
    while args:
        arg = args.pop(0)
        if arg == "-c" and args:
            fmt = args.pop(0)
        elif arg == "-L":
            follow = True
        else:
            names.append(arg)
    fs = state_of(p).files
    status = 0
    for name in names:
        path = path_of(p, name)
        node = fs.stat(path) if follow else fs.lstat(path)
        if node is None:
            await p.error(f"stat: '{name}': No such file or directory\n")
            status = 1
            continue
        kind = TYPES.get(st.S_IFMT(node.mode), "weird file")
        size = len(node.data) if not node.is_dir else 4096
        out = (
            fmt.replace("%s", str(size))
            .replace("%F", kind)
            .replace("%n", name)
            .replace("%Y", str(node.mtime))
        )
        await p.print(out + "\n")
    return status


@command("sha256sum")
async def sha256sum(p: Proc) -> int:
    return await _digest(p, "sha256")


def _number(text: str) -> int:
    units = {"k": 1024, "m": 1024**2, "g": 1024**3}
    return int(text[:-1]) * units[text[-1].lower()] if text[-1:].lower() in units else int(text)


@command("dd")
async def dd(p: Proc) -> int:
    ops = dict(a.split("=", 1) for a in p.argv[1:] if "=" in a)
    bs = _number(ops.get("bs", "512"))
    skip, seek = _number(ops.get("skip", "0")), _number(ops.get("seek", "0"))
    count = _number(ops["count"]) if "count" in ops else None
    fs = state_of(p).files
    try:
        data = fs.read(path_of(p, ops["if"])) if "if" in ops else await p.stdin()
    except OSError as exc:
        await p.error(f"dd: {ops['if']}: {exc.strerror}\n")
        return 1
    data = data[skip * bs :]
    if count is not None:
        data = data[: count * bs]
    if "of" in ops:
        out = path_of(p, ops["of"])
        node = fs.stat(out)
        old = node.data if node is not None and not node.is_dir and "notrunc" in ops.get("conv", "") else b""
        head, tail = old[: seek * bs].ljust(seek * bs, b"\x00"), old[seek * bs + len(data) :]
        try:
            fs.write(out, head + data + tail)
        except OSError as exc:
            await p.error(f"dd: {ops['of']}: {exc.strerror}\n")
            return 1
    else:
        await p.streams.out(data)
    whole, part = divmod(len(data), bs)
    if ops.get("status") != "none":
        await p.error(
            f"{whole}+{1 if part else 0} records in\n{whole}+{1 if part else 0} records out\n"
            f"{len(data)} bytes ({len(data)} B) copied, 0.001 s, 1.0 M/s\n"
        )
    return 0


@command("ln")
async def ln(p: Proc) -> int:
    args = [a for a in p.argv[1:] if not a.startswith("-")]
    if "-s" not in p.argv or len(args) != 2:
        await p.error("ln: Needs 2 arguments\n")
        return 1
    state_of(p).files.symlink(args[0], canonical(args[1], p.shell.cwd))
    return 0


TOYBOX.update({"dd", "ln", "readlink", "realpath", "sha256sum", "stat"})
