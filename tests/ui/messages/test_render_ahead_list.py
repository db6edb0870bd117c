"""The message list has finished replies rendered by the render-ahead worker (app/core/render/render_ahead.py,
app/ui/messages/pool.py ``take_ahead``, idle_render.py): a scroll step asks for every reply it shows, previewed
or left blank; the list then only builds them; and when the worker does not answer, the list renders them
itself."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtWidgets import QApplication

import app.ui.messages.chat_view as cv
from app.core.conversation import Conversation, Message, MessageStatus, Role
from app.core.render.render_ahead import default_ahead_pool
from app.ui.messages import idle_render
from app.ui.messages.pool import RenderCache
from app.ui.messages.widget import MessageWidget
from tests.helpers.window import scripted_window, show_chat

pytestmark = pytest.mark.timeout(240)

REPLY = ("## Part {i}\n\nA reply with **bold** words, `code` and a formula $x_{i}^2$:\n\n"
         + "Some more words to make it long. " * 40 + "\n\n| a | b |\n|---|---|\n| {i} | two |\n\n"
         "```python\nprint({i})\n```\n")


def long_chat(pairs: int) -> Conversation:
    conv = Conversation()
    for i in range(pairs):
        conv.add(Message(Role.USER, f"Question number {i}"))
        conv.add(Message(Role.ASSISTANT, REPLY.format(i=i), status=MessageStatus.DONE))
    return conv


def shown_replies(chat: Any) -> list[Message]:
    first, last = chat._visible_range()
    return [it.message for it in chat.items[first:last]
            if it.message is not None and it.message.role is Role.ASSISTANT]


@pytest.fixture
def window(qtbot):  # type: ignore[no-untyped-def]
    pool = default_ahead_pool()                 # the worker started and warm: it answers, not the list
    pool.ask(("light", "warm", (15.0, 14.0, 3.5, 8.0), 1.0))
    assert pool.wait(timeout=120)
    return scripted_window(qtbot)


def test_the_replies_a_scroll_shows_are_rendered_by_the_worker(window, qtbot, monkeypatch) -> None:
    chat = window.chat
    show_chat(window, long_chat(60))
    qtbot.waitUntil(chat.fully_rendered, timeout=60_000)
    here: list[Message] = []
    real = RenderCache.render_slice

    def render_slice(self: RenderCache, message: Message, *a: Any) -> bool:
        here.append(message)
        return real(self, message, *a)

    monkeypatch.setattr(RenderCache, "render_slice", render_slice)
    monkeypatch.setattr(idle_render, "AHEAD_WAIT_MS", 60_000)    # a busy machine: the wait, not its cap
    bar = chat.verticalScrollBar()
    for fraction in (0.35, 0.7):
        bar.setValue(round(bar.maximum() * fraction))            # far from anything rendered
        QApplication.processEvents()
        qtbot.waitUntil(chat.fully_rendered, timeout=60_000)
        replies = shown_replies(chat)
        assert replies
        for msg in replies:
            renderer = chat.renders.get(msg, "light")
            assert renderer is not None and renderer._pool is None      # the worker's (no lexer pool of ours)
            w = chat.widget_for(msg)
            assert isinstance(w, MessageWidget) and not w.preview
            assert f"Part {msg.text.split()[2]}" in w.view.toPlainText()
    assert here == []                                           # the list rendered none of them itself


def test_a_scroll_step_asks_the_worker_for_the_rows_it_leaves_blank(window, qtbot, monkeypatch) -> None:
    chat = window.chat
    show_chat(window, long_chat(60))
    qtbot.waitUntil(chat.fully_rendered, timeout=60_000)
    asked: list[str] = []
    pool = chat.renders.ahead
    assert pool is not None
    real = pool.ask
    monkeypatch.setattr(pool, "ask", lambda key: (asked.append(key[1]), real(key))[1])
    monkeypatch.setattr(cv, "STEP_BUDGET_MS", 0.0)               # one row gets a widget, the others are left blank
    monkeypatch.setattr(chat.idle, "start", lambda delay_ms=0: None)   # no idle work: what the step did alone
    bar = chat.verticalScrollBar()
    bar.setValue(bar.maximum() // 2)
    replies = shown_replies(chat)
    first, last = chat._visible_range()
    assert any(it.widget is None for it in chat.items[first:last])   # the step left rows blank …
    assert replies and all(m.text in asked for m in replies)       # … and asked the worker for them too


class Silent:
    """A render-ahead pool that takes every job and never answers."""

    def __init__(self) -> None:
        self.asked = 0

    def lookup(self, key: Any) -> None:
        return None

    def ask(self, key: Any) -> None:
        self.asked += 1

    def retain(self, keys: Any) -> None:
        pass

    def pending(self) -> int:
        return self.asked


def test_without_an_answer_from_the_worker_the_list_renders_the_replies_itself(window, qtbot, monkeypatch) -> None:
    chat = window.chat
    silent = Silent()
    chat.renders.ahead = silent                                  # type: ignore[assignment]
    monkeypatch.setattr(idle_render, "AHEAD_WAIT_MS", 40)
    show_chat(window, long_chat(60))
    qtbot.waitUntil(chat.fully_rendered, timeout=60_000)
    bar = chat.verticalScrollBar()
    bar.setValue(bar.maximum() // 2)
    QApplication.processEvents()
    qtbot.waitUntil(chat.fully_rendered, timeout=60_000)
    assert silent.asked > 0
    for msg in shown_replies(chat):
        renderer = chat.renders.get(msg, "light")
        assert renderer is not None and renderer._pool is not None    # made here, with the lexer pool


TALL = "| n | square |\n|---|---|\n" + "".join(f"| {k} | {k * k} |\n" for k in range(40))   # ~25 px a row, guessed 19


def test_a_scroll_step_asks_the_worker_for_the_replies_in_view_first(window, qtbot, monkeypatch) -> None:
    """Asked once the step's layout has settled: its first pass places rows by guessed heights, and a reply that
    pass put in view and the real heights pushed out was the worker's first job, the reply in view behind it."""
    chat = window.chat
    conv = Conversation()
    for i in range(60):
        conv.add(Message(Role.USER, f"Question number {i}"))
        text = f"## Table {i}\n\n{TALL}" if i % 2 else REPLY.format(i=i)
        conv.add(Message(Role.ASSISTANT, text, status=MessageStatus.DONE))
    show_chat(window, conv)
    qtbot.waitUntil(chat.fully_rendered, timeout=60_000)
    pool = chat.renders.ahead
    assert pool is not None
    asked: list[str] = []
    monkeypatch.setattr(pool, "lookup", lambda key: None)            # nothing rendered yet: every reply is asked
    monkeypatch.setattr(pool, "ask", lambda key: asked.append(key[1]))
    monkeypatch.setattr(chat.idle, "start", lambda delay_ms=0: None)   # no idle work: what the step did alone
    bar = chat.verticalScrollBar()
    for fraction in (0.2, 0.3, 0.45, 0.6, 0.75, 0.9):
        asked.clear()
        bar.setValue(round(bar.maximum() * fraction))
        replies = [m.text for m in shown_replies(chat)]
        assert replies and asked[:len(replies)] == replies     # those in view first, top down …
        previewed = {it.message.text for _i, it in chat.shown_rows() if it.message is not None}
        assert set(asked) <= previewed | set(replies)          # … and none the step pushed out of it


def test_opening_a_chat_asks_the_worker_as_each_reply_gets_its_widget(window, monkeypatch) -> None:
    """Not a scroll step: no guessed row is pushed out of view, and asking at the layout's end only started the
    worker later (14 ms opening a 1,000-pair chat)."""
    chat = window.chat
    pool = chat.renders.ahead
    assert pool is not None
    events: list[str] = []
    monkeypatch.setattr(pool, "lookup", lambda key: None)            # nothing rendered yet: every reply is asked
    monkeypatch.setattr(pool, "ask", lambda key: events.append("ask"))
    real = chat._ask_ahead
    monkeypatch.setattr(chat, "_ask_ahead", lambda *a: (events.append("layout's end"), real(*a))[1])
    show_chat(window, long_chat(60))
    assert "ask" in events and events.index("ask") < events.index("layout's end")


def test_the_idle_work_shows_the_reply_in_view_before_it_gives_the_rows_near_it_widgets(window, qtbot,
                                                                                        monkeypatch) -> None:
    chat = window.chat
    show_chat(window, long_chat(60))
    qtbot.waitUntil(chat.fully_rendered, timeout=60_000)
    monkeypatch.setattr(cv, "STEP_BUDGET_MS", 60_000.0)          # a busy machine: every row in view gets a widget
    monkeypatch.setattr(chat.idle, "start", lambda delay_ms=0: None)   # the idle slices run by hand below
    relayouts: list[int] = []
    real = chat._relayout
    monkeypatch.setattr(chat, "_relayout", lambda: (relayouts.append(1), real())[1])
    bar = chat.verticalScrollBar()
    cases = 0
    for fraction in (0.2, 0.3, 0.45, 0.6, 0.75, 0.9):
        bar.setValue(round(bar.maximum() * fraction))
        first, last = chat._visible_range()
        near_first, near_last = chat._visible_range(margin=idle_render.OVERSCAN_PX)
        shown = chat.items[first:last]
        if any(it.widget is None for it in shown) or all(it.widget for it in chat.items[near_first:near_last]):
            continue            # a row in view left blank by the step, or no row near the view without a widget
        assert chat.idle.previews() and chat.idle.previews()[0] in shown
        relayouts.clear()
        chat.idle.step()
        assert relayouts == []                  # the slice went to the preview in view, not to the rows near it
        cases += 1
    assert cases >= 3


def test_a_render_that_is_there_is_built_before_the_rows_left_blank_get_widgets(window, qtbot, monkeypatch) -> None:
    """The preview in view whose render the worker delivered is built first; a preview made for a row the step
    left blank cost that build 5-20 ms, and the full render above then often pushed the row out of view."""
    chat = window.chat
    show_chat(window, long_chat(60))
    qtbot.waitUntil(chat.fully_rendered, timeout=60_000)
    monkeypatch.setattr(cv, "STEP_BUDGET_MS", 0.0)               # the step gives one row a widget, no more
    monkeypatch.setattr(idle_render, "BUILD_SLICE_MS", 0)        # a slice builds one chunk: the build goes on
    monkeypatch.setattr(chat.idle, "start", lambda delay_ms=0: None)   # the idle slices run by hand below
    relayouts: list[int] = []
    real = chat._relayout
    monkeypatch.setattr(chat, "_relayout", lambda: (relayouts.append(1), real())[1])
    pool = chat.renders.ahead
    assert pool is not None
    bar = chat.verticalScrollBar()
    cases = 0
    for k in range(3, 40, 3):
        bar.setValue(round(bar.maximum() * k / 40))
        assert pool.wait(timeout=60)                             # the worker rendered what the step asked for
        first, last = chat._visible_range()
        shown = chat.items[first:last]
        previews = chat.idle.previews()
        if not (previews and previews[0] in shown and any(it.widget is None for it in shown)):
            continue            # no preview in view, or no row in view left blank
        w = previews[0].widget
        assert isinstance(w, MessageWidget)
        relayouts.clear()
        chat.idle.step()
        assert relayouts == [] and w._building is not None      # its build began; the blank rows wait
        cases += 1
    assert cases >= 3
