"""The adb backend, through gRPC, on a fake phone that prints what real phones printed (the
shared real captures, tests/fakes/golden.py; skipped where they are absent): the fake's answers
for these commands are the captures themselves, so the fake cannot drift from them."""

from __future__ import annotations

import pytest

from phoneuse_runtime.rpc import protocol_pb2 as pb
from tests.device.adb.conftest import AdbServe
from tests.fakes.golden import golden
from tests.fakes.phone import FakePhone


@pytest.mark.parametrize("kind", ["mFocusedApp", "mCurrentFocus"])
async def test_app_state_on_a_foldable_is_the_main_displays_app(serve_adb: AdbServe, kind: str) -> None:
    """The Galaxy Z Flip4 lists its cover screen's SubHomeActivity (the system UI) first."""
    phone = FakePhone()
    phone.state.printed["dumpsys window windows"] = golden(
        "dumpsys", f"window-displays-grep-{kind}_galaxy-z-flip4_android12.txt"
    )
    s = await serve_adb(phone)
    apps, _, _ = await s.client.query(pb.QueryType.APP_STATE)
    front = [app for app in apps if app["foreground"]]
    assert [app["package"] for app in front] == ["jp.naver.line.android"]


@pytest.mark.parametrize(
    ("name", "size"),
    [
        ("wm-size_1080x1920_awesome-adb-doc.txt", (1080, 1920)),
        ("wm-size_with-override_awesome-adb-doc.txt", (480, 1024)),
        ("wm-size_galaxy-note3_bogus-640x480.txt", (640, 480)),
    ],
)
async def test_swipe_stays_inside_the_size_wm_printed(
    serve_adb: AdbServe, name: str, size: tuple[int, int]
) -> None:
    phone = FakePhone()
    phone.state.printed["wm size"] = golden("wm", name)
    s = await serve_adb(phone)
    for direction in ("up", "down", "left", "right"):
        got = await s.client.ok("SWIPE", {"direction": direction})
        assert 0 <= got["x1"] < size[0] and 0 <= got["x2"] < size[0]
        assert 0 <= got["y1"] < size[1] and 0 <= got["y2"] < size[1]
        assert (got["x1"] + got["x2"]) // 2 == size[0] // 2 or (got["y1"] + got["y2"]) // 2 == size[1] // 2


async def test_a_real_uiautomator2_dump_reads_and_taps_inside_its_element(serve_adb: AdbServe) -> None:
    """A real multi-window dump (app + system UI) as uiautomator2 returned it."""
    xml = golden("uidump", "u2-multiwindow_swapcard_1080x2400_217nodes.xml")
    phone = FakePhone()
    phone.state.printed["rpc:dumpWindowHierarchy"] = xml
    s = await serve_adb(phone)
    dumped = await s.client.ok("DUMP_UI", {})
    assert dumped
    assert "com.swapcard.apps.android.adipec" in str(dumped)
