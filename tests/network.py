"""This machine's own address on its network, for the tests of links that go over the phone's
Wi-Fi (adb over TCP, an Iris app not on loopback): they skip where there is none."""

from __future__ import annotations

import socket

import pytest


def own_address() -> str:
    """The address the routing table picks to leave this machine (not loopback); a skip if none."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.255.255.255", 9))  # a UDP connect sends nothing: it only picks a route
        except OSError as exc:
            pytest.skip(f"this machine has no network address besides loopback ({exc})")
        host: str = probe.getsockname()[0]
    if host.startswith("127.") or host == "0.0.0.0":
        pytest.skip("this machine has no network address besides loopback")
    return host
