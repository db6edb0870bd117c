"""Per-chunk timing and per-reply latency figures.

All times are ``time.perf_counter()`` seconds (monotonic, process-wide); durations are reported in ms.
Per chunk we keep four stamps: *produced* (the engine's iterator returned it, worker thread), *enqueued*
(it entered the bounded queue), *dequeued* (the consumer coroutine took it) and *painted* (a render tick put
it on screen). Stamps live in ``array('d')`` (8 bytes each, no float objects), appending one is O(1); the
summary is computed once per reply (O(1): it reads the first and last stamps only).
"""

from __future__ import annotations

import logging
import threading
import time
from array import array
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from itertools import repeat

log = logging.getLogger("brook.metrics")

#: A ``put`` that waits longer than this is a backpressure warning, in seconds.
BACKPRESSURE_WARN_S = 0.100

now = time.perf_counter


def _stamps() -> array[float]:
    return array("d")


@dataclass
class ReplySummary:
    """What one reply's timing boils down to (ms, tokens/s, counts); stored with the reply (``Message.metrics``).

    Where each number comes from (all from ``StreamMetrics`` stamps):

    - ``wait_ms``: request → engine slot acquired (time in line "waiting for the model");
    - ``prefill_ms``: slot acquired → first chunk produced by the engine (prompt processing + first decode);
    - ``first_paint_ms``: first chunk produced → first chunk painted (the app's share of TTFT);
    - ``ttft_ms``: slot acquired → first chunk painted (= prefill + first paint);
    - ``decode_tokens_per_s``: ``StreamMetrics.tokens_per_s()``, the engine's decode rate (the live figure in
      the status bar is the same function);
    - ``queue_high_water``: most chunks ever held by the queue (≤ its maxsize);
    - ``backpressure_waits``: puts that waited > ``BACKPRESSURE_WARN_S``; ``backpressure_wait_ms``: total time
      the worker spent blocked on a full queue (every wait, long or short);
    - ``ticks`` / ``longest_tick_ms``: render ticks that painted new chunks, and the slowest of them;
    - ``stop_latency_ms``: stop requested → worker thread returned (``None`` when not stopped);
    - ``total_ms``: slot acquired → the generation ended on the loop.
    """

    ttft_ms: float | None = None
    prefill_ms: float | None = None
    first_paint_ms: float | None = None
    wait_ms: float = 0.0
    decode_tokens: int = 0
    decode_tokens_per_s: float | None = None
    chunks: int = 0
    chunks_painted: int = 0
    queue_high_water: int = 0
    backpressure_waits: int = 0
    backpressure_wait_ms: float = 0.0
    ticks: int = 0
    longest_tick_ms: float = 0.0
    stop_latency_ms: float | None = None
    total_ms: float | None = None

    def as_dict(self) -> dict[str, float | int | None]:
        return asdict(self)

    def log_line(self) -> str:
        """One human-readable line (the per-reply debug log line)."""
        return (f"ttft={_fmt(self.ttft_ms)} ms (prefill {_fmt(self.prefill_ms)} + first paint "
                f"{_fmt(self.first_paint_ms)}) wait={self.wait_ms:.1f} ms tokens={self.decode_tokens} "
                f"tok/s={_fmt(self.decode_tokens_per_s)} chunks={self.chunks} painted={self.chunks_painted} "
                f"queue_hw={self.queue_high_water} backpressure={self.backpressure_waits} waits "
                f"({self.backpressure_wait_ms:.0f} ms) ticks={self.ticks} longest_tick={self.longest_tick_ms:.1f} ms "
                f"stop_latency={_fmt(self.stop_latency_ms)} ms total={_fmt(self.total_ms)} ms")


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}"


@dataclass
class StreamMetrics:
    """Timing of one reply, filled by the worker thread (produced/enqueued), the consumer (dequeued) and the
    UI tick (painted). Only the worker appends to the worker arrays, only the loop thread to the others.

    ``on_caught_up`` (optional) is called on the loop thread, from ``on_painted``, once the generation has
    ended (``t_end`` set) and every dequeued chunk has been painted: the summary is then final.
    """

    t_request: float = field(default_factory=now)
    t_slot: float | None = None
    t_end: float | None = None
    t_stop: float | None = None            # stop requested (loop thread)
    t_worker_done: float | None = None     # worker thread returned (worker thread)
    produced: array[float] = field(default_factory=_stamps)
    enqueued: array[float] = field(default_factory=_stamps)
    dequeued: array[float] = field(default_factory=_stamps)
    painted: array[float] = field(default_factory=_stamps)   # one stamp per chunk painted
    # per enqueued chunk (worker thread): queue depth after the put and characters (4 bytes each); the puts that
    # waited on a full queue (sparse: chunk index, seconds)
    depths: array[int] = field(default_factory=lambda: array("i"))
    chars: array[int] = field(default_factory=lambda: array("i"))
    wait_index: array[int] = field(default_factory=lambda: array("i"))
    wait_s: array[float] = field(default_factory=_stamps)
    # per render tick that painted this reply (loop thread): end time, cost (s), chunks painted
    tick_at: array[float] = field(default_factory=_stamps)
    tick_cost: array[float] = field(default_factory=_stamps)
    tick_chunks: array[int] = field(default_factory=lambda: array("i"))
    tokens: int = 0
    first_chunk_tokens: int = 0            # tokens of the first chunk (produced before the decode span starts)
    queue_high_water: int = 0
    backpressure_waits: int = 0
    backpressure_wait_s: float = 0.0
    ticks: int = 0
    longest_tick_s: float = 0.0
    on_caught_up: Callable[[], None] | None = field(default=None, repr=False)
    final: bool = False                    # set by ``generate`` once the summary is final (stamps complete)
    #: chunks that reached the reply (``generate`` counts them; None: every chunk dequeued). A Stop can leave
    #: chunks enqueued (stamped, counted) that never reach the reply: the stored timeline leaves them out.
    kept: int | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    # worker thread -------------------------------------------------------------------------------------
    def on_produced(self, t: float, n_tokens: int) -> None:
        if not self.produced:
            self.first_chunk_tokens = n_tokens
        self.produced.append(t)
        self.tokens += n_tokens

    def tokens_per_s(self) -> float | None:
        """Decode rate so far (tokens/s): the tokens produced after the first chunk ÷ (last produced − first
        produced). Counts tokens, not chunks, so a server that sends several tokens per event is measured right.
        ``None`` until there are two chunks over a non-zero span. Safe to call from the loop while the worker
        appends (it reads two stamps and two counters)."""
        produced = self.produced
        n = len(produced)
        if n < 2:
            return None
        span = produced[n - 1] - produced[0]
        tokens = self.tokens - self.first_chunk_tokens
        if span <= 0 or tokens <= 0:
            return None
        return tokens / span

    def on_enqueued(self, t: float, depth: int, waited_s: float, n_chars: int = 0) -> None:
        """A chunk of ``n_chars`` characters entered the queue at ``t`` (depth after the put, chunks) after
        waiting ``waited_s`` seconds on a full queue. A wait over ``BACKPRESSURE_WARN_S`` is counted and logged
        as a warning."""
        self.depths.append(depth)
        self.chars.append(n_chars)
        if depth > self.queue_high_water:
            self.queue_high_water = depth
        if waited_s > 0:
            self.wait_s.append(waited_s)
            self.wait_index.append(len(self.enqueued))
            with self._lock:
                self.backpressure_wait_s += waited_s
                if waited_s > BACKPRESSURE_WARN_S:
                    self.backpressure_waits += 1
            if waited_s > BACKPRESSURE_WARN_S:
                log.warning("backpressure: put waited %.0f ms on a full queue (depth %d)", waited_s * 1000, depth)
        self.enqueued.append(t)     # last: a reader that sees this stamp also sees the chunk's depth and length

    # loop thread ---------------------------------------------------------------------------------------
    def on_dequeued(self, t: float, n_chunks: int = 1) -> None:
        """``n_chunks`` chunks were taken from the queue at ``t`` (one batch)."""
        if n_chunks == 1:
            self.dequeued.append(t)
        else:
            self.dequeued.extend(repeat(t, n_chunks))

    def on_painted(self, t: float, n_chunks: int, tick_s: float) -> None:
        """A render tick painted ``n_chunks`` newly arrived chunks at time ``t``, taking ``tick_s`` seconds."""
        if n_chunks <= 0:
            return
        self.painted.extend(repeat(t, n_chunks))
        self.tick_at.append(t)
        self.tick_cost.append(tick_s)
        self.tick_chunks.append(n_chunks)
        self.ticks += 1
        if tick_s > self.longest_tick_s:
            self.longest_tick_s = tick_s
        if self.on_caught_up is not None and self.caught_up:
            cb, self.on_caught_up = self.on_caught_up, None
            cb()

    @property
    def caught_up(self) -> bool:
        """True once the generation ended and every chunk it delivered has been painted."""
        return self.t_end is not None and len(self.painted) >= len(self.dequeued)

    def summary(self) -> ReplySummary:
        """Compute the per-reply figures; safe to call at any time (missing stamps give ``None``)."""
        dequeued = len(self.dequeued) if self.kept is None else min(self.kept, len(self.dequeued))
        s = ReplySummary(chunks=dequeued, chunks_painted=len(self.painted),
                         queue_high_water=self.queue_high_water,
                         backpressure_waits=self.backpressure_waits,
                         backpressure_wait_ms=self.backpressure_wait_s * 1000.0,
                         ticks=self.ticks, longest_tick_ms=self.longest_tick_s * 1000.0,
                         decode_tokens=self.tokens)
        start = self.t_slot if self.t_slot is not None else self.t_request
        s.wait_ms = (start - self.t_request) * 1000.0
        produced = self.produced
        if produced:
            s.prefill_ms = (produced[0] - start) * 1000.0
            s.decode_tokens_per_s = self.tokens_per_s()
        if self.painted:
            s.ttft_ms = (self.painted[0] - start) * 1000.0
            if produced:
                s.first_paint_ms = (self.painted[0] - produced[0]) * 1000.0
        if self.t_stop is not None and self.t_worker_done is not None:
            s.stop_latency_ms = max(0.0, self.t_worker_done - self.t_stop) * 1000.0
        if self.t_end is not None:
            s.total_ms = (self.t_end - start) * 1000.0
        return s
