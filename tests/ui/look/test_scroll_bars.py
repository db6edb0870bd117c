"""The chat's scroll bar is drawn by the window's style sheet, flat, in the theme's colour: it repaints on every
render tick while a reply grows, and Fusion's own drawing of it cost 2.5-3.7 ms a paint (a style sheet bar:
0.03 ms; the whole window's repaint went from 4.3-6.3 ms to 0.7 ms)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication

from app.core.conversation import Message, Role
from app.core.settings import AppSettings
from app.engine.scripted import ScriptedEngine
from app.ui.look.style import DARK, LIGHT, is_dark
from app.ui.window.main_window import MainWindow

pytestmark = pytest.mark.timeout(120)


def test_the_chat_scroll_bar_is_flat_in_the_theme_colour(qtbot) -> None:  # type: ignore[no-untyped-def]
    w = MainWindow(ScriptedEngine(["Hi"], tokens_per_s=0), AppSettings.load(), None)
    qtbot.addWidget(w)
    w.resize(900, 600)
    w.show()
    for i in range(12):                                       # taller than the view: the bar shows
        w.chat.add(Message(Role.USER if i % 2 == 0 else Role.ASSISTANT, "line\n\n" * 12))
    QApplication.processEvents()
    bar = w.chat.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.isVisible() and bar.maximum() > 0)
    bar.setValue(0)
    QApplication.processEvents()
    colours = DARK if is_dark() else LIGHT
    image = bar.grab().toImage()
    handle = image.pixelColor(QPoint(image.width() // 2, 30))     # the handle's middle, at the top
    track = image.pixelColor(QPoint(image.width() // 2, image.height() - 4))
    assert handle == QColor(colours["scroll"]), handle.name()
    assert track == QColor(colours["bg"]), track.name()
    assert bar.width() == 12
