"""Whether an address can be listened on, asked before a server binds it: `serve` then says
what is wrong and which flag changes it (without gRPC's own log noise), and `doctor` says the
same before anything starts; and the listening socket of a server that binds its own."""

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


def listening_socket(family: socket.AddressFamily) -> socket.socket:
    """A TCP socket to listen on whose accepted connections send small writes at once.

    asyncio turns Nagle's algorithm off (TCP_NODELAY) only on sockets whose `proto` is
    IPPROTO_TCP, and a connection inherits its listener's: one made as `socket.socket(family,
    SOCK_STREAM)` has proto 0, so uvicorn's answers kept Nagle. uvicorn writes a response's head
    and its body in two writes; the body waited for the client's ACK of the head, which a client
    delays by up to 40 ms while it has nothing to send: every 2026-07-28 tool call (a POST
    answered with one JSON body) took ~45 ms on loopback. Made with IPPROTO_TCP, and with
    TCP_NODELAY on the listener (Linux copies it to what it accepts), both are sent at once."""
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock
