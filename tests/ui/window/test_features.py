"""The daily features in the real window (scripted engine, real history file): search opens the chat, rename,
export, chat settings, model library, zoom, theme, help."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QFileDialog

from app.core.conversation import Conversation, Message, Role
from app.core.history.store import Store
from app.engine.scripted import ScriptedEngine
from app.ui.window.main_window import MainWindow

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def window(qtbot, qloop, tmp_path):  # type: ignore[no-untyped-def]
    store = Store(tmp_path / "h.sqlite3")
    chats = (("Great Wall", ["长城有多长？", "大约两万一千公里。"]), ("Rust", ["reverse a string", "s.chars().rev()"]))
    for title, texts in chats:
        conv = Conversation(title=title)
        for i, t in enumerate(texts):
            store.save_message(conv, conv.add(Message(Role.USER if i == 0 else Role.ASSISTANT, t)))
    w = MainWindow(ScriptedEngine(tokens_per_s=0), store=store)
    qtbot.addWidget(w)
    w.show()
    assert qloop.run_until_complete(w.load_model())
    yield w, store
    qloop.run_until_complete(w.shutdown())


def test_search_opens_the_chat_and_rename_and_export(window, qtbot, tmp_path: Path, monkeypatch) -> None:
    w, store = window
    assert w.search_panel.isVisibleTo(w) and w.search_panel.parentWidget() is w.history.parentWidget()
    w.search_panel.query.setText("两万")
    [hit] = w.search_panel.run_query()
    w.open_hit(hit.conversation_id, hit.message_id)
    conv = w.session.conversation
    assert conv.title == "Great Wall" and [m.text for m in conv.messages][1] == "大约两万一千公里。"
    w.chats.rename("长城")
    assert store.load_conversation(w.session.conversation.id).title == "长城"
    assert "长城" in w.history.titles()
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(tmp_path / "out"))
    paths = w.chats.export(current_only=True)
    assert [p.suffix for p in paths] == [".json", ".md"] and "两万一千" in paths[1].read_text("utf-8")
    assert "reverse a string" not in paths[1].read_text("utf-8")


def test_menus_zoom_theme_and_help(window, qtbot) -> None:
    w, _store = window
    f = w.appearance
    titles = [a.text() for a in w.menuBar().actions()]
    assert {"&File", "&Chat", "&View", "&Help"} <= set(titles)
    from PySide6.QtWidgets import QApplication

    size = w.font().pointSizeF()
    assert f.zoom(1) == 1.1 and w.font().pointSizeF() > size
    label = w.chat.widgets[0].who if w.chat.widgets else w.new_button
    assert label.font().pointSizeF() > size                 # the chat's widgets follow
    assert f.zoom(0) == 1.0 and w.font().pointSizeF() == size
    f.set_theme("dark")
    assert QApplication.palette().window().color().lightness() < 128 and w.session.settings.theme == "dark"
    f.set_theme("system")
    from app.ui.window.help import open_shortcuts

    dlg = open_shortcuts(w)
    assert "Ctrl+F" in dlg.label.text()
    dlg.close()
