"""Replay of responses by request_id, so an agent's retry never acts twice.

A request_id seen within the retention window returns the stored response; if the
first call is still running, the retry waits for the same outcome. The same id with
different content (action_type, app_target or params) is a CONFLICT. Finished entries
expire `ttl_s` after they finished; beyond `max_entries` the oldest finished ones go.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


def fingerprint(action_type: str, app_target: str | None, params: Mapping[str, str]) -> str:
    blob = json.dumps([action_type, app_target or "", sorted(params.items())], ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


@dataclass
class _Entry(Generic[T]):
    fingerprint: str
    action_type: str
    outcome: asyncio.Future[T]
    finished_at: float | None = None


@dataclass(frozen=True)
class Seen(Generic[T]):
    """A lookup's answer: the earlier outcome to await, or the action_type the id was used for."""

    outcome: asyncio.Future[T] | None
    conflicting_action: str | None


class IdempotencyCache(Generic[T]):
    def __init__(self, *, ttl_s: float, max_entries: int) -> None:
        self.ttl_s = ttl_s
        self.max_entries = max_entries
        self._entries: OrderedDict[str, _Entry[T]] = OrderedDict()

    def _expire(self) -> None:
        now = time.monotonic()
        over = len(self._entries) - self.max_entries
        for key in list(self._entries):
            entry = self._entries[key]
            if entry.finished_at is None:
                continue
            if over > 0 or now - entry.finished_at >= self.ttl_s:
                del self._entries[key]
                over -= 1

    def lookup(self, request_id: str, fp: str) -> Seen[T] | None:
        """None when the id is new (or expired)."""
        self._expire()
        entry = self._entries.get(request_id)
        if entry is None:
            return None
        if entry.fingerprint != fp:
            return Seen(None, entry.action_type)
        return Seen(entry.outcome, None)

    def claim(self, request_id: str, fp: str, action_type: str) -> asyncio.Future[T]:
        """Records a new id; resolve the returned future with the outcome via `finish`."""
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._entries[request_id] = _Entry(fp, action_type, future)
        return future

    def finish(self, request_id: str, outcome: T) -> None:
        entry = self._entries.get(request_id)
        if entry is None:
            return
        entry.finished_at = time.monotonic()
        if not entry.outcome.done():
            entry.outcome.set_result(outcome)
        self._entries.move_to_end(request_id)

    def __len__(self) -> int:
        return len(self._entries)
