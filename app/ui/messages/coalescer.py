"""The render tick: coalesce what arrived since the last tick and paint it once.

One ``QTimer`` per window drives every streaming message. Each tick takes the text appended to a reply since
the previous tick (``Message.take_new``), feeds it to the reply's view and patches the view once. The interval
adapts: a tick that costs more than half its interval doubles it (fewer, larger renders: backpressure moves to
the queue and, when full, to the model), a cheap one halves it back towards ``MIN_INTERVAL_MS``. The idea is
qutebrowser's ``misc/throttle.py`` made adaptive.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Qt, QTimer, Signal

from app.core.conversation import Message
from app.core.streaming.metrics import StreamMetrics

#: ~60 Hz, a display frame.
MIN_INTERVAL_MS = 16
#: Never slower than ~10 Hz, so streaming still looks live under load.
MAX_INTERVAL_MS = 100


@dataclass(eq=False)
class _Target:
    reply: Message
    feed: Callable[[str], None]          # hand new text to the renderer (no repaint)
    paint: Callable[[], bool]            # patch the view; True when something changed
    metrics: StreamMetrics | None = None  # the generation's metrics: each paint is stamped there
    frozen: bool = False


class Coalescer(QObject):
    """Adaptive QTimer tick over the replies that are streaming.

    Signals: ``painted(reply, n_chunks)`` after a tick painted new text of ``reply``.
    ``ticks`` counts ticks that painted new text (all replies); ``last_tick_ms`` is the cost of the last one.

    ``timer`` (tests) replaces the ``QTimer``: any object with ``timeout`` (a signal), ``setInterval``,
    ``setTimerType``, ``start``, ``stop`` and ``isActive``; ``clock`` (seconds, default ``time.perf_counter``)
    times the ticks, so a test can make a tick cost what it wants.
    """

    painted = Signal(object, int)

    def __init__(self, parent: QObject | None = None, *, timer: Any = None,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        super().__init__(parent)
        self._clock = clock
        self._timer = timer if timer is not None else QTimer(self)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(MIN_INTERVAL_MS)
        self._timer.timeout.connect(self.tick)
        self._targets: dict[int, _Target] = {}
        self._painted_chunks: dict[int, int] = {}   # reply id → chunks painted (kept after detach)
        self.ticks = 0
        self.interval_ms = MIN_INTERVAL_MS
        self.last_tick_ms = 0.0

    def attach(self, reply: Message, feed: Callable[[str], None], paint: Callable[[], bool],
               metrics: StreamMetrics | None = None) -> None:
        """Start painting ``reply`` on each tick (replacing its previous target, e.g. when its view is re-made);
        each paint is stamped in ``metrics`` (the reply's ``Generation.metrics``) when given."""
        old = self._targets.get(reply.id)
        self._targets[reply.id] = _Target(reply, feed, paint, metrics, frozen=old.frozen if old else False)
        if not self._timer.isActive():
            self._timer.start()

    def metrics_of(self, reply: Message) -> StreamMetrics | None:
        """The metrics ``reply``'s paints are stamped in while it is attached (None otherwise)."""
        t = self._targets.get(reply.id)
        return t.metrics if t is not None else None

    def painted_chunks(self, reply: Message) -> int:
        return self._painted_chunks.get(reply.id, 0)

    def flush(self, reply: Message) -> int:
        """Paint what has arrived for ``reply`` right now; returns the chunks painted."""
        t = self._targets.get(reply.id)
        if t is None or t.frozen:
            return 0
        return self._paint(t)

    def freeze(self, reply: Message) -> None:
        """Stop: nothing more of ``reply`` is painted, whatever arrives later."""
        t = self._targets.get(reply.id)
        if t is not None:
            t.frozen = True

    def detach(self, reply: Message) -> None:
        self._targets.pop(reply.id, None)
        if not self._targets:
            self._timer.stop()

    def tracked(self, reply: Message) -> bool:
        return reply.id in self._targets

    def _paint(self, t: _Target) -> int:
        text, n = t.reply.take_new()
        if not text and not n:
            return 0
        t0 = self._clock()
        if text:
            t.feed(text)
        t.paint()
        t1 = self._clock()
        rid = t.reply.id
        self._painted_chunks[rid] = self._painted_chunks.get(rid, 0) + n
        metrics = t.metrics
        if metrics is not None:
            metrics.on_painted(t1, n, t1 - t0)
        self.painted.emit(t.reply, n)
        return n

    def tick(self) -> None:
        t0 = self._clock()
        any_painted = False
        for t in list(self._targets.values()):
            if not t.frozen and self._paint(t):
                any_painted = True
        cost_ms = (self._clock() - t0) * 1000.0
        if any_painted:
            self.ticks += 1
            self.last_tick_ms = cost_ms
            # adapt: expensive ticks → fewer, larger renders; cheap ticks → back to frame rate
            if cost_ms > self.interval_ms / 2 and self.interval_ms < MAX_INTERVAL_MS:
                self.interval_ms = min(MAX_INTERVAL_MS, self.interval_ms * 2)
                self._timer.setInterval(self.interval_ms)
            elif cost_ms < self.interval_ms / 8 and self.interval_ms > MIN_INTERVAL_MS:
                self.interval_ms = max(MIN_INTERVAL_MS, self.interval_ms // 2)
                self._timer.setInterval(self.interval_ms)
