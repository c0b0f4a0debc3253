"""Turns on the phone: one action that drives it at a time, in arrival order.

An asyncio.Lock would do, but it is three coroutines a call; taking a free phone here is a
plain method call, and only a caller that must wait awaits anything.
"""

from __future__ import annotations

import asyncio
import collections


class Turns:
    """A FIFO mutex whose free case costs no coroutine. A turn passes straight from holder to
    the next waiter, so no late arrival can slip in between."""

    def __init__(self) -> None:
        self._held = False
        self._waiting: collections.deque[asyncio.Future[None]] = collections.deque()

    @property
    def held(self) -> bool:
        return self._held

    def take_now(self) -> bool:
        """Takes the turn if the phone is free and nobody is queued; returns whether it did."""
        if self._held or self._waiting:
            return False
        self._held = True
        return True

    async def take(self) -> None:
        """Waits for the turn (its cancellation leaves the queue, or passes a turn just given on)."""
        if self.take_now():
            return
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append(turn)
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():  # the turn came as the wait was cancelled
                self.give_back()
            elif turn in self._waiting:  # give_back may have passed over it already
                self._waiting.remove(turn)
            raise

    def give_back(self) -> None:
        """Ends the holder's turn: the next waiter gets it, else the phone is free."""
        while self._waiting:
            turn = self._waiting.popleft()
            if not turn.done():
                turn.set_result(None)
                return
        self._held = False
