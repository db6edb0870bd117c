"""ChunkQueue and TokenStream: order, bounded memory, backpressure, stop, errors, UTF-8 (issue 3: 1-3, 6, 8)."""

from __future__ import annotations

import asyncio
import itertools
import logging
import random
import threading
import time
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.streaming.metrics import StreamMetrics
from app.core.streaming.stream import ChunkQueue, QueueClosed, TokenStream, live_streams
from app.core.types import Chunk
from tests.helpers import run, until


def producer_of(pieces: list[str], delay_s: float = 0.0, fail_at: int | None = None,
                seen_stop: list[int] | None = None):  # type: ignore[no-untyped-def]
    def produce(stop: threading.Event) -> Iterator[Chunk]:
        for i, p in enumerate(pieces):
            if stop.is_set():
                if seen_stop is not None:
                    seen_stop.append(i)
                return
            if fail_at is not None and i == fail_at:
                raise RuntimeError(f"boom at {i}")
            if delay_s:
                time.sleep(delay_s)
            yield Chunk(p)
    return produce


# -- 1. nothing lost, duplicated or reordered ------------------------------------------------------------

@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(min_size=0, max_size=400),
       cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=60),
       maxsize=st.integers(min_value=1, max_value=64),
       consumer_delays=st.lists(st.sampled_from([0.0, 0.0, 0.0, 0.0005, 0.002]), min_size=1, max_size=8),
       batches=st.booleans())
def test_every_chunk_arrives_once_in_order(text: str, cuts: list[int], maxsize: int,
                                           consumer_delays: list[float], batches: bool) -> None:
    bounds = sorted({0, len(text), *(c for c in cuts if c <= len(text))})
    pieces = [text[a:b] for a, b in itertools.pairwise(bounds)]
    # tag each chunk with its index too, so a duplicated or reordered empty piece would still be caught
    tagged = [f"{i}:{p}" for i, p in enumerate(pieces)]

    async def main() -> tuple[list[str], int]:
        stream = TokenStream(producer_of(tagged), maxsize=maxsize)
        stream.start()
        got: list[str] = []
        k = 0
        try:
            if batches:
                while (batch := await stream.get_batch()) is not None:
                    assert len(batch) <= maxsize
                    got.extend(c.text for c in batch)
                    await asyncio.sleep(consumer_delays[k % len(consumer_delays)])
                    k += 1
            else:
                async for tc in stream:
                    assert tc.generation_id == stream.generation_id
                    got.append(tc.chunk.text)
                    await asyncio.sleep(consumer_delays[k % len(consumer_delays)])
                    k += 1
        finally:
            stream.request_stop()
        await stream.wait_closed()
        return got, stream.metrics.queue_high_water

    got, high_water = run(main())
    assert got == tagged
    assert "".join(g.split(":", 1)[1] for g in got) == text
    assert high_water <= maxsize


# -- 2. bounded memory and backpressure ------------------------------------------------------------------

def test_queue_never_holds_more_than_maxsize_and_the_worker_waits() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        q = ChunkQueue(3, loop)
        done = threading.Event()
        puts: list[float] = []

        def worker() -> None:
            for i in range(10):
                _depth, waited = q.put(i)
                puts.append(waited)
                assert q.qsize() <= 3
            done.set()

        th = threading.Thread(target=worker)
        th.start()
        await until(lambda: q.qsize() == 3)
        await asyncio.sleep(0.2)                      # the consumer is "busy": nothing taken
        assert q.qsize() == 3 and not done.is_set()   # the worker waits instead of buffering
        got = []
        while len(got) < 10:
            got.extend(await q.get_batch())
            assert len(got) <= 10
        th.join()
        assert got == list(range(10))
        assert q.high_water == 3
        assert max(puts) > 0.1
    run(main())


def test_a_long_put_is_a_counted_backpressure_warning(caplog: pytest.LogCaptureFixture) -> None:
    async def main() -> StreamMetrics:
        stream = TokenStream(producer_of([str(i) for i in range(4)]), maxsize=1)
        stream.start()
        try:
            async for _tc in stream:
                await asyncio.sleep(0.15)   # a busy UI: the worker must wait > 100 ms
        finally:
            stream.request_stop()
        await stream.wait_closed()
        return stream.metrics

    with caplog.at_level(logging.WARNING, logger="brook.metrics"):
        m = run(main())
    assert m.backpressure_waits >= 1
    assert m.backpressure_wait_s > 0.1
    warnings = [r for r in caplog.records if "backpressure" in r.getMessage()]
    assert len(warnings) == m.backpressure_waits
    assert " ms" in warnings[0].getMessage()
    assert m.summary().queue_high_water == 1


def test_the_loop_is_woken_only_when_the_consumer_waits() -> None:
    """A busy consumer costs no cross-thread wake-up per chunk: it takes what piled up in one batch."""
    async def main() -> tuple[int, int]:
        stream = TokenStream(producer_of([str(i) for i in range(200)]), maxsize=256)
        stream.start()
        while stream.queue_depth < 201:   # a busy loop (blocked here) while the worker puts 200 chunks + the end
            time.sleep(0.005)
        n = 0
        while (batch := await stream.get_batch()) is not None:
            n += len(batch)
        assert stream.queue is not None
        return n, stream.queue.wakeups
    n, wakeups = run(main())
    assert n == 200
    assert wakeups == 0          # everything was there before the consumer ever waited


def test_a_fast_producer_never_starves_the_loop() -> None:
    """A producer faster than the consumer: timer callbacks (render ticks) still run while it streams."""
    def produce(stop: threading.Event) -> Iterator[Chunk]:
        while not stop.is_set():
            yield Chunk("x")

    async def main() -> None:
        stream = TokenStream(produce, maxsize=64)
        stream.start()
        ticks = 0

        def tick() -> None:
            nonlocal ticks
            ticks += 1
        loop = asyncio.get_running_loop()
        for i in range(1, 21):
            loop.call_later(0.01 * i, tick)
        batches = 0
        try:
            while ticks < 20:
                batch = await stream.get_batch()
                assert batch
                batches += 1
                while stream.queue_depth < 64:   # rendering the batch: the worker fills the queue meanwhile, so
                    time.sleep(0.0005)           # the next get_batch finds it full and never has to wait
                assert batches < 5_000, "the ticks never ran: the consumer starved the loop"
        finally:
            stream.request_stop()
        await stream.wait_closed()
    run(main())


# -- 3. stop -------------------------------------------------------------------------------------------

def test_stop_releases_a_worker_blocked_on_a_full_queue() -> None:
    async def main() -> TokenStream:
        stream = TokenStream(producer_of(["a"] * 1000), maxsize=2)
        stream.start()
        await until(lambda: stream.queue_depth == 2 and len(stream.metrics.produced) == 3)
        assert stream.alive                    # the worker holds a third chunk: blocked on the full queue
        stream.request_stop()
        assert await stream.get_batch() is None   # nothing more is delivered after stop
        await stream.wait_closed()
        assert not stream.alive and stream.join(0)   # wait_closed means the thread has exited
        return stream
    stream = run(main())
    assert stream.metrics.summary().stop_latency_ms is not None
    assert stream not in live_streams()


class _SlowToExitLoop(asyncio.SelectorEventLoop):
    """A loop whose cross-thread posts leave the posting thread asleep for a moment afterwards: it widens the
    window between the worker's last post and the end of its thread (a busy machine does the same at random)."""

    def call_soon_threadsafe(self, callback, *args, context=None):  # type: ignore[no-untyped-def,override]
        handle = super().call_soon_threadsafe(callback, *args, context=context)
        if threading.current_thread() is not threading.main_thread():
            time.sleep(0.1)
        return handle


def test_wait_closed_returns_only_after_the_worker_thread_has_exited() -> None:
    async def main() -> list[bool]:
        alive_after: list[bool] = []
        for maxsize in (1, 256):
            stream = TokenStream(producer_of(["a", "b", "c"]), maxsize=maxsize)
            stream.start()
            assert [tc.chunk.text async for tc in stream] == ["a", "b", "c"]
            await stream.wait_closed()
            alive_after.append(stream.alive)
        return alive_after

    with asyncio.Runner(loop_factory=_SlowToExitLoop) as runner:
        assert runner.run(main()) == [False, False]


class _Tokens:
    """An engine iterator that never looks at the stop event (the stream must stop it) and has ``close()``."""

    def __init__(self, n: int, delay_s: float) -> None:
        self.left, self.delay_s = n, delay_s
        self.closed_on: str | None = None

    def __iter__(self) -> _Tokens:
        return self

    def __next__(self) -> Chunk:
        if self.left == 0:
            raise StopIteration
        self.left -= 1
        time.sleep(self.delay_s)
        return Chunk("t")

    def close(self) -> None:
        self.closed_on = threading.current_thread().name


def test_stop_is_seen_within_one_token_and_closes_the_engine_iterator() -> None:
    tokens = _Tokens(10_000, delay_s=0.002)

    async def main() -> tuple[int, TokenStream]:
        stream = TokenStream(lambda stop: tokens, maxsize=8, name="decode")
        stream.start()
        n = 0
        async for _ in stream:
            n += 1
            if n == 20:
                produced_at_stop = len(stream.metrics.produced)
                stream.request_stop()
                break
        await stream.wait_closed()
        return len(stream.metrics.produced) - produced_at_stop, stream
    after, stream = run(main())
    assert after <= 1          # at most the token being decoded when Stop came
    assert tokens.closed_on == f"decode-{stream.generation_id}"   # closed by the worker, before it returned


def test_request_stop_is_idempotent_and_safe_before_start() -> None:
    seen_stop: list[int] = []
    stream = TokenStream(producer_of(["a", "b"], seen_stop=seen_stop))
    stream.request_stop()
    stream.request_stop()
    assert stream.stopped and stream.metrics.t_stop is None   # no worker yet: no stop latency to measure

    async def main() -> list[Chunk] | None:
        stream.start()                         # a stream stopped before it started delivers nothing ...
        batch = await stream.get_batch()
        await stream.wait_closed()
        return batch
    assert run(main()) is None
    assert seen_stop == [0]                     # ... and its producer saw the stop before its first chunk
    assert len(stream.metrics.produced) == 0 and not stream.alive


# -- 6. errors ---------------------------------------------------------------------------------------

def test_an_error_arrives_after_the_chunks_before_it() -> None:
    async def main() -> tuple[list[str], BaseException | None]:
        stream = TokenStream(producer_of(["a", "b", "c", "d"], fail_at=3), maxsize=8)
        stream.start()
        got: list[str] = []
        err: BaseException | None = None
        try:
            async for tc in stream:
                got.append(tc.chunk.text)
        except RuntimeError as exc:
            err = exc
        finally:
            stream.request_stop()
        await stream.wait_closed()
        return got, err
    got, err = run(main())
    assert got == ["a", "b", "c"]
    assert isinstance(err, RuntimeError) and "boom at 3" in str(err)


def test_an_error_before_the_first_chunk() -> None:
    def produce(stop: threading.Event) -> Iterator[Chunk]:
        raise ValueError("no model")

    async def main() -> None:
        stream = TokenStream(produce)
        stream.start()
        with pytest.raises(ValueError, match="no model"):
            await stream.get_batch()
        stream.request_stop()
        await stream.wait_closed()
    run(main())


# -- 7. one slow consumer never slows another stream ----------------------------------------------------

def test_each_stream_has_its_own_queue() -> None:
    async def main() -> None:
        slow = TokenStream(producer_of(["s"] * 100), maxsize=2)
        fast = TokenStream(producer_of(["f"] * 300), maxsize=2)
        slow.start()
        fast.start()
        got_slow = 0
        release = asyncio.Event()

        async def slow_consumer() -> None:
            nonlocal got_slow
            async for _ in slow:
                got_slow += 1
                await release.wait()        # stuck on its first chunk until the fast stream has finished

        task = asyncio.ensure_future(slow_consumer())
        n = 0
        async for _ in fast:
            n += 1
        assert n == 300
        assert got_slow <= 1                # the slow stream is still at its first chunk
        release.set()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        slow.request_stop()
        fast.request_stop()
        await slow.wait_closed()
        await fast.wait_closed()
    run(main())


# -- 8. UTF-8 split inside characters ---------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(list("aé中文字🎉👍🏽\n ")), max_size=80),
       cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=40))
def test_raw_bytes_split_inside_characters_never_make_fffd(text: str, cuts: list[int]) -> None:
    data = text.encode("utf-8")
    bounds = sorted({0, len(data), *(c for c in cuts if c <= len(data))})
    raws = [data[a:b] for a, b in itertools.pairwise(bounds)]

    def produce(stop: threading.Event) -> Iterator[Chunk]:
        for r in raws:
            yield Chunk("", 1, None, r)

    async def main() -> str:
        stream = TokenStream(produce, maxsize=4)
        stream.start()
        out: list[str] = []
        async for tc in stream:
            out.append(tc.chunk.text)
        stream.request_stop()
        await stream.wait_closed()
        return "".join(out)
    got = run(main())
    assert "\ufffd" not in got
    assert got == text


def test_truly_invalid_trailing_bytes_are_replaced_once() -> None:
    def produce(stop: threading.Event) -> Iterator[Chunk]:
        yield Chunk("", 1, None, "ok 中".encode()[:-1])   # cut off for good: the reply ended mid-character

    async def main() -> str:
        stream = TokenStream(produce)
        stream.start()
        out = [tc.chunk.text async for tc in stream]
        await stream.wait_closed()
        return "".join(out)
    assert run(main()) == "ok \ufffd"


def test_queue_rejects_bad_maxsize_and_closed_puts() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        with pytest.raises(ValueError):
            ChunkQueue(0, loop)
        q = ChunkQueue(1, loop)
        q.put(1)
        assert q.get_nowait() == 1
        q.close()
        with pytest.raises(QueueClosed):
            q.put(2)
        with pytest.raises(QueueClosed):
            await q.get()
    run(main())


def test_many_streams_in_parallel_keep_their_own_order() -> None:
    async def one(k: int) -> None:
        pieces = [f"{k}-{i}" for i in range(random.randint(1, 200))]
        stream = TokenStream(producer_of(pieces), maxsize=random.randint(1, 16))
        stream.start()
        got = [tc.chunk.text async for tc in stream]
        await stream.wait_closed()
        assert got == pieces

    async def main() -> None:
        await asyncio.gather(*(one(k) for k in range(12)))
    run(main())
