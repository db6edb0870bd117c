"""The stop flag of a generation and the GIL switch interval of a process that streams: threading only, so the
engine host (``app.engine.host``) has them without the event loop's modules (``app.core.streaming.stream``
re-exports both)."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable

log = logging.getLogger("brook.stream")


class StopEvent(threading.Event):
    """The stop flag of one generation: a ``threading.Event`` that also runs callbacks when it is set.

    A worker blocked in a socket read cannot see a flag: an engine that blocks that way (the remote HTTP/SSE
    engine) registers ``add_callback(abort)``, and ``set()`` — called by ``TokenStream.request_stop`` on the
    loop thread — runs ``abort`` at once in the thread that sets it (e.g. it shuts the socket down, which wakes
    the blocked read). A callback added after ``set()`` runs immediately. Callbacks must be quick and must not
    block; their exceptions are logged, never raised.
    """

    def __init__(self) -> None:
        super().__init__()
        self._callbacks: list[Callable[[], None]] = []
        self._cb_lock = threading.Lock()

    def add_callback(self, fn: Callable[[], None]) -> Callable[[], None]:
        """Run ``fn()`` when the event is set (now, if it already is). Returns a function that unregisters it."""
        with self._cb_lock:
            if not self.is_set():
                self._callbacks.append(fn)
                fn_added = True
            else:
                fn_added = False
        if not fn_added:
            self._call(fn)

        def remove() -> None:
            with self._cb_lock, contextlib.suppress(ValueError):
                self._callbacks.remove(fn)
        return remove

    def set(self) -> None:
        with self._cb_lock:
            super().set()
            callbacks, self._callbacks = self._callbacks, []
        for fn in callbacks:
            self._call(fn)

    @staticmethod
    def _call(fn: Callable[[], None]) -> None:
        try:
            fn()
        except Exception:
            log.exception("a stop callback failed")


#: GIL hand-over interval the app runs with (s). CPython's default is 5 ms: a decode thread that needs the GIL
#: for its per-token Python work (sampling, detokenising) while the loop thread renders can wait that long per
#: token. At 1 ms the pipeline's throughput on the real model went from 0.958 to 0.988 of the raw loop
#: (median of rounds, ``python -m app.bench pipeline --switch-interval-ms``, this 2-core machine).
GIL_SWITCH_INTERVAL_S = 0.001


def tune_switch_interval(seconds: float = GIL_SWITCH_INTERVAL_S) -> None:
    """Set ``sys.setswitchinterval`` for a process that streams (the app and its benchmarks)."""
    import sys

    sys.setswitchinterval(seconds)
