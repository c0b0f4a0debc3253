"""Where a client sends its token: the one way the client commands and an attached `mcp` find the
running server and the token to call it with.

An address or token the user names (a flag, then `PHONEUSE_SERVER` / `PHONEUSE_TOKEN`) is theirs
to choose; otherwise only a live server's own record in the data dir is trusted with the data
dir's token (see util/endpoint.py).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from phoneuse_runtime.auth.tokens import read_token_file, token_path
from phoneuse_runtime.util.endpoint import NoEndpoint, find_server
from phoneuse_runtime.util.files import StateFileError


class NoToken(NoEndpoint):
    """There is no token to call the server with, or the token file cannot be used."""


@dataclass(frozen=True)
class Endpoint:
    """The address to call ("HOST:PORT" or "unix:/PATH") and the bearer token to send."""

    address: str
    token: str


def find_endpoint(data_dir: Path, *, server: str | None = None, token: str | None = None) -> Endpoint:
    """The server to call and its token: `server` and `token` (the flags), else `PHONEUSE_SERVER`
    and `PHONEUSE_TOKEN`, else the live server recorded in `data_dir` and its token file. Raises
    NoServer when no live server is recorded there, NoToken when there is no token to send."""
    address = server or os.environ.get("PHONEUSE_SERVER") or find_server(data_dir)
    try:
        found = token or os.environ.get("PHONEUSE_TOKEN") or read_token_file(data_dir)
    except StateFileError as exc:
        raise NoToken(str(exc)) from None
    if not found:
        raise NoToken(
            "no token: pass --token, set PHONEUSE_TOKEN, "
            f"or run `serve` once to create {token_path(data_dir)}"
        )
    return Endpoint(address, found)
