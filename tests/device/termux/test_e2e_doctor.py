"""`phoneuse-runtime doctor --device termux` against the fake Termux:API commands, a fake $PREFIX
with a fake runit `sv`, and, for the phone's own adb, the fake adbd behind the real adb server."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from phoneuse_runtime.cli.main import main
from tests.fakes.adb_server import FakeDeviceFactory
from tests.fakes.golden import golden_files
from tests.fakes.phone import FakePhone
from tests.fakes.termux.state import FakeTermux

pytestmark = pytest.mark.usefixtures("free_listen")  # doctor checks the ports serve would take

FAKE_PREFIX_BIN = Path(__file__).resolve().parents[2] / "fakes" / "termux" / "prefix" / "bin"
RUNNING = "run: phoneuse-runtime: (pid 4242) 120s; run: log: (pid 4243) 120s"


@pytest.fixture
def phone_env(termux: FakeTermux, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Termux with the service installed and running, self-adb off unless a test says otherwise."""
    prefix = tmp_path / "usr"
    (prefix / "var" / "service" / "phoneuse-runtime").mkdir(parents=True)
    monkeypatch.setenv("PREFIX", str(prefix))
    monkeypatch.delenv("SVDIR", raising=False)
    monkeypatch.setenv("PATH", f"{os.environ['PATH']}{os.pathsep}{FAKE_PREFIX_BIN}")  # sv
    monkeypatch.setenv("FAKE_CALLS", str(tmp_path / "calls.log"))
    monkeypatch.setenv("FAKE_SV_STATUS", RUNNING)
    monkeypatch.setenv("PHONEUSE_SELF_ADB", "off")
    return tmp_path


async def _doctor(data_dir: Path) -> tuple[int, dict[str, dict[str, Any]]]:
    import contextlib
    import io

    out = io.StringIO()

    def run() -> int:
        with contextlib.redirect_stdout(out):
            return main(["doctor", "--device", "termux", "--data-dir", str(data_dir / "data"), "--json"])

    code = await asyncio.to_thread(run)  # main() runs its own event loop
    report = json.loads(out.getvalue())
    return code, {c["name"]: c for c in report["checks"]}


async def test_a_ready_phone_passes_with_the_unknowns_said(phone_env: Path) -> None:
    code, checks = await _doctor(phone_env)
    assert code == 0
    for name in (
        "Termux:API",
        "SMS permission",
        "contacts permission",
        "call log permission",
        "phone permission",
        "notification access",
        "wake lock",
        "service",
        "self-adb",
    ):
        assert checks[name]["status"] == "ok", checks[name]
    assert checks["service"]["detail"] == RUNNING
    assert checks["phantom-process killer"]["status"] == "warn"
    assert "max_phantom_processes 2147483647" in checks["phantom-process killer"]["fix"]
    assert "Disable child process restrictions" in checks["phantom-process killer"]["fix"]


async def test_each_missing_permission_fails_with_its_fix(phone_env: Path, termux: FakeTermux) -> None:
    termux.update(
        lambda s: s.update(
            denied=["android.permission.READ_SMS", "android.permission.READ_CALL_LOG"],
            notification_access=False,  # termux-notification-list then never answers
        )
    )
    code, checks = await _doctor(phone_env)
    assert code == 1
    assert checks["SMS permission"]["status"] == "fail"
    assert "android.permission.READ_SMS" in checks["SMS permission"]["detail"]
    assert "Permissions > SMS > Allow" in checks["SMS permission"]["fix"]
    assert "Permissions > Call logs > Allow" in checks["call log permission"]["fix"]
    assert checks["contacts permission"]["status"] == "ok"
    assert checks["notification access"]["status"] == "fail"
    assert "did not answer within 5 s" in checks["notification access"]["detail"]
    assert "notification access" in checks["notification access"]["fix"]
    assert checks["wake lock"]["status"] == "warn"


async def test_a_missing_termux_api_app_fails_first_with_how_to_install_it(
    phone_env: Path, termux: FakeTermux
) -> None:
    termux.update(lambda s: s.update(hang=["*"]))
    code, checks = await _doctor(phone_env)
    assert code == 1
    assert checks["Termux:API"]["status"] == "fail"
    assert "did not answer within 5 s" in checks["Termux:API"]["detail"]
    assert "install the Termux:API app" in checks["Termux:API"]["fix"]
    assert "SMS permission" not in checks  # nothing else of Termux:API is asked after that


async def test_a_stopped_service_and_no_wake_lock_are_warnings_with_fixes(
    phone_env: Path, termux: FakeTermux, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_SV_STATUS", "down: phoneuse-runtime: 12s, normally up")
    termux.update(lambda s: s.update(notifications=[]))
    code, checks = await _doctor(phone_env)
    assert code == 0  # warnings only
    assert checks["service"]["status"] == "warn" and checks["service"]["fix"].startswith(
        "sv up phoneuse-runtime"
    )
    assert checks["wake lock"]["status"] == "warn" and checks["wake lock"]["fix"].startswith(
        "termux-wake-lock"
    )


async def test_self_adb_reachable_and_the_phantom_process_killer(
    phone_env: Path, fake_device_factory: FakeDeviceFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    phone = FakePhone()
    fake = fake_device_factory(phone)
    monkeypatch.setenv("PHONEUSE_SELF_ADB", fake.serial)
    monkeypatch.setenv("PHONEUSE_ADB_SERVER", f"127.0.0.1:{fake.adb_port}")
    code, checks = await _doctor(phone_env)
    assert checks["self-adb"] == {
        "name": "self-adb",
        "status": "ok",
        "detail": f"the phone's own adb answers at {fake.serial}",
        "fix": "",
    }
    assert checks["phantom-process killer"]["status"] == "fail" and code == 1
    assert (
        "device_config put activity_manager max_phantom_processes" in checks["phantom-process killer"]["fix"]
    )
    phone.state.settings.setdefault("global", {})["settings_enable_monitor_phantom_procs"] = "false"
    code, checks = await _doctor(phone_env)
    assert checks["phantom-process killer"]["status"] == "ok" and code == 0


async def test_self_adb_that_does_not_answer_says_how_to_turn_it_on(
    phone_env: Path, fake_device_factory: FakeDeviceFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = fake_device_factory(FakePhone())
    fake.adbd.drop()
    monkeypatch.setenv("PHONEUSE_SELF_ADB", fake.serial)
    monkeypatch.setenv("PHONEUSE_ADB_SERVER", f"127.0.0.1:{fake.adb_port}")
    code, checks = await _doctor(phone_env)
    assert code == 0 and checks["self-adb"]["status"] == "warn"
    assert "Wireless debugging" in checks["self-adb"]["fix"] and "adb pair" in checks["self-adb"]["fix"]


async def test_termux_apis_play_build_fails_the_sms_check_saying_where_to_get_the_full_app(
    phone_env: Path, termux: FakeTermux
) -> None:
    """The Play Store build refuses SMS for good (the captured answer of its termux-sms-list)."""
    refusal = golden_files("termux", "sms-list_error_google-play-build_*.json")[0].read_text(encoding="utf-8")
    termux.update(lambda s: s["printed"].update({"termux-sms-list": refusal}))
    code, checks = await _doctor(phone_env)
    assert code == 1
    sms = checks["SMS permission"]
    assert sms["status"] == "fail"
    assert "Reading SMS is no longer permitted by Google" in sms["detail"]
    assert "Google Play build" in sms["fix"] and "F-Droid or GitHub" in sms["fix"]
    assert checks["contacts permission"]["status"] == "ok"
