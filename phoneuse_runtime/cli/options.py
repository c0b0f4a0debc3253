"""Options that several of the CLI's commands share."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from phoneuse_runtime.config.settings import Settings, load_settings
from phoneuse_runtime.device.backends import USAGE, backend_for

DEVICE_HELP = f"{USAGE} (default sim)"


def device_settings(flags: dict[str, Any], *, config_file: Path | None) -> Settings:
    """The settings of a command that runs a device (`serve`, `doctor`, `actions`, `mcp`):
    `load_settings`, then ConfigError unless a backend of the table takes `device`, before the
    command makes anything (a token, a socket)."""
    settings = load_settings(flags, config_file=config_file)
    backend_for(settings.device)
    return settings


def data_dir_parent() -> argparse.ArgumentParser:
    """`--data-dir` and `--config`, for the owner's commands that work on the data dir itself
    (`pair`, `approvals`): whoever holds the data dir is the owner."""
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument(
        "--data-dir", type=Path, help="state dir (default $PHONEUSE_DATA_DIR, else XDG data dir)"
    )
    parent.add_argument("--config", type=Path, help="TOML settings file (default DATA_DIR/config.toml)")
    return parent


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


def add_log_level(parser: argparse.ArgumentParser, *, default: str = "INFO") -> None:
    """`--log-level`, for the commands that log to stderr as they run."""
    parser.add_argument(
        "--log-level",
        default=default,
        type=str.upper,
        choices=LOG_LEVELS,
        help=f"what the log (stderr) shows: {', '.join(LOG_LEVELS)} (default {default})",
    )
