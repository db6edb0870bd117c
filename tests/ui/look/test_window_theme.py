"""A live switch of the system theme restyles the whole window (issue 9: user text became near-invisible because
the window's stylesheet kept the light theme's colours after the system switched to dark)."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from app.core.settings import AppSettings
from app.engine.scripted import ScriptedEngine
from app.ui.look.style import DARK, LIGHT
from app.ui.window.main_window import MainWindow

pytestmark = pytest.mark.timeout(120)


def test_the_window_follows_a_live_switch_to_dark_and_back(qtbot) -> None:  # type: ignore[no-untyped-def]
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    before = app.palette()
    app.setPalette(QPalette(QColor("#f0f0f0")))                   # a light system theme
    try:
        w = MainWindow(ScriptedEngine(["Hi"], tokens_per_s=0), AppSettings.load(), None)
        qtbot.addWidget(w)
        w.show()
        assert f"color: {LIGHT['text']}" in w.styleSheet()
        app.setPalette(QPalette(QColor("#202020")))               # the system switched to dark
        qtbot.waitUntil(lambda: f"color: {DARK['text']}" in w.styleSheet())
        assert f"color: {LIGHT['text']}" not in w.styleSheet()
        app.setPalette(QPalette(QColor("#f0f0f0")))               # and back
        qtbot.waitUntil(lambda: f"color: {LIGHT['text']}" in w.styleSheet())
    finally:
        app.setPalette(before)
