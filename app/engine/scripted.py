"""A deterministic engine: a fixed script of chunks at a set token rate.

For tests, benchmarks and demos (``--scripted``). Token *i* is due at ``t0 + prefill_s + i / tokens_per_s``
(a deadline schedule, so per-token overhead and sleep jitter do not accumulate into a lower rate). It can fail
after a given number of chunks, and it can emit text the way a byte-level tokenizer does: either decoded
incrementally by the engine (``byte_chunks``, as llama-cpp-python does) or as raw bytes split inside
multi-byte characters (``raw_bytes``) for the streaming core to decode.
"""

from __future__ import annotations

import codecs
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence

from app.core.render.markdown.thinking import FORMAT_THINK, ReasoningNormalizer
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


ScriptItem = str | bytes | Chunk


class ScriptedEngine:
    """Replays ``script`` (a list of chunk texts, raw byte pieces or ``Chunk``s, or a whole text cut into
    pseudo-tokens of 4 characters).

    - ``tokens_per_s``: decode rate (0 = as fast as possible), paced by deadline;
    - ``prefill_s``: delay before the first token (seconds; like llama.cpp's prefill, not interruptible);
    - ``fail_after``: raise ``fail_with(n)`` (default an ``EngineError``) after that many chunks;
    - ``byte_chunks``: emit the UTF-8 bytes of the script in pieces of this many bytes, decoded incrementally
      by the engine (never yields U+FFFD for split characters);
    - ``raw_bytes``: emit the UTF-8 bytes in pieces of this many bytes as ``Chunk.raw`` (undecoded; the
      streaming core must reassemble split characters);
    - ``repeat``: how many times the script is replayed within one reply; ``params.max_tokens`` still caps it;
    - ``load_s``: ``load()`` takes this long (seconds), reporting progress in 10 steps;
    - ``reasoning_open``: behave like a model whose chat template's generation prompt opened ``<think>``
      (Qwen3-Thinking, R1 distills; see ``LlamaEngine.stream``): the first chunk's text starts with ``<think>``,
      so a script ``"…</think>answer"`` is a reply that only closes its reasoning;
    - ``reasoning_format``: the reasoning markers the script writes, as a model's chat template would say
      (``app.core.render.markdown.thinking``: ``"mistral"`` ``[THINK]…[/THINK]``, ``"harmony"`` gpt-oss channels);
      the reply's text has them as ``<think>…</think>``, as ``LlamaEngine.stream`` gives them.

    ``calls`` keeps the last 32 prompts and ``last_params`` the last parameters (for tests); ``n_calls`` counts
    them all; ``active`` / ``max_active`` count concurrent generations; ``last_stop_t`` is when the last
    generation saw its stop event (``perf_counter`` seconds).
    """

    max_concurrency = 1

    def __init__(self, script: Sequence[ScriptItem] | str | None = None, *, tokens_per_s: float = 50.0,
                 prefill_s: float = 0.0, fail_after: int | None = None, byte_chunks: int | None = None,
                 name: str = "scripted", max_concurrency: int = 1, load_s: float = 0.0,
                 repeat: int = 1, raw_bytes: int | None = None,
                 fail_with: Callable[[int], BaseException] | None = None, reasoning_open: bool = False,
                 reasoning_format: str = FORMAT_THINK) -> None:
        if script is None:
            script = DEFAULT_REPLY
        self.script: list[ScriptItem] = list(split_tokens(script)) if isinstance(script, str) else list(script)
        self.tokens_per_s = tokens_per_s
        self.prefill_s = prefill_s
        self.fail_after = fail_after
        self.fail_with = fail_with
        self.byte_chunks = byte_chunks
        self.raw_bytes = raw_bytes
        self._name = name
        self.max_concurrency = max_concurrency
        self.load_s = load_s
        self.repeat = repeat
        self.reasoning_open = reasoning_open
        self.reasoning_format = reasoning_format
        self._loaded = False
        self.calls: deque[list[dict[str, str]]] = deque(maxlen=32)   # the last prompts it was given (tests)
        self.last_params: GenerationParams | None = None              # and the last sampling parameters
        self.n_calls = 0
        self.active = 0                               # generations running right now
        self.max_active = 0
        self.last_stop_t: float | None = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self._name

    @property
    def loaded(self) -> bool:
        return self._loaded

    @property
    def text(self) -> str:
        """The whole text one pass of the script produces, as the streaming core delivers it: raw bytes are
        decoded incrementally across items (a character split over two items is one character), each chunk's
        ``text`` before its ``raw``; bytes still incomplete at the end become U+FFFD."""
        dec = codecs.getincrementaldecoder("utf-8")("replace")
        out: list[str] = []
        for item in self.script:
            if isinstance(item, Chunk):
                out.append(item.text + dec.decode(item.raw))
            elif isinstance(item, bytes):
                out.append(dec.decode(item))
            else:
                out.append(item)
        out.append(dec.decode(b"", final=True))
        return "".join(out)

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

    def _pieces(self) -> Iterator[Chunk]:
        for _ in range(self.repeat):
            if self.byte_chunks or self.raw_bytes:
                data = self.text.encode("utf-8")
                if self.raw_bytes:
                    n = self.raw_bytes
                    for i in range(0, len(data), n):
                        yield Chunk("", 1, None, data[i:i + n])
                else:
                    assert self.byte_chunks
                    n = self.byte_chunks
                    dec = codecs.getincrementaldecoder("utf-8")()
                    for i in range(0, len(data), n):
                        yield Chunk(dec.decode(data[i:i + n]))
                    tail = dec.decode(b"", final=True)
                    if tail:
                        yield Chunk(tail)
            else:
                for item in self.script:
                    if isinstance(item, Chunk):
                        yield item
                    elif isinstance(item, bytes):
                        yield Chunk("", 1, None, item)
                    else:
                        yield Chunk(item)

    def stream(self, messages: Sequence[Mapping[str, str]], params: GenerationParams,
               stop: threading.Event) -> Iterator[Chunk]:
        """Yield the script as chunks at ``tokens_per_s``; returns within one token interval of ``stop``
        (it waits on the event, not with ``sleep``). The last chunk carries ``finish_reason`` "length" when
        ``params.max_tokens`` cut it, else an empty chunk with "stop" ends it."""
        if not self._loaded:
            raise EngineNotLoadedError("The model is not loaded yet.")
        self.calls.append([dict(m) for m in messages])
        self.last_params = params
        self.n_calls += 1
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
            continuing = bool(messages) and messages[-1].get("role") == "assistant"   # Continue: opened already
            opening = "<think>" if self.reasoning_open and not continuing else ""
            markers = ReasoningNormalizer(self.reasoning_format)
            for piece in self._pieces():
                if stop.is_set():
                    self.last_stop_t = time.perf_counter()
                    return
                if self.fail_after is not None and n >= self.fail_after:
                    if self.fail_with is not None:
                        raise self.fail_with(n)
                    raise EngineError(f"Scripted failure after {n} chunks.")
                if interval:
                    delay = t0 + n * interval - time.perf_counter()
                    if delay > 0 and stop.wait(delay):
                        self.last_stop_t = time.perf_counter()
                        return
                n += 1
                last = n >= limit
                text = markers.feed(opening + piece.text)
                if last:
                    text += markers.finish()
                yield Chunk(text, piece.n_tokens, "length" if last else piece.finish_reason, piece.raw)
                opening = ""
                if last:
                    return
            yield Chunk(opening + markers.finish(), 0, "stop")
        finally:
            with self._lock:
                self.active -= 1
