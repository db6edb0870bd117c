"""The window's watchdog is gated by where the Qt loop waits (``QAbstractEventDispatcher.aboutToBlock``)."""

from __future__ import annotations

import asyncio
import time

from PySide6.QtCore import QEventLoop, QTimer

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


def _block_until_seen(wd, seconds: float) -> None:  # type: ignore[no-untyped-def]
    """A slot that blocks the loop ``seconds``, then (still blocking) until the watchdog took the stall's stack:
    a starved watchdog thread cannot miss it."""
    time.sleep(seconds)
    deadline = time.monotonic() + 60
    while not wd.in_stall and time.monotonic() < deadline:
        time.sleep(0.005)


def test_the_window_watchdog_never_pings_a_waiting_loop_and_sees_a_slot_that_blocks(qloop) -> None:  # type: ignore[no-untyped-def]
    """Qt reports ``aboutToBlock`` before a turn's wait and its dispatch, ``awake`` after both: a slot that blocks
    runs between them. The watchdog still sees it (it looks at where the loop is, not at those signals), and a
    loop that waits — in its own wait or in a dialog's nested one — is looked at, never pinged."""
    wd = watch_loop(60.0, qloop)
    assert wd is not None
    try:
        qloop.run_until_complete(asyncio.sleep(0.4))            # an idle window: it waits for events
        assert wd.pings == 0 and wd.looks >= 2 and wd.stalls == 0

        def modal() -> None:                                    # a dialog's exec(): a nested loop that waits
            nested = QEventLoop()
            QTimer.singleShot(400, nested.quit)
            nested.exec()

        done = qloop.create_future()
        QTimer.singleShot(0, lambda: (modal(), done.set_result(None)))
        qloop.run_until_complete(done)
        assert wd.pings == 0 and wd.stalls == 0

        blocked = qloop.create_future()
        QTimer.singleShot(0, lambda: (_block_until_seen(wd, 0.3), blocked.set_result(None)))
        qloop.run_until_complete(blocked)
        deadline = time.monotonic() + 60
        while wd.stalls == 0 and time.monotonic() < deadline:
            qloop.run_until_complete(asyncio.sleep(0.01))
        assert wd.stalls == 1 and wd.pings >= 1
        assert wd.last_stall is not None and "_block_until_seen" in wd.last_stall.stack
    finally:
        wd.stop()
