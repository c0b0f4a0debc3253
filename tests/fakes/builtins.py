"""The shell's builtins: echo (mksh's, which interprets backslash escapes), printf, cd, export,
unset, exit, test/[, read, eval, exec, command -v, type, true/false/:, pwd, wait, . (source).
"""

from __future__ import annotations

import re

from .fs import canonical
from .shell import SH, ExitShell, Handler, Proc
from .syntax import Command, Parser, Part


def echo_escapes(text: str) -> tuple[str, bool]:
    """mksh's echo interprets backslash escapes; \\c stops output (returns False)."""
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c != "\\" or i + 1 == len(text):
            out.append(c)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt == "c":
            return "".join(out), False
        if nxt == "0":
            m = re.match(r"[0-7]{0,3}", text[i + 2 :])
            digits = m.group(0) if m else ""
            out.append(chr(int(digits or "0", 8)))
            i += 2 + len(digits)
            continue
        simple = {
            "a": "\a",
            "b": "\b",
            "e": "\x1b",
            "f": "\f",
            "n": "\n",
            "r": "\r",
            "t": "\t",
            "v": "\v",
            "\\": "\\",
        }
        out.append(simple.get(nxt, "\\" + nxt))
        i += 2
    return "".join(out), True


async def _echo(p: Proc) -> int:
    args, newline, escapes = p.argv[1:], True, True
    while args and re.fullmatch(r"-[neE]+", args[0]):
        newline = newline and "n" not in args[0]
        escapes = "E" not in args[0] if "e" not in args[0] else True
        args = args[1:]
    text = " ".join(args)
    more = True
    if escapes:
        text, more = echo_escapes(text)
    await p.print(text + ("\n" if newline and more else ""))
    return 0


async def _printf(p: Proc) -> int:
    if len(p.argv) < 2:
        await p.error("printf: Needs 1 argument\n")
        return 1
    fmt, args = p.argv[1], p.argv[2:]
    out: list[str] = []
    while True:
        used = 0

        def conv(m: re.Match[str], args: list[str] = args) -> str:
            nonlocal used
            spec = m.group(0)
            if spec == "%%":
                return "%"
            arg = args[used] if used < len(args) else ""
            used += 1
            kind = spec[-1]
            if kind in "di":
                return (spec[:-1] + "d") % int(arg or 0)
            if kind == "b":
                return echo_escapes(arg)[0]
            return (spec[:-1] + "s") % arg

        out.append(echo_escapes(re.sub(r"%[-+ 0#]*\d*(?:\.\d+)?[sdibxoc%]", conv, fmt))[0])
        args = args[used:]
        if not args or used == 0:
            break
    await p.print("".join(out))
    return 0


async def _cd(p: Proc) -> int:
    target = canonical(p.argv[1] if len(p.argv) > 1 else "/", p.shell.cwd)
    node = p.shell.host.fs.stat(target)
    if node is None or not node.is_dir:
        await p.error(f"{SH}: cd: {target}: No such file or directory\n")
        return 2
    p.shell.cwd = target
    return 0


async def _export(p: Proc) -> int:
    for arg in p.argv[1:]:
        name, eq, value = arg.partition("=")
        if eq:
            p.shell.vars[name] = value
    return 0


async def _unset(p: Proc) -> int:
    for name in p.argv[1:]:
        p.shell.vars.pop(name, None)
    return 0


async def _exit(p: Proc) -> int:
    raise ExitShell(
        int(p.argv[1]) & 0xFF if len(p.argv) > 1 and p.argv[1].lstrip("-").isdigit() else p.shell.status
    )


async def _test(p: Proc) -> int:
    args = p.argv[1:]
    if p.argv[0] == "[":
        if not args or args[-1] != "]":
            await p.error(f"{SH}: [: missing ]\n")
            return 2
        args = args[:-1]
    negate = bool(args) and args[0] == "!"
    args = args[1:] if negate else args
    fs = p.shell.host.fs
    result = False
    if len(args) == 1:
        result = bool(args[0])
    elif len(args) == 2:
        op, arg = args
        node = (
            fs.stat(canonical(arg, p.shell.cwd)) if op in ("-e", "-f", "-d", "-s", "-r", "-w", "-x") else None
        )
        result = {
            "-n": bool(arg),
            "-z": not arg,
            "-e": node is not None,
            "-f": node is not None and not node.is_dir,
            "-d": node is not None and node.is_dir,
            "-s": node is not None and bool(node.data),
            "-r": node is not None,
            "-w": node is not None,
            "-x": node is not None and bool(node.mode & 0o111),
        }.get(op, False)
    elif len(args) == 3:
        left, op, right = args
        if op in ("=", "=="):
            result = left == right
        elif op == "!=":
            result = left != right
        elif op in ("-eq", "-ne", "-lt", "-le", "-gt", "-ge"):
            try:
                a, b = int(left), int(right)
            except ValueError:
                await p.error(f"{SH}: {p.argv[0]}: {left}: bad number\n")
                return 2
            result = {"-eq": a == b, "-ne": a != b, "-lt": a < b, "-le": a <= b, "-gt": a > b, "-ge": a >= b}[
                op
            ]
    return int(result == negate)


async def _read(p: Proc) -> int:
    data = await p.stdin()
    if not data:
        return 1
    line = data.decode("utf-8", "replace").split("\n", 1)[0]
    names = [a for a in p.argv[1:] if not a.startswith("-")] or ["REPLY"]
    values = line.split(None, len(names) - 1)
    for i, name in enumerate(names):
        p.shell.vars[name] = values[i] if i < len(values) else ""
    return 0


async def _eval(p: Proc) -> int:
    return await p.shell.script(Parser(" ".join(p.argv[1:])).script(), p.streams)


async def _exec(p: Proc) -> int:
    if len(p.argv) == 1:
        return 0
    sub = Command("simple", words=[[Part("lit", a, True)] for a in p.argv[1:]])
    raise ExitShell(await p.shell.simple(sub, p.streams))


async def _command_v(p: Proc) -> int:
    args = [a for a in p.argv[1:] if not a.startswith("-")]
    if p.argv[0] == "command" and "-v" not in p.argv:
        return await _exec_plain(p, args)
    status = 0
    for name in args:
        if name in BUILTINS:
            await p.print(f"{name}\n" if p.argv[0] == "command" else f"{name} is a shell builtin\n")
        elif p.shell.host.find(name) is not None:
            await p.print(
                f"/system/bin/{name}\n" if p.argv[0] == "command" else f"{name} is /system/bin/{name}\n"
            )
        else:
            status = 1
            if p.argv[0] == "type":
                await p.print(f"{name} not found\n")
    return status


async def _exec_plain(p: Proc, args: list[str]) -> int:
    if not args:
        return 0
    return await p.shell.simple(Command("simple", words=[[Part("lit", a, True)] for a in args]), p.streams)


async def _true(p: Proc) -> int:
    return 0


async def _false(p: Proc) -> int:
    return 1


async def _pwd(p: Proc) -> int:
    await p.print(p.shell.cwd + "\n")
    return 0


async def _wait(p: Proc) -> int:
    for task in p.shell.background:
        await task
    p.shell.background.clear()
    return 0


async def _source(p: Proc) -> int:
    if len(p.argv) < 2:
        return 0
    try:
        text = p.shell.host.fs.read(canonical(p.argv[1], p.shell.cwd)).decode()
    except OSError:
        await p.error(f"{SH}: {p.argv[0]}: {p.argv[1]}: not found\n")
        return 1
    return await p.shell.script(Parser(text).script(), p.streams)


BUILTINS: dict[str, Handler] = {
    "echo": _echo,
    "printf": _printf,
    "cd": _cd,
    "export": _export,
    "unset": _unset,
    "exit": _exit,
    "test": _test,
    "[": _test,
    "read": _read,
    "eval": _eval,
    "exec": _exec,
    "command": _command_v,
    "type": _command_v,
    "true": _true,
    "false": _false,
    ":": _true,
    "set": _true,
    "pwd": _pwd,
    "wait": _wait,
    ".": _source,
    "source": _source,
}
