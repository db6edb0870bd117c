"""The event-loop watchdog in the window: gated by the Qt event loop's own turns, so an idle window stays asleep.

:class:`~app.core.streaming.watchdog.LoopWatchdog` is Qt-free; here its ``loop_awake`` / ``loop_idle`` are fed
from ``QAbstractEventDispatcher.awake`` (the loop woke up) and ``aboutToBlock`` (it is about to wait for
events). Between them the watchdog pings as before (a stuck loop never gets back to ``aboutToBlock``); while the
loop sleeps it sends nothing, so it adds no wake-ups (``python -m app.bench idle``: ~72 wake-ups a second with an
ungated watchdog, the bare loop's own with a gated one).
"""

from __future__ import annotations

import asyncio

from PySide6.QtCore import QAbstractEventDispatcher

from app.core.streaming.watchdog import LoopWatchdog, retune, start_watchdog

_current: list[LoopWatchdog | None] = [None]
_connected: list[bool] = [False]


def _awake() -> None:
    wd = _current[0]
    if wd is not None:
        wd.loop_awake()


def _idle() -> None:
    wd = _current[0]
    if wd is not None:
        wd.loop_idle()


def _gate(wd: LoopWatchdog | None) -> LoopWatchdog | None:
    _current[0] = wd
    dispatcher = QAbstractEventDispatcher.instance()
    if wd is not None and dispatcher is not None and not _connected[0]:
        dispatcher.awake.connect(_awake)
        dispatcher.aboutToBlock.connect(_idle)
        _connected[0] = True
    if wd is not None and not _connected[0]:
        wd.gated = False                 # no dispatcher to report the turns: ping all the time
        wd.loop_awake()
    return wd


def watch_loop(threshold_ms: float, loop: asyncio.AbstractEventLoop | None = None) -> LoopWatchdog | None:
    """Start the window's watchdog (``threshold_ms`` ≤ 0: none, returns None), gated by the Qt loop's turns.
    Call on the loop's thread with the ``QApplication`` made."""
    return _gate(start_watchdog(threshold_ms, loop, gated=True))


def retune_loop_watch(watchdog: LoopWatchdog | None, threshold_ms: float) -> LoopWatchdog | None:
    """A new threshold from the settings (see ``app.core.streaming.watchdog.retune``), still gated."""
    return _gate(retune(watchdog, threshold_ms, gated=True))
