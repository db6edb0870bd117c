"""The engine protocol and its one error path.

An engine turns a chat history into a blocking iterator of ``Chunk``s. ``load`` and ``stream`` run off the
event loop (a worker thread); the streaming core does the threading, queuing and stopping.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Protocol, runtime_checkable

from app.core.errors import BrookError
from app.core.errors import LoadCancelled as LoadCancelled  # re-exported: engines raise it
from app.core.types import Chunk, GenerationParams

#: ``progress(fraction)`` with fraction in [0, 1]; called from the loading thread. It raises ``LoadCancelled``
#: to cancel the load: the engine stops as soon as it can (llama.cpp: inside its own loader), frees what it
#: allocated, stays unloaded and lets ``LoadCancelled`` out of ``load``.
ProgressCallback = Callable[[float], None]


class EngineError(BrookError):
    """An engine failure with a message a person can act on ("The file is not a GGUF model: …")."""


class ModelNotFoundError(EngineError):
    """The model file does not exist or cannot be read."""


class InvalidModelError(EngineError):
    """The file is not a GGUF model, or it is truncated or corrupt."""


class ContextOverflowError(EngineError):
    """The prompt (chat history) does not fit the model's context window."""


class EngineNotLoadedError(EngineError):
    """``stream`` was called before ``load`` finished (or after ``unload``)."""


@runtime_checkable
class Engine(Protocol):
    """A source of chat completions.

    - ``name``: what the status bar shows (model file stem, or server model id).
    - ``max_concurrency``: generations it serves at once (1 for a llama.cpp context).
    - ``load(progress)``: blocking; raises ``EngineError`` subclasses.
    - ``stream(messages, params, stop)``: blocking iterator of chunks; checks ``stop`` between tokens; raises
      ``EngineError`` subclasses.
    - ``unload()``: frees the model's memory; idempotent.
    """

    @property
    def name(self) -> str: ...

    @property
    def max_concurrency(self) -> int: ...

    @property
    def loaded(self) -> bool: ...

    def load(self, progress: ProgressCallback | None = None) -> None: ...

    def stream(self, messages: Sequence[Mapping[str, str]], params: GenerationParams,
               stop: threading.Event) -> Iterator[Chunk]: ...

    def unload(self) -> None: ...
