"""The Termux backend: the runtime on the phone itself (`device.py` has `TermuxDevice`)."""
