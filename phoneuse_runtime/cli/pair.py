"""`phoneuse-runtime pair ...`: the owner's side of pairing, on the data dir's database.

It works while the server runs (SQLite in WAL mode; the server notices a revocation within
`server.PAIRING_POLL_S` and closes that device's connection). Exit status: 0 done; 3 when the
id or code names nothing (`NOT_FOUND: ...` on stderr); 1 when the store itself fails
(`INTERNAL: ...`), which is never reported as "not found"; 2 for bad usage or settings.

What an app chose (its device name and id) is printed through `display.printable` /
`safe_json`: a name cannot clear the owner's screen, retitle the window or hide text. The table
clips long cells, so that it stays small whatever the names.

The QR code of `pair new` holds `{"v": 1, "url", "token", "name"}`: `url` is what the app
dials, `--url` when given, else the running gateway's address as bound (recorded in
`server.json`), else the settings' `gateway_listen`.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sqlite3
import sys
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, TextIO

from phoneuse_runtime.cli.options import data_dir_parent
from phoneuse_runtime.config.settings import ConfigError, Settings, load_settings
from phoneuse_runtime.gateway.db import connect, db_path
from phoneuse_runtime.gateway.pairing import PairingNotFound, PairingStore
from phoneuse_runtime.kernel.events import now_ms
from phoneuse_runtime.kernel.limits import clip, shorten
from phoneuse_runtime.util.display import columns, printable, safe_json
from phoneuse_runtime.util.endpoint import NoServer, find_gateway

EXIT_NOT_FOUND = 3
EXIT_INTERNAL = 1
EXIT_USAGE = 2
# `pair list`'s table: at most this many characters of a name or a device id (escapes counted),
# the rest cut with an ellipsis; `--json` shows them whole.
TABLE_CELL_CHARS = 32
# The QR code's `name` (the app shows it; the store keeps the whole name) and `--url`: a QR code
# holds at most 2,331 bytes at error correction M, and a phone's camera reads a smaller one better.
QR_NAME_CHARS = 64
MAX_URL_CHARS = 512
# The hosts that mean "every address": no app can dial them.
WILDCARD_HOSTS = {"0.0.0.0": "127.0.0.1", "::": "::1"}  # noqa: S104 (recognised, not bound)


class UsageError(Exception):
    """A flag the command cannot use (exit status 2); the message says why."""


def add_parser(sub: Any) -> None:
    """Adds `pair` and its subcommands to the CLI's subparsers."""
    pair = sub.add_parser("pair", help="pair the Iris chat app: issue tokens, approve requests, revoke")
    common = data_dir_parent()
    verbs = pair.add_subparsers(dest="pair_command", required=True)

    def lifetime(parser: argparse.ArgumentParser, *, required: bool = False) -> None:
        group = parser.add_mutually_exclusive_group(required=required)
        group.add_argument("--permanent", action="store_true", help="never expires")
        group.add_argument("--ttl-days", type=_positive, metavar="N", help="expires N days from now")

    new = verbs.add_parser("new", parents=[common], help="issue a device token and show it as a QR code")
    new.add_argument("--name", required=True, help="what to call the device")
    lifetime(new)
    new.add_argument(
        "--url",
        help="what the app dials, ws://HOST:PORT/ws (or wss://): the phone's LAN or tailnet address, "
        "a proxy's (default: the running gateway's address)",
    )
    new.add_argument("--json", action="store_true", help='print {"pairing_id", "token", "expires_at"} only')
    approve = verbs.add_parser("approve", parents=[common], help="approve an app's pairing request")
    approve.add_argument("code", help="the pairing code the app shows, XXXX-XXXX")
    lifetime(approve)
    deny = verbs.add_parser("deny", parents=[common], help="deny an app's pairing request")
    deny.add_argument("code")
    listing = verbs.add_parser("list", parents=[common], help="pending requests and paired devices")
    listing.add_argument("--json", action="store_true")
    revoke = verbs.add_parser("revoke", parents=[common], help="revoke a pairing (closes its connections)")
    revoke.add_argument("id")
    update = verbs.add_parser("update", parents=[common], help="make a pairing permanent, or give it a TTL")
    update.add_argument("id")
    lifetime(update, required=True)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of days, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("a TTL is at least 1 day")
    return value


def _when(ms: int | None) -> str:
    if ms is None:
        return "-"
    return datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def _expiry(expires_at: int | None, permanent: bool) -> str:
    if permanent:
        return "never (permanent)"
    if expires_at is None:
        return "unknown (unreadable: counts as expired)"
    return _when(expires_at)


def main(args: argparse.Namespace, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        settings = load_settings({"data_dir": args.data_dir}, config_file=args.config)
    except ConfigError as exc:
        print(f"phoneuse-runtime: {exc}", file=err)
        return EXIT_USAGE
    try:
        conn = connect(db_path(settings.data_dir))
        try:
            PairingStore.create_tables(conn)
            store = PairingStore(conn, default_ttl_days=settings.pairing_ttl_days)
            return COMMANDS[args.pair_command](store, args, Io(settings, out, err))
        finally:
            conn.close()
    except UsageError as exc:
        print(f"phoneuse-runtime: {printable(str(exc))}", file=err)
        return EXIT_USAGE
    except PairingNotFound as exc:
        print(f"NOT_FOUND: {printable(str(exc))}", file=err)
        return EXIT_NOT_FOUND
    except (sqlite3.Error, OSError) as exc:  # the store failed: never "not found"
        print(f"INTERNAL: the pairing store failed: {printable(str(exc))}", file=err)
        return EXIT_INTERNAL


@dataclass(frozen=True)
class Io:
    settings: Settings
    out: TextIO
    err: TextIO


Command = Callable[[PairingStore, argparse.Namespace, Io], int]


def given_url(text: str) -> str:
    """`--url` checked: a ws:// or wss:// URL with a host, without credentials, query or fragment
    (the token goes in the app's hello, never in a URL); no path means the gateway's /ws."""
    if len(text) > MAX_URL_CHARS:
        raise UsageError(f"--url has {len(text)} characters; at most {MAX_URL_CHARS} fit in the QR code")
    parts = urllib.parse.urlsplit(text)
    if parts.scheme not in ("ws", "wss") or not parts.hostname:
        raise UsageError(f"--url must be ws://HOST:PORT/ws or wss://HOST/PATH, got {clip(text)}")
    if parts.username is not None or parts.password is not None or parts.query or parts.fragment:
        raise UsageError(
            f"--url takes no user, password, query or fragment (the app sends its token in its "
            f"hello, never in a URL), got {clip(text)}"
        )
    try:
        parts.port  # noqa: B018 (parsing it is the check)
    except ValueError:
        raise UsageError(f"--url has a port that is not one, got {clip(text)}") from None
    from phoneuse_runtime.gateway.server import WS_PATH

    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path or WS_PATH, "", ""))


@dataclass(frozen=True)
class Dial:
    """What the QR code tells the app to dial, and what the owner should know about it."""

    url: str
    source: str  # where the URL comes from, for the owner
    notes: tuple[str, ...] = ()


def listen_url(listen: str, *, source: str) -> Dial:
    """The URL an app dials for a gateway that listens on `listen` (HOST:PORT). A wildcard
    host is every address, which no app can dial: the loopback stands for it (what an app on
    this phone dials), with a note that says how to give the LAN's or tailnet's."""
    from phoneuse_runtime.gateway.server import WS_PATH

    host, _, port = listen.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"  # the gateway binds the loopback for an empty host
    notes = []
    if host in WILDCARD_HOSTS:
        notes.append(
            f"the gateway listens on every address ({host}); the QR code holds the loopback, "
            "which an app on this phone dials; for a phone on the LAN or a tailnet, give the "
            f"address it dials: `pair new --url ws://ADDRESS:{port}{WS_PATH}`"
        )
        host = WILDCARD_HOSTS[host]
    shown = f"[{host}]" if ":" in host else host
    return Dial(f"ws://{shown}:{port}{WS_PATH}", source, tuple(notes))


def dial(args: argparse.Namespace, settings: Settings) -> Dial:
    """Where the app must connect: `--url`, else the running gateway, else the settings."""
    if args.url is not None:
        return Dial(given_url(args.url), "--url")
    try:
        running = find_gateway(settings.data_dir)
    except NoServer as exc:
        configured = settings.gateway_listen
        if configured.rpartition(":")[2] in ("0", ""):
            raise UsageError(
                f"{exc}, and the settings' gateway_listen ({configured}) picks its port when it "
                "starts: start the server first, or give the app's URL with --url ws://HOST:PORT/ws"
            ) from None
        found = listen_url(configured, source="the settings' gateway_listen")
        return replace(found, notes=(*found.notes, f"{exc}: until one runs, nothing answers there"))
    if running is None:
        found = listen_url(settings.gateway_listen, source="the settings' gateway_listen")
        note = "the running server serves no gateway (--no-gateway): start it with the gateway"
        return replace(found, notes=(*found.notes, note))
    return listen_url(running, source="the running gateway's address")


def _new(store: PairingStore, args: argparse.Namespace, io: Io) -> int:
    from phoneuse_runtime.auth.principals import reserved_problem

    problem = reserved_problem(args.name, what="a paired device")
    if problem:  # the owner's prompts name the device: it may not pass for the agent itself
        raise UsageError(problem)
    where = dial(args, io.settings)  # before the token is issued: a bad --url issues nothing
    issued = store.issue(args.name, ttl_days=args.ttl_days, permanent=args.permanent)
    # What the app scans: where to connect and the token. It is never put in a URL.
    scan = json.dumps(
        {"v": 1, "url": where.url, "token": issued.token, "name": shorten(args.name, QR_NAME_CHARS)},
        separators=(",", ":"),
    )
    from phoneuse_runtime.gateway import qr

    code = qr.terminal(scan)
    # stdout is the one JSON object with --json: the rest goes to stderr then.
    talk = io.err if args.json else io.out
    if args.json:
        record = {"pairing_id": issued.pairing_id, "token": issued.token, "expires_at": issued.expires_at}
        print(json.dumps(record), file=io.out)
    else:
        name = printable(args.name)
        print(f"paired '{name}' as {issued.pairing_id}; its token, shown only this once:\n", file=io.out)
        print(f"    {issued.token}\n", file=io.out)
        print(f"expires: {_expiry(issued.expires_at, issued.expires_at is None)}", file=io.out)
    print(f"the app dials {printable(where.url)} ({where.source})", file=talk)
    for note in where.notes:
        print(f"note: {printable(note)}", file=talk)
    print("scan this with the Iris app:\n", file=talk)
    print(code, file=talk)
    return 0


def _approve(store: PairingStore, args: argparse.Namespace, io: Io) -> int:
    pairing = store.approve(args.code, permanent=args.permanent, ttl_days=args.ttl_days)
    expiry = _expiry(pairing.expires_ms, pairing.permanent)
    name = printable(pairing.name)
    print(f"approved: '{name}' is paired as {pairing.id}; expires: {expiry}", file=io.out)
    return 0


def _deny(store: PairingStore, args: argparse.Namespace, io: Io) -> int:
    store.deny(args.code)
    print(f"denied {printable(args.code)}", file=io.out)
    return 0


def _revoke(store: PairingStore, args: argparse.Namespace, io: Io) -> int:
    store.revoke(args.id)
    print(f"revoked {printable(args.id)}; its connections close now", file=io.out)
    return 0


def _update(store: PairingStore, args: argparse.Namespace, io: Io) -> int:
    pairing = store.update(args.id, permanent=args.permanent, ttl_days=args.ttl_days)
    print(f"updated {pairing.id}; expires: {_expiry(pairing.expires_ms, pairing.permanent)}", file=io.out)
    return 0


def _list(store: PairingStore, args: argparse.Namespace, io: Io) -> int:
    now = now_ms()
    rows = [r.as_json(now) for r in store.pending()] + [p.as_json(now) for p in store.pairings()]
    if args.json:
        print(safe_json(rows), file=io.out)
        return 0
    if not rows:
        print(
            "no pairings and no pending requests; `phoneuse-runtime pair new --name NAME` issues one",
            file=io.out,
        )
        return 0
    header = ("ID / CODE", "STATE", "NAME", "DEVICE", "EXPIRES", "LAST SEEN")
    table = [header] + [
        (
            _cell(r["id"]),
            r["state"],
            _cell(r["name"]),
            _cell(r["device_id"] or "-"),
            _expiry(r["expires_at"], r["permanent"]),
            _when(r["last_seen"]),
        )
        for r in rows
    ]
    # Every cell is clipped, so no column is wider than TABLE_CELL_CHARS (or a fixed text).
    widths = [max(columns(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        cells = (cell + " " * (width - columns(cell)) for cell, width in zip(row, widths, strict=True))
        print("  ".join(cells).rstrip(), file=io.out)
    return 0


def _cell(value: object) -> str:
    """An app-supplied value as a table cell: escaped, then clipped to TABLE_CELL_CHARS."""
    text = str(value)
    # Escaping only lengthens: cut before (a long name costs nothing) and again after.
    return shorten(printable(text[: TABLE_CELL_CHARS + 1]), TABLE_CELL_CHARS)


COMMANDS: dict[str, Command] = {
    "new": _new,
    "approve": _approve,
    "deny": _deny,
    "list": _list,
    "revoke": _revoke,
    "update": _update,
}
