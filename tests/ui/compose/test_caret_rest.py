"""The prompt box's caret stops blinking after a quiet while (an idle window sleeps) and blinks at the next key."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from app.ui.compose.chat_input import CARET_REST_S, ChatInput, _system_flash_ms


def _blinking() -> int:
    """Start from a blinking caret: another test's window may have left its caret resting (the flash time is
    application-wide)."""
    QApplication.setCursorFlashTime(_system_flash_ms())
    return QApplication.cursorFlashTime()


def test_the_caret_rests_after_a_quiet_while_and_blinks_again_at_a_key(qtbot) -> None:  # type: ignore[no-untyped-def]
    flash = _blinking()
    box = ChatInput()
    qtbot.addWidget(box)
    assert flash > 0 and not box.caret_resting
    box.wake_caret()
    assert box._rest.isActive() and box._rest.interval() == int(CARET_REST_S * 1000)
    box._rest.timeout.emit()                      # the quiet time passed
    assert box.caret_resting and QApplication.cursorFlashTime() == 0
    qtbot.keyClick(box, Qt.Key.Key_A)              # typing: it blinks again, and rests again later
    assert not box.caret_resting and QApplication.cursorFlashTime() == flash and box._rest.isActive()
    assert box.toPlainText() == "a"


def test_a_box_made_while_another_caret_rests_still_blinks_at_a_key(qtbot) -> None:  # type: ignore[no-untyped-def]
    flash = _blinking()
    first = ChatInput()
    qtbot.addWidget(first)
    first.wake_caret()
    first._rest.timeout.emit()                    # the first box's caret rests: the app-wide flash time is 0
    assert QApplication.cursorFlashTime() == 0
    second = ChatInput()                          # e.g. a second window, made while the first rests
    qtbot.addWidget(second)
    qtbot.keyClick(second, Qt.Key.Key_A)
    assert QApplication.cursorFlashTime() == flash > 0 and not second.caret_resting
