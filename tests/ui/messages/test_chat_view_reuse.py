"""The message list reuses widgets and renders (app/ui/messages/pool.py): a reused widget shows its new message
and nothing of the old one, a scroll step shows a preview without markup that becomes the full render, cached
heights and renders follow width changes and edits, the streaming reply's widget is never reused, and Alt+Up /
Alt+Down move the keyboard focus between messages."""

from __future__ import annotations

import asyncio
import re

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from app.core.chat import session_ops, versions
from app.core.chat.session import ModelState
from app.core.conversation import Conversation, Message, MessageStatus, Role
from app.engine.scripted import ScriptedEngine
from app.ui.messages.widget import MessageWidget, PlainTextView
from app.ui.window.main_window import MainWindow
from tests.helpers import until
from tests.helpers.window import scripted_window, show_chat

pytestmark = pytest.mark.timeout(180)

REPLY = ("## Part {i}\n\nA reply with **bold** words, `code`, a [link](https://example.org/{i}) and a list:\n\n"
         "- first item\n- second item\n\n| a | b |\n|---|---|\n| {i} | two |\n\n```python\nprint({i})\n```\n")


@pytest.fixture
def window(qtbot):  # type: ignore[no-untyped-def]
    return scripted_window(qtbot)


def long_chat(pairs: int) -> Conversation:
    conv = Conversation()
    for i in range(pairs):
        conv.add(Message(Role.USER, f"Question number {i}" + " and more words" * (i % 7)))
        conv.add(Message(Role.ASSISTANT, f"Marker {i}.\n\n" + REPLY.format(i=i), status=MessageStatus.DONE))
    return conv


def shown_text(w: MessageWidget) -> str:
    if w.view is not None:
        return w.view.toPlainText()
    assert w.plain is not None
    return w.plain.toPlainText()


def scroll_through(window: MainWindow, steps: int = 12) -> list[tuple[MessageWidget, Message, Message, str]]:
    """Scroll from the top to the bottom; after each step, every widget, its list item's message, the message
    it says it shows and the text it shows."""
    chat = window.chat
    bar = chat.verticalScrollBar()
    seen = []
    for k in range(steps + 1):
        bar.setValue(round(bar.maximum() * k / steps))
        QApplication.processEvents()
        for it in chat.items:
            if isinstance(it.widget, MessageWidget):
                seen.append((it.widget, it.message, it.widget.message, shown_text(it.widget)))
    return seen


def test_a_reused_widget_shows_its_new_message_and_nothing_of_the_old_one(window, qtbot, monkeypatch) -> None:
    import app.ui.messages.chat_view as cv

    monkeypatch.setattr(cv, "STEP_BUDGET_MS", 60_000.0)     # a busy machine: every row in view gets a widget
    chat = window.chat
    show_chat(window, long_chat(150))
    QApplication.processEvents()
    seen = scroll_through(window)
    assert chat.pool.reused > 20                                   # widgets were reused …
    shown_by: dict[int, set[int]] = {}
    for w, msg, its_message, text in seen:
        assert its_message is msg
        shown_by.setdefault(id(w), set()).add(msg.id)
        if msg.role is Role.USER:
            assert text == msg.text
        else:
            number = int(msg.text.split()[1].rstrip("."))
            assert text.startswith(f"Marker {number}.")            # preview or full render: this message's
            assert str(number) in re.findall(r"\d+", text.split("print")[-1])  # own code, not the last one's
    assert max(len(ids) for ids in shown_by.values()) > 3          # … one widget showed several messages
    for wdg in chat.widgets:                                       # each exactly as tall as its message
        assert abs(wdg.height() - wdg.heightForWidth(wdg.width())) <= 1


def test_a_scroll_step_shows_a_preview_without_markup_then_the_full_render(window, qtbot, monkeypatch) -> None:
    import app.ui.messages.chat_view as cv

    # a busy machine: every row in view gets a widget (with the step's budget, one that a user's message took
    # could leave every reply in view blank, so without a preview)
    monkeypatch.setattr(cv, "STEP_BUDGET_MS", 60_000.0)
    chat = window.chat
    show_chat(window, long_chat(150))
    QApplication.processEvents()
    chat.verticalScrollBar().setValue(chat.verticalScrollBar().maximum() // 2)   # far from anything rendered
    previews = [w for w in chat.widgets if w.preview]
    assert previews
    for w in previews:
        text = shown_text(w)
        assert text.startswith("Marker ") and "Part " in text
        for markup in ("**", "`", "## ", "](", "|", "---"):
            assert markup not in text, (markup, text)
    qtbot.waitUntil(chat.fully_rendered, timeout=60_000)     # the viewport first, then the rows around it:
    qtbot.waitUntil(lambda: not any(w.preview for w in previews if w.isVisible()), timeout=60_000)
    checked = 0
    for w in previews:
        if w.message.role is Role.ASSISTANT and w.isVisible():
            checked += 1
            assert not w.preview
            assert "brook-copy" in w.view.toHtml()                   # the code block's Copy link is there …
            number = w.message.text.split()[1].rstrip(".")
            assert w.view.code_for("0") == f"print({number})\n"      # … and copies this message's code
    assert checked


def test_the_streaming_reply_keeps_its_widget_while_scrolled_away(window, qtbot, qloop) -> None:
    chat = window.chat
    show_chat(window, long_chat(60))
    window.session.engine = ScriptedEngine("Streaming words go on and on. " * 300, tokens_per_s=200)
    window.session.engine.load()
    window.session._loaded.set()
    window.session.model_state = ModelState.IDLE
    reply = window.send("one more")
    assert reply is not None
    qloop.run_until_complete(until(lambda: len(reply.text) > 200))
    widget = chat.widget_for(reply)
    assert widget is not None and widget.message is reply
    chat.verticalScrollBar().setValue(0)
    for _ in range(3):                                   # up and down while it streams: other widgets are reused …
        scroll_through(window, steps=8)
        qloop.run_until_complete(asyncio.sleep(0.05))
        chat.verticalScrollBar().setValue(0)
        QApplication.processEvents()
        assert widget.message is reply and widget.view is not None  # … the streaming reply's is not
    assert not reply.status.final
    chat.scroll_to_bottom()
    QApplication.processEvents()
    assert chat.widget_for(reply) is widget
    shown = widget.view.toPlainText()
    assert len(shown) > 200 and reply.text.startswith(shown.strip()[:-20])   # what streamed in meanwhile
    qloop.run_until_complete(until(lambda: reply.status.final and not window.coalescer.tracked(reply)))  # painted
    QApplication.processEvents()
    assert chat.widget_for(reply).view.toPlainText().strip() == reply.text.strip()


def test_a_new_version_of_a_reply_is_rendered_again_not_taken_from_the_cache(window, qtbot) -> None:
    show_chat(window, long_chat(3))
    reply = window.session.conversation.messages[-1]
    assert window.chat.widget_for(reply).view.toPlainText().startswith("Marker 2.")
    versions.begin_new_version(reply)                    # a regenerated reply: the old text is version 1
    reply.set_text("Another answer entirely, **version two**.")
    reply.status = MessageStatus.DONE
    window.chat.message_changed(reply)
    assert session_ops.show_version(window.session, reply, 0)
    assert window.chat.widget_for(reply).view.toPlainText().startswith("Marker 2.")
    assert session_ops.show_version(window.session, reply, 1)
    shown = window.chat.widget_for(reply).view.toPlainText()
    assert shown.startswith("Another answer entirely, version two")


def test_a_reused_plain_text_view_forgets_the_heights_it_measured(qtbot) -> None:
    view = PlainTextView("short")
    qtbot.addWidget(view)
    view.resize(500, 40)
    view.show()
    short = view.heightForWidth(300)                     # a probe width (not the shown one): cached
    view.set_plain("many words " * 200)
    assert view.heightForWidth(300) > short * 5


def test_cached_heights_follow_a_width_change(window, qtbot) -> None:
    chat = window.chat
    show_chat(window, long_chat(40))
    QApplication.processEvents()
    scroll_through(window, steps=6)
    window.resize(520, 700)
    QApplication.processEvents()
    scroll_through(window, steps=6)
    qtbot.waitUntil(chat.fully_rendered, timeout=60_000)
    QApplication.processEvents()
    for i, it in enumerate(chat.items):                   # positions agree with the heights at the new width
        if it.widget is not None:
            assert abs(it.widget.height() - it.widget.heightForWidth(it.widget.width())) <= 1
            if i + 1 < len(chat.items):
                assert chat.positions.tops[i + 1] - chat.positions.tops[i] == it.widget.height() + 10


def test_alt_up_and_down_move_the_focus_between_messages(window, qtbot) -> None:
    from PySide6.QtTest import QTest

    chat = window.chat
    conv = window.session.conversation
    for m in long_chat(20).messages:
        conv.add(m)
    window.conversation_shown(conv)                      # (the welcome page makes way for the messages)
    window.activateWindow()
    qtbot.waitActive(window)
    window.input.setFocus()
    QApplication.processEvents()
    QTest.keyClick(window.input, Qt.Key.Key_Up, Qt.KeyboardModifier.AltModifier)
    last = chat.focused_message()
    assert last is conv.messages[-1]                     # from the message box: the last message in view
    w = chat.widget_for(last)
    assert w.hasFocus() and "40 of 40" in w.accessibleName().replace("message ", "")
    assert ring_drawn(w)                                 # visibly marked …
    assert w.accessibleDescription().startswith("Marker 19.")   # … and its first words told to a screen reader
    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Up, Qt.KeyboardModifier.AltModifier)
    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Up, Qt.KeyboardModifier.AltModifier)
    assert chat.focused_message() is conv.messages[-3]
    w = chat.widget_for(conv.messages[-3])
    assert w.hasFocus() and not w.preview
    assert w.y() >= 0 and w.y() + 40 <= chat.viewport().height()   # scrolled into view
    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Down, Qt.KeyboardModifier.AltModifier)
    assert chat.focused_message() is conv.messages[-2]
    assert not ring_drawn(w)                             # the ring left with the focus
    for _ in range(45):                                  # past the first message: stays on it
        QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Up, Qt.KeyboardModifier.AltModifier)
    assert chat.focused_message() is conv.messages[0]
    assert chat.widget_for(conv.messages[0]).y() >= 0


def ring_drawn(w: MessageWidget) -> bool:
    """Whether the left edge of ``w`` is drawn in the highlight colour (the focus ring)."""
    from PySide6.QtGui import QPalette

    img = w.grab().toImage()
    want = w.palette().color(QPalette.ColorRole.Highlight)
    got = img.pixelColor(1, img.height() // 2)
    return abs(got.red() - want.red()) + abs(got.green() - want.green()) + abs(got.blue() - want.blue()) < 60


def test_the_shortcuts_dialog_lists_moving_between_messages() -> None:
    from app.ui.window.help import SHORTCUTS

    assert any(keys.startswith("Alt+↑") for keys, _what in SHORTCUTS)


@pytest.mark.parametrize("overscan", [120, 900])      # 900: previews above the view, upgraded after it
def test_full_renders_above_the_view_do_not_move_what_is_on_screen(window, qtbot, monkeypatch, overscan) -> None:
    """The message at the top of the view stays where it is while the previews around it (above it too) become
    full renders; also when its own preview is replaced (its document is emptied first)."""
    import app.ui.messages.chat_view as cv

    monkeypatch.setattr(cv, "OVERSCAN_PX", overscan)
    chat = window.chat
    chat._overscan = cv.OVERSCAN_PX
    show_chat(window, long_chat(150))
    QApplication.processEvents()
    bar = chat.verticalScrollBar()
    bar.setValue(bar.maximum() // 2)
    QApplication.processEvents()
    first, _last = chat._visible_range()
    anchor = chat.items[first]                           # the message at the top of the view
    y = chat.positions.tops[first] - bar.value()         # where it is on screen (a step's budget may have left it
                                                         # blank, with no widget yet, on a busy machine)
    qtbot.waitUntil(lambda: chat.fully_rendered() and not chat.idle.is_active(), timeout=60_000)
    assert any(it.widget is not None for it in chat.items[:first])     # the messages above got widgets …
    assert not chat.stick_to_bottom
    assert anchor.widget is not None and abs(anchor.widget.y() - y) <= 1  # … and the top of the view stayed


def test_after_a_zoom_replies_are_rendered_for_the_new_text_size(window, qtbot) -> None:
    """Formulas are images drawn for the text's size: a render cached before a zoom is not shown after it."""
    conv = Conversation()
    conv.add(Message(Role.USER, "softmax?"))
    conv.add(Message(Role.ASSISTANT, "It is $\\sigma(z)_i = e^{z_i} / \\sum_j e^{z_j}$.", status=MessageStatus.DONE))
    show_chat(window, conv)
    reply = window.session.conversation.messages[-1]
    before = window.chat.widget_for(reply).view.renderer.math.font[0]     # the formulas' text size (px)
    window.appearance.zoom(3)
    try:
        QApplication.processEvents()
        after = window.chat.widget_for(reply).view.renderer.math.font[0]
    finally:
        window.appearance.zoom(0)                               # the zoom level is the process's: back to 100 %
    assert after > before * 1.2


def test_a_view_shown_again_at_its_width_is_not_laid_out_again(qtbot, monkeypatch) -> None:
    """A pooled widget shown again gets a resize event with no old size; at an unchanged width its document keeps
    its layout (QTextEdit's own resize handling lays the whole document out again), at a new width it is laid out
    at that width."""
    from PySide6.QtWidgets import QTextBrowser, QWidget

    from app.ui.messages.markdown_view import MarkdownView
    from app.ui.messages.view_links import LinkedView

    relayouts: list[int] = []

    def spy(self, e) -> None:  # type: ignore[no-untyped-def]
        relayouts.append(e.size().width())
        QTextBrowser.resizeEvent(self, e)

    monkeypatch.setattr(LinkedView, "resizeEvent", spy, raising=False)
    top = QWidget()
    qtbot.addWidget(top)
    top.resize(800, 600)
    top.show()
    view = MarkdownView(top)
    view.setGeometry(0, 0, 500, 300)
    view.show()
    view.set_text("Some **words** to wrap. " * 100)
    QApplication.processEvents()
    assert view.document().pageSize().width() == view.viewport().width()
    relayouts.clear()
    view.hide()
    view.setGeometry(0, 10, 500, 280)
    view.show()
    QApplication.processEvents()
    assert relayouts == []
    view.setGeometry(0, 10, 400, 280)
    QApplication.processEvents()
    assert relayouts == [400]
    assert view.document().pageSize().width() == view.viewport().width()


@pytest.mark.parametrize("budget_ms", [0.0, 1e6])
def test_a_step_past_its_budget_leaves_rows_blank_until_the_scrolling_pauses(window, qtbot, monkeypatch,
                                                                            budget_ms) -> None:
    """A scroll step gives rows their widgets while their cost fits the step's budget (the first row always);
    the rows left blank get theirs from the idle work, and the screen counts as rendered only then."""
    import app.ui.messages.chat_view as cv

    chat = window.chat
    show_chat(window, long_chat(150))
    qtbot.waitUntil(chat.fully_rendered, timeout=60_000)
    monkeypatch.setattr(cv, "STEP_BUDGET_MS", budget_ms)
    bar = chat.verticalScrollBar()
    bar.setValue(bar.maximum() // 2)                      # a screen of rows that have no widgets yet
    first, last = chat._visible_range()
    rows = chat.items[first:last]
    assert len(rows) >= 2
    blank = [it for it in rows if it.widget is None]
    if budget_ms:
        assert not blank
    else:
        assert len(blank) >= len(rows) - 1                # the step's first row only
        assert not chat.fully_rendered()
    qtbot.waitUntil(chat.fully_rendered, timeout=60_000)
    first, last = chat._visible_range()
    assert all(isinstance(it.widget, MessageWidget) for it in chat.items[first:last])


def test_a_streaming_reply_keeps_its_widget_while_another_chat_is_shown(qtbot) -> None:
    from app.ui.messages.chat_view import ChatView

    chat = ChatView()
    qtbot.addWidget(chat)
    chat.resize(700, 500)
    chat.show()
    streaming = Conversation()
    streaming.add(Message(Role.USER, "a long one"))
    reply = streaming.add(Message(Role.ASSISTANT, "", status=MessageStatus.GENERATING))
    other = long_chat(3)
    chat.show_conversation(streaming)
    widget = chat.widget_for(reply)
    assert widget is not None and widget.view is not None
    reply.append("Words **so far**, rendered.\n\n")
    widget.view.append_text(reply.take_new()[0])
    widget.view.refresh()
    chat.show_conversation(other)                     # the chat is left while its reply streams: the widget is kept
    assert len(chat.parked) == 1 and not widget.isVisible()
    assert all(w is not widget for w in chat.widgets)
    chat.show_conversation(streaming)                 # … and shown again as it was, not made anew
    assert chat.widget_for(reply) is widget and widget.isVisible() and len(chat.parked) == 0
    assert widget.view.toPlainText().startswith("Words so far, rendered.") and not widget.preview
    chat.show_conversation(other)
    reply.append("And the end.")
    reply.status = MessageStatus.DONE                 # it ended while its chat was not shown: the kept view lacks
    chat.show_conversation(streaming)                 # the end, so the reply is shown as a finished one
    shown = chat.widget_for(reply)
    assert shown is not None and shown.view is not None and len(chat.parked) == 0
    assert shown.view.toPlainText().endswith("And the end.") and shown.view.renderer.finished
