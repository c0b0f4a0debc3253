"""`doctor`: the data dir and token checks every device shares, in text and as JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from phoneuse_runtime.cli.main import main

pytestmark = pytest.mark.usefixtures("free_listen", "default_ports_taken")  # a `serve` may run beside


def _doctor(capsys: pytest.CaptureFixture[str], data_dir: Path, *extra: str) -> tuple[int, str]:
    code = main(["doctor", "--data-dir", str(data_dir), *extra])
    return code, capsys.readouterr().out


def test_a_fresh_machine_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _doctor(capsys, tmp_path / "new")
    assert code == 0
    assert "does not exist yet; `serve` creates it" in out
    assert "all needed checks passed" in out


def test_a_data_dir_others_may_write_fails_with_its_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data_dir = tmp_path / "shared"
    data_dir.mkdir()
    data_dir.chmod(0o777)
    code, out = _doctor(capsys, data_dir)
    assert code == 1
    assert "writable by others (mode 0777)" in out
    assert f"fix: chmod 700 {data_dir}" in out


def test_a_token_others_may_read_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tmp_path.chmod(0o700)
    token = tmp_path / "token"
    token.write_text("abc\n")
    token.chmod(0o644)
    code, out = _doctor(capsys, tmp_path)
    assert code == 1
    assert "readable by others (mode 0644)" in out and f"chmod 600 {token}" in out


def test_a_file_that_is_no_token_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tmp_path.chmod(0o700)
    (tmp_path / "token").write_bytes(b"\x00\x01binary")
    code, out = _doctor(capsys, tmp_path)
    assert code == 1
    assert "not a token" in out


def test_json_is_one_object_with_every_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tmp_path.chmod(0o700)
    token = tmp_path / "token"
    token.write_text("abc\n")
    token.chmod(0o600)
    code, out = _doctor(capsys, tmp_path, "--json")
    report = json.loads(out)
    assert code == 0 and report["ok"] is True and report["device"] == "sim"
    assert [c["name"] for c in report["checks"]] == [
        "data dir",
        "token",
        "listen (grpc)",
        "listen (gateway)",
        "approvals",
    ]
    assert all(c["status"] == "ok" for c in report["checks"])
    assert "abc" not in out  # the token itself is never printed
