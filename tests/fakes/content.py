"""The `content` command (cmds/content's Content.java): argument parsing, including Android 12's
escaped colons in --bind values, and the SQL each query becomes.

Queries run as real SQL: the provider's rows are loaded into an in-memory SQLite table and the
caller's --projection/--where/--sort go into the statement the way SQLiteQueryBuilder builds it
("WHERE (type=1) AND (<where>)"), so quoting mistakes and injected SQL behave as on a phone.
Output and errors follow Content.java: "Row: N col=value, ...", "No result found.", and any
provider exception as "Error while accessing provider:X" + stack trace on stderr, exit code 0.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

from .intents import CommandError, illegal
from .providers import FRAMES, PROVIDERS, TABLE_COLUMNS, Row
from .state import PhoneState

# --- SQL ---------------------------------------------------------------------------------------


class SqlError(Exception):
    pass


def select(
    table: str,
    rows: list[Row],
    projection: list[str] | None,
    wheres: list[str],
    sort: str | None,
    columns: list[str] | None = None,
) -> tuple[list[str], list[tuple[object, ...]]]:
    cols = columns or TABLE_COLUMNS.get(table) or (list(rows[0]) if rows else ["_id"])
    db = sqlite3.connect(":memory:")
    try:
        db.execute(f"CREATE TABLE {table} (" + ", ".join(f'"{c}"' for c in cols) + ")")
        marks = ", ".join("?" for _ in cols)
        db.executemany(f"INSERT INTO {table} VALUES ({marks})", [tuple(r.get(c) for c in cols) for r in rows])
        sql = f"SELECT {', '.join(projection) if projection else '*'} FROM {table}"
        clauses = [w for w in wheres if w]
        if clauses:
            sql += " WHERE " + " AND ".join(f"({w})" for w in clauses)
        if sort:
            sql += f" ORDER BY {sort}"
        try:
            cursor = db.execute(sql)
            return [d[0] for d in cursor.description], cursor.fetchall()
        except (sqlite3.Error, sqlite3.Warning) as exc:
            raise SqlError(f"{exc} (code 1 SQLITE_ERROR): , while compiling: {sql}") from None
    finally:
        db.close()


def java_value(value: object) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bytes):
        return "BLOB"
    return str(value)


# --- the content command --------------------------------------------------------------------


@dataclass
class Request:
    op: str
    uri: str = ""
    values: dict[str, object] = field(default_factory=dict)
    projection: list[str] | None = None
    where: str | None = None
    sort: str | None = None


def split_escaped(argument: str) -> list[str]:
    """Content.splitWithEscaping (Android 12+): "\\:" is a literal colon inside a binding."""
    parts, cur, i = [], [], 0
    while i < len(argument):
        ch = argument[i]
        if ch == "\\":
            i += 1
            if i == len(argument):
                raise illegal("Invalid escaping")
            cur.append(argument[i])
        elif ch == ":":
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        i += 1
    parts.append("".join(cur))
    return parts


def parse_binding(argument: str, sdk: int) -> tuple[str, object]:
    if not argument:
        raise illegal(f"Binding not well formed: {argument}")
    if sdk >= 31:
        split = split_escaped(argument)
    else:  # before Android 12 the value was everything after the second colon
        first = argument.find(":")
        second = argument.find(":", first + 1) if first >= 0 else -1
        split = (
            [argument[:first], argument[first + 1 : second], argument[second + 1 :]] if second >= 0 else []
        )
    if len(split) != 3:
        raise illegal(f"Binding not well formed: {argument}")
    column, kind, value = split
    try:
        if kind == "s":
            return column, value
        converters: dict[str, Callable[[str], object]] = {
            "b": lambda v: v.lower() == "true",
            "i": int,
            "l": int,
            "f": float,
            "d": float,
        }
        if kind.lower() in converters:
            return column, converters[kind.lower()](value)
        if kind.lower() == "n":
            return column, None
    except ValueError:
        raise CommandError("java.lang.NumberFormatException", f'For input string: "{value}"') from None
    raise illegal(f"Unsupported type: {kind}")


def parse_request(argv: list[str], sdk: int) -> Request:
    if not argv or argv[0] not in ("insert", "delete", "update", "query", "call", "read", "write", "gettype"):
        raise illegal(f"Unsupported operation: {argv[0] if argv else None}")
    req = Request(argv[0])
    i = 1

    def value(name: str) -> str:
        nonlocal i
        i += 1
        if i >= len(argv) or not argv[i] or argv[i].startswith("--"):
            raise illegal(f"No value for argument: {name}")
        return argv[i]

    while i < len(argv):
        arg = argv[i]
        if arg == "--uri":
            req.uri = value(arg)
        elif arg == "--user":
            value(arg)
        elif arg == "--bind" and req.op in ("insert", "update"):
            i += 1
            name, val = parse_binding(argv[i] if i < len(argv) else "", sdk)
            req.values[name] = val
        elif arg == "--where" and req.op in ("query", "update", "delete"):
            req.where = value(arg)
        elif arg == "--sort" and req.op == "query":
            req.sort = value(arg)
        elif arg == "--projection" and req.op == "query":
            req.projection = [p for p in re.split(r"\s*:\s*", value(arg))]
            while req.projection and not req.projection[-1]:
                req.projection.pop()
        elif arg == "--extra":
            i += 1
        else:
            raise illegal(f"Unsupported argument: {arg}")
        i += 1
    if not req.uri:
        raise illegal("Content provider URI not specified. Did you specify --uri argument?")
    if req.op in ("insert", "update") and not req.values:
        raise illegal("Bindings not specified. Did you specify --bind argument(s)?")
    return req


USAGE = (
    "usage: adb shell content [subcommand] [options]\n\n"
    "usage: adb shell content insert --uri <URI> [--user <USER_ID>] --bind <BINDING> [--bind <BINDING>...]"
    " [--extra <BINDING>...]\n"
    "  <URI> a content provider URI.\n"
    "  <BINDING> binds a typed value to a column and is formatted:\n"
    "  <COLUMN_NAME>:<TYPE>:<COLUMN_VALUE> where:\n"
    "  <TYPE> specifies data type such as:\n"
    "  b - boolean, s - string, i - integer, l - long, f - float, d - double, n - null\n"
    "  Note: Omit the value for passing an empty string, e.g column:s:\n\n"
    "usage: adb shell content query --uri <URI> [--user <USER_ID>] [--projection <PROJECTION>]"
    " [--where <WHERE>] [--sort <SORT_ORDER>] [--extra <BINDING>...]\n\n"
)


def run_content(state: PhoneState, argv: list[str]) -> tuple[str, str]:
    """`content ...` -> (stdout, stderr); the exit code is always 0, as on a phone."""
    try:
        req = parse_request(argv, state.sdk)
    except CommandError as exc:
        return f"{USAGE}\n[ERROR] {exc.message}\n", ""
    parts = urlsplit(req.uri)
    authority = parts.netloc
    try:
        if authority not in PROVIDERS:
            raise CommandError("java.lang.IllegalStateException", f"Could not find provider: {authority}")
        cls, perm = PROVIDERS[authority]
        table = f"{authority}/{parts.path.strip('/').split('/')[0]}"
        if authority in state.faults.denied_providers or table in state.faults.denied_providers:
            verb = "reading" if req.op == "query" else "writing"
            kind = "READ" if req.op == "query" else "WRITE"
            raise CommandError(
                "java.lang.SecurityException",
                f"Permission Denial: {verb} {cls} uri {req.uri} from pid=4321, uid=2000 requires "
                f"android.permission.{kind}_{perm}, or grantUriPermission()",
            )
        from .provider_tables import dispatch

        return dispatch(
            state, req, authority, [p for p in parts.path.split("/") if p], parse_qs(parts.query)
        ), ""
    except CommandError as exc:
        op = req.op.capitalize()
        trace = FRAMES.format(op=req.op, cmd=op)
        return "", f"Error while accessing provider:{authority}\n{exc.java_class}: {exc.message}\n{trace}"
    except SqlError as exc:
        trace = FRAMES.format(op=req.op, cmd=req.op.capitalize())
        return "", (
            f"Error while accessing provider:{authority}\n"
            f"android.database.sqlite.SQLiteException: {exc}\n{trace}"
        )


def print_rows(names: list[str], rows: list[tuple[object, ...]]) -> str:
    if not rows:
        return "No result found.\n"
    return "".join(
        f"Row: {i} " + ", ".join(f"{n}={java_value(v)}" for n, v in zip(names, row, strict=False)) + "\n"
        for i, row in enumerate(rows)
    )
