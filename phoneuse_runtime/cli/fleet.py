"""`phoneuse-runtime fleet` (run the fleet) and `phoneuse-runtime fleet token new|list|revoke`."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from pathlib import Path
from typing import Any

from phoneuse_runtime.cli.options import add_log_level
from phoneuse_runtime.util.display import printable
from phoneuse_runtime.util.files import StateFileError


def add_parser(sub: Any) -> None:
    fleet = sub.add_parser(
        "fleet",
        help="run one runtime per phone behind one gRPC door (nginx), or manage the fleet's tokens",
        description="Runs a runtime per device (simulated phones, the adb server's devices, phones "
        "listed by address in the config) behind nginx, which routes each call by its "
        "x-phoneuse-device metadata (the device's serial or name).",
    )
    fleet.add_argument(
        "--data-dir",
        type=Path,
        help="the fleet's dir (default $PHONEUSE_FLEET_DIR, else XDG data dir/phoneuse-fleet)",
    )
    fleet.add_argument(
        "--config", type=Path, help="TOML (or .json) fleet config (default DATA_DIR/fleet.toml)"
    )
    fleet.add_argument("--listen", help="the door's HOST:PORT (default 127.0.0.1:50050; port 0 picks one)")
    fleet.add_argument("--sim", type=int, help="run N simulated phones, sim-1 ... sim-N")
    fleet.add_argument(
        "--no-adb",
        dest="adb",
        action="store_const",
        const=False,
        help="do not follow the adb server's devices",
    )
    fleet.add_argument("--adb-server", help="the adb server, HOST:PORT (default as serve's)")
    fleet.add_argument(
        "--nats-url", help="the NATS server for the members' events (default: run nats-server)"
    )
    fleet.add_argument(
        "--nats-token-file", help="with --nats-url: a file holding the token that server asks for"
    )
    fleet.add_argument(
        "--no-nats",
        dest="nats",
        action="store_const",
        const=False,
        help="run no nats-server (and send no events to NATS)",
    )
    fleet.add_argument(
        "--gateway",
        action="store_const",
        const=True,
        help="serve each member's Iris gateway (on a port of its own)",
    )
    add_log_level(fleet, default="INFO")
    fleet_sub = fleet.add_subparsers(dest="fleet_command")
    token = fleet_sub.add_parser("token", help="the fleet's tokens: each names a principal on every phone")
    token_sub = token.add_subparsers(dest="token_command", required=True)
    # `fleet token new NAME --data-dir D` as well as `fleet --data-dir D token new NAME`.
    where = argparse.ArgumentParser(add_help=False)
    where.add_argument("--data-dir", type=Path, default=argparse.SUPPRESS, help="the fleet's dir")
    new = token_sub.add_parser(
        "new", parents=[where], help="make a token for principal NAME; printed once, stored hashed"
    )
    new.add_argument("name")
    new.add_argument("--json", action="store_true")
    listing = token_sub.add_parser("list", parents=[where], help="the principals that have a token")
    listing.add_argument("--json", action="store_true")
    revoke = token_sub.add_parser(
        "revoke", parents=[where], help="revoke NAME's token on every phone (no restart needed)"
    )
    revoke.add_argument("name")
    revoke.add_argument("--json", action="store_true")


def _fail(message: str) -> int:
    print(f"phoneuse-runtime: {printable(message)}", file=sys.stderr)
    return 2


def _data_dir(args: argparse.Namespace) -> Path:
    from phoneuse_runtime.fleet.settings import default_fleet_dir

    return Path(args.data_dir).expanduser() if args.data_dir else default_fleet_dir()


def _token(args: argparse.Namespace) -> int:
    from phoneuse_runtime.auth.tokens_file import (
        TOKENS_FILE,
        TokenError,
        new_token,
        read_tokens,
        revoke_token,
    )
    from phoneuse_runtime.util.files import private_dir

    path = _data_dir(args) / TOKENS_FILE
    verb = args.token_command
    try:
        if verb == "new":
            private_dir(path.parent)
            token = new_token(path, args.name)
            if args.json:
                print(json.dumps({"name": args.name, "token": token}))
            else:
                print(token)
                print(
                    f"the token of principal {args.name}: shown this once, stored hashed in {path}; "
                    "send it as `authorization: Bearer <token>` through the fleet's door",
                    file=sys.stderr,
                )
            return 0
        if verb == "revoke":
            revoke_token(path, args.name)
            if args.json:
                print(json.dumps({"revoked": args.name}))
            else:
                print(f"revoked {args.name}'s token on every phone of the fleet", file=sys.stderr)
            return 0
        tokens = read_tokens(path)
        if args.json:
            print(json.dumps([{"name": t.name, "created": t.created} for t in tokens.values()]))
        else:
            for t in tokens.values():
                print(f"{t.name}\t{t.created}")
        return 0
    except (TokenError, StateFileError, OSError) as exc:
        return _fail(str(exc))


def main(args: argparse.Namespace) -> int:
    if args.fleet_command == "token":
        return _token(args)
    from phoneuse_runtime.fleet.door import DoorError
    from phoneuse_runtime.fleet.fleet import run_fleet
    from phoneuse_runtime.fleet.settings import FleetConfigError, load_fleet_settings
    from phoneuse_runtime.util.display import PrintableFormatter

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(PrintableFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=args.log_level, handlers=[handler])
    if args.sim is not None and args.sim < 0:
        return _fail(f"--sim must be 0 or more, got {args.sim}")
    flags = {
        "data_dir": args.data_dir,
        "listen": args.listen,
        "sim": args.sim,
        "adb": args.adb,
        "adb_server": args.adb_server,
        "nats_url": args.nats_url,
        "nats_token_file": args.nats_token_file,
        "nats": args.nats,
        "gateway": args.gateway,
    }
    try:
        settings = load_fleet_settings(flags, config_file=args.config)
        return asyncio.run(run_fleet(settings))
    except (FleetConfigError, DoorError, StateFileError, OSError) as exc:
        return _fail(str(exc))
