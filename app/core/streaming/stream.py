"""The token path from a blocking engine iterator to the event loop.

``TokenStream`` runs a synchronous chunk iterator (llama.cpp decode, an HTTP/SSE read loop, a scripted
engine) in a dedicated worker thread and exposes it as an async iterator on the asyncio loop. Between them sits
``ChunkQueue``: bounded, single producer (the worker) and single consumer (a coroutine). A full queue blocks the
*worker* (backpressure: the model waits), never the loop. The consumer is woken only when it is actually
waiting, so a busy loop pays one ``deque.append`` per chunk and no cross-thread call; it takes everything
buffered in one batch (``get_batch``), so its cost is per batch, not per chunk.

Stop path: ``request_stop()`` sets the worker's ``threading.Event`` (checked between tokens) and closes the
queue, which drops what is buffered and releases a worker blocked on a full queue; the worker then closes the
engine iterator (``generator.close()``) and finishes; ``worker_done`` resolves on the loop once its thread
has exited (``wait_closed``).

Engines that can only give bytes (a byte-level tokenizer, a raw HTTP body) put them in ``Chunk.raw``; the
worker decodes them with one incremental UTF-8 decoder per stream, so a character split across chunks is held
back until it is complete and never becomes U+FFFD.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import logging
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from app.core.streaming.metrics import StreamMetrics, now
from app.core.streaming.stop import GIL_SWITCH_INTERVAL_S, StopEvent, tune_switch_interval  # noqa: F401 - re-exported
from app.core.text import valid_text
from app.core.types import Chunk

log = logging.getLogger("brook.stream")

#: Least time between two batches a consumer takes from a fast producer (s): a quarter of a 60 Hz frame. An idle
#: loop is woken for every chunk (one ``call_soon_threadsafe``, ~80 µs of the loop thread each): at 5,000 chunks/s
#: that took 40 % of a core before any rendering, 12 % at 1,000; paced, 4-5 % (``python -m app.bench consumer``,
#: both ways in one run; 100 chunks/s: 2.6 %, unchanged). When the last two
#: batches came less than two of these apart, the consumer waits out the rest of the interval after the last one
#: and takes what gathered meanwhile in one batch (unless the queue is full: then the model is waiting): at most
#: ~250 batches a second, text at most 4 ms later for the render tick (which paints every 16 ms); a producer
#: slower than 8 ms a chunk (a model on a CPU: 20-50 ms a token) is never held.
BATCH_INTERVAL_S = 0.004

#: Default bound of the chunk queue (chunks). Small enough that Stop drops little, large enough that a slow
#: render tick (≤ 50 ms at 2,000 tokens/s = 100 tokens) rarely makes the model wait.
DEFAULT_MAXSIZE = 256


def pace_s(before_last: float, last: float, t: float, interval: float | None = None) -> float:
    """Seconds a consumer waits at ``t`` before it takes its next batch, the last two taken at ``before_last``
    and ``last`` (``now()`` seconds; negative: none yet): the rest of ``interval`` after ``last`` when those two
    came less than two intervals apart (a fast producer; a paced one stays paced), else 0 (see
    :data:`BATCH_INTERVAL_S`, the default ``interval``; 0 turns pacing off)."""
    if interval is None:
        interval = BATCH_INTERVAL_S
    if before_last < 0 or last - before_last >= 2 * interval:
        return 0.0
    return max(0.0, last + interval - t)


class QueueClosed(Exception):
    """The consumer closed the queue (Stop): the producer must finish."""


@dataclass(frozen=True, slots=True)
class _End:
    error: BaseException | None = None


def _wake(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


class ChunkQueue:
    """Bounded queue from one worker thread to one asyncio consumer.

    ``put`` (thread side) blocks while ``maxsize`` items are held and returns the seconds it waited;
    it raises ``QueueClosed`` once the consumer has closed the queue. ``get``/``get_batch`` (loop side) are
    coroutines. Memory is bounded by ``maxsize`` items at all times. The loop is woken (one
    ``call_soon_threadsafe``) only when the consumer is suspended waiting for an item.
    """

    def __init__(self, maxsize: int, loop: asyncio.AbstractEventLoop) -> None:
        if maxsize < 1:
            raise ValueError("maxsize must be ≥ 1")
        self.maxsize = maxsize
        self._loop = loop
        self._buf: deque[Any] = deque()
        self._lock = threading.Lock()
        self._not_full = threading.Condition(self._lock)
        self._waiter: asyncio.Future[None] | None = None
        self._closed = False
        self.high_water = 0
        self.wakeups = 0          # cross-thread wake-ups of the loop (for benchmarks)

    def qsize(self) -> int:
        return len(self._buf)

    @property
    def closed(self) -> bool:
        return self._closed

    def put(self, item: Any) -> tuple[int, float]:
        """Append ``item``; block while full. Returns (depth after the put, seconds waited).

        Raises ``QueueClosed`` if the consumer closed the queue before or while waiting.
        """
        waited = 0.0
        with self._not_full:
            if len(self._buf) >= self.maxsize and not self._closed:
                t0 = now()
                while len(self._buf) >= self.maxsize and not self._closed:
                    self._not_full.wait()
                waited = now() - t0
            if self._closed:
                raise QueueClosed
            self._buf.append(item)
            depth = len(self._buf)
            if depth > self.high_water:
                self.high_water = depth
            waiter, self._waiter = self._waiter, None
        if waiter is not None:
            self.wakeups += 1
            try:
                # qasync's call_soon_threadsafe does not check for a closed loop (it emits a Qt signal)
                if self._loop.is_closed():
                    raise RuntimeError("loop closed")
                self._loop.call_soon_threadsafe(_wake, waiter)
            except RuntimeError:  # loop closed: nobody is listening any more
                self.close()
                raise QueueClosed from None
        return depth, waited

    def get_nowait(self) -> Any:
        """Pop the oldest item; raises ``IndexError`` when empty."""
        with self._lock:
            item = self._buf.popleft()
            self._not_full.notify()
            return item

    async def _wait(self) -> None:
        """Suspend until the producer puts something or the queue is closed (call with the buffer empty)."""
        with self._lock:
            if self._buf or self._closed:
                return
            waiter = self._loop.create_future()
            self._waiter = waiter
        try:
            await waiter
        finally:
            with self._lock:
                if self._waiter is waiter:
                    self._waiter = None

    async def get(self) -> Any:
        """Wait for and pop the oldest item (loop side). Raises ``QueueClosed`` once closed and empty."""
        while True:
            with self._lock:
                if self._buf:
                    item = self._buf.popleft()
                    self._not_full.notify()
                    return item
                if self._closed:
                    raise QueueClosed
            await self._wait()

    async def get_batch(self) -> list[Any]:
        """Wait for at least one item, then pop everything buffered (≤ ``maxsize`` items, oldest first).

        Raises ``QueueClosed`` once closed and empty. Does not itself yield to the loop when items are
        already there; the caller decides how often to (see ``TokenStream.get_batch``).
        """
        while True:
            with self._lock:
                if self._buf:
                    items = list(self._buf)
                    self._buf.clear()
                    self._not_full.notify()
                    return items
                if self._closed:
                    raise QueueClosed
            await self._wait()

    def ended(self) -> bool:
        """True when the last item buffered is the producer's end (the stream has nothing more to wait for)."""
        buf = self._buf
        return bool(buf) and isinstance(buf[-1], _End)

    def close(self) -> None:
        """Drop everything buffered and release a blocked producer; further puts raise ``QueueClosed``."""
        with self._not_full:
            self._closed = True
            self._buf.clear()
            self._not_full.notify_all()
            waiter, self._waiter = self._waiter, None
        if waiter is not None and not self._loop.is_closed():
            with contextlib.suppress(RuntimeError):
                self._loop.call_soon_threadsafe(_wake, waiter)


Producer = Callable[[threading.Event], Iterable[Chunk]]


@dataclass(frozen=True, slots=True)
class TaggedChunk:
    """A chunk with the id of the generation that produced it (chunks of a stopped generation are dropped)."""

    generation_id: int
    chunk: Chunk
    t_dequeued: float


_live: set[TokenStream] = set()
_live_lock = threading.Lock()


def live_streams() -> list[TokenStream]:
    """Streams whose worker thread has started and not yet returned (any loop)."""
    with _live_lock:
        return list(_live)


class TokenStream:
    """Async iterator over the chunks of one generation, produced in a worker thread.

    ``produce(stop_event)`` must return an iterable of ``Chunk``; it runs in the worker thread and should check
    ``stop_event`` between tokens. Use as::

        stream = TokenStream(produce, generation_id=7)
        stream.start()                      # needs a running loop
        try:
            async for tagged in stream: ...   # or: while (batch := await stream.get_batch()) is not None
        finally:
            stream.request_stop()           # idempotent, never blocks
        await stream.wait_closed()          # worker thread exited (e.g. to release the engine slot)

    Errors raised by the iterator are re-raised from ``__anext__``/``get_batch`` on the loop, after every chunk
    produced before them. ``maxsize`` bounds the queue (chunks). ``metrics`` receives the
    produced/enqueued/dequeued stamps and the stop latency. After the worker returns, the stream drops its
    references to the producer (and so to the prompt and the engine iterator).
    """

    _ids = iter(range(1, 1 << 62))

    def __init__(self, produce: Producer, *, maxsize: int = DEFAULT_MAXSIZE, generation_id: int | None = None,
                 metrics: StreamMetrics | None = None, name: str = "brook-decode") -> None:
        self._produce: Producer | None = produce
        self.maxsize = maxsize
        self.generation_id = generation_id if generation_id is not None else next(self._ids)
        self.metrics = metrics if metrics is not None else StreamMetrics()
        self.stop_event = StopEvent()
        self._name = name
        self._queue: ChunkQueue | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.worker_done: asyncio.Future[None] | None = None
        self._finished = False
        self._pending: deque[Chunk] = deque()
        self._error: BaseException | None = None
        self._batch_times = (-1.0, -1.0)    # when the last two batches were taken (``now()``; -1: none yet)
        self._holding: asyncio.Future[None] | None = None   # the consumer's pacing wait (``_hold``), if any

    # lifecycle -----------------------------------------------------------------------------------------
    def start(self) -> None:
        """Start the worker thread (call from the loop thread)."""
        if self._thread is not None:
            raise RuntimeError("TokenStream already started")
        self._loop = asyncio.get_running_loop()
        self._queue = ChunkQueue(self.maxsize, self._loop)
        self.worker_done = self._loop.create_future()
        self._thread = threading.Thread(target=self._run, name=f"{self._name}-{self.generation_id}", daemon=True)
        with _live_lock:
            _live.add(self)
        self._thread.start()

    def request_stop(self) -> None:
        """Ask the worker to stop at the next token and drop buffered chunks. Never blocks; idempotent."""
        if not self.stop_event.is_set():
            # stop latency only when there was a worker to stop and it had not delivered its end yet (a reply
            # that ended by itself was not stopped: its worker is merely returning)
            if self.metrics.t_stop is None and self.alive and not self._finished:
                self.metrics.t_stop = now()
            self.stop_event.set()
        if self._queue is not None:
            self._queue.close()
        self._pending.clear()
        self._error = None
        self._finished = True

    @property
    def stopped(self) -> bool:
        """True once ``request_stop`` was called."""
        return self.stop_event.is_set()

    async def wait_closed(self) -> None:
        """Wait until the worker thread has exited: afterwards ``alive`` is False and ``join(0)`` is True.

        Does not block the loop; cancelling the wait cancels nothing else. Returns at once for a stream that
        was never started."""
        if self.worker_done is not None:
            await asyncio.shield(self.worker_done)

    def join(self, timeout: float | None = None) -> bool:
        """Block until the worker thread ends (for shutdown paths off the loop). True if it ended."""
        if self._thread is None:
            return True
        self._thread.join(timeout)
        return not self._thread.is_alive()

    @property
    def queue_depth(self) -> int:
        return self._queue.qsize() if self._queue is not None else 0

    @property
    def queue(self) -> ChunkQueue | None:
        return self._queue

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # worker thread -------------------------------------------------------------------------------------
    def _run(self) -> None:
        assert self._queue is not None and self._loop is not None and self._produce is not None
        q, m, stop = self._queue, self.metrics, self.stop_event
        end = _End()
        iterator: Iterator[Chunk] | None = None
        decoder: codecs.IncrementalDecoder | None = None
        try:
            iterator = iter(self._produce(stop))
            for chunk in iterator:
                t = now()
                if stop.is_set():    # produced as Stop came (mid-decode): dropped, so not counted either
                    break
                m.on_produced(t, chunk.n_tokens)
                if chunk.raw:
                    if decoder is None:
                        decoder = codecs.getincrementaldecoder("utf-8")("replace")
                    chunk = Chunk(chunk.text + decoder.decode(chunk.raw), chunk.n_tokens, chunk.finish_reason)
                elif (text := valid_text(chunk.text)) is not chunk.text:   # a lone surrogate from an engine's JSON
                    chunk = Chunk(text, chunk.n_tokens, chunk.finish_reason)
                t_put = now()
                depth, waited = q.put(chunk)
                # entered the queue when the put got its slot: stamped after put() returned, the consumer may
                # already have taken it (the worker can lose the GIL in between)
                m.on_enqueued(t_put + waited, depth, waited, len(chunk.text))
            else:
                if decoder is not None and not stop.is_set():
                    tail = decoder.decode(b"", final=True)   # bytes cut off at the very end (truly invalid)
                    if tail:
                        t_put = now()
                        depth, waited = q.put(Chunk(tail, 0, None))
                        m.on_enqueued(t_put + waited, depth, waited, len(tail))
        except QueueClosed:
            pass
        except BaseException as exc:  # delivered to the loop, re-raised there
            end = _End(exc)
        finally:
            close = getattr(iterator, "close", None)
            if close is not None:
                try:
                    close()
                except Exception:  # pragma: no cover - the iterator's own cleanup failed
                    log.exception("closing the engine iterator failed")
            iterator = None
            self._produce = None
        if not stop.is_set():
            with contextlib.suppress(QueueClosed):
                q.put(end)
            holding = self._holding          # the consumer waits out its pacing: the end needs no company
            if holding is not None and not self._loop.is_closed():
                with contextlib.suppress(RuntimeError):
                    self._loop.call_soon_threadsafe(_wake, holding)
        elif end.error is not None:
            log.debug("error after stop ignored: %r", end.error)
        m.t_worker_done = now()
        with _live_lock:
            _live.discard(self)
        if self._loop.is_closed():   # the app shut down first (qasync would still post to it)
            return
        try:
            self._loop.call_soon_threadsafe(self._resolve_done)
        except RuntimeError:  # loop closed meanwhile
            pass

    def _resolve_done(self, delay_s: float = 0.0) -> None:
        """Resolve ``worker_done`` (loop side) once the worker thread has exited.

        The worker posts this as its last action, so its thread may still be finishing (a few bytecodes, then
        the interpreter's thread teardown) when it runs: then it checks again shortly (1 ms, doubling up to
        16 ms) instead of blocking the loop in ``Thread.join``. So ``worker_done`` (``wait_closed``) means the
        thread has exited, not merely that it is about to."""
        if self.worker_done is None or self.worker_done.done():
            return
        if self._thread is not None and self._thread.is_alive():
            assert self._loop is not None
            delay_s = min(0.016, max(0.001, 2 * delay_s))
            self._loop.call_later(delay_s, self._resolve_done, delay_s)
            return
        self.worker_done.set_result(None)

    # loop side -----------------------------------------------------------------------------------------
    async def get_batch(self) -> list[Chunk] | None:
        """Every chunk that has arrived (at least one, oldest first), or ``None`` when the stream has ended.

        Waits when nothing is buffered. Re-raises the worker's exception after the chunks before it. When a
        batch was already waiting, yields to the loop once first (``asyncio.sleep(0)``): a cancellation point
        that keeps a fast producer from starving render ticks, at one loop iteration per batch. A fast producer's
        consumer (the last two batches less than two :data:`BATCH_INTERVAL_S` apart) first waits out the rest of
        that interval after the last batch (:func:`pace_s`; not while the queue is full), so it wakes the loop
        once per interval rather than once per chunk.
        """
        if self._pending:
            items: list[Any] = list(self._pending)
            self._pending.clear()
            return items
        if self._finished or self._queue is None:
            if self._error is not None:
                err, self._error = self._error, None
                raise err
            return None
        q = self._queue
        depth = q.qsize()
        hold = pace_s(*self._batch_times, now()) if depth < q.maxsize else 0.0   # full: the model waits, take it
        if hold > 0:
            await self._hold(hold)          # a fast producer: its chunks gather meanwhile (one wake-up, not one each)
        elif depth:
            await asyncio.sleep(0)
        if self._finished:   # stopped meanwhile
            return None
        try:
            items = await q.get_batch()
        except QueueClosed:
            self._finished = True
            return None
        t = now()
        self._batch_times = (self._batch_times[1], t)
        last = items[-1]
        if isinstance(last, _End):
            items.pop()
            self._finished = True
            if last.error is not None:
                if not items:
                    raise last.error
                self._error = last.error
            if not items:
                return None
        self.metrics.on_dequeued(t, len(items))
        return items

    async def _hold(self, seconds: float) -> None:
        """Wait ``seconds`` on the stream's own loop (a timer and a future: ``asyncio.sleep`` asks for the running
        loop, and a qasync loop runs ready callbacks from Qt's event processing outside ``run_forever`` too —
        a test that pumps Qt events, a modal dialog). Cancellable like any await. Not at all, or no longer, once
        the producer's end is in the queue: the last chunks then reach the screen up to an interval sooner."""
        assert self._loop is not None and self._queue is not None
        waiter: asyncio.Future[None] = self._loop.create_future()
        self._holding = waiter
        if self._queue.ended():          # the end is in (else the worker wakes this wait when it puts it)
            self._holding = None
            return
        timer = self._loop.call_later(seconds, _wake, waiter)
        try:
            await waiter
        finally:
            self._holding = None
            timer.cancel()

    def __aiter__(self) -> TokenStream:
        return self

    async def __anext__(self) -> TaggedChunk:
        if not self._pending:
            batch = await self.get_batch()
            if batch is None:
                raise StopAsyncIteration
            self._pending.extend(batch)
        chunk = self._pending.popleft()
        return TaggedChunk(self.generation_id, chunk, self.metrics.dequeued[-1] if self.metrics.dequeued else now())
