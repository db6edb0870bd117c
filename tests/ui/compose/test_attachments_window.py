"""Attachments in the real window (scripted engine): a file and a long paste go with the message, once."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from app.core.chat.attachments import split_attachments
from app.engine.scripted import ScriptedEngine
from app.ui.window.main_window import MainWindow

pytestmark = pytest.mark.timeout(60)


def test_file_and_long_paste_are_sent_with_the_message(qtbot, qloop, tmp_path: Path) -> None:
    w = MainWindow(ScriptedEngine(tokens_per_s=0))
    qtbot.addWidget(w)
    w.show()
    assert qloop.run_until_complete(w.load_model())
    try:
        bar = w.attachments
        src = tmp_path / "main.py"
        src.write_text("def f():\n    return 1\n", "utf-8")
        assert qloop.run_until_complete(bar.add_file(src)) is not None and bar.isVisibleTo(w)
        assert qloop.run_until_complete(bar.add_file(tmp_path / "missing.txt")) is None
        assert "Cannot read" in bar.error.text()
        QGuiApplication.clipboard().setText("log line\n" * 1000)
        w.input.setFocus()
        qtbot.keyClick(w.input, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
        assert w.input.toPlainText() == "" and [a.name for a in bar.items] == ["main.py", "pasted text"]
        qtbot.keyClicks(w.input, "What does this do?")
        qtbot.keyClick(w.input, Qt.Key.Key_Return)
        user = w.session.conversation.messages[0]
        own, atts = split_attachments(user.text)
        assert own == "What does this do?" and [a.name for a in atts] == ["main.py", "pasted text"]
        assert atts[0].text == "def f():\n    return 1\n" and bar.items == [] and not bar.isVisibleTo(w)
        widget = w.chat.widget_for(user)
        if widget is not None:                             # the message shows its attachments folded
            from PySide6.QtWidgets import QLabel

            from app.ui.messages.chat_view import PlainTextView

            [body] = widget.findChildren(PlainTextView)
            chips = [c.text() for c in widget.findChildren(QLabel) if c.objectName() == "attachmentChip"]
            assert body.toPlainText() == "What does this do?" and len(chips) == 2 and "main.py" in chips[0]
    finally:
        qloop.run_until_complete(w.shutdown())


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_a_device_and_odd_utf16_are_refused_without_blocking_the_window(qtbot, qloop, tmp_path: Path) -> None:
    import os

    w = MainWindow(ScriptedEngine(tokens_per_s=0))
    qtbot.addWidget(w)
    w.show()
    try:
        bar = w.attachments
        fifo = tmp_path / "pipe.log"
        os.mkfifo(fifo)
        odd = tmp_path / "odd.txt"
        odd.write_bytes(b"\xff\xfe" + "abc".encode("utf-16-le") + b"x")
        for path, words in ((fifo, "(a pipe)"), (Path("/dev/zero"), "(a device)"), (odd, "UTF-16 text cut short")):
            assert qloop.run_until_complete(bar.add_file(path)) is None
            assert words in bar.error.text() and bar.items == []
    finally:
        qloop.run_until_complete(w.shutdown())
