"""The engine host's decode clock: where a decode thread's time went (on a CPU, waiting for one, blocked)."""

from __future__ import annotations

import os
import threading
import time

import pytest

from app.engine.host import DecodeClock, thread_schedule


@pytest.mark.skipif(not os.path.exists("/proc/thread-self/schedstat"), reason="Linux schedstat")
def test_the_decode_clock_tells_time_on_a_cpu_from_time_blocked() -> None:
    busy = DecodeClock()
    outer = time.perf_counter()
    busy.start()
    x = 0
    for i in range(300_000):
        x += i
    busy.tokens = 3
    spun = busy.stop()
    outer_ms = (time.perf_counter() - outer) * 1e3
    idle = DecodeClock()
    idle.start()
    threading.Event().wait(0.05)
    slept = idle.stop()
    assert spun["tokens"] == 3 and spun["cpu_ms"] > 0
    # the OS counts from just before the clock's own start to just after its stop, and schedstat's run time of a
    # running thread is brought up to date only at a scheduler tick (≤ 10 ms at HZ ≥ 100): the bound is the
    # time around start() … stop() plus one tick
    assert spun["cpu_ms"] + spun["wait_ms"] <= outer_ms + 10
    assert slept["wall_ms"] >= 50 and slept["cpu_ms"] < slept["wall_ms"] / 2     # blocked, not on a CPU


@pytest.mark.skipif(not os.path.exists("/proc/thread-self/schedstat"), reason="Linux schedstat")
def test_a_clock_that_never_started_reports_nothing() -> None:
    assert DecodeClock().stop() == {"tokens": 0, "wall_ms": 0.0, "cpu_ms": None, "wait_ms": None}
    schedule = thread_schedule()       # this test runs where /proc has schedstat (the skipif above)
    assert schedule is not None and len(schedule) == 2 and all(v >= 0 for v in schedule)
