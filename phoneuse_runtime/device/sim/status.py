"""The simulated phone's status (DEVICE_STATUS, issue 27): a battery a scenario sets
(SIM_SET_BATTERY), the radios from the sim's state, and fixed storage and memory figures.
The sim has no sleep or lock screen: its screen is on and unlocked."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from phoneuse_runtime.device.base import BatteryStatus, DeviceInfo, DeviceStatus, Plugged
from phoneuse_runtime.device.sim.state import SimState

SSID = "SimNet"  # the network the sim's Wi-Fi is connected to while it is on
STORAGE_TOTAL = 128 * 1024**3
STORAGE_FREE = 81 * 1024**3
MEMORY_TOTAL = 8 * 1024**3
MEMORY_AVAILABLE = 3 * 1024**3 + 512 * 1024**2


@dataclass
class SimBattery:
    """The sim's battery: not in the state file (the world sets it, not the agent)."""

    level: int = 76
    plugged: Plugged = "none"
    temperature_c: float = 29.5
    booted: float = field(default_factory=time.monotonic)

    @property
    def status(self) -> BatteryStatus:
        if self.plugged == "none":
            return "discharging"
        return "full" if self.level >= 100 else "charging"


def sim_status(state: SimState, battery: SimBattery, info: DeviceInfo) -> DeviceStatus:
    wifi = state.wifi_enabled
    return DeviceStatus(
        battery_level=battery.level,
        battery_status=battery.status,
        plugged=battery.plugged,
        battery_temperature_c=battery.temperature_c,
        screen_on=True,
        locked=False,
        wifi_enabled=wifi,
        wifi_connected=wifi,
        wifi_ssid=SSID if wifi else None,
        mobile_data=True,
        airplane_mode=state.airplane_mode,
        bluetooth_enabled=False,
        storage_free_bytes=STORAGE_FREE,
        storage_total_bytes=STORAGE_TOTAL,
        memory_available_bytes=MEMORY_AVAILABLE,
        memory_total_bytes=MEMORY_TOTAL,
        uptime_s=round(time.monotonic() - battery.booted, 3),
        model=info.model,
        android_version=info.android_version,
        sdk=info.sdk,
        via="sim",
    )
