"""The adb backend: a real phone or emulator over adb (`device.py` has `AdbDevice`)."""
