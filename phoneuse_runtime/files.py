"""Crash-safe file writes shared by every store the server keeps on disk."""

from __future__ import annotations

import os
from pathlib import Path


def atomic_write_text(path: Path, text: str) -> None:
    """Writes to a temporary file beside `path`, then renames it over `path`,
    so a crash leaves either the old file or the new one, never half of one."""
    import tempfile  # only needed when something is written; keeps idle memory down

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
