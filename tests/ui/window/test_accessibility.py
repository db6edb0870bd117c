"""Accessibility: every control a person can reach has a name a screen reader can say, and a reply's status
changes are announced (its status label's accessible name follows the status)."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSpinBox,
    QComboBox,
    QLineEdit,
    QPlainTextEdit,
    QWidget,
)

from app.core.history.store import Store
from app.engine.scripted import ScriptedEngine
from app.ui.window.main_window import MainWindow
from tests.helpers import until

pytestmark = pytest.mark.timeout(60)
CONTROLS = (QAbstractButton, QLineEdit, QPlainTextEdit, QAbstractItemView, QComboBox, QAbstractSpinBox)


def test_every_control_has_a_name_and_status_changes_are_announced(qtbot, qloop, tmp_path) -> None:
    w = MainWindow(ScriptedEngine("Hello.", tokens_per_s=0), store=Store(tmp_path / "h.sqlite3"))
    qtbot.addWidget(w)
    w.show()
    run = qloop.run_until_complete
    assert run(w.load_model())
    try:
        reply = w.send("hi")
        run(until(lambda: reply.status.final and not w.session.generating))
        reply.stop_reason = "user"
        from app.core.conversation import MessageStatus

        reply.status = MessageStatus.STOPPED
        widget = w.chat.widget_for(reply)
        widget.update_status()
        assert widget.status.accessibleName() == "stopped"
        nameless = [(type(c).__name__, c.objectName()) for c in w.findChildren(QWidget)
                    if isinstance(c, CONTROLS) and c.isVisibleTo(w) and c.focusPolicy()
                    and not (c.accessibleName() or (isinstance(c, QAbstractButton) and c.text().strip()))]
        assert nameless == []
    finally:
        run(w.shutdown())
