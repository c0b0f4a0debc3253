"""The shell language of the fake phone's /system/bin/sh: a lexer and parser for the subset of
mksh a command sent over adb uses.

Quoting ('...', "...", backslashes), expansions ($VAR, ${VAR:-x}, $?, $(...), `...`, $((...))),
redirections (> >> < 2> 2>&1 >&2 &>), pipelines, && || ; &, ( ) and { } groups, if/while/until/for.
Syntax errors carry mksh's wording ("'fi' unexpected", "no closing quote").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

RESERVED = {"if", "then", "elif", "else", "fi", "while", "until", "do", "done", "for", "in", "{", "}", "!"}


class ShellSyntaxError(Exception):
    pass


# --- syntax ---------------------------------------------------------------------------------


@dataclass
class Part:
    kind: str  # "lit", "var", "cmd", "arith"
    value: str
    quoted: bool = False


Word = list[Part]


@dataclass
class Tok:
    kind: str  # "word", "op", "redir", "eof"
    value: str = ""
    word: Word = field(default_factory=list)
    fd: int = -2


@dataclass
class Redir:
    fd: int  # -1: both stdout and stderr (&>)
    op: str
    target: Word


@dataclass
class Command:
    kind: str  # "simple", "subshell", "group", "if", "while", "until", "for"
    words: list[Word] = field(default_factory=list)
    assigns: list[tuple[str, Word]] = field(default_factory=list)
    redirs: list[Redir] = field(default_factory=list)
    body: list[Any] = field(default_factory=list)  # lists / (cond, body) pairs, by kind
    var: str = ""


@dataclass
class Pipeline:
    commands: list[Command]
    negated: bool = False


@dataclass
class AndOr:
    first: Pipeline
    rest: list[tuple[str, Pipeline]] = field(default_factory=list)


@dataclass
class Script:
    items: list[tuple[AndOr, bool]] = field(default_factory=list)  # (command, in background)


def _matching(s: str, i: int, open_: str, close: str) -> int:
    """Index just past the `close` matching s[i] == open_, skipping quoted text."""
    depth, j = 0, i
    while j < len(s):
        c = s[j]
        if c == "\\":
            j += 2
            continue
        if c == "'":
            end = s.find("'", j + 1)
            if end < 0:
                raise ShellSyntaxError("no closing quote")
            j = end + 1
            continue
        if c == '"':
            j = _dquote_end(s, j)
            continue
        if c == open_:
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    raise ShellSyntaxError(f"'{open_}' unmatched" if open_ != "(" else "'(' unmatched")


def _dquote_end(s: str, i: int) -> int:
    j = i + 1
    while j < len(s):
        if s[j] == "\\":
            j += 2
        elif s[j] == '"':
            return j + 1
        elif s[j] == "$" and s[j + 1 : j + 2] == "(":
            j = _matching(s, j + 1, "(", ")")
        else:
            j += 1
    raise ShellSyntaxError("no closing quote")


def _dollar(s: str, i: int, quoted: bool) -> tuple[Part, int]:
    nxt = s[i + 1 : i + 2]
    if s[i + 1 : i + 3] == "((":
        end = _matching(s, i + 1, "(", ")")
        return Part("arith", s[i + 3 : end - 2], quoted), end
    if nxt == "(":
        end = _matching(s, i + 1, "(", ")")
        return Part("cmd", s[i + 2 : end - 1], quoted), end
    if nxt == "{":
        end = s.find("}", i)
        if end < 0:
            raise ShellSyntaxError("missing '}'")
        return Part("var", s[i + 2 : end], quoted), end + 1
    m = re.match(r"[A-Za-z_][A-Za-z0-9_]*|[?$!#@*0-9-]", s[i + 1 :])
    if m:
        return Part("var", m.group(0), quoted), i + 1 + len(m.group(0))
    return Part("lit", "$", quoted), i + 1


def lex(s: str) -> list[Tok]:
    toks: list[Tok] = []
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if c in " \t":
            i += 1
        elif c == "\\" and s[i + 1 : i + 2] == "\n":
            i += 2
        elif c == "\n":
            toks.append(Tok("op", "\n"))
            i += 1
        elif c == "#":
            while i < n and s[i] != "\n":
                i += 1
        elif c in "|&;()<>":
            for op in ("&&", "||", ";;", ">>", ">&", "<&", "&>", ">|", "|", "&", ";", "(", ")", ">", "<"):
                if s.startswith(op, i):
                    break
            i += len(op)
            if op in (">", ">>", "<", ">&", "<&", "&>", ">|"):
                fd = -1 if op == "&>" else (0 if op.startswith("<") else 1)
                toks.append(Tok("redir", ">" if op in ("&>", ">|") else op, fd=fd))
            elif op == ";;":
                raise ShellSyntaxError("';;' unexpected")
            else:
                toks.append(Tok("op", op))
        else:
            word, i = _word(s, i)
            if (
                i < n
                and s[i] in "<>"
                and len(word) == 1
                and word[0].kind == "lit"
                and not word[0].quoted
                and word[0].value.isdigit()
            ):
                op = ">>" if s.startswith(">>", i) else s[i : i + 2] if s[i + 1 : i + 2] == "&" else s[i]
                toks.append(Tok("redir", op, fd=int(word[0].value)))
                i += len(op)
            else:
                toks.append(Tok("word", word=word))
    toks.append(Tok("eof"))
    return toks


def _word(s: str, i: int) -> tuple[Word, int]:
    parts: Word = []
    buf: list[str] = []

    def flush() -> None:
        if buf:
            parts.append(Part("lit", "".join(buf)))
            buf.clear()

    n = len(s)
    while i < n and s[i] not in " \t\n|&;()<>":
        c = s[i]
        if c == "'":
            end = s.find("'", i + 1)
            if end < 0:
                raise ShellSyntaxError("no closing quote")
            flush()
            parts.append(Part("lit", s[i + 1 : end], True))
            i = end + 1
        elif c == '"':
            flush()
            end = _dquote_end(s, i)
            parts.extend(_dquoted(s[i + 1 : end - 1]))
            if not parts or parts[-1].kind != "lit" or not parts[-1].quoted:
                parts.append(Part("lit", "", True))
            i = end
        elif c == "\\":
            flush()
            if i + 1 < n:
                parts.append(Part("lit", s[i + 1], True))
            i += 2
        elif c == "$":
            flush()
            part, i = _dollar(s, i, False)
            parts.append(part)
        elif c == "`":
            end = s.find("`", i + 1)
            while end > 0 and s[end - 1] == "\\":
                end = s.find("`", end + 1)
            if end < 0:
                raise ShellSyntaxError("no closing quote")
            flush()
            parts.append(Part("cmd", s[i + 1 : end].replace("\\`", "`")))
            i = end + 1
        else:
            buf.append(c)
            i += 1
    flush()
    return parts, i


def _dquoted(s: str) -> Word:
    parts: Word = []
    buf: list[str] = []
    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s) and s[i + 1] in '$`"\\\n':
            if s[i + 1] != "\n":
                buf.append(s[i + 1])
            i += 2
        elif c == "$":
            if buf:
                parts.append(Part("lit", "".join(buf), True))
                buf.clear()
            part, i = _dollar(s, i, True)
            parts.append(part)
        elif c == "`":
            end = s.find("`", i + 1)
            if buf:
                parts.append(Part("lit", "".join(buf), True))
                buf.clear()
            parts.append(Part("cmd", s[i + 1 : end], True))
            i = end + 1
        else:
            buf.append(c)
            i += 1
    if buf or not parts:
        parts.append(Part("lit", "".join(buf), True))
    return parts


def _literal(word: Word) -> str | None:
    """The word's text when it is one plain unquoted literal (a candidate reserved word)."""
    if len(word) == 1 and word[0].kind == "lit" and not word[0].quoted:
        return word[0].value
    return None


class Parser:
    def __init__(self, text: str) -> None:
        self.toks = lex(text)
        self.pos = 0

    def peek(self) -> Tok:
        return self.toks[self.pos]

    def take(self) -> Tok:
        tok = self.toks[self.pos]
        self.pos += 1
        return tok

    def reserved(self) -> str | None:
        tok = self.peek()
        return _literal(tok.word) if tok.kind == "word" and _literal(tok.word) in RESERVED else None

    def expect(self, word: str) -> None:
        if self.reserved() != word:
            tok = self.peek()
            raise ShellSyntaxError(
                "unexpected EOF" if tok.kind == "eof" else f"'{self._show(tok)}' unexpected"
            )
        self.take()

    @staticmethod
    def _show(tok: Tok) -> str:
        return tok.value or "".join(p.value for p in tok.word) or "newline"

    def skip_newlines(self) -> None:
        while self.peek().kind == "op" and self.peek().value == "\n":
            self.take()

    def script(self, stop: tuple[str, ...] = ()) -> Script:
        out = Script()
        self.skip_newlines()
        while True:
            tok = self.peek()
            if (
                tok.kind == "eof"
                or (tok.kind == "op" and tok.value == ")")
                or (self.reserved() or "") in stop
            ):
                return out
            if tok.kind == "op" and tok.value in (";", "&"):
                raise ShellSyntaxError(f"'{tok.value}' unexpected")
            item = self.and_or()
            background = False
            tok = self.peek()
            if tok.kind == "op" and tok.value in (";", "&", "\n"):
                self.take()
                background = tok.value == "&"
                self.skip_newlines()
            elif not (
                tok.kind == "eof" or (tok.kind == "op" and tok.value == ")") or self.reserved() in stop
            ):
                raise ShellSyntaxError(f"'{self._show(tok)}' unexpected")
            out.items.append((item, background))

    def and_or(self) -> AndOr:
        node = AndOr(self.pipeline())
        while self.peek().kind == "op" and self.peek().value in ("&&", "||"):
            op = self.take().value
            self.skip_newlines()
            node.rest.append((op, self.pipeline()))
        return node

    def pipeline(self) -> Pipeline:
        negated = self.reserved() == "!"
        if negated:
            self.take()
        cmds = [self.command()]
        while self.peek().kind == "op" and self.peek().value == "|":
            self.take()
            self.skip_newlines()
            cmds.append(self.command())
        return Pipeline(cmds, negated)

    def command(self) -> Command:
        word = self.reserved()
        tok = self.peek()
        if tok.kind == "op" and tok.value == "(":
            self.take()
            cmd = Command("subshell", body=[self.script()])
            if self.peek().kind != "op" or self.take().value != ")":
                raise ShellSyntaxError("'(' unmatched")
        elif word == "{":
            self.take()
            cmd = Command("group", body=[self.script(("}",))])
            self.expect("}")
        elif word == "if":
            self.take()
            cmd = Command("if")
            while True:
                cond = self.script(("then",))
                self.expect("then")
                cmd.body.append((cond, self.script(("elif", "else", "fi"))))
                if self.reserved() != "elif":
                    break
                self.take()
            if self.reserved() == "else":
                self.take()
                cmd.body.append((None, self.script(("fi",))))
            if self.reserved() != "fi":
                raise ShellSyntaxError("'if' unmatched")
            self.take()
        elif word in ("while", "until"):
            self.take()
            cond = self.script(("do",))
            self.expect("do")
            cmd = Command(word, body=[cond, self.script(("done",))])
            self.expect("done")
        elif word == "for":
            self.take()
            name = _literal(self.take().word) or ""
            words: list[Word] | None = None
            self.skip_newlines()
            if self.reserved() == "in":
                self.take()
                words = []
                while self.peek().kind == "word":
                    words.append(self.take().word)
            if self.peek().kind == "op" and self.peek().value in (";", "\n"):
                self.take()
            self.skip_newlines()
            self.expect("do")
            cmd = Command("for", var=name, words=words or [], body=[self.script(("done",)), words is None])
            self.expect("done")
        elif word in RESERVED and word != "!":
            raise ShellSyntaxError(f"'{word}' unexpected")
        else:
            return self.simple()
        while self.peek().kind == "redir":
            cmd.redirs.append(self.redir())
        return cmd

    def redir(self) -> Redir:
        tok = self.take()
        target = self.take()
        if target.kind != "word":
            raise ShellSyntaxError(f"'{self._show(target)}' unexpected")
        return Redir(tok.fd, tok.value, target.word)

    def simple(self) -> Command:
        cmd = Command("simple")
        while True:
            tok = self.peek()
            if tok.kind == "redir":
                cmd.redirs.append(self.redir())
            elif tok.kind == "word":
                self.take()
                first = tok.word[0] if tok.word else None
                m = (
                    re.match(r"([A-Za-z_][A-Za-z0-9_]*)=", first.value)
                    if first and first.kind == "lit"
                    else None
                )
                if not cmd.words and m and first is not None and not first.quoted:
                    value = [Part("lit", first.value[m.end() :]), *tok.word[1:]]
                    cmd.assigns.append((m.group(1), value))
                else:
                    cmd.words.append(tok.word)
            else:
                break
        if not cmd.words and not cmd.assigns and not cmd.redirs:
            raise ShellSyntaxError(
                "unexpected EOF" if self.peek().kind == "eof" else f"'{self._show(self.peek())}' unexpected"
            )
        return cmd
