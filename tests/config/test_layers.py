"""The one layered loader (config/layers.py): precedence, origins, coercion by type, and every
problem at once; used by `serve`'s settings and the fleet's alike."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from phoneuse_runtime.config.layers import coerce, load_layers
from phoneuse_runtime.config.settings import ConfigError, load_settings
from phoneuse_runtime.fleet.settings import FleetConfigError, load_fleet_settings


@dataclass(frozen=True)
class Record:
    switch: bool = False
    count: int = 1
    seconds: float = 1.0
    name: str = "a"
    path: Path = Path("/x")
    maybe: Path | None = None
    names: frozenset[str] = frozenset()


def _load(flags: dict[str, Any], file: dict[str, Any] | None, environ: dict[str, str]) -> Any:
    return load_layers(
        Record,
        base=Record(),
        prefix="T_",
        flags=flags,
        file=("f.toml", file) if file is not None else None,
        environ=environ,
    )


def test_flags_over_environment_over_file_over_defaults_with_origins() -> None:
    loaded = _load(
        {"count": 4, "name": None},
        {"count": 2, "name": "file", "seconds": 2.5},
        {"T_COUNT": "3", "T_SWITCH": "yes"},
    )
    assert loaded.value == Record(switch=True, count=4, seconds=2.5, name="file")
    assert loaded.origins == {"count": "flag", "name": "f.toml", "seconds": "f.toml", "switch": "environment"}
    assert loaded.origin("path") == "default"
    assert loaded.given("flag", "environment") == {"count", "switch"}
    assert loaded.problems == []


def test_every_problem_is_collected_with_setting_and_origin() -> None:
    loaded = _load({"count": "x", "nope": 1}, {"seconds": "slow", "other": 2}, {"T_SWITCH": "maybe"})
    assert loaded.problems == [
        "seconds (f.toml): bad value: expected a number, got 'slow'",
        "other (f.toml): unknown setting; known: count, maybe, name, names, path, seconds, switch",
        "switch (environment): bad value: expected true or false, got 'maybe'",
        "count (flag): bad value: expected a whole number, got 'x'",
        "nope (flag): unknown setting; known: count, maybe, name, names, path, seconds, switch",
    ]


@pytest.mark.parametrize(
    ("value", "kind", "expected"),
    [
        ("on", bool, True),
        (False, bool, False),
        ("12", int, 12),
        (3.0, int, 3),
        ("0.5", float, 0.5),
        (7, float, 7.0),
        (5, str, "5"),
        ("~/x", Path, Path.home() / "x"),
        ("", Path | None, None),
        ("/y", Path | None, Path("/y")),
        ("a, b,,c", frozenset[str], frozenset({"a", "b", "c"})),
        (["a", " b "], frozenset[str], frozenset({"a", "b"})),
        ("", str | None, None),
    ],
)
def test_coercion_by_type(value: Any, kind: Any, expected: Any) -> None:
    assert coerce(value, kind) == expected


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ("maybe", bool),
        (True, int),
        (1.5, int),
        ("ten", int),
        ([1], int),
        (False, float),
        ("fast", float),
        ({"a": 1}, str),
        ("", Path),
        (3, Path),
        (5, frozenset[str]),
        ([["a"]], frozenset[str]),
    ],
)
def test_unreadable_values_are_refused(value: Any, kind: Any) -> None:
    with pytest.raises((TypeError, ValueError)):
        coerce(value, kind)


def test_serve_settings_record_where_a_bad_value_came_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "config.toml").write_text('adb_server = "nowhere:port"\n')
    monkeypatch.setenv("PHONEUSE_SELF_ADB", "sometimes")
    with pytest.raises(ConfigError) as caught:
        load_settings({"data_dir": tmp_path, "memory_default_region": "Atlantis"})
    config = tmp_path / "config.toml"
    lines = sorted(line.strip() for line in str(caught.value).splitlines()[1:])
    assert lines == sorted(
        [
            f"adb_server ({config}): must be HOST:PORT or PORT, got 'nowhere:port'",
            "self_adb (environment): must be auto, off, PORT or HOST:PORT, got 'sometimes'",
            "memory_default_region (flag): must be a two-letter region such as US, GB or FR, got 'Atlantis'",
        ]
    )


@pytest.mark.parametrize(
    ("value", "ok"), [("5037", True), ("10.0.0.2:5555", True), ("adb", False), (":0", False)]
)
def test_adb_server_is_checked_at_load(tmp_path: Path, value: str, ok: bool) -> None:
    if ok:
        assert load_settings({"data_dir": tmp_path, "adb_server": value}).adb_server == value
    else:
        with pytest.raises(ConfigError, match=r"adb_server \(flag\): must be HOST:PORT or PORT"):
            load_settings({"data_dir": tmp_path, "adb_server": value})


@pytest.mark.parametrize(
    ("value", "ok"), [("auto", True), ("off", True), ("5555", True), ("h:1", True), ("x", False)]
)
def test_self_adb_is_checked_at_load(tmp_path: Path, value: str, ok: bool) -> None:
    if ok:
        assert load_settings({"data_dir": tmp_path, "self_adb": value}).self_adb == value
    else:
        with pytest.raises(ConfigError, match=r"self_adb \(flag\): must be auto, off, PORT or HOST:PORT"):
            load_settings({"data_dir": tmp_path, "self_adb": value})


def test_doctor_exits_2_naming_a_bad_self_adb_and_region(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('self_adb = "nope"\n[memory]\ndefault_region = "XX1"\n')
    done = subprocess.run(
        [sys.executable, "-m", "phoneuse_runtime", "doctor", "--data-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "self_adb (" in done.stderr and "memory_default_region (" in done.stderr


def test_the_fleet_uses_the_same_loader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "fleet.toml"
    config.write_text(
        'sim = -1\nlisten = "127.0.0.1:1"\ngateway = "perhaps"\n[[phones]]\nserial = "p"\naddress = "h:1"\n'
    )
    with pytest.raises(FleetConfigError) as caught:
        load_fleet_settings({"data_dir": tmp_path}, config_file=config)
    assert isinstance(caught.value, ConfigError)
    assert sorted(line.strip() for line in str(caught.value).splitlines()[1:]) == [
        f"gateway ({config}): bad value: expected true or false, got 'perhaps'",
        f"sim ({config}): must be 0 or more, got -1",
    ]
    config.write_text('sim = 2\nlisten = "127.0.0.1:1"\n[[phones]]\nserial = "p"\naddress = "h:1"\n')
    monkeypatch.setenv("PHONEUSE_FLEET_LISTEN", "127.0.0.1:2")
    settings = load_fleet_settings({"data_dir": tmp_path, "sim": 3}, config_file=config)
    assert (settings.sim, settings.listen, len(settings.phones)) == (3, "127.0.0.1:2", 1)
    assert settings.fixed == {"sim", "listen"}


def test_events_reads_its_nats_settings_through_the_loader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from phoneuse_runtime.cli.main import main

    for name in ("PHONEUSE_NATS_URL", "PHONEUSE_NATS_TOKEN_FILE"):
        monkeypatch.delenv(name, raising=False)
    config = tmp_path / "config.toml"
    config.write_text('nats_url = "http://nats.example"\n')
    assert main(["events", "--data-dir", str(tmp_path)]) == 2
    assert f"nats_url ({config}): must be nats://HOST:PORT" in capsys.readouterr().err
    monkeypatch.setenv("PHONEUSE_NATS_URL", "nats://user:secret@h:4222")
    assert main(["events", "--data-dir", str(tmp_path)]) == 2
    assert "nats_url (environment): must be nats://HOST:PORT" in capsys.readouterr().err
    from phoneuse_runtime.util.extras import nats_py_problem

    missing = tmp_path / "no-token"
    args = ["events", "--data-dir", str(tmp_path), "--nats-url", "nats://127.0.0.1:1"]
    monkeypatch.setenv("PHONEUSE_NATS_TOKEN_FILE", str(missing))
    assert main(args) == 2
    said = capsys.readouterr().err
    assert (nats_py_problem() or str(missing)).replace("--nats-url", "events") in said  # the env's file
    config.write_text("")
    monkeypatch.delenv("PHONEUSE_NATS_URL")
    monkeypatch.delenv("PHONEUSE_NATS_TOKEN_FILE")
    assert main(["events", "--data-dir", str(tmp_path)]) == 2
    assert "events needs --nats-url" in capsys.readouterr().err
