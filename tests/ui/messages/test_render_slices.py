"""Finished replies rendered in idle slices (app/ui/messages/pool.py, idle_render.py): a slice ends at a block
boundary, so no block is parsed again by the next slice; the result equals the one-shot render; and a reply is
shown once, with its code colours, not plain first and coloured again."""

from __future__ import annotations

import time

import pytest
from PySide6.QtWidgets import QApplication

from app.core.conversation import Conversation, Message, MessageStatus, Role
from app.core.render.markdown import IncrementalMarkdown
from app.ui.messages import idle_render
from app.ui.messages.markdown_view import MarkdownView
from app.ui.messages.pool import BLANK_LOOK_SLICES, RenderCache, new_renderer, slice_end
from app.ui.messages.widget import MessageWidget
from tests.helpers.window import scripted_window, show_chat

pytestmark = pytest.mark.timeout(180)

TABLE = "| n | square |\n|---:|---:|\n" + "".join(f"| {k} | {k * k} |\n" for k in range(60))


def test_a_slice_ends_after_the_last_blank_line_inside_it() -> None:
    text = "one paragraph\n\nanother one here\n\nthird paragraph that runs on and on\n" + "x" * 200
    end = slice_end(text, 0, 50)
    assert text[:end] == "one paragraph\n\nanother one here\n\n"


def test_a_table_longer_than_a_slice_is_one_slice_up_to_the_blank_line_after_it() -> None:
    text = "Intro.\n\n" + TABLE + "\nAfter the table.\n" + "More text.\n" * 40
    assert 300 < len(TABLE) < 300 * BLANK_LOOK_SLICES
    end = slice_end(text, 8, 300)            # the slice starts at the table; no blank line inside 300 chars
    assert text[8:end] == TABLE + "\n"


def test_without_a_blank_line_a_slice_ends_after_a_line_end_and_a_short_rest_is_whole() -> None:
    text = "".join(f"line {k}\n" for k in range(400))
    end = slice_end(text, 0, 100)
    assert 100 <= end <= 150 and text[end - 1] == "\n"
    assert slice_end(text, len(text) - 120, 100) == len(text)


def test_a_reply_rendered_in_slices_equals_its_one_shot_render(qapp, corpus_dir) -> None:
    cache = RenderCache()
    for k, path in enumerate(sorted((corpus_dir / "answers").glob("*.md"))):
        text = path.read_text(encoding="utf-8") + "\n\n" + TABLE + "\nThe end.\n"
        msg = Message(Role.ASSISTANT, text, status=MessageStatus.DONE)
        msg.id = 10_000 + k
        slices = 0
        while not cache.render_slice(msg, "light", 120):
            slices += 1
        assert slices > 2, path.name
        sliced = cache.get(msg, "light")
        assert sliced is not None
        whole = new_renderer("light")            # the same renderer, fed the text in one piece
        whole.feed(text)
        whole.finish()
        for md in (sliced, whole):
            while md.highlights_pending:         # code colours and formulas come from the worker pools
                assert MarkdownView.lexer_pool().wait(timeout=120) and MarkdownView.math_pool().wait(timeout=120)
                md.render()
        assert sliced.html == whole.html, path.name


def test_a_reply_is_shown_once_with_its_colours(qtbot, monkeypatch) -> None:
    shown: list[bool] = []
    real = MarkdownView.set_renderer

    def spy(self: MarkdownView, renderer: IncrementalMarkdown) -> None:
        shown.append(renderer.highlights_pending)
        real(self, renderer)

    monkeypatch.setattr(MarkdownView, "set_renderer", spy)
    monkeypatch.setattr(idle_render, "COLOUR_WAIT_MS", 60_000)   # a busy machine: the wait, not its cap
    window = scripted_window(qtbot)
    stamp = time.monotonic_ns()             # code never lexed before in this process
    conv = Conversation()
    for i in range(3):
        code = "".join(f"result_{i}_{k} = transform({k}, {stamp})\n" for k in range(8))
        conv.add(Message(Role.USER, f"Question {i}"))
        conv.add(Message(Role.ASSISTANT, f"Answer {i}.\n\n" + "Some words. " * 300 + f"\n\n```python\n{code}```\n",
                         status=MessageStatus.DONE))     # the code last: lexed only once the last slice is in
    show_chat(window, conv)
    QApplication.processEvents()
    qtbot.waitUntil(window.chat.fully_rendered, timeout=60_000)
    assert shown                             # the replies were shown by the idle work …
    assert shown == [False] * len(shown)     # … each with its colours already there


def test_a_reply_built_off_screen_in_slices_equals_one_shown_at_once(qtbot, corpus_dir) -> None:
    word = "x" * 300      # wider than the view, too short for break_long_runs: wraps by the editor's wrap mode
    answers = [p.read_text(encoding="utf-8") for p in sorted((corpus_dir / "answers").glob("*.md"))[:4]]
    text = "\n\n".join([word] + answers * 3)       # (long enough for three segments and more)
    msg = Message(Role.ASSISTANT, text, status=MessageStatus.DONE)
    once, sliced = MessageWidget(msg, body="preview"), MessageWidget(msg, body="preview")
    for w in (once, sliced):
        qtbot.addWidget(w)
        w.resize(700, 400)
        w.show()
    qtbot.waitExposed(sliced)
    renderer = new_renderer("light")
    renderer.feed(text)
    renderer.finish()
    once.set_rendered(renderer)
    preview_view = sliced.view
    heights: list[int] = []
    sliced.bodyHeightChanged.connect(heights.append)
    calls = 1
    while not sliced.build_rendered(renderer):
        calls += 1
        assert sliced.view is preview_view and sliced.preview       # the preview stays until the build is in
    assert calls > 3                                                # built a chunk at a time
    assert heights == []                                            # the hidden build moved nothing on screen
    sliced.show_built()
    assert not sliced.preview and sliced.view is not preview_view and sliced.view.isVisible()
    assert not preview_view.isVisible()
    assert heights and heights[-1] == sliced.view.heightForWidth(sliced.view.width())
    assert sliced.view.toPlainText() == once.view.toPlainText()
    assert [d.toHtml() for d in sliced.view.documents()] == [d.toHtml() for d in once.view.documents()]
    segments = [s.view.geometry() for s in sliced.view.segments.items]
    assert len(segments) > 2 and segments == [s.view.geometry() for s in once.view.segments.items]   # laid out alike
    assert sliced.view.heightForWidth(700) == once.view.heightForWidth(700)
    for w in (once, sliced):
        w.resize(700, w.heightForWidth(700))
    qtbot.waitUntil(lambda: sliced.view.size() == once.view.size())
    assert sliced.view.grab().toImage() == once.view.grab().toImage()   # what the editor shows, pixel for pixel
    sliced.bind(msg, body="preview")                                # reused: the spare is a view again
    assert sliced.preview
