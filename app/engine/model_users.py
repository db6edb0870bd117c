"""Calls that use a loaded model from other threads, so that freeing the model waits for them.

The context meter and an attachment's count tokenize in worker threads while the window may unload the model
(Open model, Unload); freeing it under a running ``llama_tokenize`` is a use-after-free, a segmentation fault
that takes the whole process down. ``LlamaEngine`` takes each such call through :meth:`ModelUsers.using` and
its ``unload`` calls :meth:`ModelUsers.wait_idle` before it frees the model.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from app.engine.base import EngineNotLoadedError

T = TypeVar("T")


class ModelUsers:
    """Counts the calls running on a model under ``lock`` (the engine's own lock, which guards its model)."""

    def __init__(self, lock: threading.Lock) -> None:
        self._idle = threading.Condition(lock)
        self._n = 0

    @contextmanager
    def using(self, get: Callable[[], T | None]) -> Iterator[T]:
        """``get()`` (read under the lock) for one call; raises ``EngineNotLoadedError`` when it is None (no
        model loaded). The model is not freed until the ``with`` block has left."""
        with self._idle:
            value = get()
            if value is None:
                raise EngineNotLoadedError("The model is not loaded yet.")
            self._n += 1
        try:
            yield value
        finally:
            with self._idle:
                self._n -= 1
                if not self._n:
                    self._idle.notify_all()

    def wait_idle(self) -> None:
        """Return once no call is running; call with the lock held, after the model was taken out of reach of
        new calls (they then raise ``EngineNotLoadedError``)."""
        while self._n:
            self._idle.wait()
