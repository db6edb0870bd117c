"""llama.cpp through llama-cpp-python: a GGUF model on this machine.

The chat template is the GGUF's own (``tokenizer.chat_template`` metadata, applied by llama-cpp-python's
``Jinja2ChatFormatter``). llama-cpp-python already holds back incomplete UTF-8 sequences and partial stop
strings while streaming, so every chunk is whole text.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from app.core.provenance import default_hash_cache, model_file_facts
from app.core.types import Chunk, GenerationParams
from app.engine.base import (
    ContextOverflowError,
    EngineError,
    EngineNotLoadedError,
    InvalidModelError,
    ProgressCallback,
)
from app.engine.models import check_gguf, display_name

log = logging.getLogger("brook.engine.llama")

#: Default context window (tokens). SmolLM2 was trained with 8,192; 4,096 keeps the KV cache small on a CPU.
DEFAULT_N_CTX = 4096
#: Tokens a chat template adds around each message (ChatML: ``<|im_start|>role\n`` … ``<|im_end|>\n`` = 5;
#: rounded up for templates with longer markers).
MESSAGE_OVERHEAD_TOKENS = 8


class LlamaEngine:
    """One GGUF model loaded with llama-cpp-python. One generation at a time (``max_concurrency == 1``):
    a ``Llama`` context is not thread-safe; the scheduler serialises requests."""

    max_concurrency = 1

    def __init__(self, model_path: str | Path, *, n_ctx: int = DEFAULT_N_CTX, n_threads: int | None = None,
                 n_gpu_layers: int = 0, slow_ms: float = 0.0) -> None:
        self.model_path = Path(model_path)
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.n_gpu_layers = n_gpu_layers
        self.slow_ms = slow_ms
        self._llm: Any = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return display_name(self.model_path)

    @property
    def loaded(self) -> bool:
        return self._llm is not None

    def load(self, progress: ProgressCallback | None = None) -> None:
        """Load the model (blocking, seconds for a large file). Raises ``ModelNotFoundError`` or
        ``InvalidModelError`` with a readable message."""
        path = check_gguf(self.model_path)
        if progress:
            progress(0.0)
        try:
            from llama_cpp import Llama
        except ImportError as exc:  # pragma: no cover - dependency missing
            raise EngineError(f"llama-cpp-python is not installed: {exc}") from exc
        try:
            llm = Llama(model_path=str(path), n_ctx=self.n_ctx, n_threads=self.n_threads,
                        n_gpu_layers=self.n_gpu_layers, verbose=False)
        except (ValueError, RuntimeError, OSError) as exc:
            raise InvalidModelError(
                f"llama.cpp could not load the model: {path.name} is truncated, corrupt or of an "
                f"unsupported architecture ({exc})."
            ) from exc
        with self._lock:
            self._llm = llm
        default_hash_cache().start(path)      # SHA-256 for provenance, once per file, in the background
        if progress:
            progress(1.0)
        log.info("loaded %s (n_ctx=%d)", path, self.n_ctx)

    @property
    def metadata(self) -> dict[str, str]:
        return dict(self._llm.metadata) if self._llm is not None else {}

    def provenance(self) -> dict[str, Any]:
        """Model file facts for a reply's provenance (``app.core.provenance.model_file_facts``); the chat
        template is the GGUF's own ``tokenizer.chat_template`` or llama-cpp-python's named fallback format."""
        llm = self._llm
        template = None
        if llm is not None:
            fmt = getattr(llm, "chat_format", None)
            if fmt == "chat_template.default":        # llama-cpp-python renders the GGUF's own Jinja template
                template = "GGUF tokenizer.chat_template"
            else:                                     # a built-in format (guessed from the template, or default)
                template = f"llama-cpp-python format {fmt or 'llama-2'}"
        return model_file_facts(self.model_path, default_hash_cache(), template)

    def stream(self, messages: Sequence[Mapping[str, str]], params: GenerationParams,
               stop: threading.Event) -> Iterator[Chunk]:
        """Yield chunks of the reply; checks ``stop`` between tokens (decode). Prefill happens inside the first
        ``next()`` and cannot be interrupted. Raises ``ContextOverflowError`` when the prompt does not fit."""
        llm = self._llm
        if llm is None:
            raise EngineNotLoadedError("The model is not loaded yet.")
        messages = self.fit_context(messages, params)
        sampling: dict[str, Any] = dict(stream=True, temperature=params.temperature, top_p=params.top_p,
                                        top_k=params.top_k, min_p=params.min_p,
                                        repeat_penalty=params.repeat_penalty, max_tokens=params.max_tokens)
        if params.seed is not None:
            sampling["seed"] = params.seed
        if messages and messages[-1].get("role") == "assistant":
            prompt, template_stop = self._continue_prompt(llm, messages)
            stops = [*template_stop, *params.stop]
            if stops:
                sampling["stop"] = stops
            completions = llm.create_completion(prompt=prompt, **sampling)
            yield from self._completion_chunks(llm, completions, stop)
            return
        if params.stop:
            sampling["stop"] = list(params.stop)
        kwargs: dict[str, Any] = dict(messages=messages, **sampling)
        pause = self.slow_ms / 1000.0
        abort = self._set_abort(llm, stop)
        it = llm.create_chat_completion(**kwargs)
        try:
            while not stop.is_set():
                try:
                    ev = next(it)
                except StopIteration:
                    return
                except RuntimeError:
                    if stop.is_set():      # llama_decode aborted by Stop during prefill
                        llm.reset()        # llama.cpp dropped this sequence's KV entries: forget them too
                        return
                    raise
                except ValueError as exc:
                    if "context window" in str(exc) or "exceed" in str(exc):
                        raise ContextOverflowError(
                            f"The conversation is too long for the model's context window ({self.n_ctx} tokens). "
                            "Start a new chat or shorten the message."
                        ) from None
                    raise
                if abort is not None:      # prefill is over: decode checks ``stop`` between tokens instead
                    self._clear_abort(llm)
                    abort = None
                choice = ev["choices"][0]
                text = choice.get("delta", {}).get("content") or ""
                finish = choice.get("finish_reason")
                if not text and not finish:
                    continue  # the role-only first delta
                if pause and text and stop.wait(pause):
                    return
                yield Chunk(text, 1 if text else 0, finish)
        finally:
            if abort is not None:
                self._clear_abort(llm)
            it.close()

    @staticmethod
    def _continue_prompt(llm: Any, messages: Sequence[Mapping[str, str]]) -> tuple[str, list[str]]:
        """Continue: the raw prompt that ends inside the assistant's turn, i.e. the chat template applied to the
        messages before the last (with the generation prompt) followed by the partial reply's text, so the model
        goes on from where it stopped. Needs the GGUF's own template; returns the prompt and the template's stop
        strings. Raises ``EngineError`` for a model without one."""
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        template = (llm.metadata or {}).get("tokenizer.chat_template")
        if not template:
            raise EngineError("Continue needs the model's own chat template, and this GGUF has none. "
                              "Regenerate the reply instead.")
        eos_id, bos_id = llm.token_eos(), llm.token_bos()
        eos = llm._model.token_get_text(eos_id) if eos_id != -1 else ""
        bos = llm._model.token_get_text(bos_id) if bos_id != -1 else ""
        formatter = Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos, stop_token_ids=[eos_id])
        head = [dict(m) for m in messages[:-1]]
        result = formatter(messages=head)  # type: ignore[arg-type]
        stop = result.stop if isinstance(result.stop, list) else [result.stop] if result.stop else []
        return result.prompt + messages[-1].get("content", ""), stop

    def _completion_chunks(self, llm: Any, it: Any, stop: threading.Event) -> Iterator[Chunk]:
        """Chunks of a raw ``create_completion`` stream (the continue path), with Stop and prefill abort as in
        ``stream``."""
        abort = self._set_abort(llm, stop)
        pause = self.slow_ms / 1000.0
        try:
            while not stop.is_set():
                try:
                    ev = next(it)
                except StopIteration:
                    return
                except RuntimeError:
                    if stop.is_set():
                        llm.reset()
                        return
                    raise
                if abort is not None:
                    self._clear_abort(llm)
                    abort = None
                choice = ev["choices"][0]
                text, finish = choice.get("text") or "", choice.get("finish_reason")
                if not text and not finish:
                    continue
                if pause and text and stop.wait(pause):
                    return
                yield Chunk(text, 1 if text else 0, finish)
        finally:
            if abort is not None:
                self._clear_abort(llm)
            it.close()

    @staticmethod
    def _set_abort(llm: Any, stop: threading.Event) -> Any:
        """Make prefill interruptible: llama.cpp calls an abort callback between the nodes of its compute graph
        (``llama_set_abort_callback``); ours returns ``stop.is_set()``, so Stop during a long prefill returns
        within one graph node (~10 ms measured here) instead of after the whole prompt. Installed for prefill
        only: during decode it would cost a GIL round trip per graph node (hundreds per token). Returns the
        ctypes callback (kept alive by the caller), or None if this llama-cpp-python has no such hook."""
        try:
            import llama_cpp

            callback = llama_cpp.ggml_abort_callback(lambda _data: stop.is_set())
            llama_cpp.llama_set_abort_callback(llm._ctx.ctx, callback, None)
        except (AttributeError, TypeError):   # private API moved: prefill stays uninterruptible
            log.debug("llama_set_abort_callback unavailable; prefill cannot be interrupted")
            return None
        return callback

    @staticmethod
    def _clear_abort(llm: Any) -> None:
        import ctypes

        import llama_cpp

        llama_cpp.llama_set_abort_callback(llm._ctx.ctx, ctypes.cast(None, llama_cpp.ggml_abort_callback), None)

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` under this model's vocabulary (special tokens parsed, no BOS)."""
        if self._llm is None:
            raise EngineNotLoadedError("The model is not loaded yet.")
        return len(self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def prompt_tokens(self, messages: Sequence[Mapping[str, str]]) -> int:
        """Tokens of the prompt ``stream`` would send for ``messages`` (after ``fit_context``): the chat template
        applied with the generation prompt, tokenized as llama-cpp-python does (BOS added, special tokens
        parsed). Uses the GGUF's own template; without one, the per-message estimate of ``fit_context``."""
        llm = self._llm
        if llm is None:
            raise EngineNotLoadedError("The model is not loaded yet.")
        msgs = [dict(m) for m in messages]
        if not (llm.metadata or {}).get("tokenizer.chat_template") or \
                getattr(llm, "chat_format", None) != "chat_template.default":
            return sum(self.count_tokens(m.get("content", "")) + MESSAGE_OVERHEAD_TOKENS for m in msgs)
        prompt, _stop = self._continue_prompt(llm, [*msgs, {"role": "assistant", "content": ""}])
        return len(llm.tokenize(prompt.encode("utf-8"), add_bos=True, special=True))

    def fit_context(self, messages: Sequence[Mapping[str, str]], params: GenerationParams) -> list[dict[str, str]]:
        """The most recent messages that fit the context window with room for the reply (a rolling window).

        Budget: ``n_ctx`` − reply reserve (``min(max_tokens, n_ctx // 4)`` tokens) − ``MESSAGE_OVERHEAD_TOKENS``
        per message for the chat template's role markers. A system message is always kept; older messages are
        left out first (logged), never the last one: a last message that alone does not fit is passed on and
        llama.cpp's refusal becomes ``ContextOverflowError``. The conversation itself is not changed.
        """
        msgs = [dict(m) for m in messages]
        if not msgs:
            return msgs
        reserve = min(params.max_tokens, self.n_ctx // 4)
        budget = self.n_ctx - reserve
        head = [msgs.pop(0)] if msgs[0].get("role") == "system" else []
        used = sum(self.count_tokens(m.get("content", "")) + MESSAGE_OVERHEAD_TOKENS for m in head)
        kept: list[dict[str, str]] = []
        for m in reversed(msgs):
            cost = self.count_tokens(m.get("content", "")) + MESSAGE_OVERHEAD_TOKENS
            if kept and used + cost > budget:
                break
            used += cost
            kept.append(m)
        kept.reverse()
        dropped = len(msgs) - len(kept)
        if dropped:
            log.warning("context window: left out the %d oldest message(s) to fit %d tokens", dropped, self.n_ctx)
        return head + kept

    def unload(self) -> None:
        """Free the model and its KV cache (``Llama.close()``). Idempotent."""
        with self._lock:
            llm, self._llm = self._llm, None
        if llm is not None:
            try:
                llm.close()
            except Exception:  # pragma: no cover
                log.exception("closing the model failed")
            log.info("unloaded %s", self.model_path)


def default_threads() -> int:
    """Decode threads: physical-ish cores (``os.cpu_count()``), at least 1."""
    return max(1, os.cpu_count() or 1)
