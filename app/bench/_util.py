"""Shared pieces of the streaming benchmarks: statistics, RSS, the JSON result line, a Qt + qasync loop and the
timer's floor. The app's own path into the shown window is ``app.bench.window_path``."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import math
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any


def percentile(values: Sequence[float], p: float) -> float | None:
    """The ``p``-th percentile (0-100) by linear interpolation between closest ranks (numpy's default)."""
    if not values:
        return None
    xs = sorted(values)
    k = (len(xs) - 1) * p / 100.0
    lo, hi = math.floor(k), math.ceil(k)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def median(values: Sequence[float]) -> float | None:
    return percentile(values, 50)


def rss_mb() -> float:
    """Resident set size of this process in MiB (``/proc/self/statm``; peak RSS where that is missing)."""
    try:
        with open("/proc/self/statm") as fh:
            pages = int(fh.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):  # pragma: no cover - not Linux
        import resource
        r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return r / 2**20 if sys.platform == "darwin" else r / 1024


async def wait_until(pred: Callable[[], bool], timeout_s: float = 10.0, poll_s: float = 0.002) -> bool:
    """Poll ``pred`` on the loop every ``poll_s`` seconds until it is true (True) or ``timeout_s`` passed."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while True:
        if pred():
            return True
        if loop.time() > deadline:
            return False
        await asyncio.sleep(poll_s)


def cpu_ticks() -> tuple[int, int] | None:
    """(steal, total) clock ticks of all CPUs since boot (Linux ``/proc/stat``, USER_HZ, usually 10 ms), else
    None. Steal: time the hypervisor ran something else while this machine's virtual CPUs wanted to run — the
    guest counts it as CPU time of whatever thread was on the CPU, so a decode thread's CPU per token grows."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            fields = f.readline().split()
    except OSError:
        return None
    if len(fields) < 9 or fields[0] != "cpu":
        return None
    ticks = [int(x) for x in fields[1:]]
    return ticks[7], sum(ticks[:8])


def steal_share(before: tuple[int, int] | None, after: tuple[int, int] | None) -> float | None:
    """The share of the CPUs' time stolen by the hypervisor between two :func:`cpu_ticks` readings."""
    if before is None or after is None or after[1] <= before[1]:
        return None
    return (after[0] - before[0]) / (after[1] - before[1])


def thread_count() -> int:
    gc.collect()
    return threading.active_count()


def emit(result: dict[str, Any]) -> None:
    """Print the result as the last line (one JSON object, floats rounded)."""
    def clean(v: Any) -> Any:
        if isinstance(v, float):
            return round(v, 4)
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        return v
    sys.stdout.flush()
    print(json.dumps(clean(result)), flush=True)


@contextlib.contextmanager
def qt_loop() -> Iterator[asyncio.AbstractEventLoop]:
    """A QApplication (offscreen unless a platform is set) with a qasync event loop, as in the app."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from app.ui.window.feature_check import install as cheap_feature_check
    from app.ui.window.gui_thread import GuiThreadCollections, close_loop, new_loop

    cheap_feature_check()      # as the launcher: PySide6's check of each import reads the file, not the module
    app = QApplication.instance() or QApplication([])
    collections = GuiThreadCollections()      # as the launcher does: cyclic garbage is freed on this thread
    collections.install()
    loop = new_loop(app)
    asyncio.set_event_loop(loop)
    try:
        yield loop
    finally:
        with contextlib.suppress(Exception):
            loop.run_until_complete(asyncio.sleep(0))
        asyncio.set_event_loop(None)
        close_loop(loop)        # its Qt objects deleted here, on the GUI thread (see app.ui.window.gui_thread)
        gc.collect()            # and what the scenario left behind
        collections.uninstall()   # the caller's collector as it was (a test process goes on with it)


def timer_floor(interval_ms: int, seconds: float = 5.0) -> list[float]:
    """Intervals (ms) of a ``PreciseTimer`` of ``interval_ms`` whose slot does nothing, in a shown, empty window on
    a qasync loop: the floor under a render tick's frame interval on this machine, now (Qt's millisecond timer
    wait, the loop waking, other processes' time), before any work. A reference, not a budget."""
    import itertools
    import time

    from PySide6.QtCore import Qt, QTimer
    from PySide6.QtWidgets import QWidget

    stamps: list[float] = []
    with qt_loop() as loop:
        window = QWidget()
        window.resize(1040, 760)
        window.show()
        timer = QTimer(window)
        timer.setTimerType(Qt.TimerType.PreciseTimer)
        timer.setInterval(interval_ms)
        timer.timeout.connect(lambda: stamps.append(time.perf_counter()))
        timer.start()
        loop.run_until_complete(asyncio.sleep(seconds))
        timer.stop()
        window.close()
        window.deleteLater()
    return [(b - a) * 1e3 for a, b in itertools.pairwise(stamps)]


#: ``BROOK_BENCH_STACKS``: the threshold (ms) of the diagnostic watchdog that names where a long frame went.
DIAGNOSTIC_STALL_MS = 40.0


def window_watchdog(loop: Any) -> tuple[Any, float]:
    """The loop watchdog of a window scenario (``render.measure_window``) and its threshold (ms): the app's own,
    as the launcher starts it (``loop_watch.watch_loop`` at the settings' default threshold: it pings only a loop
    it sees running Python, never one that waits for events), or with ``BROOK_BENCH_STACKS`` a diagnostic one
    that pings every 10 ms whatever the loop does (threshold ``DIAGNOSTIC_STALL_MS``) and says where a long frame
    went. That one is not the app's and disturbs what it watches: in a scenario streaming 10 tokens/s, the
    window's thread was switched out ~200 times a second against none with the app's (``/proc`` counts)."""
    from app.core.settings import AppSettings
    from app.core.streaming.watchdog import LoopWatchdog
    from app.ui.window.loop_watch import watch_loop

    if os.environ.get("BROOK_BENCH_STACKS"):
        diagnostic = LoopWatchdog(loop, DIAGNOSTIC_STALL_MS, min_interval_s=1e9)
        diagnostic.start()
        return diagnostic, DIAGNOSTIC_STALL_MS
    threshold = AppSettings().watchdog_threshold_ms
    wd = watch_loop(threshold, loop)
    assert wd is not None
    wd.min_interval_s = 1e9                         # every stall counted, the first one logged (as before)
    return wd, threshold

