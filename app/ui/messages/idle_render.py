"""The message list's idle work (:mod:`.chat_view`): once the scrolling pauses, previews become full renders and
the replies near the viewport are rendered ahead into the cache, one small slice per event-loop turn.

Each slice does one piece of work, then schedules the next: give the rows in or near the viewport their widgets
(within the step's budget, previews otherwise), or take a previewed reply's render from the render-ahead worker
(:mod:`app.core.render.render_ahead`, asked by the scroll step; waited for up to ``AHEAD_WAIT_MS``) or, when it
cannot give one, render a few lines of its markdown here (``RENDER_SLICE_CHARS``), or build a rendered one's
documents off-screen, about ``BUILD_SLICE_MS`` of them (then they replace its preview), or ask the worker for the
replies within a screen of the viewport that have no widget yet. Any scroll puts the idle work off again
(``IDLE_DELAY_MS``).

A rendered reply whose code colours or formulas the worker pools have not delivered yet is shown when they come
(the pools' news, :mod:`.arrivals`, wakes the idle work: :meth:`IdleWork.pool_results`), or after
``COLOUR_WAIT_MS`` without them: showing it plain and then coloured built its documents twice (30-50 ms each for
a 7 KB reply), and the colours reached the screen only at the view's next poll (up to 40 ms later).
"""

from __future__ import annotations

import time
from typing import Any, Protocol

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QWidget

from app.core.conversation import Role
from app.ui.messages.pool import RenderCache
from app.ui.messages.positions import ListItem
from app.ui.messages.widget import MessageWidget

#: Quiet time (ms) after the last scroll before the idle work starts; each idle slice does one piece of work.
IDLE_DELAY_MS = 30
#: Characters of markdown one idle slice renders, cut at a block boundary (``pool.slice_end``: ~1-14 ms here; a
#: table or list that runs past it is fed whole). 500 cut at line ends made ~14 slices of a 7 KB reply, each a
#: loop turn of its own, and parsed its long table again in each.
RENDER_SLICE_CHARS = 1500
#: Rows this close to the viewport (px) get their widgets in idle time, before they scroll in.
OVERSCAN_PX = 120
#: An idle slice that builds a reply's documents goes on with the next budget of HTML while it has run less than
#: this (ms): the build's slices then take about one frame, whatever this machine's speed.
BUILD_SLICE_MS = 10
#: The longest a rendered reply waits for its code colours and formulas before it is shown without them (ms).
COLOUR_WAIT_MS = 120
#: The longest a previewed reply waits for the render-ahead worker (:mod:`app.core.render.render_ahead`) before
#: it is rendered here (ms): the worker renders a 7 KB reply in 15-60 ms, but its start takes ~1 s.
AHEAD_WAIT_MS = 150


class IdleHost(Protocol):
    """What the idle work uses of its message list (:class:`.chat_view.ChatView`): its rows, its render cache and
    the steps of its layout. A protocol, so this module does not import the list that owns it."""

    items: list[ListItem]
    renders: RenderCache
    _overscan: int

    def viewport(self) -> QWidget: ...
    def shown_rows(self) -> list[tuple[int, ListItem]]: ...
    def _style(self) -> str: ...
    def _visible_range(self, margin: int = 0) -> tuple[int, int]: ...
    def _relayout(self) -> None: ...
    def _show_rendered(self, w: MessageWidget, renderer: Any) -> None: ...
    def _show_built(self, w: MessageWidget) -> None: ...


class IdleWork:
    """The idle slices of ``view`` (see the module docstring). ``slices_ms`` holds the duration of the last 1,000
    slices (ms; the history benchmark reads it)."""

    def __init__(self, view: IdleHost) -> None:
        self.view = view
        self.timer = QTimer(view.viewport())
        self.timer.setSingleShot(True)
        self.timer.timeout.connect(self.step)
        self.slices_ms: list[float] = []
        self._waiting: tuple[object, float] | None = None   # (message, since) waiting for its colours
        self._ahead: tuple[object, float] | None = None     # (message, since) wanted from the render-ahead worker
        self._ahead_waiting = False                          # the timer waits for that worker's news

    def pool_results(self) -> None:
        """The worker pools stored results (:mod:`.arrivals`; the list, a QObject, connects this, so the connection
        ends with it): a reply waiting for its colours or for the render-ahead worker is looked at now."""
        if (self._waiting is not None or self._ahead_waiting) and self.timer.isActive():
            self.timer.start(0)          # the colours or the render may be there: look now

    def start(self, delay_ms: int = IDLE_DELAY_MS) -> None:
        """Run the next slice ``delay_ms`` from now (again, if it was scheduled)."""
        self._ahead_waiting = False
        self.timer.start(delay_ms)

    def _wait_ahead(self, message: object, t0: float) -> bool:
        """Whether to wait for the render-ahead worker's render of ``message`` (shown as a preview) rather than
        make it here: for ``AHEAD_WAIT_MS`` from the first slice that wanted it (then the timer is set)."""
        if self._ahead is None or self._ahead[0] is not message:
            self._ahead = (message, t0)
        left_ms = AHEAD_WAIT_MS - (t0 - self._ahead[1]) * 1000.0
        if left_ms <= 0:
            return False
        self._ahead_waiting = True
        self.timer.start(max(1, round(left_ms)))
        return True

    def is_active(self) -> bool:
        return self.timer.isActive()

    def previews(self) -> list[ListItem]:
        """Rows showing a preview of a finished reply, those in the viewport first (top down), then the others
        that have widgets (a streaming reply's preview catches up by itself)."""
        view = self.view
        first, last = view._visible_range()
        near = list(view.items[first:last])
        near += [it for _i, it in view.shown_rows() if it not in near]
        return [it for it in near if isinstance(it.widget, MessageWidget) and it.widget.preview
                and it.message is not None and it.message.status.final]

    def _show(self, w: MessageWidget, renderer: Any) -> None:
        """One slice of showing ``renderer`` in ``w`` in place of its preview: built off-screen a budget at a time
        (``MessageWidget.build_rendered``), or at once in a view that holds the focus or a selection (its
        preview stays the view the person acts on until then)."""
        view = self.view
        assert w.view is not None
        if w.view.hasFocus() or w.view.textCursor().hasSelection():
            view._show_rendered(w, renderer)
            return
        t0 = time.perf_counter()
        built = w.build_rendered(renderer)
        while not built and (time.perf_counter() - t0) * 1000.0 < BUILD_SLICE_MS:
            built = w.build_rendered(renderer)
        if built:
            view._show_built(w)

    def done(self) -> bool:
        """Whether every message in the viewport shows its full render with its code colours (no preview, none
        left blank by a scroll step's budget)."""
        view = self.view
        first, last = view._visible_range()
        for it in view.items[first:last]:
            w = it.widget
            if w is None and it.message is not None:
                return False
            if isinstance(w, MessageWidget) and w.view is not None and (
                    w.preview or w.view.renderer.highlights_pending):
                return False
        return True

    def step(self) -> None:
        """One slice of idle work (see the module docstring); the next is scheduled while work is left."""
        view = self.view
        t0 = time.perf_counter()
        self._ahead_waiting = False
        theme = view._style()
        more = True
        previews = self.previews()
        shown_first, shown_last = view._visible_range()
        first, last = view._visible_range(margin=view._overscan)     # OVERSCAN_PX but while scrolling
        in_view = view.items[shown_first:shown_last]
        lead = previews[0] if previews and any(it is previews[0] for it in in_view) else None
        ready = lead is not None and lead.message is not None and (
            view.renders.has(lead.message, theme) or view.renders.take_ahead(lead.message, theme, ask=False) is True)
        if not ready and any(it.widget is None for it in in_view):
            # rows in the viewport that a scroll step left blank get their widgets (previews if not rendered)
            # while the reply in view waits for its render, theirs only: those near the viewport come once its
            # rows show their full render. The build of a render that is there comes first: a preview made
            # before it cost it 5-20 ms, and its full render then often pushed that row out of view
            overscan, view._overscan = view._overscan, 0
            try:
                view._relayout()
            finally:
                view._overscan = overscan
        elif lead is None and any(it.widget is None for it in view.items[first:last]):
            view._relayout()        # the rows just outside the viewport: widgets, previews if not rendered
        elif previews:
            it = previews[0]
            w = it.widget
            assert isinstance(w, MessageWidget) and it.message is not None
            renderer = view.renders.get(it.message, theme)
            if renderer is None:
                got = view.renders.take_ahead(it.message, theme)
                if got is None and self._wait_ahead(it.message, t0):
                    more = False          # the worker renders it: its news wakes this (pool_results)
                elif not got:             # markdown → HTML here, a few lines a slice; then one slice shows it
                    view.renders.render_slice(it.message, theme, RENDER_SLICE_CHARS)
            else:
                renderer.render()         # the colours and formulas the pools delivered meanwhile
                if self._waiting is None or self._waiting[0] is not it.message:
                    self._waiting = (it.message, t0)
                left_ms = COLOUR_WAIT_MS - (t0 - self._waiting[1]) * 1000.0
                if renderer.highlights_pending and left_ms > 0:
                    more = False
                    self.timer.start(max(1, round(left_ms)))   # or sooner: the pools' news (pool_results)
                else:
                    self._waiting = None
                    self._show(w, renderer)
        else:
            vh = view.viewport().height()
            first, last = view._visible_range(margin=vh)
            ahead = [it for it in view.items[first:last] if it.widget is None and it.message is not None
                     and it.message.role is Role.ASSISTANT and it.message.status.final and it.message.text
                     and not view.renders.has(it.message, theme)]
            more = asked = False
            for row in ahead:             # the worker renders them; here only what it cannot
                assert row.message is not None
                got = view.renders.take_ahead(row.message, theme)
                if got is False:
                    view.renders.render_slice(row.message, theme, RENDER_SLICE_CHARS)
                    more = True
                    break
                asked = asked or got is None
            if asked and not more:
                self._ahead_waiting = True
                self.timer.start(AHEAD_WAIT_MS)   # or sooner: the pool's news
        self.slices_ms.append((time.perf_counter() - t0) * 1000.0)
        del self.slices_ms[:-1000]
        if more:
            self.timer.start(0)
