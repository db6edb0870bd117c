"""ChunkQueue and TokenStream edges that mutation testing found unguarded (``python3 -m mutmut run
"app.core.stream*"``): a consumer woken or cancelled while it waits, join's timeout, the dequeue stamp of a tagged
chunk, stopping every live stream at shutdown."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest

from app.core.stream import ChunkQueue, QueueClosed, TokenStream, stop_all_streams, tune_switch_interval
from app.core.types import Chunk
from tests.helpers import run


def producer_of(pieces: list[str]):  # type: ignore[no-untyped-def]
    def produce(stop: threading.Event) -> Iterator[Chunk]:
        for p in pieces:
            if stop.is_set():
                return
            yield Chunk(p)
    return produce


def test_close_wakes_a_consumer_that_is_waiting() -> None:
    async def main() -> None:
        q = ChunkQueue(4, asyncio.get_running_loop())
        waiting = asyncio.ensure_future(q.get_batch())
        await asyncio.sleep(0)               # the consumer is now suspended on an empty queue
        assert not waiting.done()
        q.close()                            # Stop: it must wake up (a consumer left asleep hangs the test)
        with pytest.raises(QueueClosed):
            await waiting
    run(main())


def test_a_cancelled_consumer_leaves_no_stale_waiter_behind() -> None:
    errors: list[dict] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(lambda _loop, ctx: errors.append(ctx))
        q = ChunkQueue(4, loop)
        waiting = asyncio.ensure_future(q.get())
        await asyncio.sleep(0)
        waiting.cancel()                     # Stop cancels a consumer that waits for the next chunk
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert q.put("late") == (1, 0.0)     # the next put must not try to wake the cancelled one
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert q.wakeups == 0 and await q.get() == "late"
    run(main())
    assert errors == []


def test_get_returns_the_oldest_item_and_raises_once_closed_and_empty() -> None:
    async def main() -> None:
        q = ChunkQueue(4, asyncio.get_running_loop())
        q.put("a")
        q.put("b")
        assert await q.get() == "a" and await q.get() == "b"
        q.close()
        with pytest.raises(QueueClosed):
            await q.get()
    run(main())


def test_join_before_start_and_with_a_timeout() -> None:
    gate = threading.Event()

    def produce(stop: threading.Event) -> Iterator[Chunk]:
        gate.wait()                          # busy in "prefill" until the test opens the gate
        yield Chunk("x")

    stream = TokenStream(produce)
    assert stream.join(0) and not stream.alive        # never started: nothing to wait for

    async def main() -> bool:
        stream.start()
        stream.request_stop()
        still_busy = not stream.join(0.01)            # the timeout is honoured: False while the worker is busy
        gate.set()
        await stream.wait_closed()
        return still_busy
    assert run(main()) is True
    assert stream.join(0)


def test_a_tagged_chunk_carries_its_dequeue_stamp() -> None:
    async def main() -> list[tuple[float, float]]:
        stream = TokenStream(producer_of(["a", "b", "c"]), maxsize=8)
        stream.start()
        out = [(tc.t_dequeued, stream.metrics.dequeued[-1]) async for tc in stream]
        await stream.wait_closed()
        return out
    stamps = run(main())
    assert len(stamps) == 3 and all(t == d and isinstance(t, float) for t, d in stamps)


def test_stop_all_streams_stops_and_joins_every_live_worker() -> None:
    gate = threading.Event()

    def stubborn(stop: threading.Event) -> Iterator[Chunk]:
        gate.wait()                          # an uninterruptible prefill: ignores the stop event
        yield Chunk("x")

    def polite(stop: threading.Event) -> Iterator[Chunk]:
        while not stop.wait(0.001):
            yield Chunk("y")

    async def main() -> tuple[bool, bool, bool]:
        a, b = TokenStream(polite, maxsize=1), TokenStream(polite, maxsize=1)
        a.start()
        b.start()
        all_stopped = stop_all_streams(timeout=60)    # returns as soon as both have exited
        assert a.stopped and b.stopped and not a.alive and not b.alive
        c = TokenStream(stubborn)
        c.start()
        gave_up = not stop_all_streams(timeout=0.01)  # a worker that cannot stop yet: False, not a hang
        gate.set()
        await c.wait_closed()
        await a.wait_closed()
        await b.wait_closed()
        return all_stopped, gave_up, stop_all_streams()
    assert run(main()) == (True, True, True)


def test_tune_switch_interval() -> None:
    import sys

    before = sys.getswitchinterval()
    try:
        tune_switch_interval(0.002)
        assert sys.getswitchinterval() == 0.002
    finally:
        sys.setswitchinterval(before)
