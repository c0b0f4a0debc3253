"""`--device termux` with the phone's own adb (wireless debugging): UI through the adb backend,
composed, against the fake adbd behind the real adb server; gaining it when it comes up later."""

from __future__ import annotations

import time

from phoneuse_runtime.config.addresses import parse_self_adb
from phoneuse_runtime.device.termux.device import TermuxDevice
from phoneuse_runtime.device.termux.selfadb import local_serials, parse_mdns
from phoneuse_runtime.kernel.capabilities import UI
from phoneuse_runtime.rpc import protocol_pb2 as pb
from tests.conftest import ServerFactory
from tests.device.adb.test_e2e_faults import Events
from tests.device.termux.conftest import ServeOwnAdb, own_adb_device
from tests.fakes import seed
from tests.fakes.adb_server import FakeDeviceFactory
from tests.fakes.phone import FakePhone
from tests.fakes.termux.state import FakeTermux
from tests.fakes.u2server import kill_server
from tests.waiting import wait_until

# What `adb mdns services` prints (adb's client/mdns output: name, service type, address).
MDNS = """List of discovered mdns services
adb-1A2B3C4D-xYz12a\t_adb-tls-pairing._tcp.\t192.168.1.42:41234
adb-1A2B3C4D-xYz12a\t_adb-tls-connect._tcp.\t192.168.1.42:37123
adb-99887766-Other0\t_adb-tls-connect._tcp.\t192.168.1.77:40001
"""


async def test_ui_goes_through_the_phones_own_adb_and_sms_through_termux(
    serve_own_adb: ServeOwnAdb, termux: FakeTermux
) -> None:
    phone = FakePhone()
    served = await serve_own_adb(phone, allow_shell=True)
    client = served.client
    dump = await client.ok("DUMP_UI")
    assert dump["package"] == seed.LAUNCHER
    tapped = await client.ok("TAP", {"text": "Chrome"})  # (Settings is the owner's: refused)
    assert (phone.state.log.taps[-1].x, phone.state.log.taps[-1].y) == (tapped["x"], tapped["y"])
    shot = await client.ok("SCREENSHOT")
    assert shot["via"] == "uiautomator2"
    # With adb, apps and the call state go through it; SMS still through Termux:API.
    opened = await client.ok("OPEN_APP", {"package": seed.CHROME})
    assert opened["package"] == seed.CHROME and phone.state.foreground().package == seed.CHROME
    sent = await client.ok("SEND_MESSAGE", {"to": "+14155550102", "body": "via termux"})
    assert sent["via"] == "termux-sms-send" and sent["verified"] is True
    assert termux.state()["sent_log"][0]["body"] == "via termux"
    assert (await client.ok("END_CALL"))["ended"] is False  # dumpsys telephony.registry: idle
    # Contacts come from the provider through adb then: ADD_CONTACT reads back what it stored.
    added = await client.ok("ADD_CONTACT", {"name": "Carol Danvers", "phone": "+15550100077"})
    assert added["verified"] is True and added["via"] == "content insert"
    rows, total, _ = await client.query(pb.CONTACTS, {"name": "Carol"})
    assert total == 1 and rows[0]["id"] == added["contact_id"]
    apps, _, _ = await client.query(pb.APP_STATE)
    assert apps[0]["package"] == seed.CHROME and apps[0]["foreground"] is True
    shell = await client.ok("SHELL", {"command": "echo from-the-phone"})
    assert shell["stdout"].strip() == "from-the-phone"


async def test_self_adb_that_comes_up_later_gains_ui_with_device_connected(
    make_client: ServerFactory, fake_device_factory: FakeDeviceFactory, termux: FakeTermux
) -> None:
    phone = FakePhone()
    fake = fake_device_factory(phone)
    fake.adbd.drop()  # wireless debugging is off: nothing answers on its port
    device = own_adb_device(fake)
    client = await make_client(device=device, poll_ms=100)
    events = Events(client, ["DEVICE_CONNECTED"])
    try:
        response = await client.execute("TAP", {"x": "1", "y": "1"})
        assert response.error.startswith("UNSUPPORTED: TAP: this device (termux) lacks the 'ui' capability")
        assert "Wireless debugging" in response.error and "adb pair" in response.error
        since = time.monotonic()
        fake.adbd.resume()  # wireless debugging turned on again
        _, connected = await events.next("DEVICE_CONNECTED", after=since, within_s=30)
    finally:
        events.close()
    assert connected["device"] == "adb" and connected["serial"] == fake.serial
    assert UI in device.capabilities
    await client.ok("TAP", {"x": "10", "y": "600"})
    assert (phone.state.log.taps[-1].x, phone.state.log.taps[-1].y) == (10, 600)


async def test_auto_finds_a_device_the_adb_server_lists_on_this_phones_own_address(
    make_client: ServerFactory, fake_device_factory: FakeDeviceFactory, termux: FakeTermux
) -> None:
    fake = fake_device_factory(FakePhone())  # `adb connect 127.0.0.1:PORT`, as a user would
    device = own_adb_device(fake, self_adb="auto")
    client = await make_client(device=device, poll_ms=100)
    await wait_until(lambda: UI in device.capabilities, within_s=30)
    assert device.self_adb.device is not None and device.self_adb.device.serial == fake.serial
    assert (await client.ok("DUMP_UI"))["package"] == seed.LAUNCHER


def test_mdns_picks_this_phones_own_wireless_debugging_port() -> None:
    own = {"192.168.1.42"}.__contains__
    assert parse_mdns(MDNS, own=own) == ["127.0.0.1:37123"]
    assert parse_mdns("List of discovered mdns services\n", own=own) == []
    assert local_serials(["127.0.0.1:5555", "192.168.1.77:5555", "emulator-5554"]) == ["127.0.0.1:5555"]


def test_the_self_adb_setting() -> None:
    assert parse_self_adb("auto") == "auto" and parse_self_adb("OFF") == "off"
    assert parse_self_adb("5555") == "127.0.0.1:5555"
    assert parse_self_adb("192.168.1.42:37123") == "192.168.1.42:37123"
    for bad in ("", "x", "70000", "host:", ":5"):
        try:
            parse_self_adb(bad)
        except Exception as exc:
            assert "self_adb must be auto, off, PORT or HOST:PORT" in str(exc)
        else:
            raise AssertionError(f"{bad!r} was accepted")


async def test_auto_follows_wireless_debugging_to_its_new_port(
    make_client: ServerFactory, fake_device_factory: FakeDeviceFactory, termux: FakeTermux
) -> None:
    first = fake_device_factory(FakePhone())
    device = own_adb_device(first, self_adb="auto")
    client = await make_client(device=device, poll_ms=100)
    await wait_until(lambda: UI in device.capabilities, within_s=30)
    events = Events(client, ["DEVICE_CONNECTED", "DEVICE_DISCONNECTED"])
    try:
        since = time.monotonic()
        first.adbd.drop()  # wireless debugging off (a Wi-Fi change)
        _, lost = await events.next("DEVICE_DISCONNECTED", after=since, within_s=30)
        await wait_until(lambda: device.self_adb.device is None, within_s=30)  # no redialling
        response = await client.execute("DUMP_UI")
        assert response.error.startswith("UNSUPPORTED: DUMP_UI: this device (termux) lacks the 'ui'")
        second = fake_device_factory(FakePhone())  # on again, on another port
        _, found = await events.next("DEVICE_CONNECTED", after=since, within_s=30)
    finally:
        events.close()
    assert lost["serial"] == first.serial and found["serial"] == second.serial
    assert (await client.ok("DUMP_UI"))["package"] == seed.LAUNCHER


async def test_polling_backs_off_while_the_screen_is_off(
    make_client: ServerFactory, fake_device_factory: FakeDeviceFactory, termux: FakeTermux
) -> None:
    phone = FakePhone()
    phone.state.screen_on = False
    fake = fake_device_factory(phone)
    device = TermuxDevice(
        self_adb=fake.serial,
        adb_server=f"127.0.0.1:{fake.adb_port}",
        poll_ms=100,
        self_adb_retry_s=0.2,
        state_check_s=0.2,
    )
    client = await make_client(device=device, poll_ms=100)
    await wait_until(lambda: UI in device.capabilities, within_s=30)
    pollers = device.pollers
    assert pollers is not None
    events = Events(client, ["NOTIFICATION_POSTED"])
    try:
        await wait_until(lambda: pollers.factor == 5.0)  # dumpsys power: mWakefulness=Asleep
        assert pollers.why == "screen off" and abs(pollers.interval_s - 0.5) < 1e-9
        phone.state.screen_on = True
        await wait_until(lambda: pollers.factor == 1.0)
        assert pollers.why == "screen on"
    finally:
        events.close()


async def test_a_secure_window_and_a_large_panel_through_the_phones_own_adb(
    serve_own_adb: ServeOwnAdb,
) -> None:
    # SCREENSHOT on Termux is the adb backend's, composed: the same scaling and the same check.
    phone = FakePhone()
    phone.state.screen_size = (1440, 3200)
    served = await serve_own_adb(phone)
    client = served.client
    shot = await client.ok("SCREENSHOT")
    assert (shot["width"], shot["height"], shot["format"], shot["secure"]) == (706, 1568, "jpeg", False)
    assert shot["scale"] == round(706 / 1440, 6) and shot["size_bytes"] <= 1_000_000
    phone.state.secure_packages.add(seed.LAUNCHER)
    shot = await client.ok("SCREENSHOT")
    assert shot["secure"] is True and "DUMP_UI" in shot["hint"]
    assert '"Keep Notes"' in (await client.ok("DUMP_UI"))["screen"]


async def test_the_ui_server_dying_is_handled_through_the_phones_own_adb(serve_own_adb: ServeOwnAdb) -> None:
    """The composed adb backend's handling of a dead uiautomator2 server, on Termux: the restart
    event on the runtime's bus, a read retried (whether refused or cut mid-answer)."""
    phone = FakePhone()
    served = await serve_own_adb(phone)
    client = served.client
    events = Events(client, ["ERROR"])
    try:
        await wait_until(lambda: client.app.runtime.bus.subscriber_count > 0, what="the stream subscribed")
        killed = time.monotonic()
        kill_server(phone.state)
        assert (await client.ok("DUMP_UI"))["package"] == seed.LAUNCHER
        _, payload = await events.next("ERROR", after=killed, within_s=10)
        assert payload["code"] == "UI_SERVER_RESTARTED" and payload["took_ms"] >= 0, payload
        # Killed halfway through its answer to the tap's look (a read): looked again, tapped once.
        phone.state.faults.u2_die_mid_answer = True
        taps = len(phone.state.log.taps)
        await client.ok("TAP", {"text": "Chrome", "settle_ms": "0"})
        assert len(phone.state.log.taps) == taps + 1 and phone.state.foreground().package == seed.CHROME
    finally:
        events.close()


async def test_a_stale_tap_is_not_done_through_the_phones_own_adb(serve_own_adb: ServeOwnAdb) -> None:
    from tests.fakes.state import SystemDialog

    phone = FakePhone()
    served = await serve_own_adb(phone)
    client = served.client
    await client.ok("DUMP_UI")  # the launcher
    phone.state.dialog = SystemDialog("anr", seed.MESSAGES, "Messages")
    taps = len(phone.state.log.taps)
    response = await client.execute("TAP", {"x": "360", "y": "640", "settle_ms": "0"})
    assert response.error.startswith('STALE_SCREEN: a system dialog ("Application Not Responding: '), (
        response.error
    )
    assert len(phone.state.log.taps) == taps


async def test_a_dialog_is_one_event_from_the_phones_own_adb_and_the_screen(
    serve_own_adb: ServeOwnAdb,
) -> None:
    from tests.fakes.state import SystemDialog

    phone = FakePhone()
    served = await serve_own_adb(phone)
    client = served.client
    events = Events(client, ["SYSTEM_DIALOG"])
    phone.state.dialog = SystemDialog("anr", seed.MESSAGES, "Messages")
    _, payload = await events.next("SYSTEM_DIALOG", after=0, within_s=10)  # the poll's read
    assert (payload["kind"], payload["package"]) == ("anr", seed.MESSAGES)
    await client.ok("DUMP_UI")  # the same dialog on the screen: the watch is the device's, shared
    at = time.monotonic()
    phone.state.dialog = SystemDialog("crash", seed.MESSAGES, "Messages")
    await client.ok("DUMP_UI")  # (or the poll, first: either way one event)
    _, payload = await events.next("SYSTEM_DIALOG", after=at, within_s=10)
    assert payload["kind"] == "crash"
    events.close()
    assert [p["kind"] for _, _, p in events.seen] == ["anr", "crash"]
