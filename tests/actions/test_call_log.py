"""The call log the simulated phone keeps, after calls made and taken through the server."""

from __future__ import annotations

from phoneuse_runtime.device.base import CallFilter

from ..conftest import Client
from .conftest import sim


async def test_calls_through_the_server_land_in_the_call_log(client: Client) -> None:
    phone = sim(client)
    await client.ok("MAKE_CALL", {"to": "Mom"})
    assert await client.ok("END_CALL") == {"ended": True, "via": "sim"}
    [outgoing] = await phone.call_log()
    assert (outgoing.kind, outgoing.number, outgoing.name) == ("outgoing", "+1 415 555 0100", "Mom")
    mark = int(outgoing.id)

    await client.ok("SIM_INCOMING_CALL", {"from": "+1 212 555 0199"})
    await client.ok("END_CALL")  # declined while it rang
    await client.ok("SIM_INCOMING_CALL", {"from": "72345"})
    assert await client.ok("SIM_REMOTE_HANG_UP") == {"ended": True, "via": "sim"}
    await client.ok("SIM_INCOMING_CALL", {"from": "+44 20 7946 0958"})
    await client.ok("TAP", {"text": "Answer"})
    await client.ok("TAP", {"description": "End call"})
    assert await client.ok("SIM_REMOTE_HANG_UP") == {"ended": False, "via": "sim"}

    since = await phone.call_log(CallFilter(above_id=mark))
    assert [(c.kind, c.number, c.name) for c in since] == [
        ("incoming", "+44 20 7946 0958", "David Lee"),
        ("missed", "72345", ""),
        ("rejected", "+1 212 555 0199", "Emma Wilson"),
    ]
    assert [c.kind for c in await phone.call_log(CallFilter(number="+12125550199"))] == ["rejected"]
    assert (await sim(client).call_state()).state == "idle"


async def test_a_call_that_fails_to_start_is_not_logged(client: Client) -> None:
    await client.ok("MAKE_CALL", {"to": "alice"})
    assert await client.fail("MAKE_CALL", {"to": "mom"}) == "UNSUPPORTED"  # one is already up
    await client.ok("END_CALL")
    assert [(c.kind, c.number) for c in await sim(client).call_log()] == [("outgoing", "+1 415 555 0101")]
