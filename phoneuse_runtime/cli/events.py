"""`phoneuse-runtime events`: the fleet's events from NATS JetStream (nats/consumer.py).

The NATS server, its user and its token (or password) file are settings like `serve`'s:
`--nats-url` / `--nats-user` / `--nats-token-file` over PHONEUSE_NATS_* over the data dir's
config.toml (`nats_url`, `nats_user`, `nats_token_file`), read by load_settings. A fleet's
reader is `--nats-user reader --nats-token-file FLEET_DIR/nats-users/reader`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from phoneuse_runtime.config.settings import ConfigError, load_settings
from phoneuse_runtime.util.display import printable


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "events",
        help="print the fleet's events from NATS JetStream (every phone's, in order, from a cursor)",
    )
    p.add_argument("--nats-url", help="NATS server (default $PHONEUSE_NATS_URL, else config.toml's nats_url)")
    p.add_argument(
        "--nats-token-file",
        help="a file holding the NATS server's token (default $PHONEUSE_NATS_TOKEN_FILE, else "
        "config.toml's nats_token_file; none)",
    )
    p.add_argument(
        "--nats-user",
        help="the NATS user to read as (a fleet's: reader); --nats-token-file then holds its password "
        "(default $PHONEUSE_NATS_USER, else config.toml's nats_user; none)",
    )
    p.add_argument("--data-dir", type=Path, help="state dir (default $PHONEUSE_DATA_DIR, else XDG data dir)")
    p.add_argument("--config", type=Path, help="TOML settings file (default DATA_DIR/config.toml)")
    p.add_argument("--device", help="only this phone's events (its device name)")
    p.add_argument(
        "--since",
        type=int,
        default=0,
        metavar="SEQ",
        help="print the events after this stream sequence (the last seq you handled; default 0: all)",
    )
    p.add_argument("--follow", action="store_true", help="keep printing new events as they are stored")
    p.add_argument("--json", action="store_true", help="one JSON object per line")


def main(args: argparse.Namespace) -> int:
    from phoneuse_runtime.nats.consumer import main as read_events

    flags = {
        "data_dir": args.data_dir,
        "nats_url": args.nats_url,
        "nats_token_file": args.nats_token_file,
        "nats_user": args.nats_user,
    }
    try:
        settings = load_settings(flags, config_file=args.config)
    except ConfigError as exc:
        message = str(exc).replace("--nats-url", "events")
        print(f"phoneuse-runtime: {printable(message, keep_newlines=True)}", file=sys.stderr)
        return 2
    return read_events(args, settings.nats)
