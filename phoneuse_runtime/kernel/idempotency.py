"""Replay of outcomes by request_id, so an agent's retry never acts twice.

A key seen within the retention window returns the stored outcome; if the first call is
still running, the retry waits for the same outcome. The same key with different content
is a conflict. Finished entries expire `ttl_s` after they finished; beyond `max_entries`, or
past `max_bytes` of outcomes (as `size` counts them: a caller chooses how large its failures'
messages and results are), the oldest finished ones go, the newest always kept. Every operation
is O(1) amortised: finished entries are kept in the order they finished, and expiry happens as
entries finish.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(slots=True)
class _Entry(Generic[T]):
    fingerprint: int
    label: str  # what the key was first used for, for the conflict's message
    outcome: T | None = None
    finished_at: float = 0.0
    size: int = 0  # of the outcome, as the cache's `size` counts it
    waiters: list[asyncio.Future[T]] | None = None  # retries waiting while it runs


@dataclass(frozen=True, slots=True)
class Replay(Generic[T]):
    """A lookup's answer for a known key: the outcome (or a future of it), or a conflict."""

    outcome: T | None = None
    pending: asyncio.Future[T] | None = None
    conflicts_with: str | None = None


class IdempotencyCache(Generic[T]):
    def __init__(
        self,
        *,
        ttl_s: float,
        max_entries: int,
        max_bytes: int = 2**62,
        size: Callable[[T], int] = lambda _: 0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ttl_s = ttl_s
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.size = size
        self.bytes = 0  # of the finished outcomes kept
        self.clock = clock
        self._running: dict[Hashable, _Entry[T]] = {}
        self._finished: OrderedDict[Hashable, _Entry[T]] = OrderedDict()
        # When the oldest finished entry finished, or earlier (never later): an entry that
        # `begin` dropped as expired may have been that one.
        self._oldest_at = math.inf

    def begin(self, key: Hashable, fingerprint: int, label: str) -> Replay[T] | None:
        """None when the key is new (it is then recorded as running), else the replay."""
        entry = self._running.get(key)
        if entry is None:
            entry = self._finished.get(key)
            if entry is not None and entry.finished_at <= self.clock() - self.ttl_s:
                del self._finished[key]
                self.bytes -= entry.size
                entry = None
        if entry is None:
            self._running[key] = _Entry(fingerprint, label)
            return None
        if entry.fingerprint != fingerprint:
            return Replay(conflicts_with=entry.label)
        if entry.outcome is not None:
            return Replay(outcome=entry.outcome)
        waiter: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        if entry.waiters is None:
            entry.waiters = []
        entry.waiters.append(waiter)
        return Replay(pending=waiter)

    def finish(self, key: Hashable, outcome: T) -> None:
        """Records the outcome of a running key and wakes the retries waiting for it."""
        entry = self._running.pop(key, None)
        if entry is None:
            return
        entry.outcome = outcome
        entry.finished_at = now = self.clock()
        entry.size = self.size(outcome)
        if entry.waiters is not None:
            for waiter in entry.waiters:
                if not waiter.done():  # a waiting retry whose own caller went away
                    waiter.set_result(outcome)
            entry.waiters = None
        finished = self._finished
        finished[key] = entry
        self.bytes += entry.size
        if self._oldest_at == math.inf:  # it was empty: this entry is the oldest
            self._oldest_at = now
        cutoff = now - self.ttl_s
        if len(finished) <= self.max_entries and self.bytes <= self.max_bytes and self._oldest_at > cutoff:
            return  # nothing is due to go (most calls): no need to look at the oldest entry
        while len(finished) > 1:
            oldest = next(iter(finished.values()))
            if (
                oldest.finished_at > cutoff
                and len(finished) <= self.max_entries
                and self.bytes <= self.max_bytes
            ):
                self._oldest_at = oldest.finished_at
                return
            finished.popitem(last=False)
            self.bytes -= oldest.size
        if finished and next(iter(finished.values())).finished_at > cutoff:
            self._oldest_at = entry.finished_at  # the newest is kept, whatever its size
            return
        finished.clear()
        self.bytes = 0
        self._oldest_at = math.inf

    def __len__(self) -> int:
        return len(self._running) + len(self._finished)
