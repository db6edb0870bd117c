"""Work that may block for long, off the loop: a worker process with a deadline per job, results cached.

Some work a renderer needs can take arbitrarily long on short inputs (a pygments lexer that backtracks, a
mathtext layout of a pathological formula), and Python code that holds the GIL stalls every thread of the
process, the UI loop included. So such work runs in a *worker process*: one supervisor thread per pool feeds
the worker one job at a time and waits on its pipe (waiting releases the GIL); a job that runs past the pool's
deadline gets its worker killed (and a fresh one started for the next job), and its result is the pool's
:meth:`DeadlinePool.fallback`, remembered like any other result, so a chat reopened later does not pay again.

A job is a *key* (a tuple of picklable values); the worker calls ``handler(*key)`` — ``handler`` named as
``"module:function"`` so the worker imports it itself — and sends back its (picklable) result. A handler that
raises gives the fallback too. Callers never block (except :meth:`DeadlinePool.wait`): :meth:`request` returns
the result if known, else None and queues the job once. ``completed`` counts stored results, so a renderer polls
it to know when to look again; a listener (:meth:`DeadlinePool.add_listener`) is told each time one is stored, so
a window can look at once instead of at its next poll.
"""

from __future__ import annotations

import atexit
import gc
import importlib
import multiprocessing
import queue
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Hashable
from typing import Any, Generic, TypeVar

#: Seconds the worker process may take to start (import its handler) before the pool gives up on this job.
START_TIMEOUT_S = 60.0

K = TypeVar("K", bound=Hashable)
R = TypeVar("R")
P = TypeVar("P", bound="DeadlinePool[Any, Any]")


def _worker_main(conn: Any, handler_path: str, init_path: str | None = None) -> None:
    """The worker process: run ``init()`` once, then answer keys with ``handler(*key)`` (None when it raises).
    Ends quietly when the app goes away (a closed pipe), which may happen at any moment."""
    try:
        _serve(conn, handler_path, init_path)
    except (EOFError, OSError, KeyboardInterrupt):
        return


def freeze_heap() -> None:
    """Move what the worker holds after its imports and warm-up into the permanent generation (``gc.freeze``),
    after collecting what is garbage of it: later full collections look only at what the jobs made since.

    Why: a full (generation 2) collection walks every tracked object, and a render worker holds matplotlib's,
    pygments' and markdown-it's modules. Measured in the render-ahead worker during ``python -m app.bench
    history --pairs 1000`` (2 cores): jobs that took 21-28 ms took 81-97 ms when a full collection fell in them,
    which then held the first screen a scroll stopped on (settle p99 201 ms → 174 ms with the heap frozen). The
    same technique as the window's start-up heap (``app.ui.messages.collector``)."""
    gc.collect()
    gc.freeze()


def _resolve(path: str) -> Any:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def _serve(conn: Any, handler_path: str, init_path: str | None = None) -> None:
    handler = _resolve(handler_path)
    if init_path:
        try:
            _resolve(init_path)()   # within START_TIMEOUT_S, not a job's deadline (fonts, caches)
        except Exception:           # the jobs then pay for it, or fail into the fallback
            pass
    freeze_heap()
    try:
        conn.send("ready")
    except OSError:            # the app left already (quit while this worker started): nothing to answer
        return
    while True:
        key = conn.recv()
        if key is None:
            return
        try:
            out = handler(*key)
        except Exception:      # a handler bug must not kill the worker: the job gets the fallback
            out = None
        try:
            conn.send(out)
        except OSError:
            return


class DeadlinePool(Generic[K, R]):
    """Runs ``handler(*key)`` jobs in a worker process; never blocks its callers (except :meth:`wait`).

    ``handler``: ``"module:function"``; ``deadline_s``: seconds one job may take (then :meth:`fallback`);
    ``max_entries``: results kept (LRU); ``name``: the thread's and process's name; ``init``: ``"module:function"``
    the worker runs once before it takes jobs (what would make the first job miss its deadline: loading fonts),
    under the start-up timeout (``START_TIMEOUT_S``). Attributes: ``completed``
    (results stored so far, a counter renderers poll), ``fallbacks`` (jobs past the deadline, or whose worker
    died), ``busy_s`` (seconds the worker spent on jobs that finished in time).
    """

    def __init__(self, handler: str, deadline_s: float, max_entries: int = 4096, name: str = "brook-worker",
                 init: str | None = None) -> None:
        self.handler = handler
        self.init = init
        self.deadline_s = deadline_s
        self.name = name
        self._max = max_entries
        self._results: OrderedDict[K, R] = OrderedDict()
        self._queued: set[K] = set()
        self._jobs: queue.Queue[K | None] = queue.Queue()
        self._lock = threading.Lock()
        self._done = threading.Condition(self._lock)
        self._thread: threading.Thread | None = None
        self._starting = threading.Lock()  # held while a worker process is being started
        self.exiting = False               # set at exit (:meth:`wait_for_start`): no worker is started after it
        self._proc: Any = None
        self._conn: Any = None
        self.completed = 0
        self.fallbacks = 0
        self.busy_s = 0.0
        self._listeners: list[Callable[[], None]] = []

    def fallback(self, key: K) -> R:
        """The result of a job that ran past the deadline, whose handler raised or whose worker died."""
        raise NotImplementedError

    # -- callers (any thread) ------------------------------------------------------------------------------

    def lookup(self, key: K) -> R | None:
        """The result of ``key`` if known (done, or the fallback), else None (not asked yet, or pending)."""
        with self._lock:
            out = self._results.get(key)
            if out is not None:
                self._results.move_to_end(key)
            return out

    def ask(self, key: K) -> R | None:
        """:meth:`lookup`, and when it is None the job is queued for the worker (once)."""
        out = self.lookup(key)
        if out is None:
            with self._lock:
                if key in self._queued:
                    return None
                self._queued.add(key)
            self.start()
            self._jobs.put(key)
        return out

    def put(self, key: K, result: R) -> None:
        """Keep ``result``, made elsewhere, as the result of ``key`` (LRU; a queued job for it then does nothing)."""
        with self._lock:
            self._results[key] = result
            self._results.move_to_end(key)
            if len(self._results) > self._max:
                self._results.popitem(last=False)

    def queued(self, key: K) -> bool:
        """Whether the job ``key`` is queued or running."""
        with self._lock:
            return key in self._queued

    def retain(self, keys: Collection[K]) -> None:
        """Drop the queued jobs whose keys are not in ``keys`` (nobody waits for them any more: a list scrolled
        past them); a running job still ends. A dropped job is queued again by the next :meth:`ask`."""
        with self._done:
            self._queued.intersection_update(keys)
            self._done.notify_all()

    def add_listener(self, listener: Callable[[], None]) -> None:
        """Call ``listener()`` after each result is stored. It runs in the pool's supervisor thread, so it must only
        hand the news over (post an event to the loop), never wait; what it raises is ignored."""
        with self._lock:
            self._listeners.append(listener)

    def remove_listener(self, listener: Callable[[], None]) -> None:
        """Stop calling ``listener`` (one that was never added: nothing happens)."""
        with self._lock:
            if listener in self._listeners:
                self._listeners.remove(listener)

    def pending(self) -> int:
        """Jobs queued or running."""
        with self._lock:
            return len(self._queued)

    def wait(self, timeout: float) -> bool:
        """Block until nothing is pending (True) or ``timeout`` seconds passed (False). Not for the UI loop."""
        end = time.monotonic() + timeout
        with self._done:
            while self._queued:
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self._done.wait(left)
            return True

    def start(self) -> None:
        """Start the supervisor thread (and with it the worker process) if it is not running; idempotent."""
        with self._lock:
            if self._thread is not None:
                return
            self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
            self._thread.start()

    def close(self) -> None:
        """Stop the worker and the supervisor (pending jobs are dropped)."""
        thread = self._thread
        if thread is None:
            return
        self._jobs.put(None)
        thread.join(timeout=5)
        self._kill()
        self._thread = None

    def wait_for_start(self, timeout: float) -> None:
        """At exit: wait (≤ ``timeout`` s) until no worker is being started, and start none after it (a child left
        with half of its start-up data prints a traceback, ``EOFError: Ran out of input``; otherwise
        multiprocessing ends it quietly). Jobs asked after it get the fallback."""
        if self._starting.acquire(timeout=timeout):
            self.exiting = True
            self._starting.release()
        else:
            self.exiting = True

    # -- supervisor thread ---------------------------------------------------------------------------------

    def _ensure_worker(self) -> Any:
        if self._proc is not None and self._proc.is_alive():
            return self._conn
        self._kill()
        ctx = multiprocessing.get_context("spawn")  # never fork a process that runs Qt
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=_worker_main, args=(child, self.handler, self.init), name=f"{self.name}-worker",
                           daemon=True)
        with self._starting:  # an exit in the middle would leave the child a half-written start-up (a traceback)
            if self.exiting:
                parent.close()
                child.close()
                raise RuntimeError(f"the {self.name} worker is not started at exit")
            proc.start()
        child.close()
        if not parent.poll(START_TIMEOUT_S) or parent.recv() != "ready":
            proc.kill()
            raise RuntimeError(f"the {self.name} worker did not start")
        self._proc, self._conn = proc, parent
        return parent

    def _kill(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.join(timeout=5)
        if self._conn is not None:
            self._conn.close()
        self._proc = self._conn = None

    def _work(self, key: K) -> R:
        try:
            conn = self._ensure_worker()
            t0 = time.monotonic()
            conn.send(key)
            if conn.poll(self.deadline_s):
                out = conn.recv()
                if out is not None:
                    self.busy_s += time.monotonic() - t0
                    return out
                return self.fallback(key)         # the handler raised: the worker is fine
        except (OSError, EOFError, RuntimeError):
            pass
        self._kill()  # past the deadline (or the worker died): a fresh worker for the next job
        self.fallbacks += 1
        return self.fallback(key)

    def _run(self) -> None:
        while True:
            key = self._jobs.get()
            if key is None:
                return
            with self._lock:
                dropped = key not in self._queued        # retain() let it go (or it was done meanwhile)
            if dropped:
                continue
            out = self.lookup(key)
            if out is None:
                out = self._work(key)
            with self._done:
                self._results[key] = out
                if len(self._results) > self._max:
                    self._results.popitem(last=False)
                self._queued.discard(key)
                self.completed += 1
                self._done.notify_all()
                listeners = list(self._listeners)
            for listener in listeners:
                try:
                    listener()
                except Exception:     # a listener's bug must not stop the pool
                    pass


def shared_pool(make: Callable[[], P]) -> Callable[[], P]:
    """A function that answers the process's one pool made by ``make`` (made on its first call; its worker
    starts on the pool's first job). At exit it waits (≤ 5 s) until no worker is being started
    (:meth:`DeadlinePool.wait_for_start`: a child left with half of its start-up data prints a traceback)."""
    lock = threading.Lock()
    made: list[P] = []

    def pool() -> P:
        with lock:
            if not made:
                made.append(make())
                atexit.register(made[0].wait_for_start, 5)
            return made[0]

    return pool
