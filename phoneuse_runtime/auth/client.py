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


# A fleet's door routes each call by this header (fleet/door.py: HEADER): a serial or a
# device's name, at most 128 characters.
PHONE_HEADER = "x-phoneuse-device"
PHONE_MAX = 128


class BadPhone(NoEndpoint):
    """The phone named for a fleet's door cannot be sent as its header."""


@dataclass(frozen=True)
class Endpoint:
    """The address to call ("HOST:PORT" or "unix:/PATH"), the bearer token to send, and, through
    a fleet's door, the phone the calls are for ("" when none is named)."""

    address: str
    token: str
    phone: str = ""

    def metadata(self) -> tuple[tuple[str, str], ...]:
        """A call's metadata: the token, and the phone's header when one is named."""
        auth = (("authorization", f"Bearer {self.token}"),)
        return auth + (((PHONE_HEADER, self.phone),) if self.phone else ())


def phone_problem(phone: str) -> str | None:
    """Why `phone` cannot name a fleet's phone in its header, else None."""
    if len(phone) > PHONE_MAX:
        return f"a phone's serial or name has at most {PHONE_MAX} characters, got {len(phone)}"
    if not all("!" <= c <= "~" for c in phone):
        return "a phone's serial or name is printable ASCII without spaces (as `fleet.json` lists them)"
    return None


def find_endpoint(
    data_dir: Path, *, server: str | None = None, token: str | None = None, phone: str | None = None
) -> Endpoint:
    """The server to call and its token: `server` and `token` (the flags), else `PHONEUSE_SERVER`
    and `PHONEUSE_TOKEN`, else the live server recorded in `data_dir` and its token file; and the
    phone of a fleet, `phone` (the flag) else `PHONEUSE_PHONE`. Raises NoServer when no live
    server is recorded there, NoToken when there is no token to send, BadPhone for a phone no
    header can carry."""
    named = phone or os.environ.get("PHONEUSE_PHONE") or ""
    if (problem := phone_problem(named)) is not None:
        raise BadPhone(f"--phone / PHONEUSE_PHONE: {problem}")
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
    return Endpoint(address, found, named)
