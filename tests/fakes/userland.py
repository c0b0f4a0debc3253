"""The phone's commands: a registry the shell looks names up in, and the toybox utilities
(ls, cat, rm, md5sum, grep, ps, kill, sleep, ...) with toybox's output and error formats.

Android's own tools live in `system.py` (getprop, settings, input, ime, wm, screencap, uiautomator),
`activity.py` (am, pm, cmd, monkey), `dumpsys.py` and `providers.py` (content).
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import stat as st
import time
from collections.abc import Callable
from typing import Protocol, cast

from .fs import canonical
from .procfs import proc_file
from .shell import Handler, Proc
from .state import PhoneState

COMMANDS: dict[str, Handler] = {}
# `cmd SERVICE ...` for the services a module models (argv as given: ["cmd", SERVICE, ...]).
CMD_SERVICES: dict[str, Handler] = {}


class HasState(Protocol):
    state: PhoneState


def state_of(p: Proc) -> PhoneState:
    return cast(HasState, p.shell.host).state


async def print_canned(p: Proc) -> bool:
    """Prints what the test put in `state.printed` for this command line (a real phone's output),
    if anything; whether it did."""
    canned = state_of(p).printed.get(" ".join(p.argv))
    if canned is None:
        return False
    await p.print(canned)
    return True


def command(*names: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        for name in names:
            COMMANDS[name] = fn
        return fn

    return register


def path_of(p: Proc, arg: str) -> str:
    return canonical(arg, p.shell.cwd)


async def wait_closed(p: Proc, seconds: float | None = None) -> bool:
    """Sleeps `seconds` (forever if None) or until the host goes away; True if it went away."""
    deadline = None if seconds is None else time.monotonic() + seconds
    while not p.io.closed:
        left = 0.05 if deadline is None else min(0.05, deadline - time.monotonic())
        if left <= 0:
            return False
        await asyncio.sleep(left)
    return True


# --- files -----------------------------------------------------------------------------------------


def _perm_string(mode: int) -> str:
    kind = "d" if st.S_ISDIR(mode) else "l" if st.S_ISLNK(mode) else "c" if st.S_ISCHR(mode) else "-"
    bits = "".join(
        ch if mode & bit else "-"
        for ch, bit in zip("rwxrwxrwx", (0o400, 0o200, 0o100, 0o40, 0o20, 0o10, 0o4, 0o2, 0o1), strict=True)
    )
    return kind + bits


@command("ls")
async def ls(p: Proc) -> int:
    flags = "".join(a[1:] for a in p.argv[1:] if a.startswith("-") and len(a) > 1)
    targets = [a for a in p.argv[1:] if not a.startswith("-") or a == "-"] or ["."]
    fs = state_of(p).files
    status = 0
    for n, target in enumerate(targets):
        node = fs.stat(path_of(p, target))
        if node is None:
            await p.error(f"ls: {target}: No such file or directory\n")
            status = 1
            continue
        if not node.is_dir or "d" in flags:
            entries = [(target, node)]
        else:
            try:
                entries = fs.list(path_of(p, target))
            except OSError as exc:
                await p.error(f"ls: {target}: {exc.strerror}\n")
                status = 1
                continue
            if "a" in flags:
                entries = [(".", node), ("..", node), *entries]
            if len(targets) > 1:
                await p.print(("\n" if n else "") + f"{target}:\n")
        if "l" in flags:
            if node.is_dir and "d" not in flags:
                await p.print(f"total {len(entries) * 4}\n")
            for name, entry in entries:
                size = 3488 if entry.is_dir else len(entry.data)
                when = time.strftime("%Y-%m-%d %H:%M", time.localtime(entry.mtime))
                owner = "shell" if path_of(p, target).startswith(("/data/local/tmp", "/storage")) else "root"
                await p.print(f"{_perm_string(entry.mode)} 1 {owner} {owner} {size:>8} {when} {name}\n")
        else:
            await p.print("".join(f"{name}\n" for name, _ in entries))
    return status


@command("cat")
async def cat(p: Proc) -> int:
    status = 0
    files = [a for a in p.argv[1:] if a != "-"]
    if not files:
        await p.streams.out(await p.stdin())
        return 0
    for name in files:
        try:
            kernel = proc_file(state_of(p), path_of(p, name))
            await p.streams.out(kernel if kernel is not None else state_of(p).files.read(path_of(p, name)))
        except OSError as exc:
            await p.error(f"cat: {name}: {exc.strerror}\n")
            status = 1
    return status


@command("rm")
async def rm(p: Proc) -> int:
    flags = "".join(a[1:] for a in p.argv[1:] if a.startswith("-"))
    status = 0
    for name in (a for a in p.argv[1:] if not a.startswith("-")):
        try:
            state_of(p).files.remove(path_of(p, name), recursive="r" in flags.lower())
        except FileNotFoundError:
            if "f" not in flags:
                await p.error(f"rm: {name}: No such file or directory\n")
                status = 1
        except OSError as exc:
            await p.error(f"rm: {name}: {exc.strerror}\n")
            status = 1
    return status


@command("mkdir")
async def mkdir(p: Proc) -> int:
    parents = "-p" in p.argv
    status = 0
    for name in (a for a in p.argv[1:] if not a.startswith("-")):
        try:
            state_of(p).files.mkdir(path_of(p, name), parents=parents)
        except OSError as exc:
            await p.error(f"mkdir: '{name}': {exc.strerror}\n")
            status = 1
    return status


@command("touch")
async def touch(p: Proc) -> int:
    fs = state_of(p).files
    for name in (a for a in p.argv[1:] if not a.startswith("-")):
        try:
            if not fs.exists(path_of(p, name)):
                fs.write(path_of(p, name), b"")
        except OSError as exc:
            await p.error(f"touch: '{name}': {exc.strerror}\n")
            return 1
    return 0


@command("chmod")
async def chmod(p: Proc) -> int:
    args = [a for a in p.argv[1:] if a != "-R"]
    if len(args) < 2:
        await p.error("chmod: Needs 2 arguments\n")
        return 1
    mode, names = args[0], args[1:]
    fs = state_of(p).files
    for name in names:
        node = fs.stat(path_of(p, name))
        if node is None:
            await p.error(f"chmod: {name}: No such file or directory\n")
            return 1
        if re.fullmatch(r"[0-7]{3,4}", mode):
            new = int(mode, 8)
        else:
            new = st.S_IMODE(node.mode)
            m = re.fullmatch(r"([ugoa]*)([+-])([rwx]+)", mode)
            bits = sum({"r": 0o444, "w": 0o222, "x": 0o111}[c] for c in m.group(3)) if m else 0
            new = new | bits if m and m.group(2) == "+" else new & ~bits
        try:
            fs.chmod(path_of(p, name), new)
        except OSError as exc:
            await p.error(f"chmod: {name}: {exc.strerror}\n")
            return 1
    return 0


async def _digest(p: Proc, algo: str) -> int:
    status = 0
    names = [a for a in p.argv[1:] if not a.startswith("-")]
    if not names:
        await p.print(f"{hashlib.new(algo, await p.stdin()).hexdigest()}  -\n")
        return 0
    for name in names:
        try:
            data = state_of(p).files.read(path_of(p, name))
        except OSError as exc:
            await p.error(f"{algo}sum: {name}: {exc.strerror}\n")
            status = 1
            continue
        await p.print(f"{hashlib.new(algo, data).hexdigest()}  {name}\n")
    return status


@command("md5sum")
async def md5sum(p: Proc) -> int:
    return await _digest(p, "md5")


@command("sha1sum")
async def sha1sum(p: Proc) -> int:
    return await _digest(p, "sha1")


@command("cp", "mv")
async def cp(p: Proc) -> int:
    args = [a for a in p.argv[1:] if not a.startswith("-")]
    if len(args) != 2:
        await p.error(f"{p.argv[0]}: Needs 2 arguments\n")
        return 1
    fs = state_of(p).files
    src, dst = path_of(p, args[0]), path_of(p, args[1])
    try:
        data = fs.read(src)
        target = fs.stat(dst)
        if target is not None and target.is_dir:
            dst = dst.rstrip("/") + "/" + src.rsplit("/", 1)[-1]
        fs.write(dst, data)
        if p.argv[0] == "mv":
            fs.remove(src)
    except OSError as exc:
        await p.error(f"{p.argv[0]}: {exc.filename}: {exc.strerror}\n")
        return 1
    return 0


@command("toybox")
async def toybox(p: Proc) -> int:
    if len(p.argv) == 1:
        await p.print(" ".join(sorted(TOYBOX)) + "\n")
        return 0
    name = p.argv[1]
    if name not in TOYBOX:
        await p.error(f"toybox: Unknown command {name} (see toybox --help)\n")
        return 1
    return await COMMANDS[name](Proc(p.argv[1:], p.env, p.cwd, p.streams, p.io, p.shell))


TOYBOX = {
    "base64",
    "cat",
    "df",
    "chmod",
    "cp",
    "date",
    "egrep",
    "fgrep",
    "grep",
    "head",
    "id",
    "kill",
    "killall",
    "ls",
    "md5sum",
    "mkdir",
    "mv",
    "pidof",
    "pkill",
    "ps",
    "rm",
    "sha1sum",
    "sleep",
    "tail",
    "touch",
    "uname",
    "wc",
    "which",
    "whoami",
}


def load_all() -> dict[str, Handler]:
    """Registers every module's commands and returns the table."""
    # power_cmds extends wm, svc and dumpsys: it imports their modules before it registers its own.
    from . import (
        activity,
        dumpsys,
        files_cmds,
        power_cmds,
        settings_cmds,
        status_cmds,
        system,
        toolbox,
        u2server,
    )

    del activity, dumpsys, files_cmds, power_cmds, settings_cmds, status_cmds, system, toolbox, u2server
    return COMMANDS
