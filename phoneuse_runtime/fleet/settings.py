"""The fleet's settings: command-line flags over PHONEUSE_FLEET_* environment over the fleet's
TOML (or JSON) config file over defaults, as config.py does for `serve`.

The file is `fleet.toml` in the fleet data dir unless `--config` names one:

    listen = "127.0.0.1:50050"     # the door
    sim = 2                        # simulated phones: sim-1 ... sim-N
    adb = true                     # follow the devices the adb server lists
    adb_server = "127.0.0.1:5037"
    gateway = false                # the members' Iris gateways (each on a port of its own)
    nats_url = ""                  # "" = the fleet runs nats-server itself (with a token of its own)
    nats_token_file = ""           # with nats_url: a file holding the token that server asks for

    [[phones]]                     # a runtime running elsewhere (Termux on the phone), by address
    serial = "pixel-7"
    address = "192.168.1.5:50051"

The fleet re-reads the file on SIGHUP: phones listed there join or leave at once, and so do
simulated phones as `sim` says, unless `--sim` (or PHONEUSE_FLEET_SIM) set their number.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from phoneuse_runtime.config.settings import coerce_bool, data_dir_from_env

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

CONFIG_FILE = "fleet.toml"
DEFAULT_LISTEN = "127.0.0.1:50050"


class FleetConfigError(Exception):
    """A fleet setting has a value the fleet cannot use."""


def default_fleet_dir() -> Path:
    return data_dir_from_env("PHONEUSE_FLEET_DIR", "phoneuse-fleet")


@dataclass(frozen=True)
class RemotePhone:
    """A phone whose runtime runs elsewhere (Termux on the phone) and joins by its address."""

    serial: str
    address: str


@dataclass(frozen=True)
class FleetSettings:
    data_dir: Path = field(default_factory=default_fleet_dir)
    listen: str = DEFAULT_LISTEN
    sim: int = 0
    adb: bool = True
    adb_server: str = ""
    gateway: bool = False
    nats_url: str = ""
    nats_token_file: str = ""  # the token that NATS server asks for (with nats_url)
    nats: bool = True  # run nats-server when no nats_url is given
    phones: tuple[RemotePhone, ...] = ()
    config_file: Path | None = None
    # Settings that flags or the environment gave: a reload of the file does not change them.
    fixed: frozenset[str] = frozenset()


_SCALARS = {f.name for f in fields(FleetSettings)} - {"data_dir", "phones", "config_file", "fixed"}


def _coerce(name: str, value: Any, current: Any) -> Any:
    if isinstance(current, bool):
        return coerce_bool(value)
    if isinstance(current, int):
        number = int(value)
        if number < 0:
            raise ValueError(f"must be 0 or more, got {number}")
        return number
    return str(value)


def _phones(raw: Any, where: str) -> tuple[RemotePhone, ...]:
    if not isinstance(raw, list):
        raise FleetConfigError(f"{where}: phones must be a list of {{serial, address}} tables")
    out = []
    for i, entry in enumerate(raw):
        if not isinstance(entry, dict) or set(entry) != {"serial", "address"}:
            raise FleetConfigError(f"{where}: phones[{i}] must have exactly serial and address")
        serial, address = str(entry["serial"]), str(entry["address"])
        if not serial or ":" not in address:
            raise FleetConfigError(f"{where}: phones[{i}] needs a serial and an address HOST:PORT")
        out.append(RemotePhone(serial, address))
    return tuple(out)


def _apply(settings: FleetSettings, values: dict[str, Any], where: str) -> FleetSettings:
    changes: dict[str, Any] = {}
    for name, value in values.items():
        if value is None:
            continue
        if name == "phones":
            changes["phones"] = _phones(value, where)
            continue
        if name not in _SCALARS:
            known = ", ".join(sorted(_SCALARS | {"phones"}))
            raise FleetConfigError(f"{where}: unknown setting {name!r}; known: {known}")
        try:
            changes[name] = _coerce(name, value, getattr(settings, name))
        except (TypeError, ValueError) as exc:
            raise FleetConfigError(f"{where}: bad value for {name}: {exc}") from exc
    return replace(settings, **changes)


def read_file(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
        table: Any = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except (OSError, UnicodeDecodeError, ValueError) as exc:  # TOMLDecodeError is a ValueError
        raise FleetConfigError(f"{path}: {exc}") from exc
    if not isinstance(table, dict):
        raise FleetConfigError(f"{path}: expected a table of settings")
    return table


def load_fleet_settings(flags: dict[str, Any], *, config_file: Path | None = None) -> FleetSettings:
    """Flags (None = not given) over PHONEUSE_FLEET_<NAME> over the file over defaults."""
    settings = FleetSettings()
    if flags.get("data_dir"):
        settings = replace(settings, data_dir=Path(flags["data_dir"]).expanduser())
    path = config_file or settings.data_dir / CONFIG_FILE
    if path.is_file():
        settings = _apply(settings, read_file(path), str(path))
    elif config_file is not None:
        raise FleetConfigError(f"config file {config_file} does not exist")
    env = {
        name: os.environ[f"PHONEUSE_FLEET_{name.upper()}"]
        for name in _SCALARS
        if f"PHONEUSE_FLEET_{name.upper()}" in os.environ
    }
    settings = _apply(settings, env, "environment")
    given = {k: v for k, v in flags.items() if k != "data_dir" and v is not None}
    settings = _apply(settings, given, "flags")
    return replace(settings, config_file=path, fixed=frozenset(env) | frozenset(given))


@dataclass(frozen=True)
class Reloaded:
    """What a reload of the config file (SIGHUP) changes: the phones it lists, and the number
    of simulated phones unless a flag or the environment set it (None then)."""

    phones: tuple[RemotePhone, ...]
    sim: int | None


def reload_file(settings: FleetSettings) -> Reloaded:
    path = settings.config_file
    table = read_file(path) if path is not None and path.is_file() else {}
    where = str(path)
    sim = None
    if "sim" not in settings.fixed:
        try:
            sim = _coerce("sim", table.get("sim", 0), 0)
        except (TypeError, ValueError) as exc:
            raise FleetConfigError(f"{where}: bad value for sim: {exc}") from exc
    return Reloaded(_phones(table.get("phones", []), where), sim)
