"""The gateway makes the phone be polled for its events only while an app device is connected
to see them (issue 17: a phone left alone): a paired app that is away asks for nothing."""

from __future__ import annotations

from tests.gateway.conftest import GatewayFactory
from tests.waiting import wait_until

POLLED = ("MESSAGE_RECEIVED", "NOTIFICATION_POSTED", "CALL_STATE_CHANGED")


async def test_phone_events_are_demanded_only_while_a_device_is_connected(
    make_gateway: GatewayFactory,
) -> None:
    first = await make_gateway()
    token = first.pair().token
    data_dir = first.data_dir
    await first.stop()
    server = await make_gateway(data_dir=data_dir)  # paired: the gateway listens from the start
    bus = server.app.runtime.bus
    assert bus.subscriber_count >= 1  # the gateway's own subscription, and the memory's
    assert not any(bus.demanded(t) for t in POLLED)
    iris = await server.connect(token)
    assert all(bus.demanded(t) for t in POLLED)
    await iris.close()
    await wait_until(lambda: not any(bus.demanded(t) for t in POLLED))
