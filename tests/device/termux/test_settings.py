"""The termux backend's settings: `self_adb` from the flag, the environment and the file, and a
value that cannot work refused at start-up."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from phoneuse_runtime.cli.main import build_parser, main
from phoneuse_runtime.config.settings import ConfigError, Settings, load_settings
from phoneuse_runtime.device.backends import make_device
from phoneuse_runtime.device.termux.device import TermuxDevice


def test_self_adb_comes_from_flag_then_env_then_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "config.toml").write_text('self_adb = "off"\n', encoding="utf-8")
    assert load_settings({"data_dir": tmp_path}).self_adb == "off"
    monkeypatch.setenv("PHONEUSE_SELF_ADB", "5555")
    assert load_settings({"data_dir": tmp_path}).self_adb == "5555"
    args = build_parser().parse_args(["serve", "--device", "termux", "--self-adb", "127.0.0.1:41000"])
    assert load_settings({"data_dir": tmp_path, "self_adb": args.self_adb}).self_adb == "127.0.0.1:41000"
    assert Settings().self_adb == "auto"


def test_make_device_builds_termux_and_refuses_a_bad_self_adb() -> None:
    device = make_device(Settings(device="termux", self_adb="5555", poll_ms=200))
    assert isinstance(device, TermuxDevice) and device.self_adb.mode == "127.0.0.1:5555"
    with pytest.raises(ConfigError, match="self_adb must be auto, off, PORT or HOST:PORT, got 'nope'"):
        make_device(Settings(device="termux", self_adb="nope"))
    with pytest.raises(ConfigError, match="poll_ms must be at least 50"):
        make_device(Settings(device="termux", poll_ms=10))


def test_actions_marks_what_termux_cannot_do_without_its_own_adb(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["actions", "--device", "termux", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["device"] == "termux"
    assert listed["capabilities"] == [
        "apps",
        "calls",
        "clipboard",
        "contacts",
        "files",
        "notifications",
        "sms",
    ]
    assert listed["actions"]["TAP"]["supported"] is False
    assert listed["actions"]["SEND_MESSAGE"]["supported"] is True
