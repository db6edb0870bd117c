"""llama.cpp through llama-cpp-python: a GGUF model on this machine.

The chat template is the GGUF's own (``tokenizer.chat_template`` metadata, rendered by llama-cpp-python's
``Jinja2ChatFormatter``); ``app.engine.chat_prompt`` tokenizes it so that message contents never become special
tokens, and the prompt's tokens go to ``Llama.create_completion``. llama-cpp-python already holds back incomplete
UTF-8 sequences and partial stop strings while streaming, so every chunk is whole text.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from app.core.render.markdown.thinking import THINK_OPEN, ReasoningNormalizer, token_text
from app.core.streaming.provenance import default_hash_cache, model_file_facts
from app.core.types import Chunk, GenerationParams
from app.engine.base import (
    ContextOverflowError,
    EngineError,
    EngineNotLoadedError,
    InvalidModelError,
    LoadCancelled,
    ProgressCallback,
)
from app.engine.chat_prompt import ChatPrompt, Prompt
from app.engine.load_progress import loading_with_progress
from app.engine.model_users import ModelUsers
from app.engine.models import check_gguf, display_name
from app.engine.native_abort import NativeAbort

log = logging.getLogger("brook.engine.llama")

#: Default context window (tokens). SmolLM2 was trained with 8,192; 4,096 keeps the KV cache small on a CPU.
DEFAULT_N_CTX = 4096
#: Tokens a chat template adds around each message (ChatML: ``<|im_start|>role\n`` … ``<|im_end|>\n`` = 5;
#: rounded up for templates with longer markers). Only a first guess: the kept messages are then measured.
MESSAGE_OVERHEAD_TOKENS = 8
#: The prompt ``fit_context`` built is sent by a ``stream`` of the same messages that starts within this many
#: seconds (the reply right after its fit: milliseconds); later, the chat template is rendered again (a template
#: may print today's date).
FIT_REUSE_S = 5.0


class FittedMessages(list[dict[str, str]]):
    """The messages ``LlamaEngine.fit_context`` kept (a list), with ``left_out``: how many older messages of
    the chat were left out to fit the context window, and ``prompt_tokens``: the prompt's size in tokens."""

    left_out: int = 0
    prompt_tokens: int = 0
    n_ctx: int = 0


class LlamaEngine:
    """One GGUF model loaded with llama-cpp-python. One generation at a time (``max_concurrency == 1``):
    a ``Llama`` context is not thread-safe; the scheduler serialises requests."""

    max_concurrency = 1

    def __init__(self, model_path: str | Path, *, n_ctx: int = DEFAULT_N_CTX, n_threads: int | None = None,
                 n_gpu_layers: int = -1, chat_template: str | None = None) -> None:
        self.model_path = Path(model_path)
        self.chat_template = chat_template    # None: the GGUF's own
        self._prompt: ChatPrompt | None = None
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.n_gpu_layers = n_gpu_layers     # asked for: ≥ 0 layers, or -1 = as many as fit (app.engine.backends)
        self.gpu_layers = 0                  # what the last load gave llama.cpp
        self._llm: Any = None
        self._abort: NativeAbort | None = None   # the context's native abort flag, when installed (``load``)
        self._lock = threading.Lock()
        #: tokenizer calls running in other threads (the context meter, attachments); ``unload`` waits for them
        self._users = ModelUsers(self._lock)
        #: (messages as a key, monotonic time, Prompt): the prompt the last ``fit_context`` measured
        self._fitted_prompt: tuple[tuple[Any, ...], float, Prompt] | None = None

    @property
    def name(self) -> str:
        return display_name(self.model_path)

    @property
    def loaded(self) -> bool:
        return self._llm is not None

    def load(self, progress: ProgressCallback | None = None) -> None:
        """Load the model (blocking, seconds for a large file), reporting llama.cpp's own progress (0..1) to
        ``progress``. Raises ``ModelNotFoundError`` or ``InvalidModelError`` with a readable message, and
        ``LoadCancelled`` when ``progress`` raised it (llama.cpp aborts its loader; nothing stays loaded)."""
        path = check_gguf(self.model_path)
        if progress:
            progress(0.0)
        Llama = import_llama()
        from app.engine.backends import gpu_layers_for

        with loading_with_progress(progress) as watch:      # llama.cpp's own progress; False from it aborts
            params = self.load_params()
            params["n_gpu_layers"] = gpu_layers = gpu_layers_for(self.n_gpu_layers, path, self.n_ctx)
            try:
                try:
                    llm = Llama(model_path=str(path), **params)
                except (ValueError, RuntimeError, OSError) as exc:
                    if gpu_layers == 0 or watch.cancelled is not None:
                        raise
                    log.warning("loading %s with %d layers on the GPU failed (%s); loading it on the CPU",
                                path.name, gpu_layers, exc)
                    params["n_gpu_layers"] = gpu_layers = 0
                    llm = Llama(model_path=str(path), **params)
            except (ValueError, RuntimeError, OSError) as exc:
                if watch.cancelled is not None:
                    log.info("loading %s cancelled after %d progress callbacks", path, watch.calls)
                    raise watch.cancelled from None
                detail = str(exc).strip().rstrip(".")
                raise InvalidModelError(
                    f"llama.cpp could not load the model: {path.name} is truncated, corrupt or of an "
                    f"unsupported architecture ({detail})."
                ) from exc
        try:
            prompt = ChatPrompt(llm, self.chat_template)
            if progress:
                progress(1.0)           # a Cancel that came after llama.cpp's last callback: dropped here
        except LoadCancelled:
            llm.close()
            raise
        except Exception as exc:
            llm.close()
            raise InvalidModelError(f"The chat template of {path.name} cannot be used: {exc}") from exc
        abort = NativeAbort()
        try:
            installed = abort.install(llm._ctx.ctx)
        except (AttributeError, TypeError, ctypes.ArgumentError):   # private API moved: Stop waits for the token
            installed = False
        with self._lock:
            self._llm = llm
            self._prompt = prompt
            self._abort = abort if installed else None
            self.gpu_layers = gpu_layers
        default_hash_cache().start(path)      # SHA-256 for provenance, once per file, in the background
        log.info("loaded %s (n_ctx=%d)", path, self.n_ctx)

    def load_params(self) -> dict[str, Any]:
        """The keyword arguments ``load`` gives ``llama_cpp.Llama`` besides the model path (one place to add
        a load option)."""
        return {"n_ctx": self.n_ctx, "n_threads": self.n_threads, "n_gpu_layers": self.n_gpu_layers,
                "verbose": False}

    @property
    def metadata(self) -> dict[str, str]:
        return dict(self._llm.metadata) if self._llm is not None else {}

    def runtime(self) -> dict[str, Any]:
        """What the loaded model runs on: ``cpu_variant`` (llama.cpp's CPU module, ``app.engine.backends``),
        ``backend`` (``CPU`` or the GPU device's ggml name, e.g. ``Vulkan0``), ``device`` (that device's
        description), ``gpu_layers`` (layers offloaded, of ``n_layers`` + the output layer; 0 on the CPU).
        Empty before ``load`` (and after ``unload``)."""
        from app.engine.backends import load_backends

        try:
            with self._reading():                   # the model is not freed while its layers are counted
                n_layers = _n_layers(self._llm)
        except EngineNotLoadedError:
            return {}
        found = load_backends()
        gpus = found.gpus()
        offloaded = min(self.gpu_layers, n_layers + 1) if gpus else 0
        dev = gpus[0] if offloaded else next((d for d in found.devices if d.kind == "cpu"), None)
        return {"cpu_variant": found.cpu_variant, "backend": dev.name if dev is not None else "CPU",
                "device": dev.description if dev is not None else None, "gpu_layers": offloaded,
                "n_layers": n_layers}

    def provenance(self) -> dict[str, Any]:
        """Model file facts for a reply's provenance (``app.core.streaming.provenance.model_file_facts``); the chat
        template is the GGUF's own ``tokenizer.chat_template``, one given to the engine, or ChatML (see
        ``app.engine.chat_prompt``)."""
        chat = self._prompt
        template = chat.source if chat is not None else None
        return model_file_facts(self.model_path, default_hash_cache(), template)

    def stream(self, messages: Sequence[Mapping[str, str]], params: GenerationParams,
               stop: threading.Event, on_prompt: Callable[[int], None] | None = None) -> Iterator[Chunk]:
        """Yield chunks of the reply; checks ``stop`` between tokens (decode). Prefill happens inside the first
        ``next()``; ``stop`` aborts it (llama.cpp's abort callback). Raises ``ContextOverflowError`` when the
        prompt does not fit. ``on_prompt(n_tokens)`` is called once the chat template is rendered and the prompt
        tokenized, before prefill (the engine host reports that phase's end).

        When the chat template's generation prompt opened a reasoning section (``Prompt.reasoning_open``: it
        ends with ``<think>``), the first chunk's text starts with ``<think>`` (no token of its own): the reply's
        text is then what the model's turn holds, so it renders with its Thinking fold live and when reopened.
        A model whose template or vocabulary marks reasoning otherwise (``ChatPrompt.reasoning_format``:
        Magistral's ``[THINK]…[/THINK]``, gpt-oss harmony channels) has its markers turned into
        ``<think>…</think>`` here, so the stored reply keeps the reasoning in the form every view folds; marker
        tokens that detokenization drops (control tokens, ``ChatPrompt.reasoning_markers``) are written back where
        they were generated first."""
        llm, chat = self._llm, self._prompt
        if llm is None or chat is None:
            raise EngineNotLoadedError("The model is not loaded yet.")
        if not (isinstance(messages, FittedMessages) and messages.n_ctx == self.n_ctx):
            messages = self.fit_context(messages, params)
        prompt = self._take_fitted_prompt(messages) or chat.build(messages)
        if on_prompt is not None:
            on_prompt(len(prompt.tokens))
        dropped: list[str] = []        # marker tokens generated since the last event (their text is dropped)
        kwargs: dict[str, Any] = dict(prompt=prompt.tokens, stream=True, temperature=params.temperature,
                                      top_p=params.top_p, top_k=params.top_k, min_p=params.min_p,
                                      repeat_penalty=params.repeat_penalty, max_tokens=params.max_tokens,
                                      stop=list(params.stop),
                                      stopping_criteria=_watch_markers(prompt.stopping_criteria,
                                                                       chat.reasoning_markers, dropped))
        # The end-of-turn *token* ends the reply (llama.cpp's end-of-generation tokens, and the template's EOS
        # id in ``stopping_criteria``); its text is no stop string: a reply that quotes "<|im_end|>" goes on.
        if params.seed is not None:
            kwargs["seed"] = params.seed
        opening = THINK_OPEN if prompt.reasoning_open else ""
        # [THINK], harmony channels → <think>…</think>; marker tokens written back count, their text typed does not
        markers = ReasoningNormalizer(chat.reasoning_format, frozenset(chat.reasoning_markers.values()))
        native, unhook, abort = self._abort, None, None
        add_callback = getattr(stop, "add_callback", None)
        if native is not None and add_callback is not None:     # Stop ends prefill or the token being decoded
            native.clear()
            unhook = add_callback(native.set)
        else:                                                   # a plain Event: prefill only, from Python
            abort = self._set_abort(llm, stop)
        decoding = False
        it = llm.create_completion(**kwargs)
        try:
            while not stop.is_set():
                try:
                    ev = next(it)
                except StopIteration:
                    held = markers.finish()
                    if held:
                        yield Chunk(held, 0, None)
                    return
                except RuntimeError:
                    if stop.is_set():      # llama_decode aborted by Stop
                        if not decoding:   # in prefill: llama.cpp dropped this sequence's KV entries
                            llm.reset()
                        return             # in decode: only the aborted token's; what came before is kept
                    raise
                except ValueError as exc:
                    if "context window" in str(exc) or "exceed" in str(exc):
                        raise ContextOverflowError(
                            f"The conversation is too long for the model's context window ({self.n_ctx} tokens). "
                            "Start a new chat or shorten the message."
                        ) from None
                    raise
                decoding = True
                if abort is not None:      # prefill is over: decode checks ``stop`` between tokens instead
                    self._clear_abort(llm)
                    abort = None
                choice = ev["choices"][0]
                text = choice.get("text") or ""
                if dropped:                # markers generated before this event's text
                    text = "".join(dropped) + text
                    dropped.clear()
                finish = choice.get("finish_reason")
                if not text and not finish:
                    continue
                shown = markers.feed(opening + text) + (markers.finish() if finish else "")
                yield Chunk(shown, 1 if text else 0, finish)
                opening = ""
        finally:
            if abort is not None:
                self._clear_abort(llm)
            if unhook is not None:
                unhook()
            it.close()

    @staticmethod
    def _set_abort(llm: Any, stop: threading.Event) -> Any:
        """Make prefill interruptible when ``stop`` is a plain ``threading.Event`` (no ``add_callback`` to set
        the native flag, ``app.engine.native_abort``): llama.cpp calls an abort callback between the nodes of its
        compute graph (``llama_set_abort_callback``); this one returns ``stop.is_set()``, so Stop during a long
        prefill returns within one graph node (~10 ms measured here) instead of after the whole prompt. Installed
        for prefill only: during decode it would cost a GIL round trip per graph node (hundreds per token).
        Returns the ctypes callback (kept alive by the caller), or None if this llama-cpp-python has no such
        hook."""
        try:
            import llama_cpp

            callback = llama_cpp.ggml_abort_callback(lambda _data: stop.is_set())
            llama_cpp.llama_set_abort_callback(llm._ctx.ctx, callback, None)
        except (AttributeError, TypeError):   # private API moved: prefill stays uninterruptible
            log.debug("llama_set_abort_callback unavailable; prefill cannot be interrupted")
            return None
        return callback

    def _clear_abort(self, llm: Any) -> None:
        """Put the native flag back as the context's abort callback (or none)."""
        import llama_cpp

        if self._abort is not None:
            self._abort.install(llm._ctx.ctx)
        else:
            llama_cpp.llama_set_abort_callback(llm._ctx.ctx, llama_cpp.ggml_abort_callback(), None)   # NULL

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` under this model's vocabulary as message content: plain text (a special token's
        text counts as the ordinary tokens it becomes), no BOS."""
        with self._reading() as chat:
            return len(chat.text_tokens(text))

    def prompt_tokens(self, messages: Sequence[Mapping[str, str]]) -> int:
        """Tokens of the prompt ``stream`` would send for ``messages`` as they are (chat template, generation
        prompt, BOS), before any fitting: what a context meter shows. Messages ``fit_context`` returned were
        measured by it already (no second rendering)."""
        if isinstance(messages, FittedMessages) and messages.n_ctx == self.n_ctx:
            return messages.prompt_tokens
        with self._reading() as chat:
            return chat.count(messages)

    def fit_context(self, messages: Sequence[Mapping[str, str]], params: GenerationParams) -> FittedMessages:
        """The most recent messages that fit the context window with room for the reply (a rolling window).

        Budget: ``n_ctx`` − reply reserve (``min(max_tokens, n_ctx // 4)`` tokens), measured on the prompt as
        ``stream`` builds it (chat template included). A system message is always kept; older messages are
        left out first, a question together with its reply, so the rest still alternates user / assistant;
        never the last message: a last message that alone does not fit is passed on and llama.cpp's refusal
        becomes ``ContextOverflowError``. ``left_out`` on the result counts the messages left out (the window
        says so at the reply). The conversation itself is not changed.
        """
        with self._reading() as chat:
            return self._fit(chat, messages, params)

    def _fit(self, chat: ChatPrompt, messages: Sequence[Mapping[str, str]],
             params: GenerationParams) -> FittedMessages:
        msgs = [dict(m) for m in messages]
        reserve = min(params.max_tokens, self.n_ctx // 4)
        budget = self.n_ctx - reserve
        head = [msgs.pop(0)] if msgs and msgs[0].get("role") == "system" else []
        start = 0
        built: Prompt | None = chat.build(head + msgs) if msgs else None
        total = len(built.tokens) if built is not None else 0
        if total > budget:
            # first guess from the contents alone, then measure the real prompt and drop more while it is over
            used = sum(len(chat.text_tokens(m.get("content", ""))) + MESSAGE_OVERHEAD_TOKENS for m in head)
            start = len(msgs) - 1
            for i in range(len(msgs) - 1, -1, -1):
                used += len(chat.text_tokens(msgs[i].get("content", ""))) + MESSAGE_OVERHEAD_TOKENS
                if used > budget:
                    break
                start = i
            start = self._to_question(msgs, start)
            built = chat.build(head + msgs[start:])
            while len(built.tokens) > budget and start < len(msgs) - 1:
                start = self._to_question(msgs, start + 1)
                built = chat.build(head + msgs[start:])
            total = len(built.tokens)
        out = FittedMessages(head + msgs[start:])
        out.left_out, out.prompt_tokens, out.n_ctx = start, total, self.n_ctx
        if built is not None:        # the prompt just measured is the one ``stream`` sends: rendered once
            self._fitted_prompt = (_messages_key(out), time.monotonic(), built)
        if start:
            log.warning("context window: left out the %d oldest message(s) to fit %d tokens", start, self.n_ctx)
        return out

    def _take_fitted_prompt(self, messages: Sequence[Mapping[str, str]]) -> Prompt | None:
        """The prompt the last ``fit_context`` built when it was for exactly ``messages`` and within
        ``FIT_REUSE_S`` (taken: used once), else None."""
        kept, self._fitted_prompt = self._fitted_prompt, None
        if kept is None or time.monotonic() - kept[1] > FIT_REUSE_S or kept[0] != _messages_key(messages):
            return None
        return kept[2]

    @staticmethod
    def _to_question(msgs: list[dict[str, str]], start: int) -> int:
        """``start`` moved forward to the next user message (never past the last message)."""
        while start < len(msgs) - 1 and msgs[start].get("role") != "user":
            start += 1
        return start

    def _reading(self) -> contextlib.AbstractContextManager[ChatPrompt]:
        """The loaded model's ``ChatPrompt`` for one tokenizer call from any thread (``unload`` waits for it:
        ``app.engine.model_users``); ``EngineNotLoadedError`` when no model is loaded."""
        return self._users.using(lambda: self._prompt)

    def unload(self) -> None:
        """Free the model and its KV cache (``Llama.close()``). Idempotent. Tokenizer calls in other threads
        (``count_tokens``, ``prompt_tokens``, ``fit_context``) finish first; ones that start after it raise
        ``EngineNotLoadedError``. A reply's ``stream`` must have ended (the chat session and the engine host
        wait for their workers before they unload)."""
        with self._lock:
            llm, self._llm = self._llm, None
            self._prompt = None
            self._abort = None
            self._users.wait_idle()
        if llm is not None:
            try:
                llm.close()
            except Exception:  # pragma: no cover
                log.exception("closing the model failed")
            log.info("unloaded %s", self.model_path)


def _n_layers(llm: Any) -> int:
    """The model's layer count (``llama_model_n_layer``); 0 when this llama-cpp-python's private API moved."""
    try:
        import llama_cpp

        return int(llama_cpp.llama_model_n_layer(llm._model.model))
    except (AttributeError, TypeError):
        return 0


def _messages_key(messages: Sequence[Mapping[str, str]]) -> tuple[Any, ...]:
    """A hashable, comparable copy of ``messages`` (every field of every message, in order)."""
    return tuple(tuple(sorted(m.items())) for m in messages)


def import_llama() -> Any:
    """``llama_cpp.Llama``; an ``EngineError`` that says what to do when llama-cpp-python or its llama.cpp
    shared library is missing or cannot be loaded (a raw ``FileNotFoundError``/``OSError`` otherwise)."""
    try:
        from llama_cpp import Llama
    except ImportError as exc:
        raise EngineError(f"llama-cpp-python is not installed ({exc}). Install it with: "
                          "pip install llama-cpp-python") from exc
    except (OSError, RuntimeError) as exc:    # FileNotFoundError: "Shared library with base name 'llama' …"
        raise EngineError(f"llama.cpp's shared library could not be loaded ({str(exc).rstrip('.')}). Reinstall "
                          "llama-cpp-python (pip install --force-reinstall llama-cpp-python), or check "
                          "LLAMA_CPP_LIB_PATH.") from exc
    return Llama


#: Machines with at most this many physical cores keep one of them for the window (see ``default_threads``).
SMALL_MACHINE_CORES = 8


def physical_cores() -> int:
    """Physical CPU cores this process may use: distinct (package, core) pairs of ``/proc/cpuinfo`` among the
    CPUs of its affinity mask on Linux; elsewhere ``os.cpu_count()`` (logical CPUs). At least 1."""
    logical = os.cpu_count() or 1
    try:
        allowed = os.sched_getaffinity(0)
        text = Path("/proc/cpuinfo").read_text(encoding="ascii", errors="replace")
    except (AttributeError, OSError):
        return max(1, logical)
    cores: set[tuple[str, str]] = set()
    cpu, package, core = -1, "0", None
    for line in [*text.splitlines(), ""]:
        key, _, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if key == "processor":
            cpu = int(value) if value.isdigit() else -1
        elif key == "physical id":
            package = value
        elif key == "core id":
            core = value
        elif not key:                        # end of one CPU's block
            if cpu in allowed:
                cores.add((package, core if core is not None else str(cpu)))
            cpu, package, core = -1, "0", None
    return max(1, len(cores) or len(allowed) or logical)


def default_threads() -> int:
    """Decode threads when the settings say "automatic": the physical cores (``physical_cores``), minus one on a
    machine with at most ``SMALL_MACHINE_CORES`` of them, so the window keeps a core to paint the tokens with
    (decode is memory-bound: a thread per physical core is all llama.cpp can use). At least 1."""
    cores = physical_cores()
    return max(1, cores - 1 if cores <= SMALL_MACHINE_CORES else cores)


def _watch_markers(criteria: Any, markers: dict[int, str], dropped: list[str]) -> Any:
    """``criteria`` (the template's stopping criteria, or None) with a watcher in front that notes each generated
    marker token of ``markers`` (id → text) in ``dropped``. llama-cpp-python calls stopping criteria once per
    sampled token with the tokens evaluated so far, so the watcher sees each generated token one call later —
    before the text of the token after it is yielded: the engine puts the marker's text in front of that text.
    Returns ``criteria`` itself when there is nothing to watch."""
    if not markers:
        return criteria
    import llama_cpp

    seen = [-1]                                # tokens evaluated at the last call (-1: none yet)

    def watch(input_ids: Any, _logits: Any) -> bool:
        n = len(input_ids)
        if seen[0] >= 0 and n > seen[0]:       # a new token (the first call sees the prompt's last; the
            text = markers.get(int(input_ids[-1]))   # completion's closing call sees the same tokens again)
            if text is not None:
                dropped.append(token_text(text))
        seen[0] = n
        return False

    return llama_cpp.StoppingCriteriaList([watch, *(criteria or [])])
