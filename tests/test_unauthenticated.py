"""The services open to all and the refusal log, beside the attacks of callers without the token
(tests/redteam/test_unauthenticated.py): Health's Watch answers through its own decoding, and the
log of refusals counts what it held back."""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from phoneuse_runtime.rpc.auth import RefusalLog

from .conftest import Client
from .redteam.test_unauthenticated import SERVICE


class FakeTimer:
    """Stands in for loop.call_later: the test decides when time has passed."""

    def __init__(self) -> None:
        self.pending: list[tuple[float, Callable[[], None]]] = []

    def __call__(self, delay: float, callback: Callable[[], None]) -> None:
        self.pending.append((delay, callback))

    def fire(self) -> None:
        (_, callback), *self.pending = self.pending
        callback()


async def test_health_watch_still_answers_through_its_own_decoding(client: Client) -> None:
    """Check and reflection are tests/test_auth.py's; Watch is the one that streams."""
    health = health_pb2_grpc.HealthStub(client.channel)
    watch = health.Watch(health_pb2.HealthCheckRequest(service=SERVICE.full_name), timeout=10)
    first = await watch.read()
    watch.cancel()
    assert first.status == health_pb2.HealthCheckResponse.SERVING


def test_refusal_log_counts_what_it_held_back(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    timer = FakeTimer()
    log = RefusalLog(interval_s=10.0, call_later=timer)
    log.refused("Execute", "invalid token")
    for _ in range(4):
        log.refused("Query", "missing authorization metadata")
    assert [d for d, _ in timer.pending] == [10.0]
    timer.fire()  # the interval ends: one line for the four held back, and a new interval
    log.refused("Subscribe", "invalid token")
    timer.fire()
    assert [d for d, _ in timer.pending] == [10.0]
    timer.fire()  # a quiet interval: nothing to say, and the next refusal is logged at once
    assert not timer.pending
    log.refused("Execute", "invalid token")
    assert [r.getMessage() for r in caplog.records] == [
        "rejected a call to Execute: invalid token",
        "rejected 4 more calls in the last 10 s (the last to Query: missing authorization metadata)",
        "rejected 1 more call in the last 10 s (the last to Subscribe: invalid token)",
        "rejected a call to Execute: invalid token",
    ]
