"""The prompt box under the messages."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QFocusEvent, QKeyEvent
from PySide6.QtWidgets import QApplication, QPlainTextEdit, QSizePolicy, QWidget

#: Seconds without a key, click or focus change after which the caret stops blinking (and stays shown): GTK's
#: ``gtk-cursor-blink-timeout`` (10 s). A blinking caret wakes the window twice a second; an idle window sleeps.
CARET_REST_S = 10.0


_flash: list[int] = []     # the system's caret flash time (ms), as first seen: a resting caret sets it to 0


def _system_flash_ms() -> int:
    """The platform's caret flash time (ms; 0: the caret never blinks), as it was before any prompt box rested
    its caret — a box made while another one's caret rests (a second window, or the next test) must not take
    the rest's 0 for the system's setting, or its caret would never blink again."""
    if not _flash:
        _flash.append(QApplication.cursorFlashTime())
    return _flash[0]


class ChatInput(QPlainTextEdit):
    """The prompt box: Enter sends, Shift+Enter inserts a new line, Esc asks to stop. Its caret stops blinking
    after ``CARET_REST_S`` without input (``caret_resting``) and blinks again at the next key, click or focus."""

    submitted = Signal()
    escape = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setPlaceholderText(self.tr("Ask anything…  (Enter to send, Shift+Enter for a new line, Esc to stop)"))
        self.setTabChangesFocus(True)
        self.setMaximumHeight(96)
        self.setMinimumHeight(48)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Maximum)
        self._flash_ms = _system_flash_ms()
        self._rest = QTimer(self)
        self._rest.setSingleShot(True)
        self._rest.setInterval(int(CARET_REST_S * 1000))
        self._rest.timeout.connect(self._rest_caret)
        self.viewport().installEventFilter(self)

    @property
    def caret_resting(self) -> bool:
        """Whether the caret has stopped blinking (no input for ``CARET_REST_S``)."""
        return QApplication.cursorFlashTime() == 0 and self._flash_ms > 0

    def _rest_caret(self) -> None:
        if self._flash_ms > 0:
            QApplication.setCursorFlashTime(0)

    def wake_caret(self) -> None:
        """Input happened: the caret blinks again, and rests after ``CARET_REST_S`` more."""
        if self.caret_resting:
            QApplication.setCursorFlashTime(self._flash_ms)
        self._rest.start()

    def eventFilter(self, obj: QObject, e: QEvent) -> bool:
        if e.type() in (QEvent.Type.MouseButtonPress, QEvent.Type.Wheel):
            self.wake_caret()
        return super().eventFilter(obj, e)

    def focusInEvent(self, e: QFocusEvent) -> None:
        self.wake_caret()
        super().focusInEvent(e)

    def keyPressEvent(self, e: QKeyEvent) -> None:
        self.wake_caret()
        if e.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            if e.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                self.insertPlainText("\n")
            else:
                self.submitted.emit()
            return
        if e.key() == Qt.Key.Key_Escape:
            self.escape.emit()
            return
        super().keyPressEvent(e)
