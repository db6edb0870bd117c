"""Chats are found by their title too: the search panel lists title hits first (English and Chinese titles,
after a restart), and opening one shows that chat. Real history file, the real window (scripted engine)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from app.core.conversation import Conversation, Message, Role
from app.core.history.store import Store
from app.engine.scripted import ScriptedEngine
from app.ui.window.main_window import MainWindow

pytestmark = pytest.mark.timeout(60)


def _chat(store: Store, title: str, text: str) -> Conversation:
    conv = Conversation(title=title)
    store.save_message(conv, conv.add(Message(Role.USER, text)))
    return conv


def test_title_hits_come_first_and_open_the_chat(qtbot, qloop, tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    store = Store(path)
    trip = _chat(store, "周末旅行计划", "去哪里好？")                      # the phrase only in the title
    note = _chat(store, "Misc", "我的旅行计划还没定。")                    # … and only in a message here
    rust = _chat(store, "Rust borrow checker", "Why does this not compile?")
    store.close()

    w = MainWindow(ScriptedEngine(tokens_per_s=0), store=Store(path))      # a restart: a new Store on the file
    qtbot.addWidget(w)
    w.show()
    try:
        assert qloop.run_until_complete(w.load_model())
        panel = w.search_panel
        panel.query.insert("旅行计划")
        qtbot.waitUntil(lambda: panel.results.count() == 2)
        assert [h.conversation_id for h in panel.title_hits] == [trip.id]
        assert [h.conversation_id for h in panel.hits] == [note.id]
        first = panel.results.itemWidget(panel.results.item(0)).text()
        assert "周末<b><u>旅行计划</u></b>" in first
        assert panel.results.item(0).data(Qt.ItemDataRole.UserRole) == (trip.id, 0)
        with qtbot.waitSignal(panel.open_requested) as sig:
            qtbot.keyClick(panel.query, Qt.Key.Key_Return)
        assert sig.args == [trip.id, 0]
        assert w.session.conversation.id == trip.id and w.session.conversation.title == "周末旅行计划"
        panel.query.setText("borrow")
        panel.run_query()
        assert [h.conversation_id for h in panel.title_hits] == [rust.id] and panel.hits == []
        assert panel.results.count() == 1 and "Nothing found" not in panel.summary.text()
    finally:
        qloop.run_until_complete(w.shutdown())
