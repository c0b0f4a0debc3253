"""termux/: install.sh, the runit service and the Termux:Boot script, run under `sh` with a fake
$PREFIX (its bin/ holds fake pkg, pip, python, sv, svlogd, termux-wake-lock and phoneuse-runtime,
which record their calls) and a fake $HOME."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
TERMUX = ROOT / "termux"
FAKE_BIN = ROOT / "tests" / "fakes" / "termux" / "prefix" / "bin"
SERVICE = "phoneuse-runtime"


@dataclass
class Termux:
    prefix: Path
    home: Path
    calls: Path

    def env(self, **extra: str) -> dict[str, str]:
        env = {
            "PREFIX": str(self.prefix),
            "HOME": str(self.home),
            "PATH": f"{self.prefix / 'bin'}:/usr/bin:/bin",
            "FAKE_CALLS": str(self.calls),
            "FAKE_GRPCIO_VERSION": "1.86.0",
        }
        env.update(extra)
        return env

    def sh(self, script: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["sh", str(script), *args], env=self.env(**extra), capture_output=True, text=True, timeout=30
        )

    def called(self) -> list[str]:
        return self.calls.read_text(encoding="utf-8").splitlines() if self.calls.exists() else []


@pytest.fixture
def termux_env(tmp_path: Path) -> Termux:
    prefix = tmp_path / "usr"
    (prefix / "tmp").mkdir(parents=True)  # Termux's $TMPDIR
    shutil.copytree(FAKE_BIN, prefix / "bin")
    (prefix / "etc" / "profile.d").mkdir(parents=True)
    (prefix / "etc" / "profile.d" / "start-services.sh").write_text(
        'echo "start-services SVDIR=$PREFIX/var/service" >> "$FAKE_CALLS"\n', encoding="utf-8"
    )
    home = tmp_path / "home"
    home.mkdir()
    return Termux(prefix, home, tmp_path / "calls.log")


def test_install_takes_grpcio_from_pkg_then_pip_installs_and_sets_up_the_service(termux_env: Termux) -> None:
    done = termux_env.sh(TERMUX / "install.sh")
    assert done.returncode == 0, done.stderr
    calls = termux_env.called()
    pkg = next(c for c in calls if c.startswith("pkg "))
    assert pkg.split()[1:3] == ["install", "-y"]
    assert {"python", "python-grpcio", "termux-api", "termux-services", "android-tools"} <= set(pkg.split())
    pip = next(c for c in calls if c.startswith("pip "))
    assert pip.startswith("pip install --upgrade --constraint ") and pip.endswith(f" {ROOT}")
    # Held to pkg's grpcio (1.86.0 here): pip must not try to build a newer one.
    assert {c for c in calls if c.startswith("constraint ")} == {
        "constraint grpcio==1.86.0",
        "constraint grpcio-health-checking==1.86.0",
        "constraint grpcio-reflection==1.86.0",
    }
    assert not list((termux_env.prefix / "tmp").iterdir())  # the constraints file is gone
    assert calls.index(pkg) < calls.index(pip)  # grpcio from pkg before pip could try to build it
    service = termux_env.prefix / "var" / "service" / SERVICE
    for script in (
        service / "run",
        service / "log" / "run",
        termux_env.home / ".termux/boot/start-phoneuse-runtime",
    ):
        text = script.read_text(encoding="utf-8")
        assert text.startswith(f"#!{termux_env.prefix}/bin/sh\n") and "@TERMUX_PREFIX@" not in text
        assert script.stat().st_mode & stat.S_IXUSR
    assert calls[-1] == f"sv up {SERVICE} SVDIR={termux_env.prefix}/var/service"
    assert "started: sv status phoneuse-runtime" in done.stdout


def test_install_says_how_to_start_when_runit_is_not_running(termux_env: Termux) -> None:
    done = termux_env.sh(TERMUX / "install.sh", FAKE_SV_EXIT="1")
    assert done.returncode == 0, done.stderr
    assert "runit is not running yet" in done.stdout and f"sv up {SERVICE}" in done.stdout


def test_install_stops_before_pip_when_pkg_grpcio_is_too_old(termux_env: Termux) -> None:
    done = termux_env.sh(TERMUX / "install.sh", FAKE_GRPCIO_VERSION="1.80.0")
    assert done.returncode == 1, done
    assert "pkg's grpcio is 1.80.0, but phoneuse-runtime needs 1.81.1 or newer" in done.stderr
    assert not any(c.startswith("pip ") for c in termux_env.called())
    assert not (termux_env.prefix / "var" / "service").exists()


def test_install_stops_when_grpcio_is_missing(termux_env: Termux) -> None:
    done = termux_env.sh(TERMUX / "install.sh", FAKE_GRPCIO_VERSION="none")
    assert done.returncode == 1 and "pkg install python-grpcio" in done.stderr, done


def test_install_outside_termux_changes_nothing(termux_env: Termux, tmp_path: Path) -> None:
    env = termux_env.env()
    del env["PREFIX"]
    done = subprocess.run(
        ["sh", str(TERMUX / "install.sh")], env=env, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 1 and "run this inside Termux" in done.stderr, done
    assert termux_env.called() == []


def test_install_script_wants_the_grpcio_pyproject_wants() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    wanted = re.search(r'"grpcio>=([0-9.]+)"', pyproject)
    script = re.search(r"^GRPCIO_MIN=([0-9.]+)", (TERMUX / "install.sh").read_text(encoding="utf-8"), re.M)
    assert wanted and script and wanted.group(1) == script.group(1)


def test_the_installed_run_script_execs_serve_on_termux_with_stderr_logged(termux_env: Termux) -> None:
    assert termux_env.sh(TERMUX / "install.sh").returncode == 0
    service = termux_env.prefix / "var" / "service" / SERVICE
    done = termux_env.sh(service / "run")
    assert done.returncode == 0, done.stderr
    assert termux_env.called()[-1] == "phoneuse-runtime serve --device termux"
    log = termux_env.sh(service / "log" / "run")
    log_dir = termux_env.prefix / "var" / "log" / "sv" / SERVICE
    assert log.returncode == 0 and termux_env.called()[-1] == f"svlogd -tt {log_dir}", log
    assert log_dir.is_dir()


def test_the_boot_script_takes_the_wake_lock_then_starts_the_services(termux_env: Termux) -> None:
    assert termux_env.sh(TERMUX / "install.sh").returncode == 0
    before = len(termux_env.called())
    done = termux_env.sh(termux_env.home / ".termux" / "boot" / "start-phoneuse-runtime")
    assert done.returncode == 0, done.stderr
    assert termux_env.called()[before:] == [
        "termux-wake-lock ",
        f"start-services SVDIR={termux_env.prefix}/var/service",
    ]


def test_the_scripts_are_plain_sh() -> None:
    for script in (
        TERMUX / "install.sh",
        TERMUX / "service" / SERVICE / "run",
        TERMUX / "service" / SERVICE / "log" / "run",
        TERMUX / "boot" / "start-phoneuse-runtime",
    ):
        assert subprocess.run(["sh", "-n", str(script)], capture_output=True, timeout=10).returncode == 0
        assert os.access(script, os.X_OK)
