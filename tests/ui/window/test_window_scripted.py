"""The window on the scripted engine: keys, Send/Stop, scrolling, history, status — fast and deterministic."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtCore import Qt

from app.core.conversation import Message, MessageStatus
from app.core.history.store import Store
from app.engine.scripted import ScriptedEngine
from app.ui.window.main_window import MainWindow
from tests.helpers import run_on as _run
from tests.helpers import until as _until

LONG = "".join(f"Line {i}: some words to fill the message view.\n\n" for i in range(120))


@pytest.fixture
def make_window(qtbot, qloop, tmp_path):
    made: list[MainWindow] = []

    def make(engine: ScriptedEngine, store: Store | None = None) -> MainWindow:
        w = MainWindow(engine, store=store)
        qtbot.addWidget(w)
        w.show()
        assert _run(qloop, w.load_model())
        made.append(w)
        return w

    yield make
    for w in made:
        qloop.run_until_complete(w.shutdown())


def test_enter_sends_shift_enter_adds_a_line_and_escape_stops(make_window, qtbot, qloop) -> None:
    w = make_window(ScriptedEngine(tokens_per_s=40, repeat=20))
    qtbot.keyClicks(w.input, "first line")
    qtbot.keyClick(w.input, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(w.input, "second line")
    assert w.input.toPlainText() == "first line\nsecond line" and not w.session.generating
    qtbot.keyClick(w.input, Qt.Key.Key_Return)
    assert w.session.generating and w.input.toPlainText() == "" and w.send_button.text() == "Stop"
    user, reply = w.session.conversation.messages
    assert user.text == "first line\nsecond line"
    _run(qloop, _until(lambda: reply.status is MessageStatus.GENERATING and reply.text))
    qtbot.keyClick(w.input, Qt.Key.Key_Escape)
    assert reply.status is MessageStatus.STOPPED and not w.session.generating and w.send_button.text() == "Send"
    assert reply.text and len(reply.text) < len("".join(w.session.engine.script)) * 20


def test_view_follows_the_stream_only_while_at_the_bottom(make_window, qloop) -> None:
    w = make_window(ScriptedEngine(LONG, tokens_per_s=400))
    w.resize(700, 500)
    reply = w.send("go")
    bar = w.chat.verticalScrollBar()
    _run(qloop, _until(lambda: bar.maximum() > 400))
    _run(qloop, asyncio.sleep(0.1))
    assert bar.value() >= bar.maximum() - 30          # following
    bar.setValue(0)                                   # the user scrolls up to read
    _run(qloop, _until(lambda: reply.status.final))
    _run(qloop, asyncio.sleep(0.1))
    assert bar.value() == 0                           # and the view stays put


def test_send_while_loading_waits_for_the_model(qtbot, qloop) -> None:
    w = MainWindow(ScriptedEngine(tokens_per_s=0, load_s=0.5))
    qtbot.addWidget(w)
    w.show()
    load = asyncio.ensure_future(w.load_model(), loop=qloop)
    _run(qloop, asyncio.sleep(0.05))                  # loading has started, in a worker thread
    reply = w.send("hello")
    assert reply is not None and w.status.state_label.text() == "loading model…"
    _run(qloop, _until(lambda: reply.status.final))
    assert load.done() and reply.status is MessageStatus.DONE and reply.text
    qloop.run_until_complete(w.shutdown())


def test_engine_error_mid_reply_is_shown_and_the_next_message_works(make_window, qloop) -> None:
    engine = ScriptedEngine(tokens_per_s=0, fail_after=5)
    w = make_window(engine)
    reply = w.send("break please")
    _run(qloop, _until(lambda: reply.status.final and not w.session.generating))
    widget = w.chat.widgets[-1]
    assert reply.status is MessageStatus.ERROR and "Scripted failure" in (reply.error or "")
    assert widget.error.isVisibleTo(w) and "Scripted failure" in widget.error.text()
    assert reply.text == "".join(engine.script[:5])                 # the text so far is kept
    engine.fail_after = None
    second = w.send("again")
    _run(qloop, _until(lambda: second.status.final))
    assert second.status is MessageStatus.DONE


def test_history_saves_replies_and_reopens_them(make_window, qloop, tmp_path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    w = make_window(ScriptedEngine(tokens_per_s=0), store)
    reply = w.send("Reverse a string in Python")
    _run(qloop, _until(lambda: reply.status.final and not w.session.generating))
    assert w.history.titles() == ["Reverse a string in Python"]
    w.new_chat()
    assert w.session.conversation.messages == [] and w.chat.widgets == []
    w.open_conversation(store.list_conversations()[0].id)
    assert [m.text for m in w.session.conversation.messages] == ["Reverse a string in Python", reply.text]
    _run(qloop, _until(w.chat.fully_rendered))          # a preview first, rendered in idle slices
    shown = w.chat.widgets[-1].view
    assert shown is not None and shown.renderer.text == reply.text
    assert reply.metrics is not None and reply.metrics["decode_tokens_per_s"] > 0   # the script has many tokens
    assert f"{reply.metrics['decode_tokens_per_s']:.1f} tok/s" in w.chat.widgets[-1].figures.text()  # as saved


def test_stopping_then_switching_chats_still_saves_the_partial_reply(make_window, qloop, tmp_path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    w = make_window(ScriptedEngine(tokens_per_s=50, repeat=20), store)
    reply: Message = w.send("long one")
    _run(qloop, _until(lambda: len(reply.text) > 20))
    w.stop()
    w.new_chat()
    assert not w.session.generating and reply.status is MessageStatus.STOPPED
    conv = store.load_conversation(store.list_conversations()[0].id)
    assert conv.messages[-1].status is MessageStatus.STOPPED
    assert conv.messages[-1].text == reply.text


@pytest.mark.parametrize("kept", [True, False], ids=["widget-kept", "view-made-again"])
def test_a_reply_keeps_generating_while_another_chat_is_shown(make_window, qloop, tmp_path, kept) -> None:
    from app.ui.window.chat_list import BUSY_ROLE

    store = Store(tmp_path / "h.sqlite3")
    text = "".join(f"Paragraph {i} of a long essay.\n\n" for i in range(60))
    w = make_window(ScriptedEngine(text, tokens_per_s=300), store)
    reply: Message = w.send("A long essay, please")
    conv_id = w.session.conversation.id
    before = w.chat.widget_for(reply)
    assert before is not None and before.view is not None
    # mid-reply, once the view shows the first words (on a busy machine the tick may still be behind the text)
    _run(qloop, _until(lambda: len(reply.text) > 40 and before.view.toPlainText().startswith("Paragraph 0")))
    w.new_chat()                                       # another chat, mid-reply
    assert w.chat.widget_for(reply) is None and not w.session.generating and w.send_button.text() == "Send"
    assert reply.status is MessageStatus.GENERATING
    marked = [r.data(0, BUSY_ROLE) for r in w.history.chat_rows()]
    assert marked == [True]                            # the sidebar marks the chat that is generating
    _run(qloop, _until(lambda: len(reply.text) > 400))
    if not kept:
        w.chat.parked.clear()                          # (its widget was not kept: a new view catches up)
    w.open_conversation(conv_id)                       # back while it still generates: the same live reply
    shown = w.chat.widget_for(reply)
    assert shown is not None and shown.view is not None and w.send_button.text() == "Stop"
    if kept:      # the widget it had, as it was: rendered, and fed only what arrived meanwhile
        assert shown is before and not shown.preview and shown.view.toPlainText().startswith("Paragraph 0")
        assert len(shown.view.renderer.text) < len(reply.text)
    else:
        assert shown.preview and "Paragraph 1 of a long essay." in shown.view.toPlainText()   # at once: a preview
        _run(qloop, _until(lambda: not shown.preview))     # then its render, fed in slices by the render tick
    _run(qloop, _until(lambda: len(shown.view.toPlainText()) > 500))
    assert shown.view.toPlainText().startswith("Paragraph 0 of a long essay.\nParagraph 1")
    _run(qloop, _until(lambda: reply.status.final and not w.session.generating))
    _run(qloop, asyncio.sleep(0.05))
    assert reply.status is MessageStatus.DONE and reply.text == text
    assert shown.view.renderer.text == text            # complete on screen too
    assert [r.data(0, BUSY_ROLE) for r in w.history.chat_rows()] == [False]


def test_regenerate_replaces_the_last_reply(make_window, qloop, tmp_path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    engine = ScriptedEngine(tokens_per_s=0)
    w = make_window(engine, store)
    first = w.send("hello")
    _run(qloop, _until(lambda: first.status.final and not w.session.generating))
    first_text = first.text
    assert w.regenerate() is not None
    second = w.session.conversation.messages[-1]
    _run(qloop, _until(lambda: second.status.final and not w.session.generating))
    assert [m.role.value for m in w.session.conversation.messages] == ["user", "assistant"]
    # the same reply gets a second version; the first is kept (‹1/2›), not deleted
    assert second is first and second.text and len(w.chat.widgets) == 2
    assert second.versions is not None and second.versions[0]["content"] == first_text
    assert engine.calls[-1] == [{"role": "user", "content": "hello"}]       # the old reply is not in the prompt
    saved = store.load_conversation(w.session.conversation.id or 0).messages
    assert [m.text for m in saved] == ["hello", second.text]
    w.new_chat()
    assert w.regenerate() is None                                             # nothing to regenerate


def test_user_text_is_shown_as_typed_and_not_laid_out_again_per_tick(qtbot) -> None:
    from app.ui.messages.chat_view import PlainTextView

    text = "<b>not bold</b> **not markdown** " + "word " * 200 + "\n" + "\n".join(f"log {i}" for i in range(2000))
    view = PlainTextView(text)
    qtbot.addWidget(view)
    view.resize(500, 100)
    assert view.toPlainText() == text
    shown_width = view.document().textWidth()
    heights = {w: view.heightForWidth(w) for w in (300, 500, 300, 500)}
    assert heights[300] > heights[500] > 2000 * 10          # taller when narrower; every line counted
    assert view.document().textWidth() == shown_width         # probing other widths left the shown layout alone


def test_finished_reply_is_shown_whole(make_window, qloop, corpus_dir) -> None:
    text = (corpus_dir / "answers" / "01_python_code.md").read_text("utf-8")
    w = make_window(ScriptedEngine(text, tokens_per_s=0), Store(":memory:"))
    w.resize(1100, 800)
    reply = w.send("show me")
    _run(qloop, _until(lambda: reply.status.final and not w.session.generating))
    _run(qloop, asyncio.sleep(0.3))
    widget = w.chat.widgets[-1]
    view = widget.view
    assert widget.figures.isVisible()
    assert view.height() >= view.document().size().height()      # no clipped last line


def test_an_empty_reply_is_explained(make_window, qloop) -> None:
    w = make_window(ScriptedEngine([], tokens_per_s=0))
    reply = w.send("hello")
    _run(qloop, _until(lambda: reply.status.final and not w.session.generating))
    widget = w.chat.widgets[-1]
    assert reply.status is MessageStatus.DONE and reply.text == ""
    assert widget.note.isVisibleTo(w) and "without any text" in widget.note.text() and "Resend" in widget.note.text()


def test_stop_in_the_middle_of_a_burst_shows_the_reply_without_painting_the_burst_at_once(
        make_window, qloop, tmp_path) -> None:
    """A burst the render tick has not painted yet is not painted in one go at Stop (one patch of it could take
    seconds): nothing more is painted after Stop, and the stopped reply shows as a finished one (its preview,
    then its render in idle slices)."""
    from app.ui.messages.tick_budget import STOP_PAINT_CHARS

    burst = "".join(f"Line {i} of a burst, with **bold** text.\n\n" for i in range(2_000))   # ~80 KB
    assert len(burst) > 4 * STOP_PAINT_CHARS
    w = make_window(ScriptedEngine(["Start.\n\n", burst] + ["more "] * 2_000, tokens_per_s=20), Store(
        tmp_path / "h.sqlite3"))
    reply: Message = w.send("go")
    _run(qloop, _until(lambda: len(reply.text) > len(burst) and w.coalescer.waiting(reply) > STOP_PAINT_CHARS))
    gen = w.session.generation_of(reply)
    w.stop()
    _run(qloop, _until(lambda: reply.status.final and not w.session.generating))
    assert reply.status is MessageStatus.STOPPED and gen is not None and gen.chunks_painted_after_stop() == 0
    widget = w.chat.widgets[-1]
    assert widget.message is reply and widget.preview                  # shown as a finished reply: preview …
    _run(qloop, _until(w.chat.fully_rendered))                         # … then rendered in idle slices
    shown = w.chat.widgets[-1]
    assert not shown.preview and shown.view.renderer.text == reply.text and "Line 1999 of a burst" in reply.text
