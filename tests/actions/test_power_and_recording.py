"""WAKE, SLEEP, UNLOCK and SCREEN_RECORD_START/STOP on the simulated phone, through the real server
(issue 27): each read back, a secure lock refused with OWNER_MUST_UNLOCK, one recording at a time."""

from __future__ import annotations

from phoneuse_runtime.device.sim.power import HEADER

from ..conftest import Client, ServerFactory
from ..waiting import wait_until
from .conftest import failure, sim


async def test_sleep_then_wake_read_back(client: Client) -> None:
    slept = await client.ok("SLEEP")
    assert (slept["awake"], slept["locked"], slept["verified"]) == (False, True, True)
    assert sim(client).power.awake is False
    woken = await client.ok("WAKE")
    # Waking leaves the lock screen showing: WAKE never unlocks.
    assert (woken["awake"], woken["locked"], woken["verified"]) == (True, True, True)


async def test_unlock_dismisses_a_lock_screen_without_a_secret(client: Client) -> None:
    await client.ok("SLEEP")
    unlocked = await client.ok("UNLOCK")  # wakes first
    assert (unlocked["awake"], unlocked["locked"], unlocked["secure"], unlocked["verified"]) == (
        True,
        False,
        False,
        True,
    )
    again = await client.ok("UNLOCK")  # already open: nothing to do, still verified
    assert again["verified"] is True


async def test_unlock_refuses_a_secure_lock_screen_and_leaves_it(client: Client) -> None:
    for lock in ("pin", "pattern", "password"):
        await client.ok("SIM_SET_LOCK", {"lock": lock, "locked": "true"})
        code, message, details = await failure(client, "UNLOCK")
        assert code == "OWNER_MUST_UNLOCK"
        assert "PIN, pattern or password" in message and "owner" in message
        assert details == {"awake": True, "locked": True, "secure": True}
        assert sim(client).power.locked is True  # never dismissed
    # The owner unlocks (here: sets no lock), and UNLOCK has nothing to refuse.
    await client.ok("SIM_SET_LOCK", {"lock": "none", "locked": "false"})
    assert (await client.ok("UNLOCK"))["locked"] is False


async def test_power_actions_are_allowed_in_front_of_the_owners_controls(client: Client) -> None:
    # The lock screen itself is the system UI, one of the owner's controls: SLEEP, WAKE and UNLOCK
    # work in front of it, as PRESS_KEY WAKEUP and SLEEP do.
    await client.ok("SLEEP")
    await client.ok("WAKE")
    assert (await client.ok("UNLOCK"))["verified"] is True


async def test_deny_actions_refuses_unlock_before_it_runs(make_client: ServerFactory) -> None:
    client = await make_client(deny_actions=frozenset({"UNLOCK"}))
    await client.ok("SLEEP")
    assert await client.fail("UNLOCK") == "DENIED"
    assert sim(client).power.awake is False  # nothing ran


async def test_a_recording_is_stopped_and_answered_with_its_file(client: Client) -> None:
    started = await client.ok(
        "SCREEN_RECORD_START", {"max_s": "30", "size": "720x1280", "bit_rate": "4000000"}
    )
    assert started["path"].startswith("/sdcard/Movies/phoneuse-") and started["path"].endswith(".mp4")
    assert started["max_s"] == 30
    code, message, details = await failure(client, "SCREEN_RECORD_START")
    assert code == "CONFLICT"
    assert started["path"] in message and details["path"] == started["path"]
    stopped = await client.ok("SCREEN_RECORD_STOP")
    assert stopped["path"] == started["path"]
    assert stopped["ended"] == "stopped" and stopped["verified"] is True
    data = sim(client).recorder.files[started["path"]]
    assert data.startswith(HEADER) and stopped["size"] == len(data)
    assert 0 <= stopped["duration_ms"] <= 30_000
    # Nothing left to stop.
    code, _, _ = await failure(client, "SCREEN_RECORD_STOP")
    assert code == "INVALID_PARAMS"


async def test_a_recording_stops_at_its_limit_and_is_still_collected(client: Client) -> None:
    started = await client.ok("SCREEN_RECORD_START", {"max_s": "1"})
    recorder = sim(client).recorder
    await wait_until(lambda: recorder.running is None, within_s=10, what="the recording to reach its limit")
    # A new one may start now; the finished one is answered first by a STOP only while none runs.
    stopped = await client.ok("SCREEN_RECORD_STOP")
    assert (stopped["path"], stopped["ended"]) == (started["path"], "limit")
    assert stopped["duration_ms"] <= 1000


async def test_a_recording_left_running_ends_with_the_server(make_client: ServerFactory) -> None:
    client = await make_client()
    started = await client.ok("SCREEN_RECORD_START", {"max_s": "180"})
    device = sim(client)
    await client.app.stop(grace_s=0)
    assert device.recorder.running is None
    assert started["path"] in device.recorder.files


async def test_bad_recording_params_are_refused_naming_the_limit(client: Client) -> None:
    for params in ({"max_s": "181"}, {"max_s": "0"}, {"size": "big"}, {"bit_rate": "5"}):
        code, message, _ = await failure(client, "SCREEN_RECORD_START", params)
        assert code == "INVALID_PARAMS", params
        assert next(iter(params)) in message
    assert sim(client).recorder.running is None
