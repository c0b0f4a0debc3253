"""The command line's NATS parts: `serve --nats-url --device-name`."""

from __future__ import annotations

import argparse


def add_serve_options(serve: argparse.ArgumentParser) -> None:
    serve.add_argument(
        "--nats-url",
        help="NATS server (nats://HOST:PORT) for the JetStream event sink and leases "
        "(default: none; needs the nats extra)",
    )
    serve.add_argument(
        "--nats-token-file",
        help="a file holding the token the NATS server requires (default: none)",
    )
    serve.add_argument(
        "--nats-user",
        help="the NATS user to connect as; --nats-token-file then holds its password (default: none)",
    )
    serve.add_argument(
        "--device-name",
        help="this phone's name in NATS subjects and keys (default: the serial made a name)",
    )
