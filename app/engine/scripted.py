"""A deterministic engine: a fixed script of chunks at a set token rate.

For tests, benchmarks and demos. Token *i* is due at ``t0 + prefill_s + i / tokens_per_s`` (a deadline
schedule, so per-token overhead does not accumulate into a lower rate). It can fail after a given number of
chunks, and it can emit text the way a byte-level tokenizer does (UTF-8 split inside characters, decoded
incrementally as llama-cpp-python does) to exercise multi-byte handling.
"""

from __future__ import annotations

import codecs
import threading
import time
from collections.abc import Iterator, Mapping, Sequence

from app.core.types import Chunk, GenerationParams
from app.engine.base import EngineError, EngineNotLoadedError, ProgressCallback

#: Text used when no script is given: mixed markdown (a heading, a list, code) repeated.
DEFAULT_REPLY = (
    "Sure! Here is a short answer.\n\n## Steps\n\n1. Read the input.\n2. Reverse it with slicing.\n\n"
    "```python\ndef reverse(s: str) -> str:\n    return s[::-1]\n```\n\nThat is all: `reverse('abc')` "
    "returns `'cba'`.\n"
)


def split_tokens(text: str, chars_per_token: int = 4) -> list[str]:
    """Cut ``text`` into pseudo-tokens of ``chars_per_token`` characters (a common rule of thumb for English
    BPE vocabularies: ~4 characters per token)."""
    return [text[i:i + chars_per_token] for i in range(0, len(text), chars_per_token)]


class ScriptedEngine:
    """Replays ``script`` (a list of chunk texts, or a whole text cut into pseudo-tokens).

    ``tokens_per_s``: decode rate (0 = as fast as possible); ``prefill_s``: delay before the first token;
    ``fail_after``: raise ``EngineError`` after that many chunks; ``byte_chunks``: emit the UTF-8 bytes of the
    script in pieces of this many bytes, decoded incrementally (never yields U+FFFD for split characters).
    ``repeat``: how many times the script is replayed within one reply.
    """

    max_concurrency = 1

    def __init__(self, script: Sequence[str] | str | None = None, *, tokens_per_s: float = 50.0,
                 prefill_s: float = 0.0, fail_after: int | None = None, byte_chunks: int | None = None,
                 name: str = "scripted", max_concurrency: int = 1, load_s: float = 0.0,
                 repeat: int = 1) -> None:
        if script is None:
            script = DEFAULT_REPLY
        self.script: list[str] = split_tokens(script) if isinstance(script, str) else list(script)
        self.tokens_per_s = tokens_per_s
        self.prefill_s = prefill_s
        self.fail_after = fail_after
        self.byte_chunks = byte_chunks
        self._name = name
        self.max_concurrency = max_concurrency
        self.load_s = load_s
        self.repeat = repeat
        self._loaded = False
        self.calls: list[list[dict[str, str]]] = []   # the prompts it was given (for tests)
        self.active = 0                               # generations running right now
        self.max_active = 0
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self._name

    @property
    def loaded(self) -> bool:
        return self._loaded

    def load(self, progress: ProgressCallback | None = None) -> None:
        steps = 10
        for i in range(steps + 1):
            if progress:
                progress(i / steps)
            if self.load_s and i < steps:
                time.sleep(self.load_s / steps)
        self._loaded = True

    def unload(self) -> None:
        self._loaded = False

    def _pieces(self) -> Iterator[str]:
        for _ in range(self.repeat):
            if self.byte_chunks:
                data = "".join(self.script).encode("utf-8")
                dec = codecs.getincrementaldecoder("utf-8")()
                for i in range(0, len(data), self.byte_chunks):
                    yield dec.decode(data[i:i + self.byte_chunks])
                tail = dec.decode(b"", final=True)
                if tail:
                    yield tail
            else:
                yield from self.script

    def stream(self, messages: Sequence[Mapping[str, str]], params: GenerationParams,
               stop: threading.Event) -> Iterator[Chunk]:
        if not self._loaded:
            raise EngineNotLoadedError("The model is not loaded yet.")
        self.calls.append([dict(m) for m in messages])
        with self._lock:
            self.active += 1
            self.max_active = max(self.max_active, self.active)
        try:
            t0 = time.perf_counter() + self.prefill_s
            if self.prefill_s:
                time.sleep(self.prefill_s)   # like llama.cpp's prefill: not interruptible
            interval = 1.0 / self.tokens_per_s if self.tokens_per_s > 0 else 0.0
            n = 0
            limit = params.max_tokens
            for piece in self._pieces():
                if stop.is_set():
                    return
                if self.fail_after is not None and n >= self.fail_after:
                    raise EngineError(f"Scripted failure after {n} chunks.")
                if interval:
                    delay = t0 + n * interval - time.perf_counter()
                    if delay > 0 and stop.wait(delay):
                        return
                n += 1
                last = n >= limit
                yield Chunk(piece, 1, "length" if last else None)
                if last:
                    return
            yield Chunk("", 0, "stop")
        finally:
            with self._lock:
                self.active -= 1
