"""A small mksh: what `/system/bin/sh -c COMMAND` does with the string adbd was given.

The command is parsed by `syntax.py`, then run here: words are expanded (variables, command
substitution, arithmetic) with field splitting and globbing of unquoted results, `VAR=x cmd`
prefixes set the command's environment, redirections open files in the phone's file system, and
each simple command is looked up among the builtins, then the phone's commands. So a command the
host forgot to quote is split, expanded and executed exactly as a phone would do it: `$(rm -rf /)`
runs rm.
"""

from __future__ import annotations

import ast
import asyncio
import fnmatch
import operator
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from .contract import ProcessIO
from .fs import SHARED, FileSystem, canonical
from .syntax import AndOr, Command, Parser, Pipeline, Redir, Script, ShellSyntaxError, Word

Writer = Callable[[bytes], Awaitable[None]]
SH = "/system/bin/sh"


class DetachedIO:
    """The streams of a job that no longer belongs to an adb stream: never closed, no input."""

    async def read_stdin(self) -> bytes:
        return b""

    async def write_stdout(self, data: bytes) -> None:
        return None

    async def write_stderr(self, data: bytes) -> None:
        return None

    @property
    def closed(self) -> bool:
        return False


def _detached(item: AndOr) -> bool:
    """Every command sends both stdout and stderr somewhere other than the adb stream."""
    pipelines = [item.first, *(p for _, p in item.rest)]
    for command in (c for p in pipelines for c in p.commands):
        fds = {r.fd for r in command.redirs if r.op in (">", ">>") or (r.op == ">&" and r.fd == 2)}
        if not ({1, 2} <= fds or -1 in fds):
            return False
    return True


_JOB_PIDS = iter(range(20_000, 30_000))


def _next_job_pid() -> int:
    """A new pid for a detached job (a real shell's fork), unlike any other process's."""
    return next(_JOB_PIDS)


class RedirectError(Exception):
    """A redirection the shell could not set up; the command does not run (status 1)."""


class ExitShell(Exception):
    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


# --- running ----------------------------------------------------------------------------------


@dataclass
class Streams:
    stdin: bytes | None  # None: the adb stream's stdin
    out: Writer
    err: Writer


@dataclass
class Proc:
    """What a command gets: its argv, environment and streams."""

    argv: list[str]
    env: dict[str, str]
    cwd: str
    streams: Streams
    io: ProcessIO
    shell: Shell

    async def print(self, text: str) -> None:
        await self.streams.out(text.encode("utf-8"))

    async def error(self, text: str) -> None:
        await self.streams.err(text.encode("utf-8"))

    async def stdin(self) -> bytes:
        if self.streams.stdin is not None:
            return self.streams.stdin
        chunks = []
        while chunk := await self.io.read_stdin():
            chunks.append(chunk)
        return b"".join(chunks)


Handler = Callable[[Proc], Awaitable[int]]


class Host(Protocol):
    """What the shell needs from the phone it runs on."""

    @property
    def fs(self) -> FileSystem: ...

    def find(self, name: str) -> Handler | None: ...

    def ran(self, argv: list[str]) -> None: ...


_ARITH_OPS: dict[type, Callable[[int, int], int]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Div: operator.floordiv,
    ast.Mod: operator.mod,
}


class Shell:
    def __init__(self, host: Host, io: ProcessIO, env: dict[str, str], *, pid: int = 4321) -> None:
        self.host = host
        self.io = io
        self.vars = dict(env)
        self.cwd = "/"
        self.status = 0
        self.pid = pid
        self.background: list[asyncio.Task[int]] = []
        self.orphans: set[asyncio.Task[int]] = set()  # detached jobs, kept referenced while they run
        self.last_job = 0  # `$!`: the pid of the last detached job (its command runs as that pid)

    async def run(self, text: str, streams: Streams) -> int:
        try:
            tree = Parser(text).script()
        except ShellSyntaxError as exc:
            await streams.err(f"{SH}: syntax error: {exc}\n".encode())
            return 1
        try:
            status = await self.script(tree, streams)
        except ExitShell as done:
            status = done.code
        for task in self.background:
            await task
        return status

    async def script(self, tree: Script, streams: Streams) -> int:
        for item, background in tree.items:
            if self.io.closed:
                raise ExitShell(129)
            if background and _detached(item):
                # Output redirected away from adb: the job outlives the adb stream, as with
                # `nohup app_process ... > /dev/null 2>&1 &`.
                self.last_job = _next_job_pid()
                orphan = Shell(self.host, DetachedIO(), self.vars, pid=self.last_job)
                orphan.cwd = self.cwd
                self.orphans.add(asyncio.ensure_future(orphan.and_or(item, streams)))
                self.status = 0
            elif background:
                self.background.append(asyncio.ensure_future(self.and_or(item, streams)))
                self.status = 0
            else:
                self.status = await self.and_or(item, streams)
            await asyncio.sleep(0)
        return self.status

    async def and_or(self, node: AndOr, streams: Streams) -> int:
        status = await self.pipeline(node.first, streams)
        for op, nxt in node.rest:
            self.status = status
            if (op == "&&") == (status == 0):
                status = await self.pipeline(nxt, streams)
        return status

    async def pipeline(self, node: Pipeline, streams: Streams) -> int:
        data = streams.stdin
        status = 0
        for i, cmd in enumerate(node.commands):
            if i == len(node.commands) - 1:
                status = await self.command(cmd, Streams(data, streams.out, streams.err))
            else:
                buf = bytearray()

                async def collect(chunk: bytes, buf: bytearray = buf) -> None:
                    buf.extend(chunk)

                await self.command(cmd, Streams(data, collect, streams.err))
                data = bytes(buf)
        return int(not status) if node.negated else status

    async def command(self, cmd: Command, streams: Streams) -> int:
        try:
            streams = await self.redirect(cmd.redirs, streams)
        except RedirectError as exc:
            await streams.err(f"{SH}: {exc}\n".encode())
            return 1
        if cmd.kind == "simple":
            return await self.simple(cmd, streams)
        if cmd.kind in ("subshell", "group"):
            saved = (dict(self.vars), self.cwd)
            try:
                return await self.script(cmd.body[0], streams)
            except ExitShell as done:
                if cmd.kind == "group":
                    raise
                return done.code
            finally:
                if cmd.kind == "subshell":
                    self.vars, self.cwd = saved
        if cmd.kind == "if":
            for cond, body in cmd.body:
                if cond is None or await self.script(cond, streams) == 0:
                    return await self.script(body, streams)
            return 0
        if cmd.kind in ("while", "until"):
            status = 0
            while (await self.script(cmd.body[0], streams) == 0) == (
                cmd.kind == "while"
            ) and not self.io.closed:
                status = await self.script(cmd.body[1], streams)
                await asyncio.sleep(0)
            return status
        values = [v for w in cmd.words for v in await self.expand(w, streams)]
        status = 0
        for value in values:
            self.vars[cmd.var] = value
            status = await self.script(cmd.body[0], streams)
        return status

    async def redirect(self, redirs: list[Redir], streams: Streams) -> Streams:
        fs = self.host.fs
        for r in redirs:
            target = " ".join(await self.expand(r.target, streams))
            if r.op in (">&", "<&"):
                dup = {1: streams.out, 2: streams.err}.get(int(target) if target.isdigit() else -9)
                if dup is None:
                    raise RedirectError(f"{target}: bad file descriptor")
                streams = (
                    Streams(streams.stdin, dup, streams.err)
                    if r.fd == 1
                    else Streams(streams.stdin, streams.out, dup)
                )
                continue
            if r.op == "<":
                try:
                    data = fs.read(canonical(target, self.cwd))
                except OSError as exc:
                    raise RedirectError(f"can't open {target}: {exc.strerror}") from None
                streams = Streams(data, streams.out, streams.err)
                continue
            try:
                writer = self._file_writer(canonical(target, self.cwd), append=r.op == ">>")
            except OSError as exc:
                raise RedirectError(f"can't create {target}: {exc.strerror}") from None
            if r.fd == -1:
                streams = Streams(streams.stdin, writer, writer)
            elif r.fd == 2:
                streams = Streams(streams.stdin, streams.out, writer)
            else:
                streams = Streams(streams.stdin, writer, streams.err)
        return streams

    def _file_writer(self, path: str, *, append: bool) -> Writer:
        fs = self.host.fs
        if path == "/dev/null":

            async def discard(chunk: bytes) -> None:
                return None

            return discard
        if not append or not fs.exists(path):
            fs.write(path, b"")

        async def write(chunk: bytes) -> None:
            fs.append(path, chunk)

        return write

    async def simple(self, cmd: Command, streams: Streams) -> int:
        self.status_subst = 0
        assigns = {
            name: "".join(await self.expand(value, streams, split=False)) for name, value in cmd.assigns
        }
        argv = [v for w in cmd.words for v in await self.expand(w, streams)]
        if not argv:
            self.vars.update(assigns)
            return self.status_subst
        self.host.ran(argv)
        env = {**self.vars, **assigns}
        name = argv[0]
        from .builtins import BUILTINS  # the builtins need Shell and Proc from here

        builtin = BUILTINS.get(name)
        proc = Proc(argv, env, self.cwd, streams, self.io, self)
        if builtin is not None:
            return await builtin(proc)
        handler = self.host.find(name)
        if handler is None and "/" in name:
            return await self.run_file(proc)
        if handler is None:
            await proc.error(f"{SH}: {name}: inaccessible or not found\n")
            return 127
        return await handler(proc)

    async def run_file(self, proc: Proc) -> int:
        path = canonical(proc.argv[0], self.cwd)
        node = self.host.fs.stat(path)
        if node is None or node.is_dir:
            await proc.error(f"{SH}: {proc.argv[0]}: inaccessible or not found\n")
            return 127 if node is None else 126
        if not node.mode & 0o111:
            await proc.error(f"{SH}: {proc.argv[0]}: can't execute: Permission denied\n")
            return 126
        if node.data.startswith(b"\x7fELF"):
            await proc.error(f"{SH}: {proc.argv[0]}: can't execute: Exec format error\n")
            return 126
        sub = Shell(self.host, self.io, proc.env, pid=self.pid + 1)
        return await sub.run(node.data.decode("utf-8", "replace"), proc.streams)

    # --- expansion ------------------------------------------------------------------------

    def lookup(self, name: str) -> str:
        m = re.fullmatch(r"#?([A-Za-z_][A-Za-z0-9_]*|[?$!#@*0-9-])(?:(:?[-=+])(.*))?", name, re.DOTALL)
        if not m:
            return ""
        key, op, word = m.group(1), m.group(2), m.group(3) or ""
        special = {
            "?": str(self.status),
            "$": str(self.pid),
            "!": str(self.last_job) if self.last_job else "",
            "#": "0",
            "@": "",
            "*": "",
            "0": SH,
            "-": "",
        }
        value: str | None = special.get(key, self.vars.get(key))
        if (op in (":-", ":=") and not value) or (op in ("-", "=") and value is None):
            value = word
            if op.endswith("="):
                self.vars[key] = word
        elif op in (":+", "+"):
            value = word if value else ""
        value = value or ""
        return str(len(value)) if name.startswith("#") and len(name) > 1 else value

    async def substitute(self, source: str, streams: Streams) -> str:
        buf = bytearray()

        async def collect(chunk: bytes) -> None:
            buf.extend(chunk)

        sub = Shell(self.host, self.io, self.vars, pid=self.pid + 1)
        sub.cwd = self.cwd
        self.status_subst = await sub.run(source, Streams(None, collect, streams.err))
        return buf.decode("utf-8", "replace").rstrip("\n")

    def arith(self, expr: str) -> str:
        text = re.sub(r"\$?([A-Za-z_][A-Za-z0-9_]*)", lambda m: self.lookup(m.group(1)) or "0", expr)

        def ev(node: ast.AST) -> int:
            if isinstance(node, ast.Expression):
                return ev(node.body)
            if isinstance(node, ast.Constant) and isinstance(node.value, int):
                return node.value
            if isinstance(node, ast.BinOp) and type(node.op) in _ARITH_OPS:
                return _ARITH_OPS[type(node.op)](ev(node.left), ev(node.right))
            if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
                return -ev(node.operand)
            raise ValueError(expr)

        try:
            return str(ev(ast.parse(text.replace("/", "//"), mode="eval")))
        except (SyntaxError, ValueError, ZeroDivisionError):
            return "0"

    async def expand(self, word: Word, streams: Streams, *, split: bool = True) -> list[str]:
        fields: list[tuple[str, str]] = []
        cur, pattern, started = "", "", False
        for part in word:
            if part.kind == "lit":
                text = part.value
            elif part.kind == "var":
                text = self.lookup(part.value)
            elif part.kind == "cmd":
                text = await self.substitute(part.value, streams)
            else:
                text = self.arith(part.value)
            if part.quoted or part.kind == "lit" or not split:
                cur += text
                pattern += re.sub(r"([*?\[])", r"[\1]", text) if part.quoted else text
                started = started or part.quoted or bool(text)
                continue
            for i, piece in enumerate(re.split(r"[ \t\n]+", text)):
                if i > 0 and started:
                    fields.append((cur, pattern))
                    cur, pattern, started = "", "", False
                if piece:
                    cur, pattern, started = cur + piece, pattern + piece, True
        if started:
            fields.append((cur, pattern))
        out: list[str] = []
        for value, pat in fields:
            out.extend((self.glob(pat) or [value]) if split and _has_glob(pat) else [value])
        return out

    def glob(self, pattern: str) -> list[str]:
        absolute = canonical(pattern, self.cwd)
        depth = absolute.count("/")
        nodes = self.host.fs.nodes
        found = sorted(
            p for p in nodes if p != "/" and p.count("/") == depth and fnmatch.fnmatchcase(p, absolute)
        )
        if pattern.startswith("/sdcard"):
            return ["/sdcard" + p[len(SHARED) :] for p in found]
        if pattern.startswith("/"):
            return found
        base = self.cwd.rstrip("/") + "/"
        return [p[len(base) :] if p.startswith(base) else p for p in found]


def _has_glob(pattern: str) -> bool:
    return re.search(r"[*?\[]", re.sub(r"\[[*?\[]\]", "", pattern)) is not None
