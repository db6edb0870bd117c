"""Frame pacing for the render tick: the window's paints are held between the tick's work and its beat.

The render tick (``app.ui.messages.coalescer``) does its work — feed the renderer, patch the documents, lay the
list out — in the loop turn after the previous frame's paint, and shows it at the next firing of its timer (the
*beat*). While the work is done and not shown yet, :class:`FrameHold` keeps the window's update requests
(``QEvent.UpdateRequest``, to the top-level widget and to its ``QWindow``) from being delivered: Qt keeps the
dirty region and paints all of it at the beat, when :meth:`FrameHold.release` posts one request. So a frame
reaches the screen at a beat plus its paint, whatever the work cost, instead of at a beat plus the work's cost
plus the paint (the work's cost varies from tick to tick by several ms: that variation was most of the frame
intervals over 16.7 ms in ``python -m app.bench render``; see docs/architecture.md, *the render tick*).

The beats themselves are put on the timer's exact grid by :class:`BeatGrid` (a Qt timer fires up to ~1 ms late).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import shiboken6
from PySide6.QtCore import QCoreApplication, QEvent, QObject
from PySide6.QtWidgets import QWidget


class FrameHold(QObject):
    """Holds the update requests of ``window`` (a top-level widget) while :attr:`held`.

    ``swallowed`` counts the requests held since the last :meth:`release` (the tests read it).
    """

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.window = window
        self.held = False
        self.swallowed = 0
        self._handle: QObject | None = None
        window.installEventFilter(self)

    def hold(self) -> None:
        """Hold the window's paints from now on (the work of a frame begins)."""
        handle = self.window.windowHandle()       # made when the window is first shown
        if handle is not None and handle is not self._handle:
            if self._handle is not None:
                self._handle.removeEventFilter(self)
            handle.installEventFilter(self)
            self._handle = handle
        self.held = True

    def release(self, present: bool = True) -> None:
        """Stop holding; with ``present``, have the window paint what changed in the next loop turn (one update
        request, posted: painted before anything posted after it)."""
        self.held = False
        self.swallowed = 0
        if present:
            QCoreApplication.postEvent(self.window, QEvent(QEvent.Type.UpdateRequest))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if self.held and event.type() == QEvent.Type.UpdateRequest:
            self.swallowed += 1
            return True
        return False

    def remove(self) -> None:
        """Release (presenting what was held) and stop watching the window (nothing left to do once the window
        is deleted: this hold is its child)."""
        if not shiboken6.isValid(self) or not shiboken6.isValid(self.window):
            return
        if self.held:
            self.release()
        self.window.removeEventFilter(self)
        if self._handle is not None:
            self._handle.removeEventFilter(self)
            self._handle = None


#: How long past the timer's own grid a beat is shown (s). A ``QTimer``, even a ``PreciseTimer``, keeps its due
#: times on an exact grid but waits for them in whole milliseconds: a firing is late by 0 to ~1.1 ms, depending
#: on when the loop last went to sleep (measured in the window streaming at 100 tokens/s: every late beat came
#: from a loop that had slept since it last woke; a bare 16 ms timer beside a 7 ms one: intervals 15.3-16.7 ms).
#: Waiting that long after the grid, the beats' intervals keep 16.0 ± 0.1 ms (the same two timers: 15.96-16.05).
BEAT_SLACK_S = 0.0011


class BeatGrid:
    """Puts the beats of a repeating timer on its exact grid: :meth:`wait` (called first thing in the timer's
    slot) sleeps until the grid time of this firing plus :data:`BEAT_SLACK_S`, when the firing came earlier.

    The grid is learnt from the firings: the earliest of them since the grid was set (a firing is never early,
    only late), counted in intervals. It is set again when the interval changes or the timer was restarted
    (:meth:`reset`), and when a firing is late by more than half an interval (Qt moves its grid then); the
    firing that sets it is held for the slack like the beats after it, so the interval to the next is the
    timer's. Any other firing that is late by more than the slack is not held at all (the loop was busy: it is
    late as it is).
    ``sleep`` and ``clock`` (seconds) are the tests' to replace. Source of the technique: frame pacing in game
    loops — sleep the coarse part of the wait with the system's timer, then the fine rest with a precise one.
    """

    def __init__(self, sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self._sleep = sleep
        self._clock = clock
        self._origin: float | None = None   # the grid's time for firing 0 (s)
        self._k = 0                         # firings since the origin
        self._interval = 0.0
        self.waited_s = 0.0                 # slept in all (the tests, benchmarks)

    def reset(self) -> None:
        """The timer was (re)started: its grid starts again at its next firing."""
        self._origin = None

    def wait(self, interval_ms: float) -> None:
        """A firing of a timer of ``interval_ms``: return at its grid time plus the slack (at once when later)."""
        t = self._clock()
        interval = interval_ms / 1000.0
        origin = self._origin
        due = origin + (self._k + 1) * interval if origin is not None else t
        if origin is None or interval != self._interval or t - due > interval / 2:
            # a new grid (a new timer or interval, or far behind: a stall, and Qt moved its grid): this firing is
            # its origin, shown after the slack as every beat on it will be (shown at once, it made the next
            # interval the timer's plus the slack: the second frame of every reply was 17.1 ms)
            self._origin, self._k, self._interval = t, 0, interval
            self._hold(BEAT_SLACK_S)
            return
        self._k += 1
        if t < due:                              # earlier than any firing before: the grid is earlier
            self._origin = origin - (due - t)
            due = t
        self._hold(due + BEAT_SLACK_S - t)

    def _hold(self, rest: float) -> None:
        if rest > 0:
            self._sleep(rest)
            self.waited_s += rest
