"""The process heap as a phone needs it: a large buffer given back to the system when freed.

glibc's malloc serves a block past its mmap threshold (128 KiB at start) with its own mapping,
unmapped when freed; but after the first such block is freed it raises the threshold to that
block's size (up to 32 MiB), and from then on requests of a megabyte (a 256 Ki-emoji param, its
JSON, its event) come from the heap, whose freed holes stay resident. With every retained thing
bounded, 200 such calls and an unread stream still took `serve` from 63 to about 124 MiB of RSS;
with the threshold fixed, to 101-106 MiB (tests/redteam/test_bounds.py). Other C libraries
(bionic on a phone, musl) are left as they are.
"""

from __future__ import annotations

import ctypes
import logging
import platform

log = logging.getLogger(__name__)

M_MMAP_THRESHOLD = -3  # glibc's malloc.h
MMAP_THRESHOLD_BYTES = 128 * 1024  # glibc's own starting value, kept


def return_large_buffers() -> bool:
    """Fixes glibc's mmap threshold (no dynamic raise); whether it was set."""
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        libc = ctypes.CDLL(None)
        done = bool(libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES))
    except (OSError, AttributeError) as exc:  # pragma: no cover (a glibc without mallopt)
        log.debug("mallopt unavailable: %s", exc)
        return False
    return done
