"""The window over the session: welcome state, messages typed while a reply streams are queued (not lost),
search opens the chat at the hit (scripted engine, real history file)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from app.core.chat.session import ModelState
from app.core.conversation import Role
from app.core.history.store import Store
from app.engine.scripted import ScriptedEngine
from app.ui.window.main_window import MainWindow
from tests.helpers import until

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def window(qtbot, qloop, tmp_path: Path):  # type: ignore[no-untyped-def]
    w = MainWindow(ScriptedEngine(tokens_per_s=200, repeat=3), store=Store(tmp_path / "h.sqlite3"))
    qtbot.addWidget(w)
    w.show()
    assert qloop.run_until_complete(w.load_model())
    yield w
    qloop.run_until_complete(w.shutdown())


def test_welcome_then_queue_while_streaming(window, qtbot, qloop) -> None:
    w = window
    queue = w.sending.queue
    assert w.welcome.isVisibleTo(w) and not w.chat.isVisibleTo(w)
    w.welcome.examples[0].click()                         # an example prompt is sent
    assert not w.welcome.isVisibleTo(w) and w.chat.isVisibleTo(w) and w.session.generating
    qtbot.keyClicks(w.input, "and a follow-up")
    qtbot.keyClick(w.input, Qt.Key.Key_Return)            # typed while the reply streams: queued, not lost
    assert w.input.toPlainText() == "" and [t for _c, t in queue.pending] == ["and a follow-up"]
    assert "waiting" in w.statusBar().currentMessage()
    qloop.run_until_complete(until(
        lambda: not queue.pending and not w.session.generating and len(w.session.conversation.messages) == 4))
    users = [m.text for m in w.session.conversation.messages if m.role is Role.USER]
    assert users == [w.welcome.examples[0].text(), "and a follow-up"]
    w.new_chat()
    assert w.welcome.isVisibleTo(w)


def test_search_hit_opens_the_chat_at_that_message(window, qloop) -> None:
    w = window
    r = w.send("first question")
    qloop.run_until_complete(until(lambda: r.status.final and not w.session.generating))
    target = w.send("the zygomorphic one")
    qloop.run_until_complete(until(lambda: target.status.final and not w.session.generating))
    conv_id = w.session.conversation.id
    w.new_chat()
    w.search_panel.query.setText("zygomorphic")
    [hit] = w.search_panel.run_query()
    found = w.open_hit(hit.conversation_id, hit.message_id)
    assert w.session.conversation.id == conv_id and found is not None and found.message.text == "the zygomorphic one"


def test_unload_frees_the_model_and_the_next_message_loads_it_again(window, qloop) -> None:
    w = window
    task = w.models.unload_now()
    qloop.run_until_complete(task)
    assert not w.session.engine.loaded and w.session.model_state is ModelState.UNLOADED
    reply = w.send("are you there?")
    assert reply is not None
    qloop.run_until_complete(until(lambda: reply.status.final))
    assert w.session.engine.loaded and reply.text
