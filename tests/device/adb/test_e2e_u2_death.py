"""The uiautomator2 server dies under the runtime, as it does on real phones (killed for memory,
an app update, another automation client taking UiAutomation): through the real adb server
against the fake phone. A read is retried once after the restart, an act is answered
DEVICE_UNAVAILABLE saying whether it may have run, each restart is an ERROR event
UI_SERVER_RESTARTED, and a server that keeps dying is left alone for a while."""

from __future__ import annotations

import json
import logging
import time

import pytest

from phoneuse_runtime.device.ui_server import RESTART_WINDOW_S, RESTARTS_IN_WINDOW
from tests.device.adb.conftest import AdbServe
from tests.device.adb.test_e2e_faults import Events
from tests.fakes.u2server import kill_server, release_ui_automation, take_ui_automation
from tests.waiting import wait_until

CHROME = {"text": "Chrome", "settle_ms": "0"}  # an act through the server (a batch), no look before


async def test_a_read_is_retried_after_the_server_died(
    serve_adb: AdbServe, caplog: pytest.LogCaptureFixture
) -> None:
    s = await serve_adb()
    launches = s.state.u2.launches
    kill_server(s.state)
    with caplog.at_level(logging.WARNING, logger="phoneuse_runtime.device.adb.ui"):
        screen = await s.client.ok("DUMP_UI")
    assert "Chrome" in json.dumps(screen)
    assert s.state.u2.launches == launches + 1 and s.state.u2.running
    assert "uiautomator2 server restarted in" in caplog.text


async def test_a_screenshot_is_retried_when_uiautomation_is_gone(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    launches = s.state.u2.launches
    s.state.faults.u2_not_connected = True  # the real server's "UiAutomation not connected!"
    shot = await s.client.ok("SCREENSHOT")
    assert shot["width"] > 0 and s.state.u2.launches == launches + 1


async def test_an_act_the_dead_server_never_got_did_not_run(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    before = s.state.foreground().package
    kill_server(s.state)  # the port refuses: the tap is never sent
    response = await s.client.execute("TAP", CHROME)
    assert not response.success
    assert response.error.startswith("DEVICE_UNAVAILABLE: tap on"), response.error
    assert "died before it was sent (nothing listens on tcp:9008" in response.error, response.error
    assert "): it did not run" in response.error
    assert "restarted in" in response.error
    assert json.loads(response.result_json)["may_have_run"] is False
    assert s.state.foreground().package == before  # not tapped, and not tapped again behind its back
    # The server is back: the next call works without the agent doing anything.
    await s.client.ok("TAP", CHROME)
    assert s.state.foreground().package == "com.android.chrome"


async def test_an_act_whose_answer_was_cut_may_have_run(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    s.state.faults.u2_die_mid_answer = True  # killed halfway through writing the tap's answer
    clicks = s.state.log.rpc_counts()["click"]
    response = await s.client.execute("TAP", CHROME)
    assert not response.success
    assert "died during it (the connection to it dropped before its answer" in response.error
    assert "): it may have run; read the screen before trying again" in response.error
    assert json.loads(response.result_json)["may_have_run"] is True
    # It did run, once: never sent again after the restart.
    assert s.state.log.rpc_counts()["click"] == clicks + 1
    assert s.state.foreground().package == "com.android.chrome"
    assert s.state.u2.running


async def test_an_act_with_uiautomation_gone_did_not_run(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    before = s.state.foreground().package
    s.state.faults.u2_not_connected = True
    response = await s.client.execute("TAP", CHROME)
    assert "did not run" in response.error and s.state.foreground().package == before, response.error


async def test_each_restart_is_an_error_event_on_subscribe(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    c = s.client
    bus = c.app.runtime.bus
    subscribed = bus.subscriber_count
    events = Events(c, ["ERROR"])
    try:
        await wait_until(lambda: bus.subscriber_count > subscribed, what="the stream subscribed")
        killed = time.monotonic()
        kill_server(s.state)
        await c.ok("DUMP_UI")
        _, payload = await events.next("ERROR", after=killed, within_s=10)
        assert payload["code"] == "UI_SERVER_RESTARTED", payload
        assert isinstance(payload["took_ms"], int) and payload["took_ms"] >= 0
        assert "uiautomator2 server died" in payload["message"]
        assert f"{payload['took_ms']} ms" in payload["message"]
    finally:
        events.close()


async def test_a_server_that_keeps_dying_is_left_alone_for_a_while(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    launches = s.state.u2.launches
    for _ in range(RESTARTS_IN_WINDOW):
        kill_server(s.state)
        await s.client.ok("DUMP_UI")
    assert s.state.u2.launches == launches + RESTARTS_IN_WINDOW
    kill_server(s.state)
    response = await s.client.execute("DUMP_UI")
    assert response.error.startswith("DEVICE_UNAVAILABLE"), response.error
    limit = f"restarted {RESTARTS_IN_WINDOW} times within {RESTART_WINDOW_S:.0f} s and died again"
    assert limit in response.error, response.error
    assert "not restarting it for another" in response.error
    # Meanwhile: no restart, the same reason, for reads and acts alike.
    again = await s.client.execute("TAP", CHROME)
    assert "not restarting it for another" in again.error and "did not run" in again.error, again.error
    assert s.state.u2.launches == launches + RESTARTS_IN_WINDOW and not s.state.u2.running


async def test_another_automation_client_is_named(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    take_ui_automation(s.state)  # Appium's UiAutomator2 server takes the phone
    response = await s.client.execute("DUMP_UI")
    assert response.error.startswith("DEVICE_UNAVAILABLE"), response.error
    assert "another automation client holds UiAutomation" in response.error
    assert "Appium's UiAutomator2 server (io.appium.uiautomator2.server)" in response.error
    assert "already registered" in response.error
    release_ui_automation(s.state)
    await s.client.ok("DUMP_UI")  # the next death restarts it: the phone is ours again
    assert s.state.u2.running


async def test_a_wait_for_and_a_settle_look_are_retried(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    launches = s.state.u2.launches
    kill_server(s.state)
    found = await s.client.ok("WAIT_FOR", {"text": "Chrome", "wait_ms": "2000"})
    assert found["element"]["text"] == "Chrome", found
    kill_server(s.state)  # a tap at coordinates is `input`; its settle's looks are the server's
    await s.client.ok("TAP", {"x": "100", "y": "200"})
    assert (s.state.log.taps[-1].x, s.state.log.taps[-1].y) == (100, 200)
    assert s.state.u2.launches == launches + 2


async def test_an_http_500_is_a_death_and_says_so(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    before = s.state.foreground().package
    # A 500 that says UiAutomation is gone: nothing ran.
    s.state.faults.u2_http_500 = "java.lang.IllegalStateException: UiAutomation not connected!"
    s.state.faults.u2_not_connected = True
    response = await s.client.execute("TAP", CHROME)
    assert "UiAutomation not connected" in response.error and "did not run" in response.error, response.error
    assert s.state.foreground().package == before
    # A 500 from writing the answer: the tap ran.
    s.state.faults.u2_http_500 = "SERVER INTERNAL ERROR: IOException: Broken pipe"
    response = await s.client.execute("TAP", CHROME)
    assert "HTTP 500" in response.error and "it may have run" in response.error, response.error
    assert s.state.foreground().package == "com.android.chrome"
