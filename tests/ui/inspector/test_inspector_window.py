"""The stream inspector in the app's window: Ctrl+Shift+I opens it, and it follows the reply as it streams."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from app.core.conversation import MessageStatus
from app.engine.scripted import ScriptedEngine
from app.ui.messages.menu import message_menu
from app.ui.window.main_window import MainWindow
from tests.helpers import until

pytestmark = pytest.mark.timeout(120)


def test_ctrl_shift_i_opens_the_inspector_on_the_streaming_reply(qtbot, qloop) -> None:
    w = MainWindow(ScriptedEngine("Watch *this* reply stream into the inspector. " * 3, tokens_per_s=200))
    qtbot.addWidget(w)
    w.show()
    assert qloop.run_until_complete(w.load_model())
    dock = w.inspector_dock
    assert not dock.isVisible()
    w.activateWindow()
    qtbot.waitUntil(w.isActiveWindow)
    w.input.setFocus()
    qtbot.keyClick(w.input, Qt.Key.Key_I, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(dock.isVisible)
    reply = w.send("hello")
    assert reply is not None
    qloop.run_until_complete(until(lambda: reply.status.final and dock.inspector.view.tl is not None
                                    and len(dock.inspector.view.tl.painted) == reply.chunks))
    assert reply.status is MessageStatus.DONE and dock.inspector.reply is reply
    assert reply.chunks > 10 and "done" in dock.inspector.title.text()
    # a second reply streams; the first one, chosen in its menu (Inspect the stream), stays shown
    second = w.send("again")
    assert second is not None
    qloop.run_until_complete(until(lambda: dock.inspector.reply is second and second.status.final))
    actions = w.messages
    menu = message_menu(reply, actions, w)
    next(a for a in menu.actions() if a.text().startswith("Inspect the stream")).trigger()
    assert dock.inspector.reply is reply and dock.pinned is reply
    qloop.run_until_complete(w.shutdown())


def test_after_a_restart_the_inspector_shows_a_finished_replys_stored_timeline(qtbot, qloop, tmp_path) -> None:
    from app.core.history.store import Store

    path = tmp_path / "history.sqlite3"
    store = Store(path)
    w = MainWindow(ScriptedEngine("A reply whose timeline outlives the window. " * 4, tokens_per_s=150), store=store)
    qtbot.addWidget(w)
    w.show()
    assert qloop.run_until_complete(w.load_model())
    reply = w.send("hello")
    assert reply is not None
    qloop.run_until_complete(until(lambda: reply.status.final and reply.db_id is not None
                                    and store.load_timeline(reply.db_id) is not None))
    conv_id = w.session.conversation.id
    qloop.run_until_complete(w.shutdown())
    w.close()
    store.close()

    again = Store(path)                                           # a restart: nothing live, only the history
    w2 = MainWindow(ScriptedEngine(), store=again)
    qtbot.addWidget(w2)
    w2.show()
    w2.open_conversation(conv_id)
    old = w2.session.conversation.messages[-1]
    assert old.text == reply.text and old is not reply
    dock = w2.inspector_dock
    dock.show()
    qtbot.waitUntil(lambda: dock.inspector.reply is old)
    tl = dock.inspector.view.tl
    assert tl is not None and len(tl.produced) == reply.chunks and len(tl.painted) == reply.chunks
    assert "stored timeline" in dock.inspector.title.text()
    assert dock.inspector.figure_labels["TTFT"].text() == f"{reply.metrics['ttft_ms']:.1f} ms"
    assert dock.inspector.figure_labels["gap p50 / p95"].text() != "–"          # from the stored chunk times
    assert dock.inspector.figure_labels["render ticks"].text() == str(reply.metrics["ticks"])
    assert "".join(dock.inspector.timeline()["chunks"]["text"]) == reply.text    # Copy as JSON, per chunk
    assert dock.inspector.hover_chunk(3).startswith("chunk 3: ")
    qloop.run_until_complete(w2.shutdown())
