"""A streaming reply at the bottom of a long chat repaints only what changed (app/ui/messages/scroll_blit.py,
repaint.py): the screen scrolls by a blit, the live document repaints from its first changed block — and what
the window shows (its backing store) still equals a fresh paint of the same widgets, pixel for pixel, at every
pause of the stream and at its end."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest
from PySide6.QtCore import QPoint, QRect
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication

from app.core.chat.session import ModelState
from app.core.types import GenerationParams
from app.engine.scripted import ScriptedEngine
from app.ui.window.main_window import MainWindow
from tests.helpers import until
from tests.helpers.window import scripted_window, show_chat
from tests.ui.messages.test_chat_view import chat_of

pytestmark = pytest.mark.timeout(180)

#: A reply of every shape that lays out differently: paragraphs, code with a header, a long table in row
#: groups, a list and a quote (each pause falls in a different one).
REPLY = (
    "Here is a first paragraph with **bold** and `code`, long enough to wrap over two lines in the column. " * 3
    + "\n\n```python\n" + "".join(f"def f{i}(x):\n    return x * {i}  # line {i}\n" for i in range(12)) + "```\n\n"
    + "| n | name | value |\n|---:|:---|---|\n" + "".join(f"| {i} | row *{i}* | `v{i}` |\n" for i in range(30))
    + "\nA list:\n\n" + "".join(f"- item {i} with some words\n" for i in range(12))
    + "\n> a quote line\n> and another one\n\nThe end.\n"
)


class PausingEngine(ScriptedEngine):
    """Stops before the chunks in ``pauses`` (or the next chunk once ``pause_next`` is set) until the test lets it
    go on (``go``); ``waiting`` is set meanwhile."""

    def __init__(self, text: str, pauses: set[int]) -> None:
        super().__init__(text, tokens_per_s=2000)
        self.pauses = pauses
        self.pause_next = threading.Event()
        self.waiting = threading.Event()
        self.go = threading.Event()

    def _pieces(self) -> Iterator:  # type: ignore[override]
        for i, piece in enumerate(super()._pieces()):
            if i in self.pauses or self.pause_next.is_set():
                self.pause_next.clear()
                self.waiting.set()
                self.go.wait(30)
                self.go.clear()
            yield piece


def chat_area(window: MainWindow) -> QRect:
    vp = window.chat.viewport()
    return QRect(vp.mapTo(window, QPoint(0, 0)), vp.size())


def shown(window: MainWindow) -> QImage:
    """What the window's backing store holds (what a screen shows) in the chat's viewport."""
    handle = window.windowHandle()
    img = handle.screen().grabWindow(window.winId()).toImage()
    return img.copy(chat_area(window)).convertToFormat(QImage.Format.Format_RGB32)


def fresh(window: MainWindow) -> QImage:
    """The same area painted afresh, every widget in it from scratch."""
    return window.grab(chat_area(window)).toImage().convertToFormat(QImage.Format.Format_RGB32)


def differing_rows(a: QImage, b: QImage) -> list[int]:
    assert a.size() == b.size(), (a.size(), b.size())
    return [y for y in range(a.height()) if a.constScanLine(y) != b.constScanLine(y)]


def test_what_the_window_shows_equals_a_fresh_paint_while_a_reply_streams(qtbot, qloop) -> None:
    window = scripted_window(qtbot)
    show_chat(window, chat_of(40, 5))                 # the list overflows: it scrolls as the reply grows
    n_chunks = len(REPLY) // 4
    engine = PausingEngine(REPLY, {n_chunks * k // 6 for k in range(1, 6)})
    engine.load()
    window.session.engine = engine
    window.session._loaded.set()
    window.session.model_state = ModelState.IDLE
    reply = window.send("go")
    assert reply is not None
    blits: list[bool] = []
    import app.ui.messages.chat_view as cv

    real = cv.blit_shift
    cv.blit_shift = lambda *a: blits.append(real(*a)) or blits[-1]   # count the scrolls that were blits
    try:
        for _pause in range(5):
            qloop.run_until_complete(until(lambda: engine.waiting.is_set() or reply.status.final))
            qloop.run_until_complete(until(lambda: window.coalescer.waiting(reply) == 0))
            qloop.run_until_complete(asyncio.sleep(0.1))          # the frames made are shown (their beats)
            QApplication.processEvents()
            rows = differing_rows(shown(window), fresh(window))
            assert not rows, f"stale rows at pause {_pause}: {rows[:10]}…"
            engine.waiting.clear()
            engine.go.set()
        qloop.run_until_complete(until(lambda: reply.status.final))
        qloop.run_until_complete(asyncio.sleep(0.1))
        QApplication.processEvents()
    finally:
        cv.blit_shift = real
    assert not differing_rows(shown(window), fresh(window))
    assert sum(blits) >= 5                                # the screen did scroll by blits (not by repainting)
    view = window.chat.widget_for(reply).view
    assert view.repaint_from.cut > 0                  # and patches repainted from their first changed block
    assert reply.text == REPLY


def test_what_the_window_shows_equals_a_fresh_paint_after_each_sealed_segment(qtbot, qloop, monkeypatch) -> None:
    # A seal shows the segment's widget unpainted (the live document painted those pixels) and repaints the view
    # only from the fresh live document's top down (PatchedView._seal): the stream pauses right after each seal,
    # and the screen must equal a fresh paint. Paragraphs: the fresh document's first one may sit elsewhere than
    # it did in the sealed one (margins), so what is below the segment must be painted again.
    from app.ui.messages.patched_view import PatchedView

    text = "".join(f"Paragraph {i}: a few words of prose that end here, then a blank line.\n\n" for i in range(240))
    window = scripted_window(qtbot)
    show_chat(window, chat_of(40, 5))
    engine = PausingEngine(text, set())
    engine.load()
    window.session.engine = engine
    window.session._loaded.set()
    window.session.model_state = ModelState.IDLE
    seals: list[int] = []
    real_seal = PatchedView._seal

    def seal(view: PatchedView) -> None:
        real_seal(view)
        seals.append(len(view.segments))
        engine.pause_next.set()

    monkeypatch.setattr(PatchedView, "_seal", seal)
    reply = window.send("go", GenerationParams(max_tokens=1_000_000))
    assert reply is not None
    checked = 0
    while not reply.status.final:
        qloop.run_until_complete(until(lambda: engine.waiting.is_set() or reply.status.final))
        qloop.run_until_complete(until(lambda: window.coalescer.waiting(reply) == 0))
        qloop.run_until_complete(asyncio.sleep(0.1))
        QApplication.processEvents()
        rows = differing_rows(shown(window), fresh(window))
        assert not rows, f"stale rows after seal {len(seals)}: {rows[:10]}…"
        checked += 1
        engine.waiting.clear()
        engine.go.set()
    assert len(seals) >= 2 and checked >= 2
    assert reply.text == text
