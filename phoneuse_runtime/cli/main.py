"""`phoneuse-runtime serve | exec | query | subscribe | pair | actions | doctor | spec | memory | mcp`.

What the phone, an app or a message wrote (results, events, errors, log lines) is printed
through `display.safe_json` / `printable`: it can hold terminal escapes and bidi controls,
which reach the terminal escaped, never as they are.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from phoneuse_runtime import __version__
from phoneuse_runtime.auth.client import Endpoint, find_endpoint
from phoneuse_runtime.auth.tokens import token_path
from phoneuse_runtime.cli.options import DEVICE_HELP, add_log_level, device_settings
from phoneuse_runtime.config.settings import (
    DEFAULT_GATEWAY_LISTEN,
    DEFAULT_GRPC_LISTEN,
    ConfigError,
    default_data_dir,
)
from phoneuse_runtime.device.backends import USAGE
from phoneuse_runtime.kernel.limits import clip
from phoneuse_runtime.mcp import McpMissing, require_sdk
from phoneuse_runtime.util.display import PrintableFormatter, json_text, printable, safe_json
from phoneuse_runtime.util.endpoint import NoEndpoint
from phoneuse_runtime.util.files import StateFileError

PS_SHOWS_FLAG = (
    "--token puts the token on the command line, where `ps` shows it to other processes; "
    "set PHONEUSE_TOKEN instead, or leave the token in %s"
)


def _key_values(items: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SystemExit(f"expected key=value, got {clip(item)}")
        out[key] = value
    return out


def _client_parent() -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument(
        "--server",
        help="HOST:PORT or unix:/PATH (default: $PHONEUSE_SERVER, else the live server recorded in the "
        "data dir, over its Unix socket)",
    )
    parent.add_argument(
        "--token", help="bearer token (default: $PHONEUSE_TOKEN, then the data dir's token file)"
    )
    parent.add_argument("--data-dir", type=Path, help="where the server keeps its token and address")
    parent.add_argument(
        "--phone",
        metavar="SERIAL_OR_NAME",
        help="through a fleet's door: the phone to call, sent as x-phoneuse-device (its serial or "
        "its name in fleet.json: emulator-5556, sim-2); with a fleet token, `fleet token new NAME` "
        "(default: $PHONEUSE_PHONE)",
    )
    return parent


def build_parser() -> argparse.ArgumentParser:  # noqa: PLR0915 - one subcommand after another
    parser = argparse.ArgumentParser(prog="phoneuse-runtime", description=__doc__)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the gRPC server")
    serve.add_argument("--device", help=DEVICE_HELP)
    serve.add_argument("--grpc-listen", help=f"HOST:PORT to listen on (default {DEFAULT_GRPC_LISTEN})")
    serve.add_argument(
        "--data-dir", type=Path, help="state dir (default $PHONEUSE_DATA_DIR, else XDG data dir)"
    )
    serve.add_argument("--token", help="bearer token (default $PHONEUSE_TOKEN, else generated and stored)")
    serve.add_argument("--config", type=Path, help="TOML settings file (default DATA_DIR/config.toml)")
    serve.add_argument("--sim-state", type=Path, help="load and save the simulated phone's state here")
    serve.add_argument("--allow-shell", action="store_true", default=None, help="enable the SHELL action")
    serve.add_argument(
        "--keep-awake",
        action="store_true",
        default=None,
        help="keep the phone's screen on while serving (svc power stayon; put back on stop)",
    )
    serve.add_argument(
        "--adb-server",
        help="the adb server, HOST:PORT (default $ANDROID_ADB_SERVER_PORT, else 127.0.0.1:5037)",
    )
    serve.add_argument("--poll-ms", type=int, help="how often the phone is polled for events (default 1000)")
    serve.add_argument(
        "--self-adb",
        help="termux: the phone's own adb (wireless debugging): auto (default), off, PORT or HOST:PORT",
    )
    serve.add_argument(
        "--gateway-listen",
        help=f"HOST:PORT of the Iris gateway's WebSocket (default {DEFAULT_GATEWAY_LISTEN})",
    )
    serve.add_argument(
        "--no-gateway",
        dest="gateway",
        action="store_const",
        const=False,
        help="do not serve the Iris gateway",
    )
    serve.add_argument("--ntfy-url", help="ntfy server for wake-ups of offline app devices (default: none)")
    from phoneuse_runtime.cli.nats_options import add_serve_options as add_nats_serve_options

    add_nats_serve_options(serve)
    serve.add_argument(
        "--tokens-file",
        type=Path,
        help="a fleet's tokens file (hashes; `fleet token new`): its tokens are accepted too, each "
        "naming its principal, and it is re-read when it changes",
    )
    serve.add_argument(
        "--mcp-listen",
        help="HOST:PORT to serve MCP (Streamable HTTP) on, at /mcp, with the same token (default: off)",
    )
    add_log_level(serve, default="INFO")

    client = _client_parent()
    ex = sub.add_parser("exec", parents=[client], help="run one action and print the ActionResponse")
    ex.add_argument("action_type")
    ex.add_argument("params", nargs="*", metavar="key=value")
    ex.add_argument("--app", help="app_target, e.g. com.whatsapp")
    ex.add_argument(
        "--timeout-ms",
        type=int,
        default=30_000,
        help="how long the call may take, a wait for the owner's answer included (default: %(default)s)",
    )
    ex.add_argument("--request-id", help="default: a new UUID")

    q = sub.add_parser("query", parents=[client], help="run a query and print the QueryResponse")
    q.add_argument("query_type", choices=["CONTACTS", "APP_STATE", "MEMORY"])
    q.add_argument("filters", nargs="*", metavar="key=value")
    q.add_argument("--limit", type=int, default=0)

    s = sub.add_parser("subscribe", parents=[client], help="print events, one JSON object per line")
    s.add_argument("event_types", nargs="*")
    s.add_argument("--subscriber-id", default="")

    acts = sub.add_parser("actions", help="list every registered action and query with its params")
    acts.add_argument("--json", action="store_true")
    acts.add_argument(
        "--device", help=f"the device whose actions to list: {USAGE} (default: as serve's settings say)"
    )
    acts.add_argument(
        "--data-dir", type=Path, help="state dir (default $PHONEUSE_DATA_DIR, else XDG data dir)"
    )
    acts.add_argument("--config", type=Path, help="TOML settings file (default DATA_DIR/config.toml)")

    doc = sub.add_parser("doctor", help="check what the chosen device and the data dir need, with fixes")
    doc.add_argument("--device", help=DEVICE_HELP)
    doc.add_argument(
        "--data-dir", type=Path, help="state dir (default $PHONEUSE_DATA_DIR, else XDG data dir)"
    )
    doc.add_argument("--config", type=Path, help="TOML settings file (default DATA_DIR/config.toml)")
    doc.add_argument("--json", action="store_true", help="print the findings as one JSON object")

    from phoneuse_runtime.cli import pair as pair_cli

    pair_cli.add_parser(sub)
    from phoneuse_runtime.cli import approvals as approvals_cli

    approvals_cli.add_parser(sub)

    spec = sub.add_parser("spec", help="print docs/protocol_spec.md, generated from the handler models")
    spec.add_argument("--output", type=Path, help="write to this file instead of stdout")

    from phoneuse_runtime.cli.events import add_parser as add_events_parser

    add_events_parser(sub)
    from phoneuse_runtime.cli.memory import add_parser as add_memory_parser

    add_memory_parser(sub)
    from phoneuse_runtime.cli.mcp import add_parser as add_mcp_parser

    add_mcp_parser(sub)
    from phoneuse_runtime.cli.fleet import add_parser as add_fleet_parser

    add_fleet_parser(sub)
    return parser


def _serve(args: argparse.Namespace) -> int:
    from phoneuse_runtime.app import serve

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(PrintableFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=args.log_level.upper(), handlers=[handler])
    flags: dict[str, Any] = {
        "device": args.device,
        "grpc_listen": args.grpc_listen,
        "data_dir": args.data_dir,
        "token": args.token,
        "sim_state": args.sim_state,
        "allow_shell": args.allow_shell,
        "adb_server": args.adb_server,
        "poll_ms": args.poll_ms,
        "self_adb": args.self_adb,
        "keep_awake": args.keep_awake,
        "gateway_listen": args.gateway_listen,
        "gateway": args.gateway,
        "ntfy_url": args.ntfy_url,
        "mcp_listen": args.mcp_listen,
        "tokens_file": args.tokens_file,
        "nats_url": args.nats_url,
        "nats_token_file": args.nats_token_file,
        "nats_user": args.nats_user,
        "device_name": args.device_name,
    }
    try:
        settings = device_settings(flags, config_file=args.config)
        if settings.mcp_listen:  # before anything is made or logged: one line says what is missing
            require_sdk()
        if args.token:
            logging.getLogger(__name__).warning(PS_SHOWS_FLAG, token_path(settings.data_dir))
        return asyncio.run(serve(settings))
    except (ConfigError, StateFileError, OSError, McpMissing) as exc:
        print(f"phoneuse-runtime: {printable(str(exc), keep_newlines=True)}", file=sys.stderr)
        return 2


def _endpoint(args: argparse.Namespace) -> Endpoint:
    """The address to call and the token to send (auth/client.py says which and why)."""
    data_dir = args.data_dir or default_data_dir()
    if args.token:
        print(f"phoneuse-runtime: warning: {PS_SHOWS_FLAG % token_path(data_dir)}", file=sys.stderr)
    return find_endpoint(data_dir, server=args.server, token=args.token, phone=args.phone)


def _client(args: argparse.Namespace) -> int:
    import grpc

    from phoneuse_runtime.rpc import protocol_pb2 as pb
    from phoneuse_runtime.rpc import protocol_pb2_grpc as pb_grpc

    try:
        endpoint = _endpoint(args)
    except NoEndpoint as exc:
        print(f"phoneuse-runtime: {printable(str(exc))}", file=sys.stderr)
        return 2
    metadata = endpoint.metadata()
    with grpc.insecure_channel(endpoint.address) as channel:
        stub = pb_grpc.AndroidRuntimeStub(channel)
        try:
            if args.command == "exec":
                import uuid

                request = pb.ActionRequest(
                    action_type=args.action_type,
                    params=_key_values(args.params),
                    request_id=args.request_id or str(uuid.uuid4()),
                    timeout_ms=args.timeout_ms,
                )
                if args.app:
                    request.app_target = args.app
                from phoneuse_runtime.cli.held import HoldNotice

                with HoldNotice(stub, metadata, request.request_id):  # says a hold on stderr
                    response = stub.Execute(request, metadata=metadata, timeout=args.timeout_ms / 1000 + 5)
                print(
                    safe_json(
                        {
                            "request_id": response.request_id,
                            "success": response.success,
                            "result": json.loads(response.result_json or "{}"),
                            "error": response.error,
                            "duration_ms": response.duration_ms,
                        },
                        indent=2,
                    )
                )
                return 0 if response.success else 1
            if args.command == "query":
                qr = stub.Query(
                    pb.QueryRequest(
                        query_type=pb.QueryType.Value(args.query_type),
                        filters=_key_values(args.filters),
                        limit=args.limit,
                    ),
                    metadata=metadata,
                    timeout=60,
                )
                results = [json.loads(r) for r in qr.results_json]
                out = {"results": results, "total_count": qr.total_count, "has_more": qr.has_more}
                print(safe_json(out, indent=2))
                return 0
            stream = stub.Subscribe(
                pb.SubscribeRequest(event_types=args.event_types, subscriber_id=args.subscriber_id),
                metadata=metadata,
            )
            try:
                # The headers come once the subscription is live; a refused one (an unknown event
                # type) ends without them, and reading the stream raises its error.
                if any(key == "x-subscriber-id" for key, _ in stream.initial_metadata() or ()):
                    types = printable(" ".join(args.event_types)) or "all events"
                    print(f"subscribed to {types}", file=sys.stderr, flush=True)
                for event in stream:
                    line = {
                        "event_type": event.event_type,
                        "payload": json.loads(event.payload_json or "{}"),
                        "timestamp": event.timestamp,
                        "source": event.source,
                    }
                    print(safe_json(line), flush=True)
            except KeyboardInterrupt:
                stream.cancel()
            return 0
        except grpc.RpcError as exc:
            print(f"phoneuse-runtime: {exc.code().name}: {printable(exc.details() or '')}", file=sys.stderr)
            return 2


def _actions(args: argparse.Namespace) -> int:
    from phoneuse_runtime.app import served_registry
    from phoneuse_runtime.device.backends import make_device
    from phoneuse_runtime.spec.catalogue import catalogue, render_catalogue_text

    try:
        # The settings `serve` would have: the components they run contribute actions (the
        # gateway's CHAT_*) and event types, listed here as served.
        settings = device_settings(
            {"device": args.device, "data_dir": args.data_dir}, config_file=args.config
        )
        device = make_device(settings)
        registry = served_registry(settings)
    except ConfigError as exc:
        print(f"phoneuse-runtime: {printable(str(exc), keep_newlines=True)}", file=sys.stderr)
        return 2
    kind, capabilities = settings.device, device.capabilities
    if args.json:
        listed = catalogue(registry, device=kind, capabilities=capabilities)
        print(json.dumps(listed, indent=2, ensure_ascii=False))
    else:
        print(render_catalogue_text(registry, device=kind, capabilities=capabilities))
    return 1 if registry.load_errors else 0


def _doctor(args: argparse.Namespace) -> int:
    from phoneuse_runtime.cli.doctor import failed, render_json, render_text, run_checks

    try:
        settings = device_settings(
            {"device": args.device, "data_dir": args.data_dir}, config_file=args.config
        )
    except ConfigError as exc:
        print(f"phoneuse-runtime: {printable(str(exc), keep_newlines=True)}", file=sys.stderr)
        return 2
    checks = asyncio.run(run_checks(settings))
    # A check's detail may quote the phone (a model name, a command's output).
    if args.json:
        print(json_text(render_json(checks, device=settings.device)))
    else:
        print(printable(render_text(checks, device=settings.device), keep_newlines=True))
    return 1 if failed(checks) else 0


def _spec(args: argparse.Namespace) -> int:
    from phoneuse_runtime.app import served_spec

    text = served_spec()
    if args.output:
        args.output.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return _run(args)
    except BrokenPipeError:
        # The reader went away (`... | head`): what it did not read is not wanted. Point stdout
        # at /dev/null so that the interpreter's own flush at exit does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _run(args: argparse.Namespace) -> int:
    if args.command == "serve":
        return _serve(args)
    if args.command in ("exec", "query", "subscribe"):
        return _client(args)
    if args.command == "actions":
        return _actions(args)
    if args.command == "doctor":
        return _doctor(args)
    if args.command == "pair":
        from phoneuse_runtime.cli import pair as pair_cli

        return pair_cli.main(args)
    if args.command == "approvals":
        from phoneuse_runtime.cli import approvals as approvals_cli

        return approvals_cli.main(args)
    if args.command == "events":
        from phoneuse_runtime.cli.events import main as run_events

        return run_events(args)
    if args.command == "memory":
        from phoneuse_runtime.cli.memory import run as run_memory

        return run_memory(args)
    if args.command == "mcp":
        from phoneuse_runtime.cli.mcp import main as run_mcp

        return run_mcp(args)
    if args.command == "fleet":
        from phoneuse_runtime.cli.fleet import main as run_fleet

        return run_fleet(args)
    return _spec(args)
