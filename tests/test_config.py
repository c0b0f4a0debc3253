"""Settings precedence: flags over PHONEUSE_* environment over the TOML file over defaults."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from phoneuse_runtime.config.settings import ConfigError, Settings, _apply, _coerce, load_settings

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


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


FALSE_WORDS = ["false", "False", "0", "no", "off", " OFF "]
TRUE_WORDS = ["true", "TRUE", "1", "yes", "on"]


@pytest.mark.parametrize("word", FALSE_WORDS)
def test_an_environment_boolean_can_say_false(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, word: str
) -> None:
    (tmp_path / "config.toml").write_text("allow_shell = true\n")  # so that False is the env's doing
    monkeypatch.setenv("PHONEUSE_ALLOW_SHELL", word)
    assert load_settings({"data_dir": tmp_path}).allow_shell is False


@pytest.mark.parametrize("word", TRUE_WORDS)
def test_an_environment_boolean_can_say_true(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, word: str
) -> None:
    monkeypatch.setenv("PHONEUSE_ALLOW_SHELL", word)
    assert load_settings({"data_dir": tmp_path}).allow_shell is True


@pytest.mark.parametrize("value", ["false", '"false"', '"0"', '"no"', '"off"', "0"])
def test_a_toml_boolean_can_say_false(tmp_path: Path, value: str) -> None:
    (tmp_path / "config.toml").write_text(f"allow_shell = {value}\n")
    assert load_settings({"data_dir": tmp_path}).allow_shell is False
    # The default is False too: the same value over a True must win as well.
    on = Settings(allow_shell=True)
    assert _apply(on, tomllib.loads(f"allow_shell = {value}\n"), "config.toml").allow_shell is False


@pytest.mark.parametrize("value", ["true", '"true"', '"1"', "1"])
def test_a_toml_boolean_can_say_true(tmp_path: Path, value: str) -> None:
    (tmp_path / "config.toml").write_text(f"allow_shell = {value}\n")
    assert load_settings({"data_dir": tmp_path}).allow_shell is True


def test_coerce_keeps_a_toml_bool_as_it_is() -> None:
    assert _coerce("allow_shell", False, True) is False
    assert _coerce("allow_shell", True, False) is True


@pytest.mark.parametrize("word", ["ture", "maybe"])
def test_a_boolean_that_is_neither_is_a_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, word: str
) -> None:
    monkeypatch.setenv("PHONEUSE_ALLOW_SHELL", word)
    with pytest.raises(ConfigError, match="allow_shell"):
        load_settings({"data_dir": tmp_path})


def test_a_config_file_that_is_not_utf8_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_bytes(b'url_schemes = ["\xff\xfe"]\n')
    with pytest.raises(ConfigError, match=r"config\.toml: 'utf-8' codec can't decode byte 0xff"):
        load_settings({"data_dir": tmp_path})
