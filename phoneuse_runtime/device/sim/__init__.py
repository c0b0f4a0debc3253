"""The simulated phone, the default backend (`device.py` has `SimDevice`)."""
