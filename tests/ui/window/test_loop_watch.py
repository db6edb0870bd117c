"""The window's watchdog is gated by the Qt loop's own turns (``QAbstractEventDispatcher.awake``/``aboutToBlock``)."""

from __future__ import annotations

import asyncio

from app.ui.window.loop_watch import retune_loop_watch, watch_loop


def test_the_window_watchdog_hears_the_loops_turns_and_stays_gated_when_retuned(qloop) -> None:  # type: ignore[no-untyped-def]
    wd = watch_loop(100.0, qloop)
    assert wd is not None
    try:
        assert wd.gated and wd.running
        turns = wd._turns
        for _ in range(5):
            qloop.run_until_complete(asyncio.sleep(0.02))    # the loop waits for its timer: a turn each time
        assert wd._turns > turns
        again = retune_loop_watch(wd, 250.0)
        assert again is wd and wd.threshold_ms == 250.0 and wd.gated
        assert retune_loop_watch(wd, 0) is None and not wd.running
    finally:
        wd.stop()
