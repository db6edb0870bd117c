"""Message menu in the real window over the chat session (scripted engine, real history): copy, regenerate with
versions ‹1/2›, switch version, edit and resend, delete; provenance in the reply's tooltip."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtGui import QGuiApplication

pytest.importorskip("app.core.chat.session")

from app.core.chat import versions
from app.core.history.store import Store
from app.engine.scripted import ScriptedEngine
from app.ui.window.main_window import MainWindow
from tests.helpers import until

pytestmark = pytest.mark.timeout(60)


def test_menu_operations_keep_the_stored_chat_consistent(qtbot, qloop, tmp_path: Path, monkeypatch) -> None:
    store = Store(tmp_path / "h.sqlite3")
    w = MainWindow(ScriptedEngine("Hi!", tokens_per_s=0), store=store)
    qtbot.addWidget(w)
    w.show()
    run = qloop.run_until_complete
    assert run(w.load_model())
    acts = w.messages
    try:
        reply = w.send("hello")
        run(until(lambda: reply.status.final))
        acts.copy(reply)
        assert QGuiApplication.clipboard().text() == "Hi!"
        assert acts.regenerate(reply) is reply
        run(until(lambda: reply.status.final and not w.session.generating))
        widget = w.chat.widget_for(reply)
        acts.decorate(widget)
        assert versions.label(reply) == "2/2" and "&nbsp;2/2&nbsp;" in widget.status.text()
        assert "seed" in widget.figures.toolTip() or "seed" in widget.who.toolTip()
        assert acts.show_version(reply, 0) and versions.label(reply) == "1/2"
        user = w.session.conversation.messages[0]
        from app.ui.dialogs.edit_message import EditMessageDialog

        def edited(dlg: EditMessageDialog) -> int:
            dlg.editor.setPlainText("hello again")
            return 1
        monkeypatch.setattr(EditMessageDialog, "exec", edited)
        new = acts.edit(user)
        assert new is not None
        run(until(lambda: new.status.final and not w.session.generating))
        assert [m.text for m in w.session.conversation.messages] == ["hello again", "Hi!"]
        assert acts.delete(new)
        conv_id = w.session.conversation.id
    finally:
        run(w.shutdown())
    assert [m.text for m in Store(tmp_path / "h.sqlite3").load_conversation(conv_id).messages] == ["hello again"]
