"""Building phone shell commands safely, and reading what the phone's tools print.

Everything here is pure (no I/O), so it is tested on its own:
- `command(*args)` quotes every argument for the phone's `sh -c` (adb joins a shell service's
  words into one string that the phone's shell parses again), so text from a caller never
  becomes shell syntax;
- `sql_text` quotes a value for a `content query --where` clause;
- `bind` writes one `content insert --bind` value, escaped for the `content` tool of the phone's
  Android version;
- `parse_rows` reads `content query` output back into dicts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

# Characters that never need quoting in sh; anything else is single-quoted.
_SAFE = re.compile(r"[A-Za-z0-9_@%+=:,./-]+")

# The SDK from which `content`'s `--bind` splits on unescaped colons and unescapes `\x` (Android 12).
BIND_ESCAPES_FROM_SDK = 31


def quote(arg: str) -> str:
    """One argument for the phone's sh: unchanged when it is plain, else in single quotes, each
    embedded quote written as '\\'' (the POSIX way; sh has no escapes inside single quotes)."""
    if arg and _SAFE.fullmatch(arg):
        return arg
    return "'" + arg.replace("'", "'\\''") + "'"


def command(*args: str | int) -> str:
    """A command line whose every word reaches the program exactly as given."""
    return " ".join(quote(str(a)) for a in args)


def sql_text(value: str) -> str:
    """A SQL string literal for a `--where` clause ('' doubles a quote), to be shell-quoted as part
    of the whole clause by `command`."""
    return "'" + value.replace("'", "''") + "'"


def sql_like(value: str) -> str:
    """A LIKE pattern that finds `value` anywhere, with its own % and _ taken literally."""
    escaped = value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"'%{escaped.replace(chr(39), chr(39) * 2)}%' ESCAPE '\\'"


def bind(column: str, kind: str, value: str | int, *, sdk: int) -> list[str]:
    """`--bind column:kind:value` for `content insert`. Android 12 and later split the whole
    binding on unescaped colons and unescape backslashes, so there a value's `\\` and `:` are
    escaped; before, everything after the second colon was the value, verbatim."""
    text = str(value)
    if sdk >= BIND_ESCAPES_FROM_SDK:
        text = text.replace("\\", "\\\\").replace(":", "\\:")
    return ["--bind", f"{column}:{kind}:{text}"]


# --- content query output ---------------------------------------------------
NO_RESULT = "No result found."
_ROW = re.compile(r"^Row: (\d+) ", re.MULTILINE)
# What `content` prints (exit code 0 all the same) when the provider refused or failed.
PROVIDER_ERROR = "Error while accessing provider"
SECURITY_ERRORS = ("java.lang.SecurityException", "Permission Denial")


class RowFormatError(ValueError):
    """`content query` printed something other than rows of the projection asked for."""


def parse_rows(output: str, projection: Sequence[str]) -> list[dict[str, str]]:
    """The rows of `content query --projection a:b:c` output, as {column: text}.

    A row prints as `Row: N a=1, b=x, c=y` in projection order, with ", " between columns and
    nothing escaped, so a value may itself contain ", " or even newlines. Each value therefore
    runs up to the next expected `, column=` (the first one after it), and the last column takes
    the rest of the row: callers put free text last. A row continues on the following lines until
    the next `Row: N+1 `. SQL NULL prints as "NULL", read here as ""."""
    text = output.replace("\r\n", "\n")
    if text.strip() == NO_RESULT or not text.strip():
        return []
    starts = list(_ROW.finditer(text))
    # A value can hold "\nRow: 7 " too; only the next index in sequence starts a row.
    rows_at: list[tuple[int, int]] = []
    expected = 0
    for match in starts:
        if int(match.group(1)) == expected:
            rows_at.append((match.start(), match.end()))
            expected += 1
    if not rows_at:
        raise RowFormatError(f"not content query rows: {text[:200]!r}")
    rows = []
    for i, (_start, body_at) in enumerate(rows_at):
        end = rows_at[i + 1][0] if i + 1 < len(rows_at) else len(text)
        body = text[body_at:end]
        if body.endswith("\n"):
            body = body[:-1]
        rows.append(_split_row(body, projection))
    return rows


def _split_row(body: str, projection: Sequence[str]) -> dict[str, str]:
    row: dict[str, str] = {}
    at = 0
    for i, column in enumerate(projection):
        head = f"{column}="
        if not body.startswith(head, at):
            raise RowFormatError(f"expected {column}= at {body[at : at + 40]!r}")
        at += len(head)
        if i + 1 < len(projection):
            marker = f", {projection[i + 1]}="
            end = body.find(marker, at)
            if end < 0:
                raise RowFormatError(f"no {projection[i + 1]}= after {column}")
            value, at = body[at:end], end + 2
        else:
            value, at = body[at:], len(body)
        row[column] = "" if value == "NULL" else value
    return row


def provider_failure(output: str) -> str | None:
    """The first line of the error `content` printed, or None when it printed none."""
    if PROVIDER_ERROR not in output and not any(e in output for e in SECURITY_ERRORS):
        return None
    for raw in output.splitlines():
        line = raw.strip()
        if any(e in line for e in SECURITY_ERRORS):
            return line
    return next((ln.strip() for ln in output.splitlines() if PROVIDER_ERROR in ln), output.strip()[:200])


def is_security_failure(output: str) -> bool:
    return any(e in output for e in SECURITY_ERRORS)


def where(*clauses: str | None) -> str:
    """Clauses joined with AND (None and empty ones left out)."""
    return " AND ".join(f"({c})" for c in clauses if c)


def projection_arg(columns: Iterable[str]) -> str:
    return ":".join(columns)


# --- getprop ----------------------------------------------------------------
_PROP = re.compile(r"^\[([^\]]+)\]: \[(.*)\]\s*$")


def parse_getprop(output: str) -> dict[str, str]:
    """`getprop` with no arguments: one `[name]: [value]` a line."""
    props = {}
    for line in output.splitlines():
        match = _PROP.match(line)
        if match:
            props[match.group(1)] = match.group(2)
    return props


_WM_SIZE = re.compile(r"(Override|Physical) size: (\d+)x(\d+)")


def parse_wm_size(output: str) -> tuple[int, int] | None:
    """`wm size`: the override size when one is set (what apps lay out for), else the physical."""
    found = {kind: (int(w), int(h)) for kind, w, h in _WM_SIZE.findall(output)}
    return found.get("Override") or found.get("Physical")


def oriented_size(natural: tuple[int, int], rotation: int) -> tuple[int, int]:
    """The screen's (width, height) as gestures see it: `wm size` gives the natural orientation's;
    a quarter turn (rotation 1 or 3, Surface.ROTATION_90/270) swaps them."""
    width, height = natural
    return (height, width) if rotation % 2 else (width, height)
