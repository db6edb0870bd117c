"""Plain data shared by the engines and the streaming core (no Qt, no llama.cpp)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Chunk:
    """One piece of model output as an engine yields it.

    ``text`` is a decoded str delta (possibly empty); ``n_tokens`` is how many decode tokens produced it
    (1 for llama.cpp, possibly more for a remote server that batches SSE events); ``finish_reason`` is the
    stop reason on the last chunk ("stop", "length", …) and ``None`` otherwise.
    """

    text: str
    n_tokens: int = 1
    finish_reason: str | None = None


@dataclass(frozen=True, slots=True)
class GenerationParams:
    """Sampling parameters for one reply.

    Defaults follow llama.cpp's own defaults (temperature 0.8 is theirs; 0.7 is the common chat default used
    here), ``max_tokens`` counts decode tokens, ``seed`` ``None`` means random.
    """

    temperature: float = 0.7
    top_p: float = 0.95
    top_k: int = 40
    repeat_penalty: float = 1.1
    max_tokens: int = 1024
    seed: int | None = None
    stop: tuple[str, ...] = field(default_factory=tuple)
