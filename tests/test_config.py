"""Settings precedence: flags over PHONEUSE_* environment over the TOML file over defaults."""

from __future__ import annotations

from pathlib import Path

import pytest

from phoneuse_runtime.config import ConfigError, load_settings


def test_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "config.toml").write_text(
        'device = "sim"\nallow_shell = true\n'
        'deny_actions = ["SHELL", "MAKE_CALL"]\ngrpc_listen = "127.0.0.1:1"\n'
    )
    monkeypatch.setenv("PHONEUSE_GRPC_LISTEN", "127.0.0.1:2")
    monkeypatch.setenv("PHONEUSE_URL_SCHEMES", "https,geo")
    settings = load_settings({"data_dir": tmp_path, "grpc_listen": None, "allow_shell": None})
    assert settings.allow_shell is True
    assert settings.deny_actions == frozenset({"SHELL", "MAKE_CALL"})
    assert settings.grpc_listen == "127.0.0.1:2"
    assert settings.url_schemes == frozenset({"https", "geo"})
    flagged = load_settings({"data_dir": tmp_path, "grpc_listen": "127.0.0.1:3"})
    assert flagged.grpc_listen == "127.0.0.1:3"


def test_unknown_setting_is_named(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("allow_shel = true\n")
    with pytest.raises(ConfigError, match="unknown setting 'allow_shel'"):
        load_settings({"data_dir": tmp_path})


def test_bad_toml_and_missing_file(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("allow_shell = = true\n")
    with pytest.raises(ConfigError, match=r"config\.toml"):
        load_settings({"data_dir": tmp_path})
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings({"data_dir": tmp_path}, config_file=tmp_path / "nope.toml")


def test_bad_value_is_a_config_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PHONEUSE_EVENT_QUEUE_SIZE", "lots")
    with pytest.raises(ConfigError, match="event_queue_size"):
        load_settings({"data_dir": tmp_path})
