"""Turns: one holder at a time, FIFO, and a cancelled waiter never wedges the phone."""

from __future__ import annotations

import asyncio

from phoneuse_runtime.kernel.turns import Turns


async def _yield(times: int = 3) -> None:
    for _ in range(times):
        await asyncio.sleep(0)


async def test_turns_pass_in_arrival_order() -> None:
    turns, order = Turns(), []
    assert turns.take_now() and turns.held
    assert not turns.take_now()

    async def wait(name: str) -> None:
        await turns.take()
        order.append(name)

    waiters = [asyncio.create_task(wait(n)) for n in "abc"]
    await _yield()
    assert order == []
    for _ in "abc":
        turns.give_back()
        await _yield()
    assert order == ["a", "b", "c"] and turns.held
    turns.give_back()
    assert not turns.held
    await asyncio.gather(*waiters)


async def test_a_cancelled_waiter_leaves_the_queue() -> None:
    turns = Turns()
    assert turns.take_now()
    gone = asyncio.create_task(turns.take())
    await _yield()
    gone.cancel()
    await asyncio.gather(gone, return_exceptions=True)
    turns.give_back()
    assert not turns.held and turns.take_now()  # nobody left waiting, the phone is free


async def test_a_turn_given_to_a_waiter_cancelled_at_that_moment_is_passed_on() -> None:
    turns = Turns()
    assert turns.take_now()
    first = asyncio.create_task(turns.take())
    second = asyncio.create_task(turns.take())
    await _yield()
    turns.give_back()  # the turn goes to `first`...
    first.cancel()  # ...which is cancelled before it runs again
    await asyncio.gather(first, return_exceptions=True)
    await asyncio.wait_for(second, 5)  # so `second` gets it
    assert turns.held
    turns.give_back()
    assert not turns.held
