"""Notes at a message (issue 10, items 2 and 4): a reply stopped before any text says its question is left out
and offers Resend; a reply whose prompt left older messages out says so. Through the real window."""

from __future__ import annotations

from app.core.conversation import Message, MessageStatus, Role
from app.core.types import Chunk
from app.engine.scripted import ScriptedEngine
from app.ui.messages.chat_view import MessageWidget
from app.ui.window.main_window import MainWindow
from tests.helpers import run_on as _run
from tests.helpers import until as _until


def test_stop_before_the_first_token_is_visible_and_the_next_prompt_alternates(qtbot, qloop) -> None:
    # an empty first chunk, then the first text only after ~17 minutes (an interruptible wait): Stop comes first
    engine = ScriptedEngine([Chunk("", 0), "Hello!"], tokens_per_s=0.001)
    w = MainWindow(engine)
    qtbot.addWidget(w)
    w.show()
    try:
        assert _run(qloop, w.load_model())
        first = w.send("Tell me about rivers.")
        assert first is not None
        _run(qloop, _until(lambda: first.status is MessageStatus.GENERATING))
        w.stop()
        _run(qloop, _until(lambda: first.status.final and not w.session.generating))
        widget = w.chat.widgets[-1]
        assert first.status is MessageStatus.STOPPED and first.text == ""
        assert widget.note.isVisibleTo(w)
        assert "Stopped before any reply" in widget.note.text() and "Resend" in widget.note.text()
        engine.tokens_per_s = 0.0
        second = w.send("Say hello")
        assert second is not None
        _run(qloop, _until(lambda: second.status.final and not w.session.generating))
        prompt = engine.calls[-1]
        assert [m["role"] for m in prompt if m["role"] != "system"] == ["user"]
        assert prompt[-1]["content"] == "Say hello"
    finally:
        qloop.run_until_complete(w.shutdown())


def test_left_out_messages_are_said_at_the_reply(qtbot) -> None:
    msg = Message(Role.ASSISTANT, "A summary.", status=MessageStatus.DONE, metrics={"left_out": 4})
    widget = MessageWidget(msg)
    qtbot.addWidget(widget)
    widget.show()
    assert widget.note.isVisible() and "4 oldest messages were left out" in widget.note.text()
    plain = MessageWidget(Message(Role.ASSISTANT, "Fine.", status=MessageStatus.DONE))
    qtbot.addWidget(plain)
    plain.show()
    assert not plain.note.isVisible()


def test_resend_asks_the_stopped_question_again(qtbot, qloop) -> None:
    engine = ScriptedEngine([Chunk("", 0), "Rivers flow."], tokens_per_s=0.001)
    w = MainWindow(engine)
    qtbot.addWidget(w)
    w.show()
    try:
        assert _run(qloop, w.load_model())
        reply = w.send("Tell me about rivers.")
        assert reply is not None
        _run(qloop, _until(lambda: reply.status is MessageStatus.GENERATING))
        w.stop()
        _run(qloop, _until(lambda: reply.status.final and not w.session.generating))
        engine.tokens_per_s = 0.0
        widget = w.chat.widget_for(reply)
        assert widget is not None
        widget.note.linkActivated.emit("brook:resend")          # the user clicks "Resend"
        _run(qloop, _until(lambda: reply.status.final and not w.session.generating and reply.text != ""))
        assert reply.status is MessageStatus.DONE and reply.text == "Rivers flow."
        assert engine.calls[-1][-1] == {"role": "user", "content": "Tell me about rivers."}
        assert len(w.session.conversation.messages) == 2
    finally:
        qloop.run_until_complete(w.shutdown())
