"""Golden inputs (L3 in the design notes): outputs captured on real phones, in the shared
`realdata/` directory beside the checkout (never copied into the repository: most of their
sources carry no licence). Tests that read them skip, saying why, where it is absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

_ROOT = Path(__file__).resolve().parents[2]


def realdata_dir() -> Path | None:
    """$PHONEUSE_REALDATA, else the first `shared/realdata` beside the checkout or an ancestor of
    it (a worktree sits deeper than the main checkout)."""
    named = os.environ.get("PHONEUSE_REALDATA")
    if named:
        return Path(named) if Path(named).is_dir() else None
    for parent in _ROOT.parents:
        candidate = parent / "shared" / "realdata"
        if candidate.is_dir():
            return candidate
    return None


def golden_files(kind: str, pattern: str = "*") -> list[Path]:
    """The captures of one kind (`dumpsys`, `getprop`, `wm`, `uidump`, `termux`), sorted; skips
    the test when the shared real data is absent."""
    root = realdata_dir()
    if root is None:
        pytest.skip("the shared real captures (../shared/realdata) are not beside this checkout")
    return sorted((root / kind).glob(pattern))


def golden(kind: str, name: str) -> str:
    """One capture's text (undecodable bytes replaced, as a shell stream would be read)."""
    root = realdata_dir()
    if root is None:
        pytest.skip("the shared real captures (../shared/realdata) are not beside this checkout")
    path = root / kind / name
    if not path.is_file():
        pytest.skip(f"the real capture {kind}/{name} is not in {root}")
    return path.read_text(encoding="utf-8", errors="replace")
