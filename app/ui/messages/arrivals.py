"""News from the render worker pools on the UI loop: code colours or formula images were stored.

The lexer and math pools (:class:`~app.core.render.worker_pool.DeadlinePool`) work in other processes; a renderer
learns of their results only when it renders again. A finished message's view used to look every
``HIGHLIGHT_POLL_MS`` (40 ms), so a reply shown without its colours kept them from the screen for up to 40 ms more,
and a reply the message list was about to show was shown twice: once plain, once coloured (a second document
build: 30-50 ms for a 7 KB reply). :class:`Arrivals` listens to the pools (in their supervisor threads) and
emits :attr:`Arrivals.results` on the loop, at most once per loop turn however many results a burst stored.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Callable
from typing import Protocol

from PySide6.QtCore import QObject, Qt, Signal


class Pool(Protocol):
    """What :class:`Arrivals` uses of a worker pool (``DeadlinePool``)."""

    def add_listener(self, listener: Callable[[], None]) -> None: ...
    def remove_listener(self, listener: Callable[[], None]) -> None: ...


class Arrivals(QObject):
    """Emits :attr:`results` on the thread it lives in (the UI loop) after the pools it watches stored results.

    Each burst of results is one signal: a result that comes while the signal is queued (not yet delivered) adds
    nothing. Create it on the UI thread; :meth:`watch` a pool, :meth:`close` before the pools outlive it.
    """

    results = Signal()
    _news = Signal()

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._queued = False
        self._pools: list[Pool] = []
        self._news.connect(self._deliver, Qt.ConnectionType.QueuedConnection)

    def watch(self, pool: Pool) -> None:
        """Be told of ``pool``'s results (its listener runs in its supervisor thread)."""
        pool.add_listener(self._stored)
        self._pools.append(pool)

    def close(self) -> None:
        """Stop listening to every pool watched (at exit: the pools' threads outlive the Qt objects)."""
        for pool in self._pools:
            pool.remove_listener(self._stored)
        self._pools.clear()

    def _stored(self) -> None:
        """A pool's supervisor thread stored a result: queue one delivery to the loop unless one is queued."""
        with self._lock:
            if self._queued:
                return
            self._queued = True
        try:
            self._news.emit()
        except RuntimeError:        # the Qt object is gone (the app is exiting)
            pass

    def _deliver(self) -> None:
        with self._lock:
            self._queued = False
        self.results.emit()


_ARRIVALS: list[Arrivals] = []


def pool_arrivals() -> Arrivals:
    """The UI loop's news of the shared lexer, math and render-ahead pools (made on first use, on the UI thread;
    closed at exit)."""
    if not _ARRIVALS:
        from app.core.render.lexer_pool import default_pool
        from app.core.render.math_render import default_math_pool
        from app.core.render.render_ahead import default_ahead_pool

        arrivals = Arrivals()
        arrivals.watch(default_pool())
        arrivals.watch(default_math_pool())
        arrivals.watch(default_ahead_pool())
        atexit.register(arrivals.close)
        _ARRIVALS.append(arrivals)
    return _ARRIVALS[0]
