"""What Termux:API says of the phone's settings (issue 27), from its sources (termux/termux-api,
app/src/main/java/com/termux/api/apis/):

- `termux-volume` (VolumeAPI): `[{"stream": "call", "volume": 4, "max_volume": 5}, ...]`, one object
  per stream (alarm, music, notification, ring, system, call); `termux-volume STREAM N` sets it,
  clamped to 0..max, and prints nothing.
- `termux-brightness` (BrightnessAPI): alone, the level ("102"); with a level, "setting brightness
  to N" (after "setting brightness  auto to false"); with `auto`, "setting brightness  auto to true"
  and then the level. Whether adaptive brightness is on it never says. Without "Modify system
  settings" for Termux:API, the permission error object.
- `termux-wifi-enable true|false` (WifiAPI): WifiManager.setWifiEnabled, which does nothing for an
  app from Android 10 on; prints nothing either way.
"""

from __future__ import annotations

from phoneuse_runtime.device.base import Volume
from phoneuse_runtime.kernel.errors import DeviceUnavailable

ANDROID_10 = 29  # from here an app cannot turn Wi-Fi on or off (WifiManager.setWifiEnabled)


def volumes(value: object) -> dict[str, Volume]:
    """termux-volume's list, by stream name."""
    if not isinstance(value, list):
        raise DeviceUnavailable(f"termux-volume printed {type(value).__name__}, not a list of streams")
    found: dict[str, Volume] = {}
    for item in value:
        if (
            isinstance(item, dict)
            and isinstance(item.get("volume"), int)
            and isinstance(item.get("max_volume"), int)
        ):
            found[str(item.get("stream"))] = Volume(level=item["volume"], max=item["max_volume"])
    return found


def brightness_level(text: str) -> int | None:
    """The level termux-brightness printed last (its own line, a bare number); None if none."""
    for line in reversed(text.splitlines()):
        word = line.strip()
        if word.isdigit():
            return int(word)
    return None
