"""`phoneuse-runtime approvals list | approve ID | deny ID`: the owner answers holds from the terminal.

The owner is whoever holds the data dir, as with `pair`: these commands work on the server's
approval store in the data dir while it runs (approval_store.py); the server takes an answer
within `approval_store.POLL_S`. An answer is bound to the digest of the call it showed. ID is
the approval id (from `approvals list`, the TIMEOUT message, the log or the Iris app), or a
unique prefix of at least 6 of its characters. Exit status: 0 done; 3 when the id names no
pending approval (`NOT_FOUND: ...` on stderr); 1 when the store fails (`INTERNAL: ...`, never
reported as "not found"); 2 for bad usage or settings. Every text the agent supplied is shown
with its control and bidi characters escaped (display.py).
"""

from __future__ import annotations

import argparse
import getpass
import sqlite3
import sys
import time
from typing import Any, TextIO

from phoneuse_runtime.cli.options import data_dir_parent
from phoneuse_runtime.config.settings import ConfigError, load_settings
from phoneuse_runtime.kernel.events import now_ms
from phoneuse_runtime.owner import approval_store as store
from phoneuse_runtime.util.display import printable, safe_json

EXIT_NOT_FOUND = 3
EXIT_INTERNAL = 1
EXIT_USAGE = 2
TAKEN_WAIT_S = 3.0  # how long `approve` waits to see the server take the answer
TAKEN_POLL_S = 0.1


def add_parser(sub: Any) -> None:
    """Adds `approvals` and its subcommands to the CLI's subparsers."""
    approvals = sub.add_parser("approvals", help="list the calls held for the owner; approve or deny them")
    common = data_dir_parent()
    verbs = approvals.add_subparsers(dest="approvals_command", required=True)
    listing = verbs.add_parser("list", parents=[common], help="the calls held now, oldest first")
    listing.add_argument("--json", action="store_true", help="one JSON array, every param in full")
    for verb, what in (("approve", "run the held call"), ("deny", "refuse the held call (DENIED)")):
        answer = verbs.add_parser(verb, parents=[common], help=what)
        answer.add_argument("id", help="the approval id, or a unique prefix of 6 or more characters")


def main(args: argparse.Namespace, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        settings = load_settings({"data_dir": args.data_dir}, config_file=args.config)
    except ConfigError as exc:
        print(f"phoneuse-runtime: {exc}", file=err)
        return EXIT_USAGE
    path = store.store_path(settings.data_dir)
    try:
        if not path.exists():  # no server ever held anything here: nothing is pending
            if args.approvals_command == "list":
                return _list([], args, out)
            print(f"NOT_FOUND: no pending approval {printable(args.id)!r}", file=err)
            return EXIT_NOT_FOUND
        conn = store.connect(path)
        try:
            if args.approvals_command == "list":
                return _list(store.pending(conn), args, out)
            return _answer(conn, args, out, err)
        finally:
            conn.close()
    except store.AmbiguousId as exc:
        print(f"NOT_FOUND: {exc}", file=err)
        return EXIT_NOT_FOUND
    except (sqlite3.Error, OSError) as exc:
        print(f"INTERNAL: the approval store failed: {exc}", file=err)
        return EXIT_INTERNAL


def _list(held: list[store.Pending], args: argparse.Namespace, out: TextIO) -> int:
    now = now_ms()
    if args.json:
        rows = [
            {
                "approval_id": h.approval_id,
                "action": h.name,
                "command": h.line,
                "params": h.params,
                "caller": h.caller,
                "reason": h.reason,
                "digest": h.digest,
                "seconds_left": max(0, (h.deadline_ms - now) // 1000),
            }
            for h in held
        ]
        print(safe_json(rows, indent=2), file=out)
        return 0
    if not held:
        print("no call is held for an approval", file=out)
        return 0
    for h in held:
        left = max(0, (h.deadline_ms - now) // 1000)
        print(f"{h.approval_id}  {printable(h.line)}", file=out)
        print(f"    from {printable(h.caller)}; {printable(h.reason)}; {left} s left", file=out)
    print("answer with: phoneuse-runtime approvals approve ID  (or deny ID)", file=out)
    return 0


def _answer(conn: sqlite3.Connection, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    approved = args.approvals_command == "approve"
    hold = store.find(conn, args.id)
    if hold is None or not store.record_answer(conn, hold, approved=approved, by=_user()):
        print(
            f"NOT_FOUND: no pending approval {printable(args.id)!r}: it was answered already, expired, "
            "or never existed; `phoneuse-runtime approvals list` shows those held now",
            file=err,
        )
        return EXIT_NOT_FOUND
    verb = "approved" if approved else "denied"
    line = printable(hold.line)
    # The server takes it within its poll; say whether it did, not only that it was written.
    give_up = time.monotonic() + TAKEN_WAIT_S
    while store.still_held(conn, hold.approval_id) and time.monotonic() < give_up:
        time.sleep(TAKEN_POLL_S)
    if store.still_held(conn, hold.approval_id):
        print(
            f"{verb} {hold.approval_id}: {line}; the server has not taken it yet (is it running?)", file=out
        )
    else:
        print(f"{verb} {hold.approval_id}: {line}", file=out)
    return 0


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "owner"
