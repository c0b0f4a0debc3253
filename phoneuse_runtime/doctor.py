"""`phoneuse-runtime doctor`: what the chosen device needs, checked and printed, each with a fix.

Checks are plain records so the text and `--json` outputs say the same. A failed check that the
chosen device needs makes the exit code 1; a warning (something a fallback covers) does not.
"""

from __future__ import annotations

import json
import stat
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Literal

from .config import ConfigError, Settings
from .files import StateFileError
from .tokens import read_token_file, token_path

Status = Literal["ok", "warn", "fail"]


@dataclass(frozen=True)
class Check:
    name: str
    status: Status
    detail: str
    fix: str = ""


def data_dir_checks(settings: Settings) -> list[Check]:
    """The data dir (present, private) and the token in it (present, private, readable)."""
    directory = settings.data_dir
    checks = []
    if not directory.exists():
        checks.append(
            Check("data dir", "warn", f"{directory} does not exist yet", "`serve` creates it (mode 700)")
        )
        return checks
    mode = stat.S_IMODE(directory.stat().st_mode)
    if mode & 0o077:
        checks.append(
            Check(
                "data dir",
                "fail",
                f"{directory} is open to other users (mode {mode:03o})",
                f"chmod 700 {directory}",
            )
        )
    else:
        checks.append(Check("data dir", "ok", f"{directory} (mode {mode:03o})"))
    path = token_path(directory)
    if settings.token:
        checks.append(Check("token", "ok", "given by the configuration ($PHONEUSE_TOKEN or the config file)"))
        return checks
    try:
        token = read_token_file(directory)
    except StateFileError as exc:
        checks.append(Check("token", "fail", str(exc), f"delete {path}; `serve` writes a new one"))
        return checks
    if token is None:
        checks.append(Check("token", "warn", f"no token in {path} yet", "`serve` generates one (mode 600)"))
        return checks
    token_mode = stat.S_IMODE(path.stat().st_mode)
    if token_mode & 0o077:
        checks.append(
            Check(
                "token", "fail", f"{path} is readable by others (mode {token_mode:03o})", f"chmod 600 {path}"
            )
        )
    else:
        checks.append(Check("token", "ok", f"{path} (mode {token_mode:03o})"))
    return checks


def device_checks(settings: Settings) -> list[Check]:
    kind = settings.device_kind
    if kind == "sim":
        return [Check("device", "ok", "sim: the simulated phone needs nothing")]
    if kind == "adb":
        from .device.adb.doctor import adb_checks

        return adb_checks(settings)
    return [
        Check(
            "device",
            "fail",
            f"the {kind} backend is not available in this version",
            "use --device adb or sim",
        )
    ]


def run_checks(settings: Settings) -> list[Check]:
    try:
        return device_checks(settings) + data_dir_checks(settings)
    except ConfigError as exc:
        return [Check("configuration", "fail", str(exc))]


def render(checks: Sequence[Check], *, as_json: bool) -> str:
    if as_json:
        return json.dumps({"ok": healthy(checks), "checks": [asdict(c) for c in checks]}, indent=2) + "\n"
    marks = {"ok": "ok  ", "warn": "warn", "fail": "FAIL"}
    lines = []
    for check in checks:
        lines.append(f"[{marks[check.status]}] {check.name}: {check.detail}")
        if check.fix and check.status != "ok":
            lines.append(f"       fix: {check.fix}")
    return "\n".join(lines) + "\n"


def healthy(checks: Sequence[Check]) -> bool:
    return all(c.status != "fail" for c in checks)
