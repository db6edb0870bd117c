"""``--slow-ms``: a debugging wrapper that makes any engine wait N ms before each chunk of text.

It lets a person watch streaming happen (and tests stop a reply in the middle) on a model that is otherwise too
fast. The wait is on the stop event, so Stop still ends the reply within one token.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from app.core.types import Chunk, GenerationParams
from app.engine.base import Engine, ProgressCallback


class SlowEngine:
    """Wraps ``inner`` (any ``Engine``): each chunk with text is delayed by ``slow_ms`` milliseconds (0 = no
    delay; the attribute may be changed between replies). Everything else is the inner engine's (``name``,
    ``max_concurrency``, ``load``, ``unload``, and any extra attribute such as ``model_path`` or
    ``count_tokens``)."""

    def __init__(self, inner: Engine, slow_ms: float = 0.0) -> None:
        self.inner = inner
        self.slow_ms = slow_ms

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def max_concurrency(self) -> int:
        return self.inner.max_concurrency

    @property
    def loaded(self) -> bool:
        return self.inner.loaded

    def load(self, progress: ProgressCallback | None = None) -> None:
        self.inner.load(progress)

    def unload(self) -> None:
        self.inner.unload()

    def stream(self, messages: Sequence[Mapping[str, str]], params: GenerationParams,
               stop: threading.Event) -> Iterator[Chunk]:
        """The inner engine's chunks, each chunk with text ``slow_ms`` ms later; returns at once on ``stop``."""
        it = self.inner.stream(messages, params, stop)
        try:
            for chunk in it:
                pause = self.slow_ms / 1000.0
                if pause and chunk.text and stop.wait(pause):
                    return
                yield chunk
        finally:
            close = getattr(it, "close", None)
            if close is not None:
                close()

    def __getattr__(self, name: str) -> Any:     # model_path, count_tokens, fit_context, metadata, calls, …
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)
