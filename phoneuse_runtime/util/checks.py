"""A `doctor` finding: what was checked, how it went, and what to do when it did not go well.

Here, below both the command (`cli/doctor.py`) and the backends' own checks (`device/*/doctor.py`),
so that the table of backends (`device/backends.py`) can name a backend's checks without a circle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Status = Literal["ok", "warn", "fail"]


@dataclass(frozen=True)
class Check:
    """One finding: `fix` says what to do when `status` is not ok."""

    name: str
    status: Status
    detail: str
    fix: str = ""
