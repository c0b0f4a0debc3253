"""Device backends: `sim` (default), `adb` and `termux`, all behind `base.Device`."""
