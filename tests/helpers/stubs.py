"""Stand-ins for Qt objects whose timing a test must control (modelled on qutebrowser's ``tests/helpers/stubs.py``).

Imports PySide6: use from GUI tests only.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, Signal


class FakeTimer(QObject):
    """A ``QTimer`` that never fires by itself: the test calls :meth:`fire` (one ``timeout``) when it wants a tick.

    Keeps what the code under test asked of it (``interval()``, ``isActive()``, ``timerType()``, and every
    interval it was given in ``intervals``) so the test can check it.
    """

    timeout = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._interval = 0
        self._active = False
        self._single_shot = False
        self._type = Qt.TimerType.CoarseTimer
        self.intervals: list[int] = []

    def setInterval(self, ms: int) -> None:
        self._interval = ms
        self.intervals.append(ms)

    def interval(self) -> int:
        return self._interval

    def setTimerType(self, kind: Qt.TimerType) -> None:
        self._type = kind

    def timerType(self) -> Qt.TimerType:
        return self._type

    def setSingleShot(self, single: bool) -> None:
        self._single_shot = single

    def isSingleShot(self) -> bool:
        return self._single_shot

    def start(self, ms: int | None = None) -> None:
        if ms is not None:
            self.setInterval(ms)
        self._active = True

    def stop(self) -> None:
        self._active = False

    def isActive(self) -> bool:
        return self._active

    def fire(self) -> None:
        """One tick: emits ``timeout`` (a stopped timer does not fire: that is an error in the test)."""
        if not self._active:
            raise RuntimeError("FakeTimer.fire() on a stopped timer")
        if self._single_shot:
            self._active = False
        self.timeout.emit()


class FakeClock:
    """A monotonic clock (seconds) that moves only when told: ``advance(seconds)``."""

    def __init__(self, start: float = 1000.0) -> None:
        self.t = start

    def __call__(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds
