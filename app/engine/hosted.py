"""A local GGUF model run in a child process (the engine host), behind the ``Engine`` protocol.

``HostedEngine`` is what ``app.engine.open`` opens for a local model: the window process keeps no llama.cpp
state at all. The host (``app.engine.host``) loads the model, renders the chat template, tokenizes, prefills
and decodes; here, in the window process, ``stream`` is the same blocking iterator of chunks as
``LlamaEngine.stream``, run by the streaming core's worker thread, which puts its chunks in the same bounded
queue. So the chat session, the server and the window do not know the difference — except that nothing the
engine does can take the window down:

- **Backpressure across the boundary**: the host sends a chunk only against a credit; the window grants
  ``CREDIT_WINDOW`` chunks and more as its worker thread takes them (which it does only once the bounded
  chunk queue accepted the previous one). A full queue in the window therefore pauses decode in the host
  after at most ``CREDIT_WINDOW`` chunks; the pipe never holds more.
- **Stop**: the stop event's callback sends ``stop`` at once (from the thread that pressed it); the host's
  main thread sets the decode's stop event, which llama.cpp's abort callback (prefill) and the decode loop
  (between tokens) check. The host answers ``end`` after at most one token; then the model is free.
- **A crash is a notice**: when the host dies (any signal, any exit status), ``stream`` raises
  ``EngineCrashed`` after the chunks that arrived (the reply keeps them), whose ``stop_reason`` names what
  happened ("the model process crashed: illegal instruction (SIGILL)"). The next request starts a new host
  and loads the model again. A crash while loading, or in the first reply after a load before any chunk,
  is retried once in *safe mode* (no extra CPU buffer types, half the threads, no GPU offload); the mode that
  worked is remembered per model file and llama.cpp build (``app.engine.host_modes``).
- **Hung is crashed**: the chat template must be rendered within ``render_deadline_s``, each token must come
  within ``token_deadline_s`` (the first: ``prefill_deadline_s``), a Stop must be answered within
  ``stop_deadline_s``; past a deadline the host is killed and the reply ends with ``EngineCrashed``.
- **Unload is process exit**: ``unload`` ends the host, so every byte the model used goes back to the OS;
  a Cancel during ``load`` kills the host at once.

This module decides when hosts start, load, are retried and end; ``app.engine.host_link`` is the window's end
of one host (the process, its pipes, deadlines, the credit protocol of a stream); ``app.engine.host_crash``
names what a dead host's reply ends with; ``app.engine.host`` is the child itself.
"""

from __future__ import annotations

import itertools
import logging
import os
import threading
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from app.core.streaming.provenance import default_hash_cache, model_file_facts
from app.core.types import Chunk, GenerationParams
from app.engine.base import EngineNotLoadedError, LoadCancelled, ProgressCallback
from app.engine.host_crash import EngineCrashed, HostGone, HostMemoryError, describe_exit, rebuild_error
from app.engine.host_link import CREDIT_WINDOW, Deadlines, HostLink, host_options, start_host
from app.engine.models import check_gguf, display_name

__all__ = [
    "CANCEL_POLL_S",
    "CREDIT_WINDOW",
    "EngineCrashed",
    "HostMemoryError",
    "HostedEngine",
    "describe_exit",
    "spare_core",
]

log = logging.getLogger("brook.engine.hosted")

#: While a load reports no progress, ``progress`` is called again this often (s), so a Cancel is seen.
CANCEL_POLL_S = 0.05
#: A prestarted host imports llama.cpp and loads the model this much nicer than the window (Linux, per thread:
#: its decode keeps the window's priority), so on a busy machine it does not slow the window's first frame.
PRESTART_NICE = 10


def spare_core(load_average: float | None = None, cpus: int | None = None) -> bool:
    """Whether a core is free to prestart the engine host on (``HostedEngine.prestart``): the machine's CPUs
    (``os.cpu_count()``) minus its 1-minute load average (``os.getloadavg()``) leave at least one. Where the OS
    gives no load average (Windows), True. Measured on a 2-core machine (``python -m app.bench startup``): with
    the cores busy, a host prestarted before the window competes with its start (window shown 0.9-1.8 s against
    0.6-0.9 s with the host started with the load, as the in-process engine is) and, doing more work in all
    (a second interpreter), reaches the model ready later too."""
    if load_average is None:
        try:
            load_average = os.getloadavg()[0]
        except (AttributeError, OSError):
            return True
    cpus = cpus or os.cpu_count() or 1
    return cpus - load_average >= 1.0


class HostedEngine:
    """A GGUF model served by an engine host process (see the module docstring). One generation at a time
    (``max_concurrency == 1``).

    Options as ``LlamaEngine``'s (``n_ctx``, ``n_threads`` — None: ``app.engine.llama.default_threads`` —,
    ``n_gpu_layers``, ``chat_template``), plus ``memory_limit_mb`` (the host's ``RLIMIT_DATA``; None: the
    memory available when it starts; 0: none) and the deadlines (seconds): ``render_deadline_s`` (chat template
    and tokenizing, also of each context-meter call), ``prefill_deadline_s`` (prompt → first token),
    ``token_deadline_s`` (between tokens) and ``stop_deadline_s`` (Stop → the host's answer)."""

    max_concurrency = 1

    def __init__(self, model_path: str | Path, *, n_ctx: int | None = None, n_threads: int | None = None,
                 n_gpu_layers: int = -1, chat_template: str | None = None, memory_limit_mb: int | None = None,
                 render_deadline_s: float = 10.0, prefill_deadline_s: float = 300.0, token_deadline_s: float = 30.0,
                 stop_deadline_s: float = 5.0) -> None:
        from app.engine.llama import DEFAULT_N_CTX, default_threads

        self.model_path = Path(model_path)
        self.n_ctx = n_ctx or DEFAULT_N_CTX
        self.n_threads = n_threads or default_threads()
        self.n_gpu_layers = n_gpu_layers
        self.chat_template = chat_template
        self.memory_limit_mb = memory_limit_mb
        self.render_deadline_s = render_deadline_s
        self.prefill_deadline_s = prefill_deadline_s
        self.token_deadline_s = token_deadline_s
        self.stop_deadline_s = stop_deadline_s
        self.fault: tuple[str, float, str] | None = None    # the next stream's injected fault (``inject_fault``)
        self.load_fault: tuple[str] | None = None           # the next load's
        self.metadata: dict[str, str] = {}
        self.mode = "normal"            # or "safe" (see the module docstring)
        self.load_nice: int | None = None   # the nice value the last load ran at in its host (None: unknown)
        self.crashes = 0                # host deaths seen (crashes and hangs)
        self.restarts = 0               # hosts started again after one died
        self._template_source: str | None = None
        self._runtime: dict[str, Any] = {}         # what the host's llama.cpp runs on (``runtime``)
        self._host: HostLink | None = None
        self._prestarted: tuple[str, HostLink] | None = None
        self._wanted = False            # loaded by the caller and not unloaded: a dead host is started again
        self._first_decode = False      # no reply has finished since the last load
        self._life = threading.RLock()  # starting, loading and ending hosts
        self._ids = itertools.count(1)

    # facts ----------------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return display_name(self.model_path)

    @property
    def loaded(self) -> bool:
        return self._wanted

    @property
    def host_pid(self) -> int | None:
        """The engine host's process id while one runs (tests, benchmarks)."""
        host = self._host
        return host.pid if host is not None and host.alive() else None

    def decode_figures(self) -> dict[str, Any] | None:
        """The host's decode thread in the last reply that ended, from its first token to its last:
        ``{"tokens", "wall_ms", "cpu_ms", "wait_ms"}`` (``app.engine.host.DecodeClock``; benchmarks); None
        before one."""
        host = self._host
        return dict(host.last_decode) if host is not None and host.last_decode is not None else None

    def runtime(self) -> dict[str, Any]:
        """What the model runs on in the host (``LlamaEngine.runtime``: ``cpu_variant``, ``backend``,
        ``device``, ``gpu_layers``, ``n_layers``), as of its last load; empty before one."""
        return dict(self._runtime) if self.loaded else {}

    def provenance(self) -> dict[str, Any]:
        """Model file facts for a reply's provenance (``model_file_facts``; hashed in this process)."""
        return model_file_facts(self.model_path, default_hash_cache(), self._template_source)

    def inject_fault(self, kind: str, after_ms: float = 0.0, at: str = "reply") -> None:
        """The next reply's host does ``kind`` (``app.engine.host.FAULT_KINDS``) to itself ``after_ms`` ms after
        its first chunk (``at="reply"``: tests, ``--engine-fault``), once its prompt is tokenized (``"prompt"``:
        a crash in prefill), or the next host does it before loading the model (``"load"``)."""
        from app.engine.host import FAULT_KINDS

        if kind not in FAULT_KINDS or at not in ("reply", "prompt", "load"):
            raise ValueError(f"unknown fault {kind!r} at {at!r}; one of {', '.join(FAULT_KINDS)}")
        if at == "load":
            self.load_fault = (kind,)
        else:
            self.fault = (kind, float(after_ms), at)

    # host life ------------------------------------------------------------------------------------
    def _options(self, mode: str) -> dict[str, Any]:
        opts: dict[str, Any] = {"model_path": str(self.model_path), "n_ctx": self.n_ctx, "n_threads": self.n_threads,
                                "n_gpu_layers": self.n_gpu_layers, "chat_template": self.chat_template}
        if mode == "safe":
            opts.update(n_threads=max(1, self.n_threads // 2), n_gpu_layers=0)
        return opts

    def _spawn(self, mode: str, load_nice: int = 0) -> HostLink:
        return start_host(host_options(self.memory_limit_mb, mode == "safe", load_nice), mode)

    def prestart(self, nice: int = PRESTART_NICE) -> None:
        """Start the host process now and have it load the model at once: the launcher calls it before it
        imports Qt and builds the window, so that start-up work overlaps. The host imports llama.cpp and loads at
        a priority ``nice`` below the window's (``app.engine.host.run_niced``; Linux), so that where the cores
        are few or busy the window's start comes first; its decode runs at the window's priority. ``load`` then
        takes over this host and its load (the progress reports wait in the pipe)."""
        from app.engine import host_modes

        with self._life:
            if self._host is None and self._prestarted is None:
                mode = host_modes.recall(self.model_path) or self.mode
                host = self._spawn(mode, nice)
                try:
                    host.send(("load", self._load_options(mode)))
                except HostGone:
                    host.kill()
                    return
                host.load_sent = True
                self._prestarted = (mode, host)

    def _take_prestarted(self, mode: str) -> HostLink | None:
        pre, self._prestarted = self._prestarted, None
        if pre is None:
            return None
        if pre[0] == mode and pre[1].alive():
            return pre[1]
        pre[1].kill()
        return None

    def _load_options(self, mode: str) -> dict[str, Any]:
        options = self._options(mode)
        options["fault"], self.load_fault = self.load_fault, None
        return options

    def _start_and_load(self, mode: str, progress: ProgressCallback | None) -> None:
        """A new host in ``mode``, the model loaded in it. Raises the load's error, ``LoadCancelled`` (the host
        is killed at once), or ``HostGone``."""
        host = self._take_prestarted(mode) or self._spawn(mode)
        self._host = host
        try:
            if not host.load_sent:
                host.send(("load", self._load_options(mode)))
                host.load_sent = True
            last = 0.0
            while True:
                if progress is not None and not host.ctl.poll(CANCEL_POLL_S):
                    if not host.proc.is_alive() and not host.ctl.poll(0):
                        raise host.gone()
                    progress(last)           # raises LoadCancelled after a Cancel
                    continue
                msg = host.recv(None if progress is None else 0, "loading")
                inside = None                # the newest report under 1.0 of those that waited
                while msg[0] == "progress" and host.ctl.poll(0):    # reports that waited (a prestarted load, a
                    last = float(msg[1])                            # busy machine): only the newest is passed on
                    inside = last if last < 1.0 else inside
                    msg = host.recv(0, "loading")
                if msg[0] == "progress":
                    last = float(msg[1])
                    inside = last if last < 1.0 else inside
                if progress is not None and inside is not None:
                    progress(inside)         # even when the last report (1.0) or "loaded" came with it
                if msg[0] == "loaded":
                    facts = msg[1]
                    self.metadata = dict(facts.get("metadata") or {})
                    self._template_source = facts.get("template_source")
                    self._runtime = dict(facts.get("runtime") or {})
                    self.load_nice = facts.get("load_nice")
                    host.loaded = True
                    self.mode = mode
                    return
                elif msg[0] == "error":
                    raise rebuild_error(msg[1], msg[2])
        except BaseException:
            host.kill()
            if self._host is host:
                self._host = None
            raise

    def _load_with_retry(self, progress: ProgressCallback | None) -> None:
        """Load in the remembered mode; a host that crashes while loading is retried once in safe mode."""
        from app.engine import host_modes

        mode = host_modes.recall(self.model_path) or self.mode
        try:
            self._start_and_load(mode, progress)
        except HostGone as gone:
            self.crashes += 1
            if mode == "safe" or gone.hung:
                raise gone.crashed(self.name) from None
            words, _sig = describe_exit(gone.exitcode)
            log.warning("the engine host crashed while loading %s (%s); trying again in safe mode",
                        self.model_path.name, words)
            self.restarts += 1
            try:
                self._start_and_load("safe", progress)
            except HostGone as again:
                self.crashes += 1
                raise again.crashed(self.name) from None
            host_modes.remember(self.model_path, "safe")
        self._first_decode = True

    def _running(self) -> HostLink:
        """The live host with the model loaded, started again (and the model loaded again) when it died."""
        with self._life:
            host = self._host
            if host is not None and host.alive() and host.loaded:
                return host
            if not self._wanted:
                raise EngineNotLoadedError("The model is not loaded yet.")
            if host is not None:
                host.kill()
                self._host = None
            log.info("starting the engine host again for %s", self.model_path.name)
            self.restarts += 1
            self._load_with_retry(None)
            assert self._host is not None
            return self._host

    def _lost(self, host: HostLink) -> None:
        """``host`` died: count it, forget it (the next request starts another)."""
        with self._life:
            self.crashes += 1
            host.kill()
            if self._host is host:
                self._host = None

    # Engine protocol --------------------------------------------------------------------------------
    def load(self, progress: ProgressCallback | None = None) -> None:
        """Start the host and load the model in it (blocking), reporting llama.cpp's progress (0..1). Raises
        ``ModelNotFoundError`` / ``InvalidModelError`` (readable), ``LoadCancelled`` when ``progress`` raised it
        (the host is killed at once), ``EngineCrashed`` when the host died even in safe mode."""
        path = check_gguf(self.model_path)
        if progress:
            progress(0.0)
        with self._life:
            if self._host is not None:
                self._host.exit()
                self._host = None
            self._load_with_retry(progress)
            try:
                if progress:
                    progress(1.0)      # a Cancel after llama.cpp's last report: dropped here
            except LoadCancelled:
                self.unload()
                raise
            self._wanted = True
        default_hash_cache().start(path)
        log.info("loaded %s in engine host %s (n_ctx=%d, %s mode)", path, self.host_pid, self.n_ctx, self.mode)

    def unload(self) -> None:
        """End the host (every byte of the model goes back to the OS). Idempotent."""
        with self._life:
            self._wanted = False
            self._take_prestarted("")
            host, self._host = self._host, None
            if host is not None:
                host.exit()
                log.info("unloaded %s (engine host %s ended)", self.model_path, host.pid)

    #: ``stream`` fits the messages to the context window in the host (``on_fit``): the window's worker sends
    #: one request instead of a ``fit_context`` round trip first (``app.core.streaming.generation``)
    fits_in_stream = True

    def stream(self, messages: Sequence[Mapping[str, str]], params: GenerationParams,
               stop: threading.Event, on_fit: Callable[[int, int], None] | None = None) -> Iterator[Chunk]:
        """Chunks of the reply from the host (see ``LlamaEngine.stream``). Raises what the host raised
        (``ContextOverflowError``, ``ChatTemplateError``, …) and ``EngineCrashed`` when the host died or hung;
        a host that crashed in the first reply after a load, before any chunk, is retried once in safe mode.
        Messages that are not what ``fit_context`` returned are fitted by the host, which then calls
        ``on_fit(left_out, prompt_tokens)`` (older messages left out; the prompt's tokens) before the first
        chunk."""
        tried_safe = False
        while True:
            if stop.is_set():
                return
            host = self._running()
            first_decode = self._first_decode
            got = 0
            inner = self._stream_on(host, messages, params, stop, on_fit)
            try:
                for chunk in inner:
                    got += 1
                    yield chunk
                self._first_decode = False
                return
            except HostGone as gone:
                self._lost(host)
                crash = gone.crashed()
                log.error("engine host %s: %s (after %d chunks of the reply)", host.pid, crash.stop_reason, got)
                if stop.is_set():
                    return
                if first_decode and not got and not tried_safe and self.mode != "safe" and not gone.hung:
                    log.warning("%s in the first reply after loading; loading again in safe mode", crash)
                    from app.engine import host_modes

                    tried_safe = True
                    with self._life:
                        self.mode = "safe"
                        self.restarts += 1
                        try:
                            self._load_with_retry(None)
                        except HostGone as again:
                            self.crashes += 1
                            raise again.crashed() from None
                    host_modes.remember(self.model_path, "safe")
                    continue
                raise crash from None
            finally:
                inner.close()

    def _stream_on(self, host: HostLink, messages: Sequence[Mapping[str, str]], params: GenerationParams,
                   stop: threading.Event,
                   on_fit: Callable[[int, int], None] | None = None) -> Generator[Chunk, None, None]:
        from app.engine.llama import FittedMessages

        fitted = None
        if isinstance(messages, FittedMessages) and messages.n_ctx == self.n_ctx:
            fitted = {"left_out": messages.left_out, "prompt_tokens": messages.prompt_tokens, "n_ctx": messages.n_ctx}
        fault, self.fault = self.fault, None
        deadlines = Deadlines(self.render_deadline_s, self.prefill_deadline_s, self.token_deadline_s,
                              self.stop_deadline_s)
        return host.stream(next(self._ids), [dict(m) for m in messages], fitted, params, stop, deadlines, fault,
                           on_fit)

    # the context meter's calls ----------------------------------------------------------------------
    def _call(self, method: str, *args: Any) -> Any:
        host = self._running()
        try:
            return host.call(method, args, self.render_deadline_s)
        except HostGone as gone:
            self._lost(host)
            raise gone.crashed() from None

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` as message content (see ``LlamaEngine.count_tokens``), counted in the host."""
        return int(self._call("count_tokens", text))

    def prompt_tokens(self, messages: Sequence[Mapping[str, str]]) -> int:
        """Tokens of the prompt for ``messages`` (see ``LlamaEngine.prompt_tokens``), counted in the host; for
        what ``fit_context`` returned, its measure (no round trip)."""
        from app.engine.llama import FittedMessages

        if isinstance(messages, FittedMessages) and messages.n_ctx == self.n_ctx:
            return messages.prompt_tokens
        return int(self._call("prompt_tokens", [dict(m) for m in messages]))

    def fit_context(self, messages: Sequence[Mapping[str, str]], params: GenerationParams) -> Any:
        """The most recent messages that fit the context window (``LlamaEngine.fit_context``), measured in the
        host: a ``FittedMessages``."""
        from app.engine.llama import FittedMessages

        kept, facts = self._call("fit_context", [dict(m) for m in messages], params)
        out = FittedMessages(kept)
        out.left_out, out.prompt_tokens, out.n_ctx = facts["left_out"], facts["prompt_tokens"], facts["n_ctx"]
        return out
