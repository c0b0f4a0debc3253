"""TAP by ref through gRPC on the adb backend, against the fake adbd and phone behind the real adb
server: one device round trip, resolved on the phone as it taps, never a tap somewhere else."""

from __future__ import annotations

from tests.device.adb.conftest import AdbServe, Served
from tests.fakes import seed


def _ref(screen: str, label: str) -> str:
    [line] = [line for line in screen.splitlines() if f'"{label}"' in line]
    return line.split()[0]


def _bounds(dump: dict[str, object], text: str) -> list[int]:
    elements = dump["elements"]
    assert isinstance(elements, list)
    bounds: list[int] = next(e["bounds"] for e in elements if e["text"] == text)
    return bounds


async def _device_work(s: Served, action: str, params: dict[str, str]) -> tuple[list[str], list[str], int]:
    """The action's uiautomator2 calls, its shell commands, and how many taps reached the phone."""
    log = s.state.log
    rpc_before, shell_before, taps_before = len(log.rpc), len(log.shell), len(log.taps)
    await s.client.ok(action, params)
    return [c.method for c in log.rpc[rpc_before:]], log.shell[shell_before:], len(log.taps) - taps_before


async def test_tap_ref_is_one_round_trip_and_lands_inside(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    screen = (await s.client.ok("DUMP_UI"))["screen"]
    bounds = _bounds(await s.client.ok("DUMP_UI", {"format": "json"}), "Keep Notes")
    ref = _ref(screen, "Keep Notes")
    await s.client.ok("DUMP_UI")  # the refs the caller was last given are this screen's
    before = len(s.opened())
    calls, shell, taps = await _device_work(s, "TAP", {"ref": ref, "settle_ms": "0"})  # the tap's own
    # One stream at the fake adbd: one JSON-RPC batch, the element looked up and clicked by the
    # phone, whose guarded selector also checks that no owner's app has the focus (front_guard.py).
    assert s.opened()[before:] == ["tcp:9008"], s.opened()[before:]
    assert calls == ["objInfo", "click"] and taps == 1 and shell == []
    tap = s.state.log.taps[-1]
    left, top, right, bottom = bounds
    assert left <= tap.x < right and top <= tap.y < bottom
    assert s.state.foreground().package == seed.KEEP


async def test_a_stale_ref_taps_nothing(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    ref = _ref((await s.client.ok("DUMP_UI"))["screen"], "Keep Notes")
    await s.client.ok("OPEN_APP", {"package": seed.KEEP})  # the launcher is gone
    taps = len(s.state.log.taps)
    response = await s.client.execute("TAP", {"ref": ref})
    assert not response.success and response.error.startswith("ELEMENT_NOT_FOUND: ")
    assert len(s.state.log.taps) == taps
    # A ref the last screen did not hold is resolved on a fresh dump: gone there too.
    response = await s.client.execute("TAP", {"ref": "zzzz"})
    assert not response.success and response.error.startswith("ELEMENT_NOT_FOUND: ")
    assert len(s.state.log.taps) == taps
