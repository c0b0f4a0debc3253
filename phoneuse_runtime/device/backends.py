"""The table of backends: one row per device kind, with how its `--device` value parses, the
factory that makes its `Device` and its `doctor` checks. A new backend is its room under
`device/` and one row here.

Each row imports its room only when called, so that `--device sim` never imports adbutils. A
factory and the checks take the device section (`config/sections.DeviceSettings`, whose values
load_settings has checked). The settings do not check `device` itself: this table does, when
a command that runs a device loads them (`cli/options.device_settings`), before anything is made.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from phoneuse_runtime.config.sections import DeviceSettings
from phoneuse_runtime.config.settings import ConfigError, Settings
from phoneuse_runtime.device.base import Device
from phoneuse_runtime.util.checks import Check

BackendChecks = Callable[[DeviceSettings], Awaitable[list[Check]]]


@dataclass(frozen=True)
class Backend:
    """One device kind: `name`, then `:ARGUMENT` when `argument` names one (adb's serial)."""

    name: str
    make: Callable[[DeviceSettings], Device]  # of the `device` section (Settings.device_section)
    checks: BackendChecks | None = None
    argument: str = ""  # what follows `name:`, for the help text; "" = the kind takes none

    @property
    def usage(self) -> str:
        return f"{self.name}[:{self.argument}]" if self.argument else self.name


def _sim(settings: DeviceSettings) -> Device:
    from phoneuse_runtime.device.sim.device import SimDevice

    return SimDevice(state_file=settings.sim_state)


def _adb(settings: DeviceSettings) -> Device:
    from phoneuse_runtime.device.adb.device import AdbDevice

    return AdbDevice(
        device=settings.device,
        adb_server=settings.adb_server,
        poll_ms=settings.poll_ms,
        keep_awake=settings.keep_awake,
    )


async def _adb_checks(settings: DeviceSettings) -> list[Check]:
    from phoneuse_runtime.device.adb.doctor import checks

    return await checks(settings)


def _termux(settings: DeviceSettings) -> Device:
    from phoneuse_runtime.device.termux.device import TermuxDevice

    return TermuxDevice(
        self_adb=settings.self_adb,
        adb_server=settings.adb_server,
        poll_ms=settings.poll_ms,
        keep_awake=settings.keep_awake,
    )


async def _termux_checks(settings: DeviceSettings) -> list[Check]:
    from phoneuse_runtime.device.termux.doctor import checks

    return await checks(settings)


BACKENDS: tuple[Backend, ...] = (
    Backend("sim", _sim),
    Backend("adb", _adb, _adb_checks, argument="SERIAL"),
    Backend("termux", _termux, _termux_checks),
)

# "sim, adb[:SERIAL] or termux": every help text and the refusal say it from the table.
USAGE = ", ".join(b.usage for b in BACKENDS[:-1]) + f" or {BACKENDS[-1].usage}"


def find_backend(device: str) -> Backend | None:
    """The row `device` (a `--device` value: `KIND` or `KIND:ARGUMENT`) names, or None."""
    kind, _, argument = device.partition(":")
    for backend in BACKENDS:
        if backend.name == kind and (backend.argument or not argument):
            return backend
    return None


def backend_for(device: str) -> Backend:
    """The row `device` names; ConfigError, saying what would do, when none does."""
    backend = find_backend(device)
    if backend is None:
        raise ConfigError(f"unknown device {device!r}; use {USAGE}")
    return backend


def make_device(settings: Settings) -> Device:
    """The `Device` of `settings.device`, not yet started, made of the device section."""
    return backend_for(settings.device).make(settings.device_section)
