"""Plain data shared by the engines and the streaming core (no Qt, no llama.cpp)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Chunk:
    """One piece of model output as an engine yields it.

    ``text`` is a decoded str delta (possibly empty); ``n_tokens`` is how many decode tokens produced it
    (1 for llama.cpp, possibly more for a remote server that batches SSE events); ``finish_reason`` is the
    stop reason on the last chunk ("stop", "length", …) and ``None`` otherwise. ``raw`` is for engines that
    can only give bytes (a byte-level tokenizer's pieces, a raw HTTP body): the streaming core decodes them
    incrementally, appending complete characters after ``text`` and holding back a character split across
    chunks until its last byte arrives (so a split never becomes U+FFFD).
    """

    text: str
    n_tokens: int = 1
    finish_reason: str | None = None
    raw: bytes = b""


@dataclass(frozen=True, slots=True)
class GenerationParams:
    """Sampling parameters for one reply.

    Defaults follow llama.cpp's sampler defaults (top_k 40, top_p 0.95, min_p 0.05, repeat penalty 1.0 = off,
    as in llama.cpp's ``common/common.h``) except temperature: 0.7, the usual chat default, instead of 0.8.
    ``max_tokens`` counts decode tokens; ``seed`` ``None`` means random (``generate`` then draws one and records
    it with the reply, so the reply can be reproduced); ``stop``: strings that end the reply (not included).
    """

    temperature: float = 0.7
    top_p: float = 0.95
    top_k: int = 40
    repeat_penalty: float = 1.0
    min_p: float = 0.05
    max_tokens: int = 1024
    seed: int | None = None
    stop: tuple[str, ...] = field(default_factory=tuple)
