"""An action never cuts the runtime's own link: with the Iris app connected over the network (not
from loopback), SET_WIFI enabled=false and SET_AIRPLANE_MODE are refused (PERMISSION_DENIED, naming
the app and its address) before anything happens and before any hold; from loopback, or with
allow_cutting_link, they run."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from websockets.asyncio.client import connect

from phoneuse_runtime.config.settings import Settings, load_settings
from phoneuse_runtime.device.sim.device import SimDevice
from tests.network import own_address

from .conftest import GatewayFactory, GatewayServer, IrisClient


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
    host = own_address()
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
    host = own_address()
    server = await make_gateway(gateway_listen="0.0.0.0:0", allow_cutting_link=True)
    client = await _iris_from(server, host, "phone")
    assert server.gateway.network_links()
    assert (await server.grpc.ok("SET_AIRPLANE_MODE", {"enabled": "true"}))["enabled"] is True
    with contextlib.suppress(Exception):
        await client.close()


def test_allow_cutting_link_is_the_owners_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().owner.allow_cutting_link is False
    (tmp_path / "config.toml").write_text("allow_cutting_link = true\n")
    assert load_settings({"data_dir": tmp_path}).owner.allow_cutting_link is True
    monkeypatch.setenv("PHONEUSE_ALLOW_CUTTING_LINK", "false")
    assert load_settings({"data_dir": tmp_path}).owner.allow_cutting_link is False
