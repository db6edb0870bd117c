"""Deleting a chat (context menu, Chat menu, the Delete key after a click) with Undo; a restart opens the last
chat with the window's size and sidebar width; the sidebar can be hidden."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from app.core.history.store import Store
from app.core.settings import AppSettings
from app.engine.scripted import ScriptedEngine
from app.ui.window.main_window import MainWindow
from app.ui.window.menus import MenuKey
from tests.helpers import until

pytestmark = pytest.mark.timeout(120)


def window_with_chats(qtbot, qloop, store: Store, n: int = 2) -> MainWindow:  # type: ignore[no-untyped-def]
    w = MainWindow(ScriptedEngine(["Hi", "!"], tokens_per_s=0), AppSettings.load(), store)
    qtbot.addWidget(w)
    with qtbot.waitActive(w):         # a click gives focus in the active window only (it came late on a busy CI)
        w.show()
        w.activateWindow()
    assert qloop.run_until_complete(w.load_model())
    for i in range(n):
        w.new_chat()
        reply = w.send(f"chat {i}")
        assert reply is not None
        qloop.run_until_complete(until(lambda r=reply: r.status.final))
    return w


def test_delete_from_the_list_then_undo(qtbot, qloop, tmp_path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    w = window_with_chats(qtbot, qloop, store)
    try:
        assert w.history.titles() == ["chat 1", "chat 0"]
        item = w.history.chat_rows()[1]
        rect = w.history.visualItemRect(item)
        qtbot.mouseClick(w.history.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
        assert w.session.conversation.title == "chat 0" and w.history.hasFocus()      # focus stays in the list
        qtbot.keyClick(w.history, Qt.Key.Key_Delete)
        assert [c.title for c in store.list_conversations()] == ["chat 1"]
        assert w.session.conversation.messages == [] and w.state.undo_action.isEnabled()
        w.state.undo_action.trigger()
        restored = store.list_conversations()
        assert sorted(c.title for c in restored) == ["chat 0", "chat 1"]
        back = next(c for c in restored if c.title == "chat 0")
        assert [m.text for m in store.load_conversation(back.id).messages] == ["chat 0", "Hi!"]
        assert w.session.conversation.title == "chat 0"
        assert w.state.delete_action in w.menus[MenuKey.CHAT].actions()              # also a menu item
    finally:
        qloop.run_until_complete(w.shutdown())


def test_a_restart_opens_the_last_chat_with_the_same_window(qtbot, qloop, tmp_path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    w = window_with_chats(qtbot, qloop, store)
    first = store.list_conversations()[-1]
    w.open_conversation(first.id)
    w.resize(760, 560)                      # fits the offscreen screen (800 × 600)
    w.splitter.setSizes([260, 500])
    qloop.run_until_complete(w.shutdown())
    w.close()
    again = MainWindow(ScriptedEngine(), AppSettings.load(), store)
    qtbot.addWidget(again)
    again.show()
    try:
        qtbot.waitUntil(lambda: again.first_painted_at is not None)      # the last chat comes right after
        assert again.session.conversation.id == first.id and again.session.conversation.messages[0].text == "chat 0"
        assert (again.width(), again.height()) == (760, 560)
        assert abs(again.splitter.sizes()[0] - 260) <= 2
        again.state.sidebar_action.setChecked(False)                          # Ctrl+B hides the sidebar
        assert not again.sidebar.isVisible()
    finally:
        qloop.run_until_complete(again.shutdown())
