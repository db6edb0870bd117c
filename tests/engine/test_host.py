"""The engine host's decode clock: where a decode thread's time went (on a CPU, waiting for one, blocked)."""

from __future__ import annotations

import os
import sys
import threading
import time

import pytest

from app.engine.host import DecodeClock, run_niced, thread_nice, thread_schedule


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


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="nice is per thread on Linux only")
def test_niced_work_runs_in_a_thread_of_lower_priority_and_leaves_the_callers() -> None:
    ours = thread_nice()
    assert ours is not None
    seen = run_niced(thread_nice, 5)
    assert seen == min(19, ours + 5)
    assert thread_nice() == ours                        # the caller (and the threads it makes later) keep theirs
    made_later: list[int | None] = []
    t = threading.Thread(target=lambda: made_later.append(thread_nice()))
    t.start()
    t.join()
    assert made_later == [ours]
    assert run_niced(thread_nice, 0) == ours            # 0: here, as it is


def test_what_niced_work_raises_is_raised_to_the_caller() -> None:
    def fails() -> None:
        raise ValueError("bad model")

    with pytest.raises(ValueError, match="bad model"):
        run_niced(fails, 3)
