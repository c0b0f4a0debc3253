"""DEVICE_STATUS (issue 27): the phone's battery, screen, network, storage, memory, uptime and
identity, as this phone can say them: a field it cannot say is null, never made up."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from phoneuse_runtime.kernel.params import Params
from phoneuse_runtime.kernel.registry import ActionContext, ActionResult, ActionSpec


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


class BatteryPart(_Part):
    level: int | None = Field(description="percent")
    charging: bool | None = Field(description="status is charging or full, as Android reads it")
    status: Literal["charging", "discharging", "not_charging", "full", "unknown"] | None
    plugged: Literal["ac", "usb", "wireless", "dock", "none"] | None = Field(
        description="what powers it: none on battery"
    )
    temperature_c: float | None = Field(description="degrees Celsius")


class ScreenPart(_Part):
    on: bool | None = Field(description="awake (or dreaming); false asleep or dozing")
    locked: bool | None = Field(description="the lock screen (keyguard) shows")


class NetworkPart(_Part):
    wifi_enabled: bool | None
    wifi_connected: bool | None
    wifi_ssid: str | None = Field(description="the network Wi-Fi is connected to")
    mobile_data: bool | None = Field(description="the mobile data setting")
    airplane_mode: bool | None
    bluetooth_enabled: bool | None


class SpacePart(_Part):
    free_bytes: int | None = Field(description="storage: free space on /data; memory: MemAvailable")
    total_bytes: int | None


class DeviceStatusParams(Params):
    pass


class DeviceStatusResult(ActionResult):
    battery: BatteryPart
    screen: ScreenPart
    network: NetworkPart
    storage: SpacePart = Field(description="where apps and their files live (/data)")
    memory: SpacePart
    uptime_s: float | None = Field(description="seconds since the phone booted")
    model: str | None
    android_version: str | None
    sdk: int | None


async def device_status(ctx: ActionContext, p: DeviceStatusParams) -> DeviceStatusResult:
    s = await ctx.device.status()
    # Android's own reading of ACTION_BATTERY_CHANGED ("Monitor the battery level and charging
    # state"): charging is status CHARGING or FULL.
    charging = None
    if s.battery_status is not None and s.battery_status != "unknown":
        charging = s.battery_status in ("charging", "full")
    return DeviceStatusResult(
        battery=BatteryPart(
            level=s.battery_level,
            charging=charging,
            status=s.battery_status,
            plugged=s.plugged,
            temperature_c=s.battery_temperature_c,
        ),
        screen=ScreenPart(on=s.screen_on, locked=s.locked),
        network=NetworkPart(
            wifi_enabled=s.wifi_enabled,
            wifi_connected=s.wifi_connected,
            wifi_ssid=s.wifi_ssid,
            mobile_data=s.mobile_data,
            airplane_mode=s.airplane_mode,
            bluetooth_enabled=s.bluetooth_enabled,
        ),
        storage=SpacePart(free_bytes=s.storage_free_bytes, total_bytes=s.storage_total_bytes),
        memory=SpacePart(free_bytes=s.memory_available_bytes, total_bytes=s.memory_total_bytes),
        uptime_s=s.uptime_s,
        model=s.model,
        android_version=s.android_version,
        sdk=s.sdk,
        via=s.via,
    )


ACTIONS = (
    ActionSpec(
        "DEVICE_STATUS",
        DeviceStatusParams,
        device_status,
        DeviceStatusResult,
        "Read the phone's battery, screen, network, storage, memory, uptime and identity",
        notes="Reads only. Each field is null where this phone (or this backend) cannot say it. On "
        "adb one shell stream reads it all (dumpsys battery, power and window policy, cmd wifi "
        "status, settings get global, df /data, /proc/meminfo, /proc/uptime); on Termux without its "
        "own adb, Termux:API's battery and Wi-Fi connection and the phone's /proc, the screen and "
        "the radios' settings null.",
        exclusive=False,  # it only reads; no finger on the phone
        reads_only=True,
    ),
)
