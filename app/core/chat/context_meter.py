"""The context meter: how much of the model's context window the chat (and the message being typed) fills.

``measure`` runs the engine's own tokenizer over the exact prompt the next reply would send (the engine's
``fit_context`` window, then ``prompt_tokens``), so the count equals what llama.cpp will prefill. It is blocking
(tokenizing a long chat takes tens of ms): call it from a worker thread, debounced while typing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from app.core.conversation import Conversation
from app.core.types import GenerationParams

if TYPE_CHECKING:
    from app.engine.base import Engine

#: Warn when the prompt plus the reply's reserve fills more than this share of the window.
WARN_FRACTION = 0.85


@dataclass(frozen=True, slots=True)
class ContextUsage:
    """``used``: prompt tokens (chat + draft); ``window``: the context window (tokens; 0: unknown, a server that
    does not say); ``reserve``: tokens kept free for the reply; ``left_out``: older messages that no longer fit
    and are not sent; ``estimate``: ``used`` is an estimate (a remote server that cannot render or tokenize the
    prompt: ``app.engine.remote.tokens``), not the exact count; ``source``: how it was counted."""

    used: int
    window: int
    reserve: int
    left_out: int
    estimate: bool = False
    source: str = "model"

    @property
    def fraction(self) -> float:
        return min(1.0, (self.used + self.reserve) / self.window) if self.window else 0.0

    @property
    def warning(self) -> bool:
        return self.fraction >= WARN_FRACTION or self.left_out > 0


@runtime_checkable
class ServerCounter(Protocol):
    """An engine whose server counts a prompt's tokens (``app.engine.remote``)."""

    def context_window(self) -> int | None: ...

    def count_prompt(self, messages: Sequence[Mapping[str, str]]) -> tuple[int, bool]: ...


@runtime_checkable
class PromptCounter(Protocol):
    """An engine with its own tokenizer and chat template (``app.engine.llama``)."""

    def fit_context(self, messages: Sequence[Mapping[str, str]],
                    params: GenerationParams) -> Sequence[Mapping[str, str]]: ...

    def prompt_tokens(self, messages: Sequence[Mapping[str, str]]) -> int: ...


def measure(engine: Engine, conv: Conversation, draft: str = "",
            params: GenerationParams | None = None) -> ContextUsage:
    """Usage of ``conv`` plus ``draft`` (the text in the input box) on ``engine``: a loaded ``LlamaEngine`` (its
    own tokenizer and chat template, exact), or a ``RemoteEngine`` (``count_prompt`` / ``context_window``: the
    server's tokenizer where it has one, else an estimate marked ``estimate``). Raises ``EngineNotLoadedError``
    when the model is not loaded; engines without a tokenizer give zeros."""
    params = params or GenerationParams()
    window = int(getattr(engine, "n_ctx", 0) or 0)
    messages = conv.prompt_messages()
    if draft.strip():
        messages.append({"role": "user", "content": draft})
    if isinstance(engine, ServerCounter):        # a remote server: its tokenizer where it has one (see above)
        window = int(engine.context_window() or 0)
        used, exact = engine.count_prompt(messages) if messages else (0, True)
        return ContextUsage(used, window, min(params.max_tokens, window // 4), 0, estimate=not exact,
                            source=str(getattr(engine, "token_source", None) or "server"))
    if not isinstance(engine, PromptCounter) or not messages:
        return ContextUsage(0, window, min(params.max_tokens, window // 4), 0)
    kept = engine.fit_context(messages, params)
    left_out = len(messages) - len(kept)
    return ContextUsage(engine.prompt_tokens(kept), window, min(params.max_tokens, window // 4), left_out)
