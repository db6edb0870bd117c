"""ChunkQueue and TokenStream edges that mutation testing found unguarded (``python3 -m mutmut run
"app.core.streaming.stream*"``): a consumer woken or cancelled while it waits, join's timeout, the dequeue stamp of a
tagged
chunk, stopping every live stream at shutdown."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator

import pytest

from app.core.streaming.stream import ChunkQueue, QueueClosed, TokenStream, tune_switch_interval
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


def test_tune_switch_interval() -> None:
    import sys

    before = sys.getswitchinterval()
    try:
        tune_switch_interval(0.002)
        assert sys.getswitchinterval() == 0.002
    finally:
        sys.setswitchinterval(before)


def test_ids_metrics_and_the_worker_thread() -> None:
    from app.core.streaming.metrics import StreamMetrics
    from app.core.streaming.stream import live_streams

    m = StreamMetrics()
    given = TokenStream(producer_of(["a"]), generation_id=7, metrics=m)
    assert given.generation_id == 7 and given.metrics is m
    a, b = TokenStream(producer_of(["a"])), TokenStream(producer_of(["b"]))
    assert a.generation_id != b.generation_id and isinstance(a.generation_id, int)
    run(a.wait_closed())                                   # never started: returns at once
    gate = threading.Event()

    def held(stop: threading.Event) -> Iterator[Chunk]:
        gate.wait()
        yield Chunk("x")

    async def main() -> None:
        s = TokenStream(held)
        s.start()
        with pytest.raises(RuntimeError, match="already started"):
            s.start()
        assert s in live_streams()
        worker = next(t for t in threading.enumerate() if t.name == f"brook-decode-{s.generation_id}")
        assert worker.daemon                               # a stuck prefill never keeps the process alive
        gate.set()
        assert [tc.chunk.text async for tc in s] == ["x"]
        await s.wait_closed()
        assert s not in live_streams()
    run(main())


def _deliver(chunks: list[Chunk], maxsize: int = 8) -> tuple[list[Chunk], TokenStream]:
    async def main() -> tuple[list[Chunk], TokenStream]:
        stream = TokenStream(lambda stop: iter(chunks), maxsize=maxsize)
        stream.start()
        out = [tc.chunk async for tc in stream]
        await stream.wait_closed()
        return out, stream
    return run(main())


def test_decoded_and_repaired_chunks_keep_their_token_count_and_stop_reason() -> None:
    out, _ = _deliver([Chunk("", 2, None, "中".encode()[:2]), Chunk("x", 3, "length", "中".encode()[2:]),
                       Chunk("a\ud800b", 4, "stop")])
    assert [(c.text, c.n_tokens, c.finish_reason) for c in out] == [("", 2, None), ("x中", 3, "length"),
                                                                   ("a\ufffdb", 4, "stop")]


def test_the_cut_off_tail_is_one_replacement_character_of_no_token() -> None:
    out, stream = _deliver([Chunk("ok", 1, None, b"\xe4")])
    assert [(c.text, c.n_tokens, c.finish_reason) for c in out] == [("ok", 1, None), ("\ufffd", 0, None)]
    assert list(stream.metrics.chars) == [2, 1]           # characters per enqueued chunk, the tail's too


def test_enqueue_figures_of_a_queue_that_never_fills() -> None:
    out, stream = _deliver([Chunk("abc"), Chunk("de")], maxsize=8)
    m = stream.metrics
    assert list(m.chars) == [3, 2] and m.backpressure_wait_s == 0 and m.backpressure_waits == 0
    assert len(out) == 2


def test_queue_counts_and_the_time_a_put_waited() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        with pytest.raises(ValueError, match=r"^maxsize must be ≥ 1$"):
            ChunkQueue(0, loop)
        q = ChunkQueue(1, loop)
        assert q.high_water == 0 and q.wakeups == 0 and not q.closed
        for expected in (1, 2):                            # each put that finds the consumer waiting wakes it once
            waiting = asyncio.ensure_future(q.get())
            await asyncio.sleep(0)
            assert q.put(expected) == (1, 0.0)
            assert await waiting == expected and q.wakeups == expected
        assert q.high_water == 1
        q.put("full")
        t0 = time.perf_counter()
        waited: list[float] = []
        th = threading.Thread(target=lambda: waited.append(q.put("more")[1]))
        th.start()
        await asyncio.sleep(0.05)
        assert await q.get() == "full"                    # frees the place the worker waits for
        th.join()
        elapsed = time.perf_counter() - t0
        assert 0 < waited[0] <= elapsed                   # the wait it reports is a part of what really passed
        assert await q.get() == "more"
    run(main())


def test_get_batch_after_anext_gives_the_rest_of_that_batch() -> None:
    async def main() -> list[list[str]]:
        stream = TokenStream(producer_of(["a", "b", "c"]), maxsize=8)
        stream.start()
        while stream.queue_depth < 4:                      # three chunks and the end, in one batch
            await asyncio.sleep(0.005)
        first = await stream.__anext__()
        rest = await stream.get_batch()
        await stream.wait_closed()
        return [[first.chunk.text], [c.text for c in rest or []]]
    assert run(main()) == [["a"], ["b", "c"]]
