"""Settings precedence: flags over PHONEUSE_* environment over the TOML file over defaults."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from phoneuse_runtime.config.layers import coerce, load_layers
from phoneuse_runtime.config.settings import ConfigError, Settings, load_settings

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
    with pytest.raises(ConfigError, match=r"allow_shel \(.*config\.toml\): unknown setting; known: "):
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


@pytest.mark.parametrize("name", ["event_queue_bytes", "idempotency_max_bytes"])
def test_a_byte_budget_of_0_is_refused_at_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.setenv(f"PHONEUSE_{name.upper()}", "0")
    with pytest.raises(ConfigError, match=f"{name} \\(environment\\): must be greater than 0, got 0"):
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
    table = ("config.toml", tomllib.loads(f"allow_shell = {value}\n"))
    loaded = load_layers(Settings, base=on, prefix="PHONEUSE_", flags={}, file=table, environ={})
    assert loaded.value.allow_shell is False


@pytest.mark.parametrize("value", ["true", '"true"', '"1"', "1"])
def test_a_toml_boolean_can_say_true(tmp_path: Path, value: str) -> None:
    (tmp_path / "config.toml").write_text(f"allow_shell = {value}\n")
    assert load_settings({"data_dir": tmp_path}).allow_shell is True


def test_coerce_keeps_a_toml_bool_as_it_is() -> None:
    assert coerce(False, bool) is False
    assert coerce(True, bool) is True


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


def test_every_bad_value_is_found_at_once_with_where_it_came_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "config.toml").write_text('ntfy_url = "ftp://push.example"\n[memory]\nretention_days = -3\n')
    monkeypatch.setenv("PHONEUSE_APPROVALS", "sometimes")
    monkeypatch.setenv("PHONEUSE_EVENT_QUEUE_SIZE", "lots")
    flags = {"data_dir": tmp_path, "poll_ms": 0, "grpc_listen": "nowhere", "query_max_limit": -1}
    with pytest.raises(ConfigError) as caught:
        load_settings(flags)
    lines = str(caught.value).splitlines()
    assert lines[0] == "7 settings are bad:"
    config = str(tmp_path / "config.toml")
    assert sorted(line.strip() for line in lines[1:]) == sorted(
        [
            "event_queue_size (environment): bad value: expected a whole number, got 'lots'",
            "poll_ms (flag): must be greater than 0, got 0",
            "query_max_limit (flag): must be greater than 0, got -1",
            f"memory_retention_days ({config}): must be 0 or more, got -3",
            "grpc_listen (flag): must be HOST:PORT (a port 0 to 65535), got 'nowhere'",
            f"ntfy_url ({config}): must be an http:// or https:// URL, got 'ftp://push.example'",
            "approvals (environment): must be one of always, paired, off, got 'sometimes'",
        ]
    )


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ({"poll_ms": -5}, r"poll_ms \(flag\): must be greater than 0, got -5"),
        ({"device": "termux", "poll_ms": 10}, r"poll_ms \(flag\): must be at least 50 on termux, got 10"),
        ({"gateway_chat_max_bytes": 0}, r"gateway_chat_max_bytes \(flag\): must be greater than 0"),
        ({"gateway_chat_retention_days": -1}, r"gateway_chat_retention_days \(flag\): must be 0 or more"),
        ({"gateway_listen": "127.0.0.1:99999"}, r"gateway_listen \(flag\): must be HOST:PORT"),
        ({"mcp_listen": ":8080"}, r"mcp_listen \(flag\): must be HOST:PORT"),
        ({"nats_buffer_events": 0}, r"nats_buffer_events \(flag\): must be greater than 0"),
    ],
)
def test_values_found_late_before_are_found_when_loading(
    tmp_path: Path, flags: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        load_settings({"data_dir": tmp_path, **flags})


def test_an_address_that_is_not_used_is_not_checked(tmp_path: Path) -> None:
    settings = load_settings({"data_dir": tmp_path, "gateway": False, "gateway_listen": "bad"})
    assert settings.gateway_listen == "bad"  # the gateway is off: its address is not used
    assert load_settings({"data_dir": tmp_path, "mcp_listen": ""}).mcp_listen == ""


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PHONEUSE_")}
    env.update(PHONEUSE_APPROVALS="sometimes", PHONEUSE_MEMORY_RETENTION_DAYS="-1")
    (tmp_path / "config.toml").write_text('ntfy_url = "file:///etc/passwd"\npoll_ms = 0\n')
    return subprocess.run(
        [sys.executable, "-m", "phoneuse_runtime", *args, "--data-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


@pytest.mark.parametrize("command", ["serve", "doctor"])
def test_serve_and_doctor_report_every_bad_value_before_anything_starts(tmp_path: Path, command: str) -> None:
    done = _cli(tmp_path, command)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("phoneuse-runtime: 4 settings are bad:\n")
    for name in ("approvals (environment)", "memory_retention_days (environment)", "ntfy_url (", "poll_ms ("):
        assert name in done.stderr
    assert not (tmp_path / "token").exists()  # nothing was started or made
