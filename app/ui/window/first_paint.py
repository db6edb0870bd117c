"""The moment the window's first frame is painted (``FirstPaint``): the start-up's second step begins there
(``MainWindow.finish_start``), and the start-up benchmark reads it as "window shown"."""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QWidget


class FirstPaint(QObject):
    """Calls ``then`` once, in the loop turn right after ``window``'s first frame was painted (its first
    ``UpdateRequest`` or ``Paint`` event), so that work put after the start never delays the first frame;
    ``painted_at`` is then that moment (Unix time, s). ``remove()`` stops watching (``then`` is not called)."""

    def __init__(self, window: QWidget, then: Callable[[], None]) -> None:
        super().__init__(window)
        self.window, self.then = window, then
        self.painted_at: float | None = None
        window.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.window and event.type() in (QEvent.Type.UpdateRequest, QEvent.Type.Paint):
            self.remove()
            QTimer.singleShot(0, self._painted)      # after this event: the frame is painted
        return False

    def _painted(self) -> None:
        if self.painted_at is None:
            self.painted_at = time.time()
        self.then()

    def remove(self) -> None:
        self.window.removeEventFilter(self)
