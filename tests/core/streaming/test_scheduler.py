"""FairScheduler: one generation per llama model, FIFO line, configurable limit (issue 3, item 7)."""

from __future__ import annotations

import asyncio

import pytest

from app.core.streaming.scheduler import FairScheduler, scheduler_for
from app.engine.scripted import ScriptedEngine
from tests.helpers import run


def test_fifo_order_and_one_at_a_time() -> None:
    async def main() -> list[int]:
        sched = FairScheduler(1)
        order: list[int] = []
        running = 0

        async def job(i: int) -> None:
            nonlocal running
            slot = await sched.acquire()
            running += 1
            assert running == 1
            order.append(i)
            await asyncio.sleep(0.001)
            running -= 1
            slot.release()
            slot.release()                 # idempotent

        await asyncio.gather(*(job(i) for i in range(20)))
        assert sched.active == 0 and sched.waiting == 0
        return order
    assert run(main()) == list(range(20))


def test_cancelled_waiter_leaves_the_line_without_losing_a_slot() -> None:
    async def main() -> None:
        sched = FairScheduler(1)
        first = await sched.acquire()
        waiter = asyncio.ensure_future(sched.acquire())
        third = asyncio.ensure_future(sched.acquire())
        await asyncio.sleep(0)
        assert sched.waiting == 2 and sched.would_wait() and sched.position() == 3
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        assert sched.waiting == 1
        first.release()
        slot = await third
        assert sched.active == 1
        slot.release()
        assert sched.active == 0 and not sched.would_wait()
    run(main())


def test_a_slot_handed_over_at_the_moment_of_cancel_is_passed_on() -> None:
    async def main() -> None:
        sched = FairScheduler(1)
        first = await sched.acquire()
        second = asyncio.ensure_future(sched.acquire())
        third = asyncio.ensure_future(sched.acquire())
        await asyncio.sleep(0)
        first.release()          # hands the slot to `second` ...
        second.cancel()          # ... which is cancelled before it runs
        with pytest.raises(asyncio.CancelledError):
            await second
        slot = await third       # the slot was passed on, not lost (lost: this waits forever)
        assert sched.active == 1
        slot.release()
        assert sched.active == 0
    run(main())


def test_raising_the_limit_lets_waiters_in_and_lowering_it_drains() -> None:
    async def main() -> None:
        sched = FairScheduler(1)
        a = await sched.acquire()
        b = asyncio.ensure_future(sched.acquire())
        c = asyncio.ensure_future(sched.acquire())
        await asyncio.sleep(0)
        sched.limit = 3
        sb, sc = await b, await c
        assert sched.active == 3
        sched.limit = 1
        d = asyncio.ensure_future(sched.acquire())
        await asyncio.sleep(0)
        a.release()
        sb.release()
        await asyncio.sleep(0)
        assert not d.done() and sched.active == 1
        sc.release()
        sd = await d
        assert sched.active == 1
        sd.release()
        with pytest.raises(ValueError):
            sched.limit = 0
    run(main())


def test_bad_limit_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match=r"^limit must be ≥ 1$"):
        FairScheduler(0)
    sched = FairScheduler(2)
    with pytest.raises(ValueError, match=r"^limit must be ≥ 1$"):
        sched.limit = 0
    assert sched.limit == 2                 # unchanged


def test_a_slot_says_whether_it_was_released() -> None:
    async def main() -> None:
        sched = FairScheduler(1)
        slot = await sched.acquire()
        assert slot.released is False
        slot.release()
        assert slot.released is True and sched.active == 0
    run(main())


def test_scheduler_for_an_engine_without_a_usable_limit_serves_one_at_a_time() -> None:
    class Bare:                              # no max_concurrency at all
        pass

    class Zero:
        max_concurrency = 0                  # nonsense: treated as 1, never as "no limit"

    assert scheduler_for(Bare()).limit == 1
    assert scheduler_for(Zero()).limit == 1


def test_scheduler_for_is_one_per_engine_with_its_concurrency() -> None:
    e1, e2 = ScriptedEngine(), ScriptedEngine(max_concurrency=4)
    assert scheduler_for(e1) is scheduler_for(e1)
    assert scheduler_for(e1) is not scheduler_for(e2)
    assert scheduler_for(e1).limit == 1 and scheduler_for(e2).limit == 4
