"""Syntax highlighting off the loop: pygments runs in a worker process with a deadline per job.

pygments' lexers are regular expressions, and some backtrack exponentially on short inputs (an ``rst`` fence
holding ``:`` and 36 backslashes takes ~7 s). Python's ``re`` holds the GIL while it matches, so a thread does
not help: the loop stalls for the whole match (``python -m app.bench lexing`` measures it). So the UI's
renderers never lex: they ask a :class:`LexerPool` for a segment's HTML, show plain text while it is pending,
and a worker process lexes. A job that runs past :data:`LEX_DEADLINE_S` gets its worker killed (and restarted
for the next job); the segment's result is then its plain text, remembered like any other, so a chat reopened
later does not pay again.

One supervisor thread feeds the worker one job at a time and waits on its pipe (waiting releases the GIL).
Results are kept in an LRU map shared by every renderer of the process (:func:`default_pool`).
"""

from __future__ import annotations

import atexit
import html
import multiprocessing
import queue
import threading
import time
from collections import OrderedDict
from typing import Any

#: Seconds a worker may spend on one segment before it is killed and the segment shown as plain text.
LEX_DEADLINE_S = 2.0
#: Seconds the worker process may take to start (import pygments) before the pool gives up on this job.
START_TIMEOUT_S = 60.0

Key = tuple[str, str, str]  # (language, theme, segment text)


def _worker_main(conn: Any) -> None:
    """The worker process: answer ``(code, lang, theme)`` requests with the segment's HTML. Ends quietly when
    the app goes away (a closed pipe), which may happen at any moment."""
    try:
        _serve(conn)
    except (EOFError, OSError, KeyboardInterrupt):
        return


def _serve(conn: Any) -> None:
    from app.core.highlight import format_segment, get_lexer

    try:
        conn.send("ready")
    except OSError:            # the app left already (quit while this worker started): nothing to answer
        return
    while True:
        req = conn.recv()
        if req is None:
            return
        code, lang, theme = req
        try:
            lexer = get_lexer(lang)
            out = format_segment(code, lexer, theme) if lexer is not None else html.escape(code, quote=False)
        except Exception:  # a lexer bug must not kill the worker: the segment stays plain
            out = html.escape(code, quote=False)
        try:
            conn.send(out)
        except OSError:
            return


class LexerPool:
    """Highlights segments in a worker process; never blocks its callers (except :meth:`wait`).

    ``deadline_s``: seconds one segment may take (then plain text); ``max_entries``: results kept (LRU).
    Attributes: ``completed`` (results stored so far, a counter renderers poll), ``fallbacks`` (jobs that ran
    past the deadline), ``lexed_s`` (seconds the worker spent on successful jobs).
    """

    def __init__(self, deadline_s: float = LEX_DEADLINE_S, max_entries: int = 4096) -> None:
        self.deadline_s = deadline_s
        self._max = max_entries
        self._results: OrderedDict[Key, str] = OrderedDict()
        self._queued: set[Key] = set()
        self._jobs: queue.Queue[Key | None] = queue.Queue()
        self._lock = threading.Lock()
        self._done = threading.Condition(self._lock)
        self._thread: threading.Thread | None = None
        self._starting = threading.Lock()  # held while a worker process is being started
        self._proc: Any = None
        self._conn: Any = None
        self.completed = 0
        self.fallbacks = 0
        self.lexed_s = 0.0

    # -- callers (any thread) ------------------------------------------------------------------------------

    def result(self, lang: str, theme: str, code: str) -> str | None:
        """The HTML of a segment if known (lexed, or plain after a deadline), else None (not asked or pending)."""
        key = (lang, theme, code)
        with self._lock:
            out = self._results.get(key)
            if out is not None:
                self._results.move_to_end(key)
            return out

    def request(self, lang: str, theme: str, code: str) -> str | None:
        """:meth:`result`, and when it is None the segment is queued for the worker (once)."""
        out = self.result(lang, theme, code)
        if out is None:
            key = (lang, theme, code)
            with self._lock:
                if key in self._queued:
                    return None
                self._queued.add(key)
            self.start()
            self._jobs.put(key)
        return out

    def pending(self) -> int:
        """Segments queued or being lexed."""
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
            self._thread = threading.Thread(target=self._run, name="brook-lexer", daemon=True)
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

    # -- supervisor thread ---------------------------------------------------------------------------------

    def _ensure_worker(self) -> Any:
        if self._proc is not None and self._proc.is_alive():
            return self._conn
        self._kill()
        ctx = multiprocessing.get_context("spawn")  # never fork a process that runs Qt
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=_worker_main, args=(child,), name="brook-lexer-worker", daemon=True)
        with self._starting:  # an exit in the middle would leave the child a half-written start-up (a traceback)
            proc.start()
        child.close()
        if not parent.poll(START_TIMEOUT_S) or parent.recv() != "ready":
            proc.kill()
            raise RuntimeError("the lexer worker did not start")
        self._proc, self._conn = proc, parent
        return parent

    def _kill(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.join(timeout=5)
        if self._conn is not None:
            self._conn.close()
        self._proc = self._conn = None

    def _lex(self, key: Key) -> str:
        lang, theme, code = key
        plain = html.escape(code, quote=False)
        try:
            conn = self._ensure_worker()
            t0 = time.monotonic()
            conn.send((code, lang, theme))
            if conn.poll(self.deadline_s):
                out = conn.recv()
                self.lexed_s += time.monotonic() - t0
                return str(out)
        except (OSError, EOFError, RuntimeError):
            pass
        self._kill()  # past the deadline (or the worker died): a fresh worker for the next job
        self.fallbacks += 1
        return plain

    def _run(self) -> None:
        while True:
            key = self._jobs.get()
            if key is None:
                return
            out = self.result(*key)
            if out is None:
                out = self._lex(key)
            with self._done:
                self._results[key] = out
                if len(self._results) > self._max:
                    self._results.popitem(last=False)
                self._queued.discard(key)
                self.completed += 1
                self._done.notify_all()


_DEFAULT: LexerPool | None = None
_DEFAULT_LOCK = threading.Lock()


def _let_a_start_finish() -> None:
    """At exit: wait (≤ 5 s) until no worker is being started, so the child is never left with half of its
    start-up data (multiprocessing then ends it quietly)."""
    if _DEFAULT is not None and _DEFAULT._starting.acquire(timeout=5):
        _DEFAULT._starting.release()


def default_pool() -> LexerPool:
    """The process's shared pool (created on first use; its worker starts on the first request)."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None:
            _DEFAULT = LexerPool()
            atexit.register(_let_a_start_finish)
        return _DEFAULT
