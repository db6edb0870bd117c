"""The moment the window's first frame is painted (``FirstPaint``): the start-up's second step begins there
(``MainWindow.finish_start``), and the start-up benchmark reads it as "window shown"."""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QWidget

#: ``then`` runs at the latest this long after the window was made (ms), painted or not (a window shown
#: minimized, or never shown): what comes after the start never waits for a frame that does not come.
FALLBACK_MS = 1500


class FirstPaint(QObject):
    """Calls ``then`` once, in the loop turn right after ``window``'s first frame was painted (its first
    ``UpdateRequest`` or ``Paint`` event), so that work put after the start never delays the first frame;
    ``painted_at`` is then that moment (Unix time, s). Without a frame, ``then`` runs after ``FALLBACK_MS``
    (``painted_at`` stays None). ``remove()`` stops watching."""

    def __init__(self, window: QWidget, then: Callable[[], None], *, fallback_ms: int = FALLBACK_MS) -> None:
        super().__init__(window)
        self.window, self.then = window, then
        self.painted_at: float | None = None
        window.installEventFilter(self)
        self._fallback = QTimer(self)
        self._fallback.setSingleShot(True)
        self._fallback.timeout.connect(self._done)
        self._fallback.start(fallback_ms)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.window and event.type() in (QEvent.Type.UpdateRequest, QEvent.Type.Paint):
            self.remove()
            QTimer.singleShot(0, self._painted)      # after this event: the frame is painted
        return False

    def _painted(self) -> None:
        if self.painted_at is None:
            self.painted_at = time.time()
        self._done()

    def _done(self) -> None:
        self.remove()
        self.then()

    def remove(self) -> None:
        """Stop watching (and the fallback)."""
        self._fallback.stop()
        self.window.removeEventFilter(self)
