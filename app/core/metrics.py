"""Per-chunk timing and per-reply latency figures.

All times are ``time.perf_counter()`` seconds (monotonic, process-wide); durations are reported in ms.
Per chunk we keep four stamps: *produced* (the engine's iterator returned it, worker thread), *enqueued*
(it entered the bounded queue), *dequeued* (the consumer coroutine took it) and *painted* (a render tick put
it on screen). Appending a stamp is O(1); summaries are computed once per reply.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import asdict, dataclass, field

log = logging.getLogger("brook.metrics")

#: A ``put`` that waits longer than this is a backpressure warning (DESIGN §6), in seconds.
BACKPRESSURE_WARN_S = 0.100

now = time.perf_counter


@dataclass
class ReplySummary:
    """What one reply's timing boils down to (ms, tokens/s, counts); stored with the reply."""

    ttft_ms: float | None = None          # request start → first chunk painted
    prefill_ms: float | None = None       # request start (slot acquired) → first chunk produced by the engine
    first_paint_ms: float | None = None   # first chunk produced → first chunk painted (the app's share of TTFT)
    wait_ms: float = 0.0                  # queued behind other requests for the model ("waiting for the model")
    decode_tokens: int = 0
    decode_tokens_per_s: float | None = None  # tokens after the first ÷ time from first to last produced
    chunks: int = 0
    queue_high_water: int = 0
    backpressure_waits: int = 0           # puts that waited > BACKPRESSURE_WARN_S
    backpressure_wait_ms: float = 0.0     # total time the worker spent waiting on a full queue
    ticks: int = 0                        # render ticks that painted new text
    longest_tick_ms: float = 0.0
    total_ms: float | None = None

    def as_dict(self) -> dict[str, float | int | None]:
        return asdict(self)


@dataclass
class StreamMetrics:
    """Timing of one reply, filled by the worker thread (produced/enqueued), the consumer (dequeued) and the
    UI tick (painted). Only the worker appends to the worker lists, only the loop thread to the others."""

    t_request: float = field(default_factory=now)
    t_slot: float | None = None
    t_end: float | None = None
    produced: list[float] = field(default_factory=list)
    enqueued: list[float] = field(default_factory=list)
    dequeued: list[float] = field(default_factory=list)
    painted: list[float] = field(default_factory=list)   # one stamp per chunk painted
    tokens: int = 0
    queue_high_water: int = 0
    backpressure_waits: int = 0
    backpressure_wait_s: float = 0.0
    ticks: int = 0
    longest_tick_s: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    # worker thread -------------------------------------------------------------------------------------
    def on_produced(self, t: float, n_tokens: int) -> None:
        self.produced.append(t)
        self.tokens += n_tokens

    def on_enqueued(self, t: float, depth: int, waited_s: float) -> None:
        self.enqueued.append(t)
        if depth > self.queue_high_water:
            self.queue_high_water = depth
        if waited_s > 0:
            with self._lock:
                self.backpressure_wait_s += waited_s
                if waited_s > BACKPRESSURE_WARN_S:
                    self.backpressure_waits += 1
            if waited_s > BACKPRESSURE_WARN_S:
                log.warning("backpressure: put waited %.0f ms on a full queue", waited_s * 1000)

    # loop thread ---------------------------------------------------------------------------------------
    def on_dequeued(self, t: float) -> None:
        self.dequeued.append(t)

    def on_painted(self, t: float, n_chunks: int, tick_s: float) -> None:
        """A render tick painted ``n_chunks`` newly arrived chunks at time ``t``, taking ``tick_s`` seconds."""
        if n_chunks <= 0:
            return
        self.painted.extend([t] * n_chunks)
        self.ticks += 1
        if tick_s > self.longest_tick_s:
            self.longest_tick_s = tick_s

    def summary(self) -> ReplySummary:
        """Compute the per-reply figures; safe to call at any time (missing stamps give ``None``)."""
        s = ReplySummary(chunks=len(self.dequeued), queue_high_water=self.queue_high_water,
                         backpressure_waits=self.backpressure_waits,
                         backpressure_wait_ms=self.backpressure_wait_s * 1000.0,
                         ticks=self.ticks, longest_tick_ms=self.longest_tick_s * 1000.0,
                         decode_tokens=self.tokens)
        start = self.t_slot if self.t_slot is not None else self.t_request
        s.wait_ms = (start - self.t_request) * 1000.0
        if self.produced:
            s.prefill_ms = (self.produced[0] - start) * 1000.0
            if len(self.produced) > 1 and self.tokens > 1:
                span = self.produced[-1] - self.produced[0]
                if span > 0:
                    s.decode_tokens_per_s = (self.tokens - 1) / span
        if self.painted:
            s.ttft_ms = (self.painted[0] - start) * 1000.0
            if self.produced:
                s.first_paint_ms = (self.painted[0] - self.produced[0]) * 1000.0
        if self.t_end is not None:
            s.total_ms = (self.t_end - start) * 1000.0
        return s
