"""`approve_ui_in` on adb, where the phone checks what is in front in the action's own command
(front_guard.py): the phone refuses, the runtime holds the call for the owner, and once approved
the action runs in that app; denied, nothing ran. Through the real server (the gateway and gRPC
by the production factory, `--device adb:SERIAL`) against the fake adbd and phone behind the real
adb server, the owner answering from the Iris app's WebSocket."""

from __future__ import annotations

import asyncio

from tests.fakes import seed
from tests.fakes.adb_server import FakeDeviceFactory, adb_server, fake_device_factory
from tests.fakes.adbd import DEFAULT_FEATURES
from tests.fakes.phone import FakePhone

from ..conftest import GatewayFactory

__all__ = ["adb_server", "fake_device_factory"]  # the fixtures, for this module

KEEP_FIELD = "com.google.android.keep:id/edit_note_text"


async def test_a_ui_action_in_a_listed_app_is_held_then_runs(
    make_gateway: GatewayFactory, fake_device_factory: FakeDeviceFactory
) -> None:
    phone = FakePhone()
    device = fake_device_factory(phone, features=DEFAULT_FEATURES)
    server = await make_gateway(
        device=f"adb:{device.serial}",
        adb_server=f"127.0.0.1:{device.adb_port}",
        poll_ms=100,
        approve_ui_in=frozenset({seed.KEEP}),
    )
    app = await server.connect()
    await server.grpc.ok("OPEN_APP", {"package": seed.KEEP})
    taps = len(phone.state.log.taps)
    tap = asyncio.ensure_future(server.grpc.execute("TAP", {"resource_id": KEEP_FIELD, "settle_ms": "0"}))
    picker = (await app.next("picker.approval"))["payload"]
    assert f"{seed.KEEP} is in front" in picker["description"]
    assert not tap.done() and len(phone.state.log.taps) == taps  # refused by the phone, nothing tapped
    await app.send_frame("picker.select", {"picker_id": picker["picker_id"], "value": "approve"})
    assert (await tap).success
    assert len(phone.state.log.taps) == taps + 1
    denied = asyncio.ensure_future(server.grpc.execute("TYPE_TEXT", {"text": "no", "settle_ms": "0"}))
    picker = (await app.next("picker.approval"))["payload"]
    await app.send_frame("picker.select", {"picker_id": picker["picker_id"], "value": "deny"})
    assert (await denied).error.startswith("DENIED")
    assert [t.text for t in phone.state.log.texts] == []  # nothing typed
