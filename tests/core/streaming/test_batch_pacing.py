"""A fast producer's consumer takes a batch per interval, not one per chunk; a slow or blocked one is not held."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator

import pytest

from app.core.streaming.metrics import now
from app.core.streaming.stream import BATCH_INTERVAL_S, TokenStream, pace_s
from app.core.types import Chunk
from tests.helpers import run

IV = BATCH_INTERVAL_S


def test_pace_holds_only_after_two_batches_close_together() -> None:
    assert pace_s(-1.0, -1.0, 5.0) == 0.0                       # nothing taken yet
    assert pace_s(-1.0, 5.0, 5.0) == 0.0                        # one batch: the producer's pace is unknown
    assert pace_s(5.0, 5.0 + 2 * IV, 5.0 + 2 * IV) == 0.0         # two intervals apart: a slow producer
    assert pace_s(5.0, 5.0 + IV / 2, 5.0 + IV / 2) == pytest.approx(IV)          # close: wait a whole interval
    assert pace_s(5.0, 5.0 + IV * 1.5, 5.0 + IV * 1.7) == pytest.approx(IV * 0.8)  # paced stays paced: the rest
    assert pace_s(5.0, 5.0 + IV / 2, 5.0 + 3 * IV) == 0.0         # the interval is over already


def _steady(n: int, gap_s: float) -> Iterator[Chunk]:
    for i in range(n):
        time.sleep(gap_s)
        yield Chunk(f"{i},")


def test_a_fast_producer_is_taken_in_batches_of_an_interval() -> None:
    n = 600
    got: list[str] = []
    batches = 0

    async def main() -> float:
        nonlocal batches
        stream = TokenStream(lambda stop: _steady(n, 0.0005), maxsize=100_000)   # never full
        t0 = now()
        stream.start()
        while (batch := await stream.get_batch()) is not None:
            batches += 1
            got.extend(c.text for c in batch)
        elapsed = now() - t0
        await stream.wait_closed()
        return elapsed

    elapsed = run(main())
    assert "".join(got) == "".join(f"{i}," for i in range(n))
    # a batch per interval at most (the first two taken as they come); one per chunk when it waited for each
    assert batches <= elapsed / IV + 3, (batches, elapsed)


def test_a_full_queue_is_taken_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The model waits on a full queue: its consumer never holds it longer to gather more."""
    holds: list[float] = []
    hold = TokenStream._hold

    async def spy(self: TokenStream, delay: float) -> None:
        holds.append(delay)
        await hold(self, delay)

    def produce(stop: threading.Event) -> Iterator[Chunk]:
        while not stop.is_set():
            yield Chunk("x")

    async def main() -> None:
        stream = TokenStream(produce, maxsize=8)
        stream.start()
        try:
            for _ in range(30):
                while stream.queue_depth < 8:        # the worker fills the queue while the batch is "rendered"
                    time.sleep(0.0002)
                assert await stream.get_batch()
        finally:
            stream.request_stop()
        await stream.wait_closed()

    monkeypatch.setattr(TokenStream, "_hold", spy)
    run(main())
    assert holds == []


def test_a_paced_wait_is_stepped_outside_a_running_loop() -> None:
    """qasync runs ready callbacks from Qt's event processing outside ``run_forever`` too (a test pumping Qt
    events, a modal dialog): a paced wait must not ask for the running loop (``asyncio.sleep`` does)."""
    loop = asyncio.new_event_loop()
    stream = TokenStream(lambda stop: _steady(50, 0.0002), maxsize=100_000)

    async def start() -> None:
        stream.start()

    try:
        loop.run_until_complete(start())
        stream._batch_times = (now() - 0.001, now())      # two batches close together: the next one is paced
        coro = stream.get_batch()
        batch = None
        try:
            while True:
                awaited = coro.send(None)                 # a step with no loop running
                loop.run_until_complete(awaited)          # what it waits for, then the next step
        except StopIteration as done:
            batch = done.value
        assert batch
        loop.run_until_complete(stream.wait_closed())
    finally:
        stream.request_stop()
        loop.close()


@pytest.mark.parametrize("end_during_hold", [True, False], ids=["ends-while-held", "ended-before-the-hold"])
def test_the_producers_end_is_not_held_for_the_pacing_interval(monkeypatch: pytest.MonkeyPatch,
                                                                 end_during_hold: bool) -> None:
    """The last chunks of a fast producer came up to an interval late: the consumer waited out its pacing though
    nothing more could come. The end wakes a wait in progress, and a wait due after it is not begun. (The
    interval is made an hour: the stream ends within the test's timeout only when the end is not held.)"""
    import app.core.streaming.stream as stream_module

    monkeypatch.setattr(stream_module, "BATCH_INTERVAL_S", 3600.0)
    go = threading.Event()
    holds: list[float] = []
    hold = TokenStream._hold

    async def spy(self: TokenStream, delay: float) -> None:
        holds.append(delay)
        if end_during_hold:
            go.set()                                  # the producer ends while the consumer is held
        await hold(self, delay)

    def produce(stop: threading.Event) -> Iterator[Chunk]:
        yield Chunk("a")
        assert go.wait(30)
        yield Chunk("b")
        yield Chunk("c")

    async def main() -> str:
        stream = TokenStream(produce, maxsize=100)
        stream.start()
        stream._batch_times = (now() - 0.001, now())  # two batches close together: the next one is paced
        text = ""
        if not end_during_hold:
            while stream.queue_depth < 1:
                await asyncio.sleep(0.001)
            go.set()
            while not (stream.queue is not None and stream.queue.ended()):
                await asyncio.sleep(0.001)
        while (batch := await asyncio.wait_for(stream.get_batch(), 30)) is not None:
            text += "".join(c.text for c in batch)
        await stream.wait_closed()
        return text

    monkeypatch.setattr(TokenStream, "_hold", spy)
    assert run(main()) == "abc"
    assert holds and holds[0] > 3000                  # it was paced (an hour's wait, cut short by the end)
