"""`phoneuse-runtime memory export [FILE] | import FILE | stats [--json]`.

They work on the data dir's memory.db directly, safely beside a running server (transfer.py
says how), so they need neither the server nor its token. What they print of the memory (names
and bodies that contacts and messages wrote) goes through `display.json_text` / `printable`:
the same JSON, with terminal escapes and bidi controls escaped.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def add_parser(sub: Any) -> None:
    """Adds the `memory` command to the CLI's subcommands."""
    memory = sub.add_parser("memory", help="export, import or describe the phone's memory (JSON Lines)")
    memory.add_argument(
        "--data-dir", type=Path, help="state dir (default $PHONEUSE_DATA_DIR, else XDG data dir)"
    )
    verbs = memory.add_subparsers(dest="verb", required=True)
    export = verbs.add_parser("export", help="write every node and edge as JSON Lines")
    export.add_argument("file", nargs="?", type=Path, help="default: standard output")
    load = verbs.add_parser("import", help="add the nodes and edges of a JSON Lines export")
    load.add_argument("file", type=Path)
    stats = verbs.add_parser("stats", help="what is stored, from where")
    stats.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    from phoneuse_runtime.config.settings import default_data_dir
    from phoneuse_runtime.memory.transfer import (
        BadImport,
        export_lines,
        import_lines,
        open_existing,
        stats,
        write_export,
    )
    from phoneuse_runtime.util.display import json_text, printable, safe_json
    from phoneuse_runtime.util.files import StateFileError

    data_dir = args.data_dir or default_data_dir()
    try:
        conn = open_existing(data_dir, create=args.verb == "import")
    except StateFileError as exc:
        print(f"phoneuse-runtime: {printable(str(exc))}", file=sys.stderr)
        return 2
    try:
        if args.verb == "export":
            if args.file is None:  # to a terminal, perhaps: the same JSON, escaped
                for line in export_lines(conn):
                    sys.stdout.write(json_text(line) + "\n")
            else:
                with args.file.open("w", encoding="utf-8") as out:
                    count = write_export(conn, out)
                print(f"exported {count} record(s) to {args.file}", file=sys.stderr)
            return 0
        if args.verb == "import":
            try:
                with args.file.open(encoding="utf-8") as lines:
                    counts = import_lines(conn, lines)
            except (OSError, UnicodeDecodeError, BadImport) as exc:
                print(
                    f"phoneuse-runtime: {args.file}: {printable(str(exc))}; nothing was imported",
                    file=sys.stderr,
                )
                return 2
            print(
                f"imported {counts['nodes']} node(s) and {counts['edges']} edge(s); "
                f"{counts['merged']} node(s) joined people the memory knew",
                file=sys.stderr,
            )
            return 0
        found = stats(conn)
        if args.json:
            print(safe_json(found, indent=2))
        else:
            print(
                f"{found['nodes']} nodes, {found['edges']} edges, {found['merges']} merges, "
                f"{found['bytes']} bytes"
            )
            for title, table in (
                ("by kind", "kinds"),
                ("by source", "sources"),
                ("by relation", "relations"),
            ):
                listed = ", ".join(f"{printable(str(k))} {v}" for k, v in found[table].items())
                print(f"{title}: {listed or 'none'}")
        return 0
    finally:
        conn.close()
