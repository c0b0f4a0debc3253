"""An action never cuts the runtime's own link: with the Iris app connected over the network (not
from loopback), SET_WIFI enabled=false and SET_AIRPLANE_MODE are refused (PERMISSION_DENIED, naming
the app and its address) before anything happens and before any hold; from loopback, or with
allow_cutting_link, they run."""

from __future__ import annotations

import contextlib
import socket

import pytest
from websockets.asyncio.client import connect

from phoneuse_runtime.device.sim.device import SimDevice

from .conftest import GatewayFactory, GatewayServer, IrisClient


def _own_address() -> str:
    """This machine's address on its network (not loopback), as the routing table picks it; the
    test skips where there is none."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.255.255.255", 9))  # a UDP connect sends nothing: it only picks a route
        except OSError as exc:
            pytest.skip(f"this machine has no network address besides loopback ({exc})")
        host: str = probe.getsockname()[0]
    if host.startswith("127.") or host == "0.0.0.0":
        pytest.skip("this machine has no network address besides loopback")
    return host


async def _iris_from(server: GatewayServer, host: str, name: str) -> IrisClient:
    ws = await connect(f"ws://{host}:{server.gateway.port}/ws", max_size=None, max_queue=None)
    client = IrisClient(ws)
    server.clients.append(client)
    ack = await client.hello(server.pair(name).token, device_name=name)
    assert ack["type"] == "hello.ack", ack
    return client


def _sim(server: GatewayServer) -> SimDevice:
    device = server.app.runtime.device
    assert isinstance(device, SimDevice)
    return device


async def test_turning_wifi_off_under_an_iris_app_on_the_network_is_refused(
    make_gateway: GatewayFactory,
) -> None:
    host = _own_address()
    # approvals=always and SET_WIFI held: the refusal still comes first, with no hold made
    server = await make_gateway(
        gateway_listen="0.0.0.0:0", approvals="always", approval_actions=frozenset({"SET_WIFI", "SHELL"})
    )
    await _iris_from(server, host, "owner's tablet")
    for action, params in (
        ("SET_WIFI", {"enabled": "false"}),
        ("SET_AIRPLANE_MODE", {"enabled": "true"}),
        ("SET_AIRPLANE_MODE", {"enabled": "false"}),
    ):
        response = await server.grpc.execute(action, params)
        assert response.error.startswith("PERMISSION_DENIED: "), response.error
        assert f'the Iris app "owner\'s tablet" connected from {host}' in response.error
        assert "allow_cutting_link" in response.error
    assert not server.app.runtime.approvals.pending()
    assert await _sim(server).switch("wifi") is True
    assert await _sim(server).switch("airplane_mode") is False
    # turning Wi-Fi on cuts nothing; Bluetooth is no link of the runtime's
    assert (await server.grpc.ok("SET_BLUETOOTH", {"enabled": "true"}))["verified"]


async def test_an_app_on_loopback_is_no_network_link(make_gateway: GatewayFactory) -> None:
    server = await make_gateway()
    await server.connect()  # from 127.0.0.1: the app on this same machine
    assert server.gateway.network_links() == []
    assert (await server.grpc.ok("SET_WIFI", {"enabled": "false"}))["enabled"] is False


async def test_the_owner_may_allow_cutting_the_link(make_gateway: GatewayFactory) -> None:
    host = _own_address()
    server = await make_gateway(gateway_listen="0.0.0.0:0", allow_cutting_link=True)
    client = await _iris_from(server, host, "phone")
    assert server.gateway.network_links()
    assert (await server.grpc.ok("SET_AIRPLANE_MODE", {"enabled": "true"}))["enabled"] is True
    with contextlib.suppress(Exception):
        await client.close()
