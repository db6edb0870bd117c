"""Stop latency is a figure of replies that were stopped: a reply that ended by itself has none, even when its
worker thread is still returning as the reply ends (the inspector showed "stop latency 9.8 ms" for a done one)."""

from __future__ import annotations

import threading

import pytest

import app.core.streaming.stream as stream_module
from app.core.streaming.stream import TokenStream
from app.core.types import Chunk
from tests.helpers import run, until

pytestmark = pytest.mark.timeout(60)


def test_a_stream_that_delivered_its_end_is_not_stopped_by_the_final_request_stop() -> None:
    gate = threading.Event()

    def engine(stop):  # type: ignore[no-untyped-def]
        yield Chunk("a")
        gate.wait(30)
        yield Chunk("", 0, "stop")

    async def main() -> TokenStream:
        stream = TokenStream(engine)
        stream.start()
        with stream_module._live_lock:      # holds the worker just after it put its end: still alive
            gate.set()
            while await stream.get_batch() is not None:
                pass
            assert stream.alive
            stream.request_stop()            # what generate() does at the end of every reply
        await stream.wait_closed()
        return stream

    stream = run(main())
    assert stream.metrics.t_stop is None and stream.metrics.summary().stop_latency_ms is None


def test_a_stream_stopped_mid_reply_has_a_stop_latency() -> None:
    async def main() -> TokenStream:
        def slow(stop):  # type: ignore[no-untyped-def]
            for i in range(10_000):
                if stop.wait(0.002):
                    return
                yield Chunk(f"{i} ")

        stream = TokenStream(slow)
        stream.start()
        await until(lambda: len(stream.metrics.enqueued) > 3)
        stream.request_stop()
        await stream.wait_closed()
        return stream

    stream = run(main())
    latency = stream.metrics.summary().stop_latency_ms
    assert stream.metrics.t_stop is not None and latency is not None and latency >= 0
