"""Toybox's text, identity and process tools: grep, head/tail, wc, base64, id, whoami, which,
uname, date, sleep, ps, pidof, kill, pkill — with toybox's output formats, and the shell user's
limits (it may only kill its own processes, such as the u2 server's app_process).
"""

from __future__ import annotations

import base64
import binascii
import re
import time

from .contract import ProcessIO
from .shell import SH, Proc
from .state import PhoneState
from .userland import COMMANDS, command, path_of, state_of, wait_closed

# --- text --------------------------------------------------------------------------------------------


async def _input_text(p: Proc, names: list[str]) -> str | None:
    if not names:
        return (await p.stdin()).decode("utf-8", "replace")
    chunks = []
    for name in names:
        try:
            chunks.append(state_of(p).files.read(path_of(p, name)).decode("utf-8", "replace"))
        except OSError as exc:
            await p.error(f"{p.argv[0]}: {name}: {exc.strerror}\n")
            return None
    return "".join(chunks)


@command("grep", "egrep", "fgrep")
async def grep(p: Proc) -> int:
    flags: set[str] = set()
    patterns: list[str] = []
    names: list[str] = []
    args = p.argv[1:]
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "-e" and i + 1 < len(args):
            patterns.append(args[i + 1])
            i += 1
        elif arg.startswith("-") and len(arg) > 1 and not patterns + names:
            flags.update(arg[1:])
        elif not patterns and not (flags & {"e"}):
            patterns.append(arg)
        else:
            names.append(arg)
        i += 1
    if not patterns:
        await p.error("grep: no pattern\n")
        return 2
    text = await _input_text(p, names)
    if text is None:
        return 2
    fixed = "F" in flags or p.argv[0] == "fgrep"
    rx = [
        re.compile(re.escape(pat) if fixed else pat, re.IGNORECASE if "i" in flags else 0) for pat in patterns
    ]
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    hits = [(n, line) for n, line in enumerate(lines, 1) if any(r.search(line) for r in rx) != ("v" in flags)]
    if "q" in flags:
        return 0 if hits else 1
    if "c" in flags:
        await p.print(f"{len(hits)}\n")
    elif "o" in flags:
        await p.print("".join(m.group(0) + "\n" for _, line in hits for r in rx for m in r.finditer(line)))
    else:
        await p.print("".join((f"{n}:" if "n" in flags else "") + line + "\n" for n, line in hits))
    return 0 if hits else 1


def _count(p: Proc, default: int) -> tuple[int, list[str]]:
    args, count, names = p.argv[1:], default, []
    i = 0
    while i < len(args):
        if args[i] == "-n" and i + 1 < len(args):
            count = int(args[i + 1].lstrip("+-") or default)
            i += 1
        elif re.fullmatch(r"-\d+", args[i]):
            count = int(args[i][1:])
        else:
            names.append(args[i])
        i += 1
    return count, names


@command("head", "tail")
async def head(p: Proc) -> int:
    count, names = _count(p, 10)
    text = await _input_text(p, names)
    if text is None:
        return 1
    lines = text.splitlines(keepends=True)
    await p.print("".join(lines[:count] if p.argv[0] == "head" else lines[-count:] if count else []))
    return 0


@command("wc")
async def wc(p: Proc) -> int:
    text = await _input_text(p, [a for a in p.argv[1:] if not a.startswith("-")])
    if text is None:
        return 1
    counts = {"l": text.count("\n"), "w": len(text.split()), "c": len(text.encode())}
    chosen = [k for k in "lwc" if any(k in a for a in p.argv[1:] if a.startswith("-"))] or ["l", "w", "c"]
    await p.print(" ".join(str(counts[k]) for k in chosen) + "\n")
    return 0


@command("base64")
async def b64(p: Proc) -> int:
    data = await p.stdin()
    if "-d" in p.argv:
        try:
            await p.streams.out(base64.b64decode(data))
        except (binascii.Error, ValueError):
            await p.error("base64: bad input\n")
            return 1
        return 0
    await p.print(base64.encodebytes(data).decode())
    return 0


# --- who and where -----------------------------------------------------------------------------------

ID = (
    "uid=2000(shell) gid=2000(shell) groups=2000(shell),1004(input),1007(log),1011(adb),1015(sdcard_rw),"
    "1028(sdcard_r),1078(ext_data_rw),1079(ext_obb_rw),3001(net_bt_admin),3002(net_bt),3003(inet),"
    "3006(net_bw_stats),3009(readproc),3011(uhid),3012(readtracefs) context=u:r:shell:s0"
)


@command("id")
async def id_(p: Proc) -> int:
    await p.print(ID + "\n")
    return 0


@command("whoami")
async def whoami(p: Proc) -> int:
    await p.print("shell\n")
    return 0


@command("which")
async def which(p: Proc) -> int:
    found = [name for name in p.argv[1:] if name in COMMANDS]
    await p.print("".join(f"/system/bin/{name}\n" for name in found))
    return 0 if found and len(found) == len(p.argv) - 1 else 1


@command("uname")
async def uname(p: Proc) -> int:
    full = "Linux localhost 5.15.41-android13-8-00055-g4f5025129fe8-ab8949913 #1 SMP PREEMPT Mon Aug 15 18:33:14 UTC 2022 x86_64"  # noqa: E501
    await p.print((full if "-a" in p.argv else "Linux") + "\n")
    return 0


@command("date")
async def date(p: Proc) -> int:
    now = state_of(p).clock.now()
    fmt = next((a[1:] for a in p.argv[1:] if a.startswith("+")), "%a %b %e %H:%M:%S %Z %Y")
    await p.print(time.strftime(fmt.replace("%s", str(int(now))), time.localtime(now)) + "\n")
    return 0


@command("sleep")
async def sleep(p: Proc) -> int:
    try:
        seconds = sum(float(a.rstrip("s")) for a in p.argv[1:])
    except ValueError:
        await p.error(f"sleep: invalid number '{p.argv[1]}'\n")
        return 1
    return 143 if await wait_closed(p, seconds) else 0


# --- processes ---------------------------------------------------------------------------------------

SYSTEM_PROCS = [
    ("root", 1, 0, "init"),
    ("root", 2, 0, "[kthreadd]"),
    ("logd", 233, 1, "logd"),
    ("system", 270, 1, "servicemanager"),
    ("root", 402, 1, "zygote64"),
    ("system", 589, 402, "system_server"),
    ("shell", 1510, 1, "adbd"),
]


def process_table(state: PhoneState) -> list[tuple[str, int, int, str]]:
    rows = list(SYSTEM_PROCS)
    for name, pid in sorted(state.processes.items(), key=lambda kv: kv[1]):
        pkg = state.packages.get(name)
        uid = pkg.uid if pkg else 10100
        rows.append((f"u0_a{uid - 10000}" if uid >= 10000 else "system", pid, 402, name))
    if state.u2.running:
        rows.append(("shell", state.u2.pid, 1510, "app_process"))
    rows += [("shell", proc.pid, 1, proc.name) for proc in state.shell_processes.values()]
    return rows


@command("ps")
async def ps(p: Proc) -> int:
    state = state_of(p)
    rows = process_table(state) if any(a in p.argv for a in ("-A", "-e", "-ef")) else []
    rows += [("shell", p.shell.pid, 1510, "sh"), ("shell", p.shell.pid + 7, p.shell.pid, "ps")]
    out = ["USER           PID  PPID     VSZ    RSS WCHAN            ADDR S NAME"]
    for user, pid, ppid, name in rows:
        out.append(f"{user:<12}{pid:>6}{ppid:>6} {12_800_000:>8} {98_304:>6} 0                   0 S {name}")
    await p.print("\n".join(out) + "\n")
    return 0


@command("pidof")
async def pidof(p: Proc) -> int:
    pids = [str(pid) for _, pid, _, name in process_table(state_of(p)) if name in p.argv[1:]]
    if pids:
        await p.print(" ".join(pids) + "\n")
    return 0 if pids else 1


def signal_process(state: PhoneState, pid: int, signal: int = 15) -> str | None:
    """Kills `pid` as the shell user would (signal 0 only asks whether it may); returns an errno
    message on failure."""
    if pid in state.shell_processes:
        if signal:
            state.shell_processes[pid].signals.append(signal)
        return None
    if signal == 0:
        owners = {proc_pid: user for user, proc_pid, _, _ in process_table(state)}
        return (
            None
            if owners.get(pid) == "shell"
            else "No such process"
            if pid not in owners
            else "Operation not permitted"
        )
    if state.u2.running and pid == state.u2.pid:
        from .u2server import stop_server

        stop_server(state)
        return None
    owners = {proc_pid: user for user, proc_pid, _, _ in process_table(state)}
    if pid not in owners:
        return "No such process"
    return "Operation not permitted" if owners[pid] != "shell" else None


_SIGNALS = {"HUP": 1, "INT": 2, "KILL": 9, "TERM": 15}


@command("kill")
async def kill(p: Proc) -> int:
    status = 0
    signal = 15
    for arg in p.argv[1:]:
        if arg.startswith("-"):
            name = arg[1:].upper().removeprefix("SIG")
            signal = int(name) if name.isdigit() else _SIGNALS.get(name, 15)
            continue
        if not arg.isdigit():
            await p.error(f"{SH}: kill: {arg}: arguments must be jobs or process IDs\n")
            status = 1
            continue
        problem = signal_process(state_of(p), int(arg), signal)
        if problem:
            await p.error(f"{SH}: kill: {arg}: {problem}\n")
            status = 1
    return status


@command("pkill", "killall")
async def pkill(p: Proc) -> int:
    full = "-f" in p.argv
    patterns = [a for a in p.argv[1:] if not a.startswith("-")]
    state = state_of(p)
    status = 1
    for _, pid, _, name in process_table(state):
        label = "app_process / com.wetest.uia2.Main -p 9008" if full and name == "app_process" else name
        matched = any((re.search(pat, label) if p.argv[0] == "pkill" else pat == name) for pat in patterns)
        if matched and signal_process(state, pid) is None:
            status = 0
    return status


# --- shells ------------------------------------------------------------------------------------------


@command("sh", "mksh")
async def sh(p: Proc) -> int:
    """`sh -c SCRIPT`, `sh FILE`, or a script read from stdin."""
    from .shell import Shell

    sub = Shell(p.shell.host, p.io, p.env, pid=p.shell.pid + 1)
    sub.cwd = p.shell.cwd
    args = p.argv[1:]
    if args[:1] == ["-c"]:
        return await sub.run(args[1] if len(args) > 1 else "", p.streams)
    if args:
        try:
            text = state_of(p).files.read(path_of(p, args[0])).decode("utf-8", "replace")
        except OSError:
            await p.error(f"{SH}: {args[0]}: No such file or directory\n")
            return 127
        return await sub.run(text, p.streams)
    return await sub.run((await p.stdin()).decode("utf-8", "replace"), p.streams)


class _NoHangup:
    """The adb stream's io, except that its closing no longer ends the process (SIGHUP ignored)."""

    def __init__(self, inner: ProcessIO) -> None:
        self.inner = inner

    async def read_stdin(self) -> bytes:
        return await self.inner.read_stdin()

    async def write_stdout(self, data: bytes) -> None:
        if not self.inner.closed:
            await self.inner.write_stdout(data)

    async def write_stderr(self, data: bytes) -> None:
        if not self.inner.closed:
            await self.inner.write_stderr(data)

    @property
    def closed(self) -> bool:
        return False


@command("nohup")
async def nohup(p: Proc) -> int:
    from .shell import Shell
    from .syntax import Command, Part

    if len(p.argv) < 2:
        await p.error("nohup: Needs 1 argument\n")
        return 127
    sub = Shell(p.shell.host, _NoHangup(p.io), p.env, pid=p.shell.pid + 1)
    sub.cwd = p.shell.cwd
    return await sub.simple(Command("simple", words=[[Part("lit", a, True)] for a in p.argv[1:]]), p.streams)


@command("env", "printenv")
async def env(p: Proc) -> int:
    """`env [NAME=VALUE]... [COMMAND [ARG]...]`; with no command, prints the environment."""
    from .shell import Shell
    from .syntax import Command, Part

    args = p.argv[1:]
    values = dict(p.env)
    while args and "=" in args[0] and p.argv[0] == "env":
        name, _, value = args.pop(0).partition("=")
        values[name] = value
    if not args or p.argv[0] == "printenv":
        wanted = args if p.argv[0] == "printenv" else []
        await p.print("".join(f"{k}={v}\n" for k, v in sorted(values.items()) if not wanted or k in wanted))
        return 0
    sub = Shell(p.shell.host, p.io, values, pid=p.shell.pid + 1)
    sub.cwd = p.shell.cwd
    return await sub.simple(Command("simple", words=[[Part("lit", a, True)] for a in args]), p.streams)
