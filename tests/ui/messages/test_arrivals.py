"""News of the render worker pools reaches the UI loop (app/ui/messages/arrivals.py), once per burst, and a
finished reply waiting for its code colours shows them as soon as the pools are done, not at its next poll."""

from __future__ import annotations

import time

import pytest
from PySide6.QtWidgets import QApplication

from app.core.render.lexer_pool import LexerPool
from app.ui.messages.arrivals import Arrivals
from app.ui.messages.markdown_view import MarkdownView

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def pool():
    p = LexerPool()
    yield p
    p.close()


def test_a_burst_of_results_is_one_signal_on_the_loop(qtbot, pool: LexerPool) -> None:
    arrivals = Arrivals()
    arrivals.watch(pool)
    got: list[float] = []
    arrivals.results.connect(lambda: got.append(time.monotonic()))
    for k in range(3):
        assert pool.request("python", "light", f"x = {k}\n") is None
    assert pool.wait(timeout=120)             # all three stored while the loop did not run
    time.sleep(0.05)
    assert got == []                          # delivered on the loop, not in the pool's thread
    qtbot.waitUntil(lambda: len(got) == 1, timeout=10_000)
    for _ in range(5):
        QApplication.processEvents()
    assert len(got) == 1                      # one signal for the burst
    assert pool.request("python", "light", "y = 1\n") is None
    qtbot.waitUntil(lambda: len(got) == 2, timeout=60_000)
    arrivals.close()
    assert pool.request("python", "light", "z = 1\n") is None
    assert pool.wait(timeout=120)
    for _ in range(5):
        QApplication.processEvents()
    assert len(got) == 2                      # closed: no more news


def test_a_finished_reply_takes_its_colours_when_the_pool_is_done_not_at_its_poll(qtbot, monkeypatch) -> None:
    monkeypatch.setattr(MarkdownView, "HIGHLIGHT_POLL_MS", 60_000)    # only the pools' news can bring them
    view = MarkdownView(theme="light")
    qtbot.addWidget(view)
    view.resize(600, 400)
    view.show()
    code = "".join(f"value_{k} = compute({k}) + {time.monotonic_ns()}\n" for k in range(6))   # never lexed before
    view.set_text(f"Some code:\n\n```python\n{code}```\n")
    assert view.renderer.highlights_pending                 # shown plain first: the worker lexes it
    qtbot.waitUntil(lambda: not view.renderer.highlights_pending, timeout=20_000)
    html = view.document().toHtml()
    assert "value_0" in html
    assert html.count("color:") > 6                         # the colours are in the document


def test_a_streaming_reply_refreshed_by_its_ticks_is_not_refreshed_by_its_poll(qtbot) -> None:
    """Its ticks take the colours: the poll's own refresh was a second patch in a frame, outside the tick's
    budget. Once no tick refreshed it since the last look (the stream paused), the poll refreshes it."""
    view = MarkdownView(theme="light")
    qtbot.addWidget(view)
    code = "".join(f"item_{k} = fetch({k}) * {time.monotonic_ns()}\n" for k in range(4))   # never lexed before
    view.append_text(f"Code:\n\n```python\n{code}")
    view.refresh()                                          # a render tick
    calls: list[int] = []
    tick_refresh = view.refresh
    view.refresh = lambda: calls.append(1) or tick_refresh()   # type: ignore[method-assign]
    view._poll_highlights()
    assert calls == [] and view._hl_timer.isActive()        # refreshed by a tick since: it looks again later
    view._poll_highlights()
    assert calls == [1]                                     # no tick since: the poll refreshes
    view.append_text("```\n")
    tick_refresh()
    view.renderer.finish()
    view._poll_highlights()
    assert calls == [1, 1]                                  # finished: nobody else refreshes it
