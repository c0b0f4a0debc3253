"""The table of backends (device/backends.py): what `--device` values it takes, that the help
texts and the refusal say what it holds, and that a row imports its room only when used."""

from __future__ import annotations

import subprocess
import sys

import pytest

from phoneuse_runtime.config.settings import ConfigError, Settings
from phoneuse_runtime.device.backends import USAGE, backend_for, find_backend, make_device
from phoneuse_runtime.device.sim.device import SimDevice

EXE = [sys.executable, "-m", "phoneuse_runtime"]


@pytest.mark.parametrize(
    ("device", "kind"),
    [("sim", "sim"), ("adb", "adb"), ("adb:R58M", "adb"), ("adb:10.0.0.5:5555", "adb"), ("termux", "termux")],
)
def test_a_known_device_names_its_row(device: str, kind: str) -> None:
    backend = find_backend(device)
    assert backend is not None and backend.name == kind


@pytest.mark.parametrize("device", ["", "bogus", "adbx", "sim:x", "termux:1", ":adb"])
def test_an_unknown_device_is_refused_saying_what_would_do(device: str) -> None:
    assert find_backend(device) is None
    with pytest.raises(ConfigError, match=r"unknown device .*; use sim, adb\[:SERIAL\] or termux$"):
        backend_for(device)


def test_the_usage_is_written_from_the_table() -> None:
    assert USAGE == "sim, adb[:SERIAL] or termux"


def test_make_device_builds_the_row_s_device() -> None:
    assert isinstance(make_device(Settings(device="sim")), SimDevice)


def test_the_sim_never_imports_adbutils() -> None:
    code = (
        "import sys\n"
        "from phoneuse_runtime.config.settings import Settings\n"
        "from phoneuse_runtime.device.backends import make_device\n"
        "make_device(Settings(device='sim'))\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('adbutils', 'uiautomator2')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("command", [["serve"], ["doctor"], ["actions"], ["mcp"]])
def test_every_help_text_says_the_table_s_usage(command: list[str]) -> None:
    done = subprocess.run([*EXE, *command, "--help"], capture_output=True, text=True, timeout=60, check=True)
    assert "sim, adb[:SERIAL] or termux (default" in " ".join(done.stdout.split())
