"""The fleet's settings: command-line flags over PHONEUSE_FLEET_* environment over the fleet's
TOML (or JSON) config file over defaults, by the loader `serve`'s settings use (config/layers.py);
the `phones` table is the fleet's own, read here.

The file is `fleet.toml` in the fleet data dir unless `--config` names one:

    listen = "127.0.0.1:50050"     # the door
    sim = 2                        # simulated phones: sim-1 ... sim-N
    adb = true                     # follow the devices the adb server lists
    adb_server = "127.0.0.1:5037"
    gateway = false                # the members' Iris gateways (each on a port of its own)
    nats_url = ""                  # "" = the fleet runs nats-server itself (a user per party)
    nats_token_file = ""           # with nats_url: a file holding the token that server asks for
    nats_stream_max_age_s = 604800 # the events stream's bounds, set on the nats-server it runs
    nats_stream_max_bytes = 1073741824

    [[phones]]                     # a runtime running elsewhere (Termux on the phone), by address
    serial = "pixel-7"
    address = "192.168.1.5:50051"

The fleet re-reads the file on SIGHUP: phones listed there join or leave at once, and so do
simulated phones as `sim` says, unless `--sim` (or PHONEUSE_FLEET_SIM) set their number.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from phoneuse_runtime.config.errors import ConfigError
from phoneuse_runtime.config.layers import FileProblem, load_layers
from phoneuse_runtime.config.layers import read_table as read_layer_table
from phoneuse_runtime.config.sections import number_problem, stream_bound_problems
from phoneuse_runtime.config.settings import Settings, data_dir_from_env
from phoneuse_runtime.fleet.door import address_problem
from phoneuse_runtime.util.device_names import serial_problem

CONFIG_FILE = "fleet.toml"
DEFAULT_LISTEN = "127.0.0.1:50050"


class FleetConfigError(ConfigError):
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
    # The events stream's bounds, which the fleet sets on the nats-server it runs (as serve's).
    nats_stream_max_age_s: int = Settings.nats_stream_max_age_s
    nats_stream_max_bytes: int = Settings.nats_stream_max_bytes
    phones: tuple[RemotePhone, ...] = ()
    config_file: Path | None = None
    # Settings that flags or the environment gave: a reload of the file does not change them.
    fixed: frozenset[str] = frozenset()


_SCALARS = frozenset(f.name for f in fields(FleetSettings)) - {"data_dir", "phones", "config_file", "fixed"}
_COUNTS = ("sim",)  # numbers that may be 0, never below


def _phones(raw: Any, where: str) -> tuple[RemotePhone, ...]:
    if not isinstance(raw, list):
        raise FleetConfigError(f"phones ({where}): must be a list of {{serial, address}} tables")
    out = []
    for i, entry in enumerate(raw):
        if not isinstance(entry, dict) or set(entry) != {"serial", "address"}:
            raise FleetConfigError(f"phones[{i}] ({where}): must have exactly serial and address")
        serial, address = str(entry["serial"]), str(entry["address"])
        if not serial or ":" not in address:
            raise FleetConfigError(f"phones[{i}] ({where}): needs a serial and an address HOST:PORT")
        problem = serial_problem(serial) or address_problem(address)
        if problem:
            raise FleetConfigError(f"phones[{i}] ({where}): {problem}")
        out.append(RemotePhone(serial, address))
    return tuple(out)


def read_file(path: Path) -> dict[str, Any]:
    try:
        return read_layer_table(path)
    except FileProblem as exc:
        raise FleetConfigError(str(exc)) from exc


def _count_problems(settings: FleetSettings) -> list[tuple[str, str]]:
    return [
        (name, f"must be 0 or more, got {getattr(settings, name)}")
        for name in _COUNTS
        if getattr(settings, name) < 0
    ]


def _stream_problems(settings: FleetSettings) -> list[tuple[str, str]]:
    """The stream's bounds, checked as serve's are (config/sections.py)."""
    found = [
        (name, number_problem(name, getattr(settings, name)))
        for name in ("nats_stream_max_age_s", "nats_stream_max_bytes")
    ]
    found += stream_bound_problems(settings.nats_stream_max_age_s, settings.nats_stream_max_bytes)
    return [(name, what) for name, what in found if what]


def _nats_problems(settings: FleetSettings) -> list[tuple[str, str]]:
    """A NATS server named by url needs nats-py to be reached: said before anything starts (a
    fleet that runs its own nats-server goes on without NATS instead, fleet.py)."""
    from phoneuse_runtime.util.extras import nats_py_problem

    problem = nats_py_problem() if settings.nats_url else None
    return [("nats_url", problem)] if problem else []


def load_fleet_settings(flags: dict[str, Any], *, config_file: Path | None = None) -> FleetSettings:
    """Flags (None = not given) over PHONEUSE_FLEET_<NAME> over the file over defaults; one
    FleetConfigError lists every problem ("setting (where from): what is wrong")."""
    base = FleetSettings()
    if flags.get("data_dir"):
        base = replace(base, data_dir=Path(flags["data_dir"]).expanduser())
    path = config_file or base.data_dir / CONFIG_FILE
    file = None
    if path.is_file():
        table = read_file(path)
        if "phones" in table:
            base = replace(base, phones=_phones(table["phones"], str(path)))
        file = (str(path), table)
    elif config_file is not None:
        raise FleetConfigError(f"config file {config_file} does not exist")
    loaded = load_layers(
        FleetSettings,
        base=base,
        prefix="PHONEUSE_FLEET_",
        flags={k: v for k, v in flags.items() if k != "data_dir"},
        file=file,
        names=_SCALARS,
        own=("phones",),
    )
    checks = _count_problems(loaded.value) + _stream_problems(loaded.value) + _nats_problems(loaded.value)
    loaded.raise_problems(checks, FleetConfigError, "fleet settings")
    fixed = loaded.given("flag", "environment")
    return replace(loaded.value, config_file=path, fixed=fixed)


@dataclass(frozen=True)
class Reloaded:
    """What a reload of the config file (SIGHUP) changes: the phones it lists, and the number
    of simulated phones unless a flag or the environment set it (None then)."""

    phones: tuple[RemotePhone, ...]
    sim: int | None


def reload_file(settings: FleetSettings) -> Reloaded:
    """The file's phones and `sim` (unless fixed) as `load_fleet_settings` reads them; the
    file's other settings are read at start only."""
    path = settings.config_file
    table = read_file(path) if path is not None and path.is_file() else {}
    where = str(path)
    phones = _phones(table.get("phones", []), where)
    if "sim" in settings.fixed:
        return Reloaded(phones, None)
    loaded = load_layers(
        FleetSettings,
        base=FleetSettings(data_dir=settings.data_dir),
        prefix="PHONEUSE_FLEET_",
        flags={},
        file=(where, {"sim": table.get("sim", 0)}),
        names=("sim",),
        environ={},
    )
    loaded.raise_problems(_count_problems(loaded.value), FleetConfigError, "fleet settings")
    return Reloaded(phones, loaded.value.sim)
