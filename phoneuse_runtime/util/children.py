"""Child processes that must not outlive the process that started them (the fleet's runtimes,
nginx and nats-server), however it dies."""

from __future__ import annotations

import ctypes
import signal
from collections.abc import Callable


def _find_prctl() -> Callable[[int, int], int] | None:
    try:
        prctl: Callable[[int, int], int] = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # not Linux
        return None
    return prctl


# Looked up here, in the parent: between fork and exec the child may take no lock another thread
# held (an import's, malloc's), so it only calls the function.
_PRCTL = _find_prctl()
_PR_SET_PDEATHSIG = 1
_SIGTERM = int(signal.SIGTERM)


def die_with_parent() -> None:
    """In a child, before exec: the kernel sends it SIGTERM when the fleet dies, however it dies
    (Linux's PR_SET_PDEATHSIG), so that no runtime or nginx outlives a killed fleet."""
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, _SIGTERM)
