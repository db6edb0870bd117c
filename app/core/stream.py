"""The token path from a blocking engine iterator to the event loop (DESIGN §1-§2).

``TokenStream`` runs a synchronous chunk iterator (llama.cpp decode, an HTTP/SSE read loop, a scripted
engine) in a dedicated worker thread and exposes it as an async iterator on the asyncio loop. Between them sits
``ChunkQueue``: bounded, single producer (the worker) and single consumer (a coroutine). A full queue blocks the
*worker* (backpressure: the model waits), never the loop. The consumer is woken only when it is actually
waiting, so a busy loop pays one ``deque.popleft`` per chunk and no cross-thread call.

Stop path: ``request_stop()`` sets the worker's ``threading.Event`` (checked between tokens) and closes the
queue, which drops what is buffered and releases a worker blocked on a full queue; the worker then closes the
engine iterator (``generator.close()``) and finishes; ``worker_done`` resolves on the loop when it has.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from app.core.metrics import StreamMetrics, now
from app.core.types import Chunk

log = logging.getLogger("brook.stream")

#: Default bound of the chunk queue (chunks). Small enough that Stop drops little, large enough that a slow
#: render tick (≤ 50 ms at 2,000 tokens/s = 100 tokens) rarely makes the model wait.
DEFAULT_MAXSIZE = 256


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
    it raises ``QueueClosed`` once the consumer has closed the queue. ``get`` (loop side) is a coroutine.
    Memory is bounded by ``maxsize`` items at all times.
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
            try:
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

    async def get(self) -> Any:
        """Wait for and pop the oldest item (loop side)."""
        while True:
            with self._lock:
                if self._buf:
                    item = self._buf.popleft()
                    self._not_full.notify()
                    return item
                if self._closed:
                    raise QueueClosed
                waiter = self._loop.create_future()
                self._waiter = waiter
            try:
                await waiter
            finally:
                with self._lock:
                    if self._waiter is waiter:
                        self._waiter = None

    def close(self) -> None:
        """Drop everything buffered and release a blocked producer; further puts raise ``QueueClosed``."""
        with self._not_full:
            self._closed = True
            self._buf.clear()
            self._not_full.notify_all()
            waiter, self._waiter = self._waiter, None
        if waiter is not None:
            with contextlib.suppress(RuntimeError):
                self._loop.call_soon_threadsafe(_wake, waiter)


Producer = Callable[[threading.Event], Iterable[Chunk]]


@dataclass(frozen=True, slots=True)
class TaggedChunk:
    """A chunk with the id of the generation that produced it (chunks of a stopped generation are dropped)."""

    generation_id: int
    chunk: Chunk
    t_dequeued: float


class TokenStream:
    """Async iterator over the chunks of one generation, produced in a worker thread.

    ``produce(stop_event)`` must return an iterable of ``Chunk``; it runs in the worker thread and should check
    ``stop_event`` between tokens. Use as::

        stream = TokenStream(produce, generation_id=7)
        stream.start()                      # needs a running loop
        try:
            async for tagged in stream: ...
        finally:
            stream.request_stop()           # idempotent, never blocks
        await stream.wait_closed()          # worker returned (e.g. to release the engine slot)

    Errors raised by the iterator are re-raised from ``__anext__`` on the loop. ``maxsize`` bounds the queue
    (chunks). ``metrics`` receives the produced/enqueued/dequeued stamps.
    """

    _ids = iter(range(1, 1 << 62))

    def __init__(self, produce: Producer, *, maxsize: int = DEFAULT_MAXSIZE, generation_id: int | None = None,
                 metrics: StreamMetrics | None = None, name: str = "brook-decode") -> None:
        self._produce = produce
        self.maxsize = maxsize
        self.generation_id = generation_id if generation_id is not None else next(self._ids)
        self.metrics = metrics if metrics is not None else StreamMetrics()
        self.stop_event = threading.Event()
        self._name = name
        self._queue: ChunkQueue | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.worker_done: asyncio.Future[None] | None = None
        self._finished = False

    # lifecycle -----------------------------------------------------------------------------------------
    def start(self) -> None:
        """Start the worker thread (call from the loop thread)."""
        if self._thread is not None:
            raise RuntimeError("TokenStream already started")
        self._loop = asyncio.get_running_loop()
        self._queue = ChunkQueue(self.maxsize, self._loop)
        self.worker_done = self._loop.create_future()
        self._thread = threading.Thread(target=self._run, name=f"{self._name}-{self.generation_id}", daemon=True)
        self._thread.start()

    def request_stop(self) -> None:
        """Ask the worker to stop at the next token and drop buffered chunks. Never blocks; idempotent."""
        self.stop_event.set()
        if self._queue is not None:
            self._queue.close()

    async def wait_closed(self) -> None:
        """Wait until the worker thread has returned (without blocking the loop)."""
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
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # worker thread -------------------------------------------------------------------------------------
    def _run(self) -> None:
        assert self._queue is not None and self._loop is not None
        q, m, stop = self._queue, self.metrics, self.stop_event
        end = _End()
        iterator: Iterator[Chunk] | None = None
        try:
            iterator = iter(self._produce(stop))
            for chunk in iterator:
                t = now()
                m.on_produced(t, chunk.n_tokens)
                if stop.is_set():
                    break
                depth, waited = q.put(chunk)
                m.on_enqueued(now(), depth, waited)
                if stop.is_set():
                    break
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
        if not stop.is_set():
            with contextlib.suppress(QueueClosed):
                q.put(end)
        elif end.error is not None:
            log.debug("error after stop ignored: %r", end.error)
        try:
            self._loop.call_soon_threadsafe(self._resolve_done)
        except RuntimeError:  # loop already closed (interpreter shutdown)
            pass

    def _resolve_done(self) -> None:
        if self.worker_done is not None and not self.worker_done.done():
            self.worker_done.set_result(None)

    # loop side -----------------------------------------------------------------------------------------
    def __aiter__(self) -> TokenStream:
        return self

    async def __anext__(self) -> TaggedChunk:
        if self._finished or self._queue is None:
            raise StopAsyncIteration
        try:
            item = await self._queue.get()
        except QueueClosed:
            self._finished = True
            raise StopAsyncIteration from None
        t = now()
        if isinstance(item, _End):
            self._finished = True
            if item.error is not None:
                raise item.error
            raise StopAsyncIteration
        self.metrics.on_dequeued(t)
        return TaggedChunk(self.generation_id, item, t)
