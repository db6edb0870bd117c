"""The render tick: coalesce what arrived since the last tick and paint it once — at most a frame's work.

One ``QTimer`` per window drives every streaming message. Each tick takes the text appended to a reply since
the previous tick (``Message.take_new``) into the reply's *backlog*, feeds a slice of the backlog to the reply's
view and patches the view once. The tick is **time-sliced**: the slice is as long as fits in ``TICK_BUDGET_MS``
(10 of a 60 Hz frame's 16.7 ms, leaving the rest to painting and the rest of the loop; paced, with what a quick
paint left of its share: ``FRAME_PAINT_MS``), measured on the tick itself:
a tick that cost more than the budget shrinks the next slice in proportion, one that left the budget half unused
while text was waiting doubles it. What does not fit is carried to the next tick, so a burst (a fast model, a
proxy that delivers a megabyte at once) costs many cheap ticks instead of one long one, and the newest text still
appears within a few frames (a backlog is painted within ``CATCH_UP_TICKS`` ticks, unless a slice that big would
cost more than ``CATCH_UP_TICK_MS``: see :func:`.tick_budget.catch_up_chars`). A view that can render without
patching (``render``) is fed a catch-up slice in quarters, each rendered, until ``CATCH_UP_RENDER_MS`` is spent: the
clock, not a prediction, ends the slice (a slice's render cost 1.5-2× its prediction where tables follow prose: the
1 MB burst's parse ticks were 18 ms at p99, 13 after). The slices are cut at line ends where one is near (the
renderer gives the same result for any cut: its invariant). A reply that ends with text still in its backlog is
finished (:meth:`Coalescer.finish`) once the backlog is painted.

A view may *lag*: one patch inserts a bounded amount of HTML (``PATCH_BUDGET_CHARS``), and a slice of tables and
coloured code can render to eight times its length. While the view says it lags (``lagging``) by a whole patch
(``saturated``), a tick feeds it nothing and only patches it again; by less, the tick feeds it its next slice too
and the one patch inserts the rest first (patches of the rest alone cost 1-3 ms: half the ticks of a fast remote
reply's catch-up). The chunks fed are counted as painted (and the reply finished) once the view shows them.
Without that, 1 MB in one chunk was "finished" after 3 s with 1.3 of its 8.1 MB of HTML on screen, and the rest
came 8 KB every 50 ms (``MORE_DELAY_MS``): 40 s more.

A reply's first chunk counts at the first patch that shows its beginning, so the time to first token is the
screen's: when the view lags after it, and when it came in a burst, whose chunks otherwise count in proportion to
the characters painted (a short chunk and a 300 KB one in one read had no TTFT until the backlog was painted).

The interval adapts too: two ticks in a row that painted their whole backlog and still cost more than the whole
interval (a fixed cost the slice cannot bound) double the interval (fewer, larger renders), one that costs less
than half the interval halves it back towards ``MIN_INTERVAL_MS``, each at the timer's next firing. (Doubling at
more than half the interval, a 9 ms tick made the next frames 32 ms apart: 18 of 237 in the render bench at 5,000
tokens/s.) The idea is qutebrowser's ``misc/throttle.py``, made adaptive and time-sliced.

In the window the tick is **paced** (``PACED``, ``app.ui.messages.pacing``): the work of a frame (the slices
above) runs in the loop turn after the previous frame's paint, with the window's paints held, and the timer's
next firing — the *beat* — only shows it. The frames then keep the timer's grid: a frame's interval no longer
carries the difference between two ticks' costs (2-8 ms, as noisy as white noise: predicting it from the last
ticks made it worse), only the lateness of a firing when the work, the paint and the rest of the loop took
longer than the interval. The price is up to one interval of latency for text that arrives after a frame's work.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QWidget

from app.core.conversation import Message
from app.core.streaming.metrics import StreamMetrics
from app.ui.messages import tick_budget as tb
from app.ui.messages.pacing import BeatGrid, FrameHold
from app.ui.messages.tick_target import Target


class Coalescer(QObject):
    """Adaptive QTimer tick over the replies that are streaming.

    Signals: ``painted(reply, n_chunks)`` after a tick painted new text of ``reply``.
    ``ticks`` counts ticks that painted new text (all replies); ``last_tick_ms`` is the cost of the last one.

    **Paced** (``PACED``, a widget parent; ``paced`` overrides it): a firing of the timer (the *beat*) shows the
    frame made since the beat before — it releases the window's held paints (:class:`FrameHold`) and stamps the
    replies' metrics — then the next frame's work (feed, patch) runs in the loop turn after that paint, with the
    window's paints held until the next beat. A frame then reaches the screen one interval after its text was
    taken, at a beat, instead of at a beat plus its work's cost. Unpaced (no widget parent: the tests' default),
    a firing does the work and has the window paint at once.

    ``timer`` (tests) replaces the ``QTimer``: any object with ``timeout`` (a signal), ``setInterval``,
    ``setTimerType``, ``start``, ``stop`` and ``isActive``; ``clock`` (seconds, default ``time.perf_counter``)
    times the ticks, so a test can make a tick cost what it wants.
    """

    painted = Signal(object, int)

    def __init__(self, parent: QObject | None = None, *, timer: Any = None,
                 clock: Callable[[], float] = time.perf_counter, paced: bool | None = None) -> None:
        super().__init__(parent)
        self._clock = clock
        self._paced = tb.PACED if paced is None else paced
        self._hold: FrameHold | None = None      # paced: the window's paints, held between a frame's work and beat
        self._work_due = False                   # paced: the next frame's work is posted
        self._deferring = False                  # paced: in a frame's work (its paints are stamped at the beat)
        self._unshown: list[tuple[StreamMetrics | None, int, float]] = []   # (metrics, chunks, cost s) made, not shown
        self._timer = timer if timer is not None else QTimer(self)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(tb.MIN_INTERVAL_MS)
        self._timer.timeout.connect(self.tick)
        #: paced beats on the timer's exact grid (a real timer only: a test's timer fires when told)
        self._grid: BeatGrid | None = BeatGrid() if isinstance(self._timer, QTimer) else None
        self._targets: dict[int, Target] = {}
        self._painted_chunks: dict[int, int] = {}   # reply id → chunks painted (kept after detach)
        self.ticks = 0
        self.interval_ms = tb.MIN_INTERVAL_MS
        self._interval_due = False               # interval_ms changed: the timer gets it at its next firing
        self._over = 0                           # ticks in a row that cost more than the interval
        self.last_tick_ms = 0.0
        self._soon = False                       # a tick is asked for the next loop turn (``paint_soon``)
        self._beat_at = 0.0                      # paced: when the last beat fired (``clock`` seconds)

    @property
    def timer(self) -> Any:
        """The tick's timer (a ``QTimer``; benchmarks connect to its ``timeout`` to time the frames)."""
        return self._timer

    def attach(self, reply: Message, feed: Callable[[str], None], paint: Callable[[], bool],
               metrics: StreamMetrics | None = None, lagging: Callable[[], bool] | None = None,
               render: Callable[[], object] | None = None, spend: Callable[[float], object] | None = None,
               saturated: Callable[[], bool] | None = None, end_cost: Callable[[], float] | None = None) -> None:
        """Start painting ``reply`` on each tick (replacing its previous target, e.g. when its view is re-made);
        each paint is stamped in ``metrics`` (the reply's ``Generation.metrics``) when given. ``lagging``: whether
        the view shows less than it was fed; ``saturated``: whether what it has not shown fills its next patch
        (see the module docstring); ``end_cost``: what the view's final render is reckoned to cost (ms; see
        :meth:`finish`)."""
        old = self._targets.get(reply.id)
        self._targets[reply.id] = Target(reply, feed, paint, metrics, frozen=old.frozen if old else False,
                                         lagging=lagging, render=render, spend=spend, saturated=saturated,
                                         end_cost=end_cost)
        self._start()

    def catch_up(self, reply: Message, feed: Callable[[str], None], paint: Callable[[], bool],
                 metrics: StreamMetrics | None = None, caught_up: Callable[[], None] | None = None,
                 fed: int = 0, lagging: Callable[[], bool] | None = None,
                 render: Callable[[], object] | None = None, spend: Callable[[float], object] | None = None,
                 saturated: Callable[[], bool] | None = None, end_cost: Callable[[], float] | None = None
                 ) -> None:
        """Attach a view of ``reply`` that holds the first ``fed`` characters of its text (0: a re-made view,
        empty): the rest of the text so far goes into its backlog and is fed in slices like any other (opening
        a chat whose reply streams in the background never renders the whole reply in one tick); ``caught_up``
        is called once the backlog is fed, before that tick's paint (the view then shows its render instead of
        its preview). Chunks already painted are not counted again."""
        old = self._targets.get(reply.id)
        reply.take_new()                     # what arrived so far is in the text below
        t = Target(reply, feed, paint, metrics, frozen=old.frozen if old else False, lagging=lagging,
                   render=render, spend=spend, saturated=saturated, end_cost=end_cost)
        t.caught_up = caught_up
        t.backlog = reply.text[fed:] if fed else reply.text
        self._targets[reply.id] = t
        self._start()

    def _start(self) -> None:
        if not self._timer.isActive():
            if self._interval_due:
                self._set_interval()
            self._timer.start()
            if self._grid is not None:
                self._grid.reset()

    def waiting(self, reply: Message) -> int:
        """Characters of ``reply`` taken but not painted yet (its backlog; 0 when not attached)."""
        t = self._targets.get(reply.id)
        return t.waiting if t is not None else 0

    def metrics_of(self, reply: Message) -> StreamMetrics | None:
        """The metrics ``reply``'s paints are stamped in while it is attached (None otherwise)."""
        t = self._targets.get(reply.id)
        return t.metrics if t is not None else None

    def painted_chunks(self, reply: Message) -> int:
        return self._painted_chunks.get(reply.id, 0)

    def paint_soon(self, reply: Message) -> None:
        """The first chunk of ``reply`` has arrived (its status just became GENERATING; the text is appended in
        the same loop turn): paint it in the next loop turn rather than at the next tick, up to ``interval_ms``
        later — that wait was part of the time to first token a user sees. Only before anything of ``reply``
        was painted; the timer's own ticks go on as before."""
        t = self._targets.get(reply.id)
        if t is None or t.frozen or self._painted_chunks.get(reply.id) or self._soon:
            return
        self._soon = True
        QTimer.singleShot(0, self, self._tick_soon)

    def _tick_soon(self) -> None:
        self._soon = False
        self._work(present=True)

    def flush(self, reply: Message) -> int:
        """Paint what has arrived for ``reply`` right now, backlog included, in one go (Stop: what arrived before
        it is shown at once); returns the chunks painted."""
        self._show()
        t = self._targets.get(reply.id)
        if t is None or t.frozen:
            return 0
        return self._paint(t, None) or 0

    def finish(self, reply: Message, done: Callable[[], None], paint_end: Callable[[], None] | None = None
               ) -> None:
        """``reply`` ended: call ``done`` (the view's ``finish``) once everything that arrived is painted — now
        when what is left fits in one slice (painted first), else from the tick that paints its end
        (time-sliced like the rest). Then the reply is detached. Not attached (or frozen): ``done`` now.
        Paced, when a frame is made and waits for its beat and the end would not be done well before it
        (``END_COST_FACTOR`` × the last paint, or the view's own reckoning, ``end_cost``, when that is more), the
        end is the next frame's work, like any text that comes after a frame's work.

        ``paint_end`` (the view's ``finish`` alone, when ``done`` does it only if it was not done): what is left
        in one slice is fed and painted by it, with the end, in one patch. Patching the tail and then the final
        render made the reply's last frame two patches long (a 200 KB code line: 2 × 3-7 ms). A view that lags
        is patched by the ticks until it shows everything; ``done`` then."""
        t = self._targets.get(reply.id)
        if t is not None and not t.frozen:
            text, n = reply.take_new()
            t.take(text, n)
            t.paint_end = paint_end
            if t.waiting > t.slice_chars or t.lags() or self._end_waits(t):   # by the ticks, then done
                t.on_finished = done
                return
            if t.waiting or t.backlog_chunks or t.held or paint_end is not None:
                self._paint(t, None)         # the last slice, painted with the end (``paint_end``)
            if t.lags():
                t.on_finished = done
                return
        self.detach(reply)
        done()

    def stop(self, reply: Message) -> bool:
        """Stop: show a frame made and not shown yet (paced), paint what arrived for ``reply`` now if it is at
        most ``STOP_PAINT_CHARS`` (the usual case), then freeze it (nothing more is painted, whatever arrives).
        Returns False when more had arrived than that: it is not painted (one patch of it could take seconds) and
        the caller shows the stopped reply as a finished message instead (preview, then rendered in slices)."""
        self._show()                         # a frame made and not shown yet: shown before the Stop
        t = self._targets.get(reply.id)
        if t is None or t.frozen:
            return True
        text, n = reply.take_new()
        t.take(text, n)
        painted = t.waiting <= tb.STOP_PAINT_CHARS
        if painted:
            self._paint(t, None)
        t.frozen = True
        return painted

    def freeze(self, reply: Message) -> None:
        """Stop: nothing more of ``reply`` is painted, whatever arrives later."""
        t = self._targets.get(reply.id)
        if t is not None:
            t.frozen = True

    def end_finishing(self, reply: Message | None = None) -> None:
        """Replies that ended with a backlog still to paint (``reply`` only, when given) are finished now,
        unpainted (their views are going away: another chat is shown; or ``reply`` is generated again before its
        end was painted: the new generation's view starts from the reply's text); their ``done`` callbacks run."""
        for t in [t for t in self._targets.values()
                  if t.on_finished is not None and (reply is None or t.reply.id == reply.id)]:
            done, t.on_finished = t.on_finished, None
            self.detach(t.reply)
            assert done is not None
            done()

    def detach(self, reply: Message) -> None:
        self._targets.pop(reply.id, None)
        if not self._targets:
            self._timer.stop()
            self._show()                         # a frame made and not shown yet: now (no beat comes)
            if self._hold is not None:
                self._hold.remove()
                self._hold = None

    def tracked(self, reply: Message) -> bool:
        return reply.id in self._targets

    def _paint(self, t: Target, budget_ms: float | None, late_ms: float = 0.0) -> int | None:
        """Take what arrived into the backlog and feed one slice of it (all of it when ``budget_ms`` is None),
        patch the view once (``t.paint``; the reply's last slice: ``t.paint_end`` when given); returns the
        chunks painted, None when there was nothing to paint. Adapts the slice to ``budget_ms``. A view that
        lags is fed nothing, only patched; the chunks it was fed count once it shows them."""
        text, n = t.reply.take_new()
        t.take(text, n)
        lag = t.lags()
        if not t.waiting and not t.backlog_chunks and not lag and not t.held and t.paint_end is None:
            return None
        t0 = self._clock()
        starve = lag and (t.saturated is None or t.saturated())    # the rest alone fills the patch: fed nothing
        if starve:
            piece, n, catching, fed = "", 0, False, 0
        else:
            t.min_slice = max(t.min_slice, t.waiting // tb.CATCH_UP_TICKS)   # this backlog: done in CATCH_UP_TICKS
            floor = min(t.min_slice, t.catch_chars) if t.catch_chars else t.min_slice
            limit = None if budget_ms is None else max(t.slice_chars, floor)
            catching = budget_ms is not None and t.catch_chars > 0 and floor >= t.slice_chars < t.waiting
            part = max(tb.MIN_CATCH_UP_CHARS, limit // 4) if limit else 0     # a timed slice's parts
            ending = t.on_finished is not None and t.render is not None and limit is not None and t.waiting > limit
            if ending:                       # the reply ended: its rest, in parts, as much as the clock lets through
                limit = t.waiting
            timed = (catching or ending) and t.render is not None and limit is not None
            piece, n = t.next_slice(part if timed and limit else limit)
            if piece and not n and t.backlog_chunks and not self._painted_chunks.get(t.reply.id):
                n, t.backlog_chunks = 1, t.backlog_chunks - 1   # the first slice holds the first chunk's start
            fed = len(piece)
            if piece:
                t.feed(piece)
            if timed and limit and t.render is not None:
                # a catch-up slice is fed and rendered in quarters until its render time is spent
                deadline = t0 + max(0.0, tb.CATCH_UP_RENDER_MS - late_ms) / 1000.0
                t.render()
                while t.waiting and fed < limit and self._clock() < deadline:
                    more, m = t.next_slice(min(part, limit - fed))
                    t.feed(more)
                    t.render()
                    fed, n = fed + len(more), n + m
            if not t.waiting:
                t.min_slice, t.catch_chars, t.strikes = 0, t.catch_chars or tb.FIRST_SLICE_CHARS, 0
            if t.caught_up is not None and not t.waiting:
                done, t.caught_up = t.caught_up, None
                done()
        paint: Callable[[], object] = t.paint
        if t.paint_end is not None and not t.waiting:    # the reply's last slice: with the final render
            paint, t.paint_end = t.paint_end, None
        if late_ms > 0 and t.spend is not None:
            t.spend(late_ms)                 # the frame's paint ran over: its patch has that much less time
        paint()
        n += t.held
        t.held = 0
        if t.lags():                    # not on screen yet: counted at the patch that shows it …
            first = 1 if n and not self._painted_chunks.get(t.reply.id) else 0
            t.held, n = n - first, first     # … but the reply's first chunk begins on screen now (its TTFT)
        t1 = self._clock()
        t.cost_ms = (t1 - t0) * 1000.0
        if budget_ms is not None and not starve:
            cost_ms = (t1 - t0) * 1000.0
            if cost_ms > budget_ms and fed > tb.MIN_SLICE_CHARS:
                t.slice_chars = max(tb.MIN_SLICE_CHARS, int(fed * budget_ms / cost_ms * 0.8))
            elif t.waiting:                  # text waits: grow towards the same 80 % of the budget (at most 2×)
                fit = int(fed * budget_ms / cost_ms * 0.8) if cost_ms > 0 else tb.MAX_SLICE_CHARS
                t.slice_chars = min(tb.MAX_SLICE_CHARS, 2 * t.slice_chars, max(t.slice_chars, fit))
            if catching:
                over = cost_ms > tb.CATCH_UP_TICK_MS and fed <= tb.MIN_CATCH_UP_CHARS
                t.strikes = t.strikes + 1 if over else 0
                t.catch_chars = 0 if t.strikes >= tb.FIXED_COST_STRIKES else tb.catch_up_chars(fed, cost_ms)
        rid = t.reply.id
        self._painted_chunks[rid] = self._painted_chunks.get(rid, 0) + n
        metrics = t.metrics
        if self._deferring:
            self._unshown.append((metrics, n, t1 - t0))   # stamped when it is shown, at the beat
        elif metrics is not None:
            metrics.on_painted(t1, n, t1 - t0)
        self.painted.emit(t.reply, n)
        if t.on_finished is not None and not t.waiting and not t.backlog_chunks and not t.lags():
            done, t.on_finished = t.on_finished, None
            self.detach(t.reply)
            done()
        return n

    def tick(self) -> None:
        """A firing of the timer. Paced: show the frame made since the last one, then post the next frame's work
        (after the paint this beat asked for). Unpaced, or at an interval stretched by expensive ticks (the
        window's paints are not held that long: typing would echo late): do the work and have the window paint."""
        if self._interval_due:
            self._set_interval()
        if self._frame_hold() is None or self.interval_ms > tb.MIN_INTERVAL_MS:
            self._show()
            self._work(present=True)
            return
        if self._grid is not None:
            self._grid.wait(self.interval_ms)    # the beat on the timer's grid, not up to ~1 ms after it
        self._beat_at = self._clock()
        self._show()
        if self._targets and not self._work_due:
            self._work_due = True
            QTimer.singleShot(0, self, self._paced_work)

    def _end_waits(self, t: Target) -> bool:
        """Paced, a frame is made (its paints held) and waits for its beat, and ``t``'s end — its final render,
        reckoned at ``END_COST_FACTOR`` × its last paint's cost, or at what the view reckons (``t.end_cost``)
        when that is more — would not be done ``FRAME_MARGIN_MS`` before that beat: the end is then the next
        frame's work. (A throttled tail's paints cost next to nothing, its end a whole parse: a 10 KB line of
        nested quotes painted in 0.03-0.08 ms and ended in 5-6 ms, making that beat 19-20 ms after the last.)"""
        if self._hold is None or not self._hold.held or not self._timer.isActive() or not self._beat_at:
            return False
        left_ms = (self._beat_at - self._clock()) * 1000.0 + self.interval_ms
        cost_ms = tb.END_COST_FACTOR * t.cost_ms
        if t.end_cost is not None:
            cost_ms = max(cost_ms, t.end_cost())
        return left_ms < cost_ms + tb.FRAME_MARGIN_MS

    def _frame_hold(self) -> FrameHold | None:
        parent = self.parent()
        if not self._paced or not isinstance(parent, QWidget):
            return None
        if self._hold is None:
            self._hold = FrameHold(parent.window())
        return self._hold

    def _paced_work(self) -> None:
        """The work of the next frame, its paints held until the next beat (nothing painted: nothing held)."""
        self._work_due = False
        hold = self._frame_hold()
        if hold is None or not self._targets:
            return
        hold.hold()
        self._deferring = True
        try:
            late = (self._clock() - self._beat_at) * 1000.0 - tb.FRAME_PAINT_MS if self._beat_at else 0.0
            painted = self._work(present=False, late_ms=late)     # (< 0: a paint quicker than FRAME_PAINT_MS)
        finally:
            self._deferring = False
        if not painted and not self._unshown and hold.held:
            hold.release(present=hold.swallowed > 0)

    def _show(self) -> None:
        """The beat: the frame made since the last one reaches the screen (its metrics stamped now)."""
        unshown, self._unshown = self._unshown, []
        if unshown:
            now = self._clock()
            for metrics, n, cost_s in unshown:
                if metrics is not None:
                    metrics.on_painted(now, n, cost_s)
        hold = self._hold
        if hold is not None and hold.held:
            hold.release(present=bool(unshown) or hold.swallowed > 0)

    def _work(self, present: bool, late_ms: float = 0.0) -> bool:
        """Feed and patch each reply's next slice; ``present``: have the window paint it now. True when
        anything was painted. ``late_ms``: paced, how much longer than ``FRAME_PAINT_MS`` the frame's paint took
        (negative: shorter), taken from the tick's budget (added to it)."""
        t0 = self._clock()
        any_painted = False
        live = [t for t in self._targets.values() if not t.frozen]
        budget = max(tb.TICK_BUDGET_MS / 4, tb.TICK_BUDGET_MS - late_ms) / max(1, len(live))
        late_ms = max(0.0, late_ms)
        cut = False
        for t in live:
            if self._paint(t, budget, late_ms) is not None:
                any_painted = True
                cut = cut or t.waiting > 0 or t.held > 0
        cost_ms = (self._clock() - t0) * 1000.0
        if any_painted:
            if present:
                self._present()
            self.ticks += 1
            self.last_tick_ms = cost_ms
            # adapt: expensive ticks → fewer, larger renders; cheap ticks → back to frame rate
            over = cost_ms > self.interval_ms and not cut
            self._over = self._over + 1 if over else 0
            if over and self._over >= tb.OVER_TICKS and self.interval_ms < tb.MAX_INTERVAL_MS:
                self.interval_ms = min(tb.MAX_INTERVAL_MS, self.interval_ms * 2)
                self._interval_due = True
            elif cost_ms < self.interval_ms / 2 and self.interval_ms > tb.MIN_INTERVAL_MS:
                # fits the halved interval (a tick at it brings less text, so it costs no more): halving it
                # back only below 1/8 kept a window at 1,000 tok/s on 32 ms frames for ~40 frames after one
                # stall (each tick 4-10 ms: never cheap enough), p99 32 ms in the render bench
                self.interval_ms = max(tb.MIN_INTERVAL_MS, self.interval_ms // 2)
                self._interval_due = True
        return any_painted

    def _set_interval(self) -> None:
        """Give the timer the interval the last tick chose, at a firing (``tick``): a running ``QTimer`` starts
        again from now, so set at the end of a paced frame's work — off the timer's grid — a doubled interval
        showed that frame the work's cost plus a whole new interval after the last beat (55-62 ms: the rare
        single long frame of the render bench at 1,000 tok/s)."""
        self._interval_due = False
        self._timer.setInterval(self.interval_ms)       # (a running QTimer starts again: a new grid)
        if self._grid is not None:
            self._grid.reset()

    def _present(self) -> None:
        """Have the window this tick changed paint in the next loop turn (see ``PRESENT_AT_ONCE``)."""
        if self._hold is not None and self._hold.held:
            self._show()                      # paced, between a frame's work and its beat: all of it now
            return
        parent = self.parent()
        if tb.PRESENT_AT_ONCE and parent is not None and hasattr(parent, "window"):
            QCoreApplication.postEvent(parent.window(), QEvent(QEvent.Type.UpdateRequest))

