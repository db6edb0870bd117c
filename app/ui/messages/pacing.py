"""Frame pacing for the render tick: the window's paints are held between the tick's work and its beat.

The render tick (``app.ui.messages.coalescer``) does its work — feed the renderer, patch the documents, lay the
list out — in the loop turn after the previous frame's paint, and shows it at the next firing of its timer (the
*beat*). While the work is done and not shown yet, :class:`FrameHold` keeps the window's update requests
(``QEvent.UpdateRequest``, to the top-level widget and to its ``QWindow``) from being delivered: Qt keeps the
dirty region and paints all of it at the beat, when :meth:`FrameHold.release` posts one request. So a frame
reaches the screen at a beat plus its paint, whatever the work cost, instead of at a beat plus the work's cost
plus the paint (the work's cost varies from tick to tick by several ms: that variation was most of the frame
intervals over 16.7 ms in ``python -m app.bench render``; see docs/architecture.md, *the render tick*).
"""

from __future__ import annotations

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
