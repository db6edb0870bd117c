"""The real window on the scripted engine, for view tests (offscreen)."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QApplication

from app.core.conversation import Conversation
from app.engine.scripted import ScriptedEngine
from app.ui.window.main_window import MainWindow


def scripted_window(qtbot: Any, width: int = 900, height: int = 700) -> MainWindow:
    """A shown, exposed ``MainWindow`` of ``width`` × ``height`` px over a ``ScriptedEngine``."""
    w = MainWindow(ScriptedEngine())
    qtbot.addWidget(w)
    w.resize(width, height)
    w.show()
    qtbot.waitExposed(w)
    return w


def show_chat(window: MainWindow, conv: Conversation) -> None:
    """Show ``conv``'s messages as opening a chat does: the welcome page makes way for the message list (a list
    shown behind the welcome page is hidden, and its geometry says nothing about what a person sees)."""
    for m in conv.messages:
        window.session.conversation.add(m)
    window.conversation_shown(window.session.conversation)
    QApplication.processEvents()
    assert window.chat.isVisible()
