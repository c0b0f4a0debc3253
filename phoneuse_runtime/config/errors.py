"""The settings' error: what `serve`, `doctor` and the fleet report (and exit 2 on)."""

from __future__ import annotations


class ConfigError(Exception):
    """A setting has a value the server cannot use."""
