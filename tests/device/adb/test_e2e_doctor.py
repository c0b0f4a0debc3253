"""`phoneuse-runtime doctor --device adb:SERIAL` against the fake phone behind the real adb server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from phoneuse_runtime.cli.main import main
from tests.device.adb.conftest import AdbServe

pytestmark = pytest.mark.usefixtures("free_listen")  # doctor checks the ports serve would take


async def test_doctor_on_a_ready_phone_without_the_input_method(
    serve_adb: AdbServe, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    s = await serve_adb()  # serve started the uiautomator2 server
    monkeypatch.setenv("PHONEUSE_ADB_SERVER", f"127.0.0.1:{s.device.adb_port}")
    code = await _doctor(
        ["doctor", "--device", f"adb:{s.device.serial}", "--data-dir", str(tmp_path), "--json"]
    )
    report = json.loads(capsys.readouterr().out)
    checks = {c["name"]: c for c in report["checks"]}
    assert code == 0 and report["ok"] is True
    assert checks["device"]["status"] == "ok" and s.device.serial in checks["device"]["detail"]
    assert checks["uiautomator2 server"]["status"] == "ok"
    assert checks["uiautomator2 input method"]["status"] == "warn"
    assert "uiautomator2 init" in checks["uiautomator2 input method"]["fix"]


async def test_doctor_names_a_device_adb_does_not_list(
    serve_adb: AdbServe, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    s = await serve_adb()
    monkeypatch.setenv("PHONEUSE_ADB_SERVER", f"127.0.0.1:{s.device.adb_port}")
    code = await _doctor(["doctor", "--device", "adb:no-such-phone", "--data-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1 and "[FAIL] device: no-such-phone" in out


async def _doctor(argv: list[str]) -> int:
    import asyncio

    # main() runs its own event loop: off this test's loop, on a thread.
    return await asyncio.to_thread(main, argv)
