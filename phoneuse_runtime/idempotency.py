"""Replay of responses by request_id, so an agent's retry never acts twice.

A request_id seen within the retention window returns the stored response; if the
first call is still running, the retry waits for the same outcome. The same id with
different content (action_type, app_target or params) is a CONFLICT. Finished entries
expire `ttl_s` after they finished; beyond `max_entries` the oldest finished ones go.
Every operation is O(1) amortised: finished entries are kept in the order they finished.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


def fingerprint(action_type: str, app_target: str | None, params: Mapping[str, str]) -> bytes:
    """A digest of a request's content; lengths are included so no two contents collide by concatenation."""
    parts = [action_type, app_target or ""]
    for key, value in sorted(params.items()):
        parts += (key, value)
    blob = "".join(f"{len(part)}:{part}" for part in parts)
    return hashlib.sha256(blob.encode()).digest()


@dataclass
class _Entry(Generic[T]):
    fingerprint: bytes
    action_type: str
    outcome: asyncio.Future[T]
    finished_at: float = 0.0


@dataclass(frozen=True)
class Seen(Generic[T]):
    """A lookup's answer: the earlier outcome to await, or the action_type the id was used for."""

    outcome: asyncio.Future[T] | None
    conflicting_action: str | None


class IdempotencyCache(Generic[T]):
    def __init__(self, *, ttl_s: float, max_entries: int) -> None:
        self.ttl_s = ttl_s
        self.max_entries = max_entries
        self._running: dict[str, _Entry[T]] = {}
        self._finished: OrderedDict[str, _Entry[T]] = OrderedDict()

    def _expire(self) -> None:
        cutoff = time.monotonic() - self.ttl_s
        finished = self._finished
        while finished:
            oldest = next(iter(finished.values()))
            if oldest.finished_at > cutoff and len(finished) <= self.max_entries:
                break
            finished.popitem(last=False)

    def lookup(self, request_id: str, fp: bytes) -> Seen[T] | None:
        """None when the id is new (or expired)."""
        self._expire()
        entry = self._running.get(request_id) or self._finished.get(request_id)
        if entry is None:
            return None
        if entry.fingerprint != fp:
            return Seen(None, entry.action_type)
        return Seen(entry.outcome, None)

    def claim(self, request_id: str, fp: bytes, action_type: str) -> None:
        """Records a new id as running; `finish` records its outcome and wakes waiting retries."""
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._running[request_id] = _Entry(fp, action_type, future)

    def finish(self, request_id: str, outcome: T) -> None:
        entry = self._running.pop(request_id, None)
        if entry is None:
            return
        entry.finished_at = time.monotonic()
        if not entry.outcome.done():
            entry.outcome.set_result(outcome)
        self._finished[request_id] = entry

    def __len__(self) -> int:
        return len(self._running) + len(self._finished)
