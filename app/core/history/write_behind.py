"""Writes to the history that run on a thread of their own, so a large one does not hold up the event loop.

The save at a reply's end indexes its whole text for search (the FTS5 triggers of ``app.core.history.search``
index only finished replies): 5 ms for 200 KB, 27-83 ms for 1 MB, on the loop that paints the reply's last frame
and every other chat's streaming reply. ``WriteBehind`` runs such writes on one thread with its own SQLite
connection to the same file (WAL: the loop's connection reads meanwhile; SQLite releases the GIL while it
works), in the order they were handed over. Each write waits :data:`SETTLE_S` after it was handed over,
unless something waits for it (a read, ``close``): the end's save of a 500 KB reply (its search index: 29-37 ms
on the writer) ran beside the reply's last frame and slowed that frame's work from 4-6 ms to 8-10 (``python -m
app.bench render``, shape ``long_word``, five runs each way), on two cores where both threads had one each.

Reads never see an older history than the writes handed over before them: the store waits for the queue
(``flush``) before it touches its own connection (``Store.db``). A write that fails is given back to its
``on_error`` (called on the writer thread), which redoes it on the loop's connection, where a damaged file is
repaired and a failure is shown. Only a file history writes behind (another connection cannot open a
``:memory:`` one).
"""

from __future__ import annotations

import logging
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from typing import Any

log = logging.getLogger("brook.store")

#: One write: called with the writer's connection.
Job = Callable[[sqlite3.Connection], Any]
_RECONNECT = object()
_CLOSE = object()
#: How long a write waits after it was handed over (s) when nothing waits for it: a reply's end is saved after
#: its last frames (a frame or two at 60 Hz, and the final render), not beside them.
SETTLE_S = 0.1


class WriteBehind:
    """One daemon thread (started at the first ``submit``, joined by ``close``) writing ``path`` through its
    own connection, set up by ``configure`` (pragmas) when opened."""

    def __init__(self, path: str, configure: Callable[[sqlite3.Connection], None], settle_s: float = SETTLE_S
                 ) -> None:
        self.path = path
        self._configure = configure
        self.settle_s = settle_s
        self._jobs: queue.Queue[Any] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._hurry = threading.Event()    # someone waits for the jobs: no settling until they ran
        self.written = 0                   # jobs that ran without error (tests, benchmarks)

    @property
    def pending(self) -> int:
        """Jobs handed over and not finished yet (a hint: read without a lock)."""
        return self._jobs.unfinished_tasks

    def submit(self, job: Job, on_error: Callable[[BaseException], None]) -> None:
        """Run ``job`` on the writer thread after every job submitted before it, ``settle_s`` after now at the
        earliest (sooner when flushed); on a ``sqlite3.Error`` (or any other exception) call ``on_error(exc)``
        there."""
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="brook-history-writer", daemon=True)
                self._thread.start()
        self._jobs.put((job, on_error, time.monotonic() + self.settle_s))

    def flush(self) -> None:
        """Return once every job submitted so far has run (at once when none is pending)."""
        if self._jobs.unfinished_tasks:
            self._hurried()
            self._jobs.join()

    def _hurried(self) -> None:
        with self._lock:
            self._hurry.set()

    def _settle(self, not_before: float) -> None:
        """On the writer: wait until ``not_before`` (``time.monotonic``) unless hurried."""
        while not self._hurry.is_set():
            left = not_before - time.monotonic()
            if left <= 0 or self._hurry.wait(left):
                return

    def _done(self) -> None:
        """On the writer: a job ran; the last one pending ends a hurry (later jobs settle again)."""
        with self._lock:
            if self._jobs.unfinished_tasks == 1:
                self._hurry.clear()
            self._jobs.task_done()

    def reconnect(self) -> None:
        """The file was replaced or repaired: the next job opens a new connection."""
        if self._thread is not None:
            self._jobs.put(_RECONNECT)
            self.flush()

    def close(self) -> None:
        """Run what is pending, close the connection and end the thread."""
        with self._lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            self._jobs.put(_CLOSE)
            self._hurried()
            thread.join()

    def _run(self) -> None:
        db: sqlite3.Connection | None = None
        try:
            while True:
                item = self._jobs.get()
                try:
                    if item is _CLOSE:
                        return
                    if item is _RECONNECT:
                        if db is not None:
                            db.close()
                        db = None
                        continue
                    job, on_error, not_before = item
                    self._settle(not_before)
                    try:
                        if db is None:
                            db = sqlite3.connect(self.path, isolation_level=None)
                            self._configure(db)
                        job(db)
                        self.written += 1
                    except Exception as exc:
                        log.warning("history: a write behind failed (%s); redone on the loop", exc)
                        try:
                            on_error(exc)
                        except Exception:      # the loop is closed: nobody is left to redo it
                            log.exception("history: a write behind failed and could not be redone")
                finally:
                    self._done()
        finally:
            if db is not None:
                db.close()
