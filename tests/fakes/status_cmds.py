"""What the fake phone answers to DEVICE_STATUS's reads (issue 27), in the formats of AOSP's own
sources: `dumpsys battery` (BatteryService.dumpInternal), `dumpsys window policy`
(PhoneWindowManager.dump: the KeyguardServiceDelegate block), `cmd wifi status`
(WifiShellCommand; Android 11+, older phones answer `Unknown command`) and toybox `df`; /proc is
procfs.py. The numbers come from `PhoneState.status`."""

from __future__ import annotations

from .shell import Proc
from .state import PhoneState
from .userland import command, print_canned, state_of

# WifiShellCommand's `status` (Android 11, R); its "==== Primary ClientModeManager" header from 12.
WIFI_STATUS_SDK = 30
CLIENT_MODE_HEADER_SDK = 31
TOYBOX_DF_SDK = 24  # toybox's df from Android 7; toolbox's before


def _human(kb: int) -> str:
    """toolbox df's size: K, M or G with one decimal."""
    for unit, size in (("G", 1 << 20), ("M", 1 << 10)):
        if kb >= size:
            return f"{kb / size:.1f}{unit}"
    return f"{kb}.0K"


def battery_dump(state: PhoneState) -> str:
    b = state.status
    lines = [
        "Current Battery Service state:",
        f"  AC powered: {str(b.plugged == 'ac').lower()}",
        f"  USB powered: {str(b.plugged == 'usb').lower()}",
        f"  Wireless powered: {str(b.plugged == 'wireless').lower()}",
    ]
    if state.sdk >= 33:
        lines.append(f"  Dock powered: {str(b.plugged == 'dock').lower()}")
    lines += [
        "  Max charging current: 500000",
        "  Max charging voltage: 5000000",
        "  Charge counter: 10000",
        f"  status: {b.battery_status}",
        "  health: 2",
        "  present: true",
        f"  level: {b.level}",
        "  scale: 100",
        "  voltage: 4200",
        f"  temperature: {b.temperature_tenths}",
        "  technology: Li-ion",
    ]
    return "\n".join(lines) + "\n"


def wifi_status(state: PhoneState) -> tuple[int, str]:
    """`cmd wifi status`: (exit code, what it prints)."""
    if state.sdk < WIFI_STATUS_SDK:
        return 255, "Unknown command: status\n"
    if state.setting("global", "wifi_on") in (None, "0"):
        return 0, "Wifi is disabled\nWifi scanning is only available when wifi is enabled\n"
    out = "Wifi is enabled\nWifi scanning is always available\n"
    if state.sdk >= CLIENT_MODE_HEADER_SDK:
        out += "==== Primary ClientModeManager instance ====\n"
    ssid = state.status.wifi_ssid
    if ssid is None:
        return 0, out + "Wifi is not connected\n"
    return 0, out + (
        f'Wifi is connected to "{ssid}"\n'
        f'WifiInfo: SSID: "{ssid}", BSSID: 02:00:00:00:00:00, MAC: 02:00:00:00:00:00, '
        "IP: /10.0.2.16, Security type: 2, Supplicant state: COMPLETED, Wi-Fi standard: 4, "
        "RSSI: -50, Link speed: 866Mbps, Frequency: 5180MHz\n"
    )


async def cmd_wifi(p: Proc, args: list[str]) -> int:
    state = state_of(p)
    if args[:1] == ["status"]:
        code, text = wifi_status(state)
        await (p.print(text) if code == 0 else p.error(text))
        return code
    await p.error(f"Unknown command: {args[0] if args else ''}\n")
    return 255


@command("df")
async def df(p: Proc) -> int:
    """toybox df (Android 7+): 1K-blocks, `/data` the userdata partition; before, toolbox's df:
    sizes with K/M/G suffixes, one decimal, and the block size."""
    if await print_canned(p):
        return 0
    state = state_of(p)
    s = state.status
    free = s.data_total_kb - s.data_used_kb
    if state.sdk < TOYBOX_DF_SDK:
        await p.print(
            "Filesystem               Size     Used     Free   Blksize\n"
            f"/data                 {_human(s.data_total_kb):>7}  {_human(s.data_used_kb):>7}  "
            f"{_human(free):>7}   4096\n"
        )
        return 0
    use = (s.data_used_kb * 100 + s.data_total_kb - 1) // s.data_total_kb
    await p.print(
        "Filesystem      1K-blocks    Used Available Use% Mounted on\n"
        f"/dev/block/dm-5 {s.data_total_kb:>9} {s.data_used_kb:>7} {free:>9} {use:>3}% /data\n"
    )
    return 0
