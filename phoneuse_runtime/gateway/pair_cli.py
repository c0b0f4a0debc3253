"""`phoneuse-runtime pair ...`: the owner's side of pairing, on the data dir's database.

It works while the server runs (SQLite in WAL mode; the server notices a revocation within
`server.PAIRING_POLL_S` and closes that device's connection). Exit status: 0 done; 3 when the
id or code names nothing (`NOT_FOUND: ...` on stderr); 1 when the store itself fails
(`INTERNAL: ...`), which is never reported as "not found"; 2 for bad usage or settings.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sqlite3
import sys
from collections.abc import Callable
from dataclasses import dataclass
from io import StringIO
from pathlib import Path
from typing import Any, TextIO

from ..config import ConfigError, Settings, load_settings
from ..events import now_ms
from .db import connect, db_path
from .pairing import PairingNotFound, PairingStore

EXIT_NOT_FOUND = 3
EXIT_INTERNAL = 1
EXIT_USAGE = 2


def add_parser(sub: Any) -> None:
    """Adds `pair` and its subcommands to the CLI's subparsers."""
    pair = sub.add_parser("pair", help="pair the Iris chat app: issue tokens, approve requests, revoke")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--data-dir", type=Path, help="state dir (default $PHONEUSE_DATA_DIR, else XDG data dir)"
    )
    common.add_argument("--config", type=Path, help="TOML settings file (default DATA_DIR/config.toml)")
    verbs = pair.add_subparsers(dest="pair_command", required=True)

    def lifetime(parser: argparse.ArgumentParser, *, required: bool = False) -> None:
        group = parser.add_mutually_exclusive_group(required=required)
        group.add_argument("--permanent", action="store_true", help="never expires")
        group.add_argument("--ttl-days", type=_positive, metavar="N", help="expires N days from now")

    new = verbs.add_parser("new", parents=[common], help="issue a device token and show it as a QR code")
    new.add_argument("--name", required=True, help="what to call the device")
    lifetime(new)
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


def qr_text(payload: str) -> str:
    import segno

    text = StringIO()
    segno.make(payload, error="m").terminal(out=text, compact=True)
    return text.getvalue()


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
    except PairingNotFound as exc:
        print(f"NOT_FOUND: {exc}", file=err)
        return EXIT_NOT_FOUND
    except (sqlite3.Error, OSError) as exc:  # the store failed: never "not found"
        print(f"INTERNAL: the pairing store failed: {exc}", file=err)
        return EXIT_INTERNAL


@dataclass(frozen=True)
class Io:
    settings: Settings
    out: TextIO
    err: TextIO


Command = Callable[[PairingStore, argparse.Namespace, Io], int]


def _new(store: PairingStore, args: argparse.Namespace, io: Io) -> int:
    issued = store.issue(args.name, ttl_days=args.ttl_days, permanent=args.permanent)
    # What the app scans: where to connect and the token. It is never put in a URL.
    scan = json.dumps(
        {"v": 1, "url": f"ws://{io.settings.gateway_listen}/ws", "token": issued.token, "name": args.name},
        separators=(",", ":"),
    )
    qr = qr_text(scan)
    if args.json:
        record = {"pairing_id": issued.pairing_id, "token": issued.token, "expires_at": issued.expires_at}
        print(json.dumps(record), file=io.out)
        print(qr, file=io.err)
        return 0
    print(f"paired {args.name!r} as {issued.pairing_id}; its token, shown only this once:\n", file=io.out)
    print(f"    {issued.token}\n", file=io.out)
    print(f"expires: {_expiry(issued.expires_at, issued.expires_at is None)}", file=io.out)
    print("scan this with the Iris app:\n", file=io.out)
    print(qr, file=io.out)
    return 0


def _approve(store: PairingStore, args: argparse.Namespace, io: Io) -> int:
    pairing = store.approve(args.code, permanent=args.permanent, ttl_days=args.ttl_days)
    expiry = _expiry(pairing.expires_ms, pairing.permanent)
    print(f"approved: {pairing.name!r} is paired as {pairing.id}; expires: {expiry}", file=io.out)
    return 0


def _deny(store: PairingStore, args: argparse.Namespace, io: Io) -> int:
    store.deny(args.code)
    print(f"denied {args.code}", file=io.out)
    return 0


def _revoke(store: PairingStore, args: argparse.Namespace, io: Io) -> int:
    store.revoke(args.id)
    print(f"revoked {args.id}; its connections close now", file=io.out)
    return 0


def _update(store: PairingStore, args: argparse.Namespace, io: Io) -> int:
    pairing = store.update(args.id, permanent=args.permanent, ttl_days=args.ttl_days)
    print(f"updated {pairing.id}; expires: {_expiry(pairing.expires_ms, pairing.permanent)}", file=io.out)
    return 0


def _list(store: PairingStore, args: argparse.Namespace, io: Io) -> int:
    now = now_ms()
    rows = [r.as_json(now) for r in store.pending()] + [p.as_json(now) for p in store.pairings()]
    if args.json:
        print(json.dumps(rows, ensure_ascii=False), file=io.out)
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
            r["id"],
            r["state"],
            r["name"],
            r["device_id"] or "-",
            _expiry(r["expires_at"], r["permanent"]),
            _when(r["last_seen"]),
        )
        for r in rows
    ]
    widths = [max(len(str(row[i])) for row in table) for i in range(len(header))]
    for row in table:
        print(
            "  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip(),
            file=io.out,
        )
    return 0


COMMANDS: dict[str, Command] = {
    "new": _new,
    "approve": _approve,
    "deny": _deny,
    "list": _list,
    "revoke": _revoke,
    "update": _update,
}
