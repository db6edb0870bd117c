"""The event-loop watchdog in the window: it never wakes a loop that waits for events, and still sees a stall.

:class:`~app.core.streaming.watchdog.LoopWatchdog` is Qt-free; here its ``loop_idle`` is fed from
``QAbstractEventDispatcher.aboutToBlock`` with the Python frame the loop waits in (the one that called into Qt's
event dispatcher: ``app.exec()`` in qasync's ``run_forever``, or a dialog's ``exec()`` in a callback). Qt emits
``aboutToBlock`` before a turn's wait *and its dispatch* (``awake`` comes after both): the watchdog looks at the
loop thread's innermost frame and pings only a loop that has run Python for a whole ping period since it last
waited, so an idle window is not woken (``python -m app.bench idle``: ~72 wake-ups a second with an ungated
watchdog, the bare loop's own with this one) and a slot that blocks is still reported.
"""

from __future__ import annotations

import asyncio
import sys

from PySide6.QtCore import QAbstractEventDispatcher

from app.core.streaming.watchdog import LoopWatchdog, retune, start_watchdog

_current: list[LoopWatchdog | None] = [None]
_connected: list[bool] = [False]


def _idle() -> None:
    wd = _current[0]
    if wd is not None:
        wd.loop_idle(sys._getframe(1))      # the frame that called into the dispatcher: where the loop waits


def _gate(wd: LoopWatchdog | None) -> LoopWatchdog | None:
    _current[0] = wd
    dispatcher = QAbstractEventDispatcher.instance()
    if wd is not None and dispatcher is not None and not _connected[0]:
        dispatcher.aboutToBlock.connect(_idle)
        _connected[0] = True
    if wd is not None and not _connected[0]:
        wd.gated = False                 # no dispatcher to say where the loop waits: ping all the time
    return wd


def watch_loop(threshold_ms: float, loop: asyncio.AbstractEventLoop | None = None) -> LoopWatchdog | None:
    """Start the window's watchdog (``threshold_ms`` ≤ 0: none, returns None), gated by where the Qt loop waits.
    Call on the loop's thread with the ``QApplication`` made."""
    return _gate(start_watchdog(threshold_ms, loop, gated=True))


def retune_loop_watch(watchdog: LoopWatchdog | None, threshold_ms: float) -> LoopWatchdog | None:
    """A new threshold from the settings (see ``app.core.streaming.watchdog.retune``), still gated."""
    return _gate(retune(watchdog, threshold_ms, gated=True))
