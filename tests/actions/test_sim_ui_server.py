"""SIM_UI_SERVER_DIES through the real server: the sim's UI server dies and the UI calls meet it
as they do over adb (an ERROR event UI_SERVER_RESTARTED, a read retried, an act answered
DEVICE_UNAVAILABLE saying whether it may have run, the restarts' pause)."""

from __future__ import annotations

import json
import time

from phoneuse_runtime.device.ui_server import RESTARTS_IN_WINDOW
from tests.device.adb.test_e2e_faults import Events
from tests.waiting import wait_until

from ..conftest import Client
from .conftest import LAUNCHER, front

CHROME = {"x": "411", "y": "1980", "settle_ms": "0"}  # the launcher's Chrome icon, no look before


async def test_a_read_goes_on_after_the_restart_event(client: Client) -> None:
    bus = client.app.runtime.bus
    subscribed = bus.subscriber_count
    events = Events(client, ["ERROR"])
    try:
        await wait_until(lambda: bus.subscriber_count > subscribed, what="the stream subscribed")
        killed = time.monotonic()
        assert (await client.ok("SIM_UI_SERVER_DIES"))["deaths"] == 1
        assert "Chrome" in json.dumps(await client.ok("DUMP_UI"))
        _, payload = await events.next("ERROR", after=killed, within_s=10)
        assert payload["code"] == "UI_SERVER_RESTARTED" and payload["took_ms"] >= 0, payload
        assert "uiautomator2 server (simulated) died" in payload["message"]
    finally:
        events.close()


async def test_an_act_before_it_was_sent_did_not_run(client: Client) -> None:
    await client.ok("SIM_UI_SERVER_DIES")
    response = await client.execute("TAP", CHROME)
    assert response.error.startswith("DEVICE_UNAVAILABLE: tapping (411, 1980): "), response.error
    assert "died before it was sent (killed by SIM_UI_SERVER_DIES): it did not run" in response.error
    assert json.loads(response.result_json)["may_have_run"] is False
    assert (await front(client))[0] == LAUNCHER
    await client.ok("TAP", CHROME)  # restarted: the next call works
    assert (await front(client))[0] == "com.android.chrome"


async def test_an_act_during_the_death_may_have_run(client: Client) -> None:
    await client.ok("SIM_UI_SERVER_DIES", {"during": "true"})
    response = await client.execute("TAP", CHROME)
    assert "it may have run; read the screen before trying again" in response.error, response.error
    assert json.loads(response.result_json)["may_have_run"] is True
    assert (await front(client))[0] == "com.android.chrome"  # it ran, once


async def test_deaths_past_the_limit_pause_the_restarts(client: Client) -> None:
    await client.ok("SIM_UI_SERVER_DIES", {"times": str(RESTARTS_IN_WINDOW + 1)})
    for _ in range(RESTARTS_IN_WINDOW):
        await client.ok("DUMP_UI")
    response = await client.execute("DUMP_UI")
    assert response.error.startswith("DEVICE_UNAVAILABLE: reading the screen: "), response.error
    assert "not restarting it for another" in response.error
    assert "died again (killed by SIM_UI_SERVER_DIES)" in response.error
