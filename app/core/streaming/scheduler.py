"""Per-engine generation slots with FIFO fairness.

One ``Llama`` context is not thread-safe, so a loaded llama.cpp model serves one generation at a time
(``limit=1``); a remote server may allow more. Requests beyond the limit wait in arrival order. A slot is
released explicitly — after the worker thread has returned, not when the consumer was cancelled — so a
generation stopped during prefill keeps the model busy until llama.cpp gives it back.
"""

from __future__ import annotations

import asyncio
import weakref
from collections import deque
from typing import Any


class Slot:
    """A held permission to generate on one engine. ``release()`` is idempotent."""

    __slots__ = ("_released", "_scheduler")

    def __init__(self, scheduler: FairScheduler) -> None:
        self._scheduler = scheduler
        self._released = False

    def release(self) -> None:
        if not self._released:
            self._released = True
            self._scheduler._release()

    @property
    def released(self) -> bool:
        return self._released


class FairScheduler:
    """At most ``limit`` concurrent generations; waiters are served first come, first served.

    ``await acquire()`` returns a ``Slot``; cancelling a waiting ``acquire`` removes it from the line without
    losing a slot. ``waiting`` is the number of requests in line (shown as "waiting for the model").
    """

    def __init__(self, limit: int = 1) -> None:
        if limit < 1:
            raise ValueError("limit must be ≥ 1")
        self._limit = limit
        self.active = 0
        self._line: deque[asyncio.Future[None]] = deque()

    @property
    def limit(self) -> int:
        """Generations allowed at once (1 for a llama.cpp context; configurable for a remote server)."""
        return self._limit

    @limit.setter
    def limit(self, value: int) -> None:
        if value < 1:
            raise ValueError("limit must be ≥ 1")
        self._limit = value
        while self.active < self._limit and self._line:   # a raised limit lets waiters in at once
            fut = self._line.popleft()
            if not fut.done():
                self.active += 1
                fut.set_result(None)

    def would_wait(self) -> bool:
        """True if a request made now would have to wait ("waiting for the model")."""
        return self.active >= self._limit or bool(self.waiting)

    @property
    def waiting(self) -> int:
        return sum(1 for f in self._line if not f.done())

    def position(self) -> int:
        """How many requests are ahead of a new one (active + waiting)."""
        return self.active + self.waiting

    def try_acquire(self) -> Slot | None:
        """A slot now if one is free and nobody waits in line (the fast path of ``acquire``), else None."""
        if self.active < self._limit and not self.waiting:
            self.active += 1
            return Slot(self)
        return None

    async def acquire(self) -> Slot:
        """Wait for a slot (FIFO). Cancellable while in line; a slot handed over at the moment of cancellation
        is passed on to the next in line, never lost."""
        slot = self.try_acquire()
        if slot is not None:
            return slot
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._line.append(fut)
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():
                # we were handed a slot just as we were cancelled: pass it on
                self._release()
            else:
                self._remove(fut)
            raise
        return Slot(self)

    def _remove(self, fut: asyncio.Future[None]) -> None:
        try:
            self._line.remove(fut)
        except ValueError:
            pass

    def _release(self) -> None:
        # hand the slot straight to the next waiter (active count unchanged) or free it
        while self._line and self.active <= self._limit:
            fut = self._line.popleft()
            if not fut.done():
                fut.set_result(None)
                return
        self.active -= 1


_schedulers: weakref.WeakKeyDictionary[Any, FairScheduler] = weakref.WeakKeyDictionary()


def scheduler_for(engine: object) -> FairScheduler:
    """The one ``FairScheduler`` of ``engine`` (created on first use with ``engine.max_concurrency``, default 1).

    Every conversation that uses the same engine object must share its scheduler: that is what serialises
    generations on one ``Llama`` context and keeps the line fair.
    """
    sched = _schedulers.get(engine)
    if sched is None:
        sched = FairScheduler(max(1, int(getattr(engine, "max_concurrency", 1) or 1)))
        _schedulers[engine] = sched
    return sched
