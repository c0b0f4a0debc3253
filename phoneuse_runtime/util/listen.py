"""Whether an address can be listened on, asked before a server binds it: `serve` then says
what is wrong and which flag changes it (without gRPC's own log noise), and `doctor` says the
same before anything starts."""

from __future__ import annotations

import errno
import socket


def split_address(address: str) -> tuple[str, int]:
    """HOST:PORT (HOST may be empty, or a bracketed IPv6 address) as a host and a port."""
    host, _, port = address.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    return host, int(port)


def bind_problem(address: str) -> str | None:
    """Why a TCP server cannot listen on `address` now, or None. Port 0 always can."""
    try:
        host, port = split_address(address)
    except ValueError:
        return f"{address!r} is no HOST:PORT"
    if port == 0:
        return None
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (OSError, UnicodeError) as exc:
        return f"{host!r} cannot be resolved ({exc})"
    family, kind, proto, _, sockaddr = infos[0]
    with socket.socket(family, kind, proto) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as servers do: TIME_WAIT is fine
        try:
            sock.bind(sockaddr)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return f"{address} is in use by another program"
            return f"{address} is not available ({exc.strerror or exc})"
    return None
