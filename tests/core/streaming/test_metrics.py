"""StreamMetrics / ReplySummary: where each number comes from."""

from __future__ import annotations

import logging

import pytest

from app.core.streaming.metrics import BACKPRESSURE_WARN_S, StreamMetrics


def test_summary_from_stamps() -> None:
    m = StreamMetrics(t_request=10.0)
    m.t_slot = 10.5
    for i in range(5):
        m.on_produced(11.0 + i * 0.1, 1)          # first token 0.5 s after the slot, then 10 tokens/s
        m.on_enqueued(11.0 + i * 0.1 + 0.001, depth=i + 1, waited_s=0.0)
    m.on_dequeued(11.05, 2)
    m.on_dequeued(11.45, 3)
    m.on_painted(11.06, 2, 0.004)
    m.on_painted(11.46, 3, 0.009)
    m.on_painted(11.50, 0, 0.5)                   # nothing new: not a painting tick
    m.t_end = 11.5
    s = m.summary()
    assert s.wait_ms == pytest.approx(500)
    assert s.prefill_ms == pytest.approx(500)
    assert s.first_paint_ms == pytest.approx(60)
    assert s.ttft_ms == pytest.approx(560)
    assert s.decode_tokens == 5 and s.decode_tokens_per_s == pytest.approx(10)
    assert s.chunks == 5 and s.chunks_painted == 5
    assert s.queue_high_water == 5
    assert s.ticks == 2 and s.longest_tick_ms == pytest.approx(9)
    assert s.total_ms == pytest.approx(1000)
    assert s.stop_latency_ms is None
    d = s.as_dict()
    assert set(d) >= {"ttft_ms", "prefill_ms", "first_paint_ms", "decode_tokens_per_s", "queue_high_water",
                      "backpressure_waits", "backpressure_wait_ms", "ticks", "longest_tick_ms"}
    assert "tok/s=10.0" in s.log_line()


def test_empty_summary_is_safe() -> None:
    s = StreamMetrics().summary()
    assert s.ttft_ms is None and s.decode_tokens_per_s is None and s.chunks == 0
    assert "ttft=-" in s.log_line()


def test_backpressure_counts_and_warns(caplog: pytest.LogCaptureFixture) -> None:
    m = StreamMetrics()
    with caplog.at_level(logging.WARNING, logger="brook.metrics"):
        m.on_enqueued(1.0, 4, 0.01)                       # short wait: counted in the total only
        m.on_enqueued(2.0, 4, BACKPRESSURE_WARN_S + 0.05)
    s = m.summary()
    assert s.backpressure_waits == 1
    assert s.backpressure_wait_ms == pytest.approx(160)
    assert len(caplog.records) == 1 and "150 ms" in caplog.records[0].getMessage()


def test_caught_up_callback_fires_once_after_the_end() -> None:
    m = StreamMetrics()
    calls: list[int] = []
    m.on_caught_up = lambda: calls.append(1)
    m.on_dequeued(1.0, 3)
    m.on_painted(1.1, 3, 0.001)                   # all painted, but the generation has not ended
    assert calls == []
    m.on_dequeued(1.2, 1)
    m.t_end = 1.3
    m.on_painted(1.4, 1, 0.001)
    m.on_painted(1.5, 1, 0.001)
    assert calls == [1] and m.caught_up


def test_stop_latency() -> None:
    m = StreamMetrics()
    m.t_stop, m.t_worker_done = 5.0, 5.012
    assert m.summary().stop_latency_ms == pytest.approx(12)


def test_stamps_are_compact() -> None:
    """A long reply's stamps cost ~8 bytes each (no float object per stamp: that would be ~32); with the
    chunk's queue depth and length (4 bytes each, for the stream inspector) ~12 per stamp."""
    import tracemalloc

    n = 20_000
    m = StreamMetrics()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(n):
            m.on_produced(i * 0.001, 1)
            m.on_enqueued(i * 0.001, depth=1, waited_s=0.0, n_chars=4)
        used = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert used / (2 * n) < 14, f"{used / (2 * n):.1f} bytes per stamp"
    assert list(m.produced[:3]) == [0.0, 0.001, 0.002] and len(m.enqueued) == n
