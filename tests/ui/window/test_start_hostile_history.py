"""A hostile history never stops the window from opening: the last chat shown holds rows of the wrong type or
range (written by another program, or imported before imports were checked); the next start opens the window
with that chat, its damaged messages marked."""

from __future__ import annotations

import pytest

from app.core.conversation import MessageStatus
from app.core.settings import AppSettings
from app.engine.scripted import ScriptedEngine
from app.ui.window.main_window import MainWindow
from tests.core.history.test_import_hostile import _hostile_rows

pytestmark = pytest.mark.timeout(120)


def test_a_start_restores_a_hostile_last_chat(qtbot, qloop, tmp_path) -> None:
    store, cid = _hostile_rows(tmp_path / "h.sqlite3")
    settings = AppSettings.load()
    settings.last_conversation_id = cid
    w = MainWindow(ScriptedEngine(["Hi"], tokens_per_s=0), settings, store)     # restores the last chat
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    try:
        assert w.session.conversation.id == cid and w.session.conversation.title == "Hostile"
        assert [m.status for m in w.session.conversation.messages].count(MessageStatus.ERROR) == 3
        assert w.chat.isVisible()
        assert any(x.message.text == "a spell" for x in w.chat.widgets)
    finally:
        qloop.run_until_complete(w.shutdown())
