"""IdempotencyCache on its own, with a fake clock: retention, eviction, conflicts, waiters."""

from __future__ import annotations

import asyncio

import pytest

from phoneuse_runtime.kernel.idempotency import IdempotencyCache


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


def cache(clock: Clock, *, ttl_s: float = 60.0, max_entries: int = 100) -> IdempotencyCache[str]:
    return IdempotencyCache(ttl_s=ttl_s, max_entries=max_entries, clock=clock)


def finished(replays: IdempotencyCache[str], key: str, outcome: str, fingerprint: int = 1) -> None:
    assert replays.begin(key, fingerprint, "ACTION") is None
    replays.finish(key, outcome)


async def test_a_new_key_runs_and_a_finished_one_replays(clock: Clock) -> None:
    replays = cache(clock)
    assert replays.begin("k", 1, "ACTION") is None
    replays.finish("k", "outcome")
    replay = replays.begin("k", 1, "ACTION")
    assert replay is not None
    assert (replay.outcome, replay.pending, replay.conflicts_with) == ("outcome", None, None)
    assert len(replays) == 1


async def test_a_finished_entry_lives_exactly_ttl_s(clock: Clock) -> None:
    replays = cache(clock, ttl_s=60)
    finished(replays, "k", "first")
    at = clock.now
    clock.now = at + 59.999
    replay = replays.begin("k", 1, "ACTION")
    assert replay is not None and replay.outcome == "first"
    clock.now = at + 60  # ttl_s after it finished: gone
    assert replays.begin("k", 1, "ACTION") is None  # and running again
    replays.finish("k", "second")
    replay = replays.begin("k", 1, "ACTION")
    assert replay is not None and replay.outcome == "second"


async def test_expired_entries_go_as_others_finish(clock: Clock) -> None:
    replays = cache(clock, ttl_s=60)
    finished(replays, "old", "o")
    clock.now += 61
    finished(replays, "new", "n")
    assert len(replays) == 1  # "old" went without being looked up


async def test_expiry_still_follows_time_after_a_lookup_dropped_the_oldest(clock: Clock) -> None:
    """`finish` only looks at the oldest entry when one may be due; an entry that `begin`
    dropped as expired must not leave later ones kept past their time, nor dropped early."""
    replays = cache(clock, ttl_s=60)
    finished(replays, "a", "A")
    clock.now += 61
    assert replays.begin("a", 1, "ACTION") is None  # expired: dropped by the lookup, running again
    replays.finish("a", "A2")
    clock.now += 30
    finished(replays, "b", "B")
    assert len(replays) == 2  # neither is due yet
    clock.now += 31  # "a" (A2) is 61 s old, "b" 31 s
    finished(replays, "c", "C")
    assert len(replays) == 2
    assert replays.begin("a", 1, "ACTION") is None  # gone as "c" finished
    for key in ("b", "c"):
        replay = replays.begin(key, 1, "ACTION")
        assert replay is not None and replay.outcome == key.upper()


async def test_the_oldest_finished_go_beyond_max_entries(clock: Clock) -> None:
    replays = cache(clock, max_entries=2)
    for key in ("a", "b", "c"):
        finished(replays, key, key.upper())
        clock.now += 1
    assert len(replays) == 2
    assert replays.begin("a", 1, "ACTION") is None  # evicted: it runs again
    for key in ("b", "c"):
        replay = replays.begin(key, 1, "ACTION")
        assert replay is not None and replay.outcome == key.upper()


async def test_eviction_follows_finishing_order_not_starting_order(clock: Clock) -> None:
    replays = cache(clock, max_entries=1)
    assert replays.begin("first-started", 1, "ACTION") is None
    assert replays.begin("second-started", 1, "ACTION") is None
    replays.finish("second-started", "2")
    replays.finish("first-started", "1")
    assert replays.begin("second-started", 1, "ACTION") is None  # finished first, evicted first
    replay = replays.begin("first-started", 1, "ACTION")
    assert replay is not None and replay.outcome == "1"


async def test_running_entries_never_expire_nor_are_evicted(clock: Clock) -> None:
    replays = cache(clock, ttl_s=1, max_entries=1)
    assert replays.begin("running", 1, "ACTION") is None
    clock.now += 3600
    for key in ("x", "y", "z"):
        finished(replays, key, key)
    replay = replays.begin("running", 1, "ACTION")
    assert replay is not None and replay.pending is not None and replay.outcome is None
    replays.finish("running", "at last")
    assert replay.pending.result() == "at last"


async def test_different_content_under_a_key_is_a_conflict(clock: Clock) -> None:
    replays = cache(clock)
    assert replays.begin("k", 1, "SET_CLIPBOARD") is None
    running = replays.begin("k", 2, "TAP")
    assert running is not None and running.conflicts_with == "SET_CLIPBOARD"
    assert running.pending is None and running.outcome is None
    replays.finish("k", "done")
    done = replays.begin("k", 2, "TAP")
    assert done is not None and done.conflicts_with == "SET_CLIPBOARD"
    same = replays.begin("k", 1, "SET_CLIPBOARD")
    assert same is not None and same.outcome == "done"  # the conflicts changed nothing


async def test_waiters_get_the_outcome_and_a_gone_waiter_is_skipped(clock: Clock) -> None:
    replays = cache(clock)
    assert replays.begin("k", 1, "ACTION") is None
    waiters = []
    for _ in range(3):
        replay = replays.begin("k", 1, "ACTION")
        assert replay is not None and replay.pending is not None
        waiters.append(replay.pending)
    waiters[1].cancel()  # that retry's caller went away
    replays.finish("k", "outcome")
    assert waiters[0].result() == waiters[2].result() == "outcome"
    assert waiters[1].cancelled()
    assert await asyncio.wait_for(waiters[0], 1) == "outcome"


async def test_finishing_an_unknown_key_does_nothing(clock: Clock) -> None:
    replays = cache(clock)
    replays.finish("never-began", "x")
    assert len(replays) == 0
    assert replays.begin("never-began", 1, "ACTION") is None


async def test_the_oldest_finished_go_past_max_bytes_and_the_newest_stays_whatever_its_size(
    clock: Clock,
) -> None:
    replays: IdempotencyCache[str] = IdempotencyCache(
        ttl_s=60.0, max_entries=100, max_bytes=10, size=len, clock=clock
    )
    for key in ("a", "b", "c"):
        finished(replays, key, key * 4)  # 4 bytes each: the third passes 10
    assert (len(replays), replays.bytes) == (2, 8)
    assert replays.begin("a", 1, "ACTION") is None  # evicted: it runs again
    replays.finish("a", "A")
    finished(replays, "huge", "x" * 50)  # larger than the whole budget: kept alone
    assert (len(replays), replays.bytes) == (1, 50)
    replay = replays.begin("huge", 1, "ACTION")
    assert replay is not None and replay.outcome == "x" * 50
    clock.now += 61  # and expiry still follows time
    finished(replays, "d", "dd")
    assert (len(replays), replays.bytes) == (1, 2)
