"""The prompt box's caret stops blinking after a quiet while (an idle window sleeps) and blinks at the next key."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from app.ui.compose.chat_input import CARET_REST_S, ChatInput


def test_the_caret_rests_after_a_quiet_while_and_blinks_again_at_a_key(qtbot) -> None:  # type: ignore[no-untyped-def]
    box = ChatInput()
    qtbot.addWidget(box)
    flash = QApplication.cursorFlashTime()
    assert flash > 0 and not box.caret_resting
    box.wake_caret()
    assert box._rest.isActive() and box._rest.interval() == int(CARET_REST_S * 1000)
    box._rest.timeout.emit()                      # the quiet time passed
    assert box.caret_resting and QApplication.cursorFlashTime() == 0
    qtbot.keyClick(box, Qt.Key.Key_A)              # typing: it blinks again, and rests again later
    assert not box.caret_resting and QApplication.cursorFlashTime() == flash and box._rest.isActive()
    assert box.toPlainText() == "a"
