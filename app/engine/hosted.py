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
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from app.core.streaming.provenance import default_hash_cache, model_file_facts
from app.core.types import Chunk, GenerationParams
from app.engine.base import (
    ContextOverflowError,
    EngineError,
    EngineNotLoadedError,
    InvalidModelError,
    LoadCancelled,
    ModelNotFoundError,
    ProgressCallback,
)
from app.engine.models import check_gguf, display_name

log = logging.getLogger("brook.engine.hosted")

#: Chunks the host may send ahead of what the window's worker thread took (credit flow control).
CREDIT_WINDOW = 64
#: Seconds the host process may take to start (Python, then llama-cpp-python's import).
START_TIMEOUT_S = 60.0
#: While a load reports no progress, ``progress`` is called again this often (s), so a Cancel is seen.
CANCEL_POLL_S = 0.05


class EngineCrashed(EngineError):
    """The engine host died or stopped responding. ``stop_reason``: what the reply records ("the model process
    crashed: illegal instruction (SIGILL)"); ``signal``: the signal number that ended it (None for an exit
    status or a hang); ``hung``: it was killed for missing a deadline."""

    def __init__(self, message: str, stop_reason: str, *, sig: int | None = None, hung: bool = False) -> None:
        super().__init__(message)
        self.stop_reason = stop_reason
        self.signal = sig
        self.hung = hung


class HostMemoryError(EngineError):
    """A chat template or the model needed more memory than the engine host may use (its memory limit)."""


_SIGNAL_WORDS = {"SIGSEGV": "segmentation fault", "SIGILL": "illegal instruction", "SIGABRT": "aborted",
                 "SIGKILL": "killed", "SIGBUS": "bus error", "SIGFPE": "floating-point exception",
                 "SIGTERM": "terminated"}


def describe_exit(exitcode: int | None) -> tuple[str, int | None]:
    """(words, signal number) for a process's exit: ``-4`` → ("illegal instruction (SIGILL)", 4); ``3`` →
    ("exited with status 3", None); None (still running or unknown) → ("ended", None)."""
    if exitcode is None:
        return "ended", None
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            return f"ended by signal {-exitcode}", -exitcode
        words = _SIGNAL_WORDS.get(name, name)
        return f"{words} ({name})", -exitcode
    return f"exited with status {exitcode}", None


#: Error kinds the host sends back, rebuilt as the same classes here (others become ``EngineError``).
def _error_classes() -> dict[str, type[Exception]]:
    from app.engine.chat_prompt import ChatTemplateError

    return {cls.__name__: cls for cls in (ContextOverflowError, EngineError, InvalidModelError, ModelNotFoundError,
                                           EngineNotLoadedError, ChatTemplateError, HostMemoryError)}


def _rebuild(kind: str, message: str) -> Exception:
    cls = _error_classes().get(kind)
    if cls is None:
        return EngineError(f"The model failed: {kind}: {message}")
    return cls(message)


class _HostGone(Exception):
    """Internal: the host ended (``exitcode``) or was killed for a deadline (``hung`` names what)."""

    def __init__(self, exitcode: int | None, hung: str | None = None) -> None:
        super().__init__(hung or str(exitcode))
        self.exitcode = exitcode
        self.hung = hung

    def crashed(self, loading: str | None = None) -> EngineCrashed:
        """The error a reply (or, with ``loading`` = the model's name, a load) ends with."""
        if loading is not None:
            words, sig = describe_exit(self.exitcode)
            what = self.hung or words
            return EngineCrashed(f"The model process crashed while loading {loading} ({what}), in safe mode too "
                                 "(no extra CPU buffer types, fewer threads, no GPU offload).",
                                 f"the model process crashed while loading: {what}", sig=sig, hung=bool(self.hung))
        if self.hung:
            return EngineCrashed(f"The model process stopped responding ({self.hung}) and was ended; the reply so "
                                 "far is kept. The next message starts it again.",
                                 f"the model process stopped responding: {self.hung}", hung=True)
        words, sig = describe_exit(self.exitcode)
        return EngineCrashed(f"The model process crashed ({words}); the reply so far is kept. The next message "
                             "starts it again.", f"the model process crashed: {words}", sig=sig)


class _Host:
    """One engine host process and the window's ends of its two pipes."""

    def __init__(self, proc: Any, ctl: Any, rpc: Any) -> None:
        self.proc, self.ctl, self.rpc = proc, ctl, rpc
        self.send_lock = threading.Lock()
        self.rpc_lock = threading.Lock()
        self.killed_for: str | None = None
        self.load_sent = False
        self.loaded = False

    @property
    def pid(self) -> int | None:
        return int(self.proc.pid) if self.proc.pid is not None else None

    def alive(self) -> bool:
        return bool(self.proc.is_alive()) and self.killed_for is None

    def send(self, msg: tuple[Any, ...]) -> None:
        """Send one control message (from any thread; never waits for the process)."""
        try:
            with self.send_lock:
                self.ctl.send(msg)
        except (OSError, ValueError) as exc:    # a closed pipe: the host is gone (recv says how)
            raise _HostGone(self.proc.exitcode, self.killed_for) from exc

    def recv(self, timeout: float | None, what: str) -> Any:
        """The next control message; ``_HostGone`` when the host ends, or when nothing comes within ``timeout``
        seconds (then the host is killed: ``what`` says what it did not do)."""
        try:
            ready = self.ctl.poll(timeout)
        except (OSError, ValueError) as exc:
            raise self.gone() from exc
        if not ready:
            self.kill(what)
            raise self.gone()
        try:
            return self.ctl.recv()
        except (EOFError, OSError, ValueError) as exc:
            raise self.gone() from exc

    def gone(self) -> _HostGone:
        if self.killed_for is not None:
            return _HostGone(None, self.killed_for)
        self.proc.join(2.0)
        return _HostGone(self.proc.exitcode)

    def kill(self, why: str | None = None) -> None:
        if why is not None and self.killed_for is None:
            self.killed_for = why
            log.error("engine host %s killed: %s", self.pid, why)
        with contextlib.suppress(Exception):
            self.proc.kill()
        self.proc.join(5.0)
        for conn in (self.ctl, self.rpc):
            with contextlib.suppress(Exception):
                conn.close()

    def exit(self, timeout: float = 2.0) -> None:
        """Ask the host to exit; kill it if it has not within ``timeout`` seconds."""
        with contextlib.suppress(Exception):
            self.send(("exit",))
        self.proc.join(timeout)
        self.kill()


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
        self.crashes = 0                # host deaths seen (crashes and hangs)
        self.restarts = 0               # hosts started again after one died
        self._template_source: str | None = None
        self._runtime: dict[str, Any] = {}         # what the host's llama.cpp runs on (``runtime``)
        self._host: _Host | None = None
        self._prestarted: tuple[str, _Host] | None = None
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

    def _spawn(self, mode: str) -> _Host:
        from app.engine.host import host_main

        env = {"BROOK_EXTRA_BUFTS": "0"} if mode == "safe" else {}
        options = {"log_path": _log_file(), "memory_limit_mb": _memory_limit(self.memory_limit_mb), "env": env,
                   "debug": logging.getLogger("brook").isEnabledFor(logging.DEBUG)}
        ctx = multiprocessing.get_context("spawn")      # never fork a process that runs Qt
        ctl, ctl_child = ctx.Pipe()
        rpc, rpc_child = ctx.Pipe()
        proc = ctx.Process(target=host_main, args=(ctl_child, rpc_child, options), name="brook-engine-host",
                           daemon=True)
        proc.start()
        ctl_child.close()
        rpc_child.close()
        log.info("engine host %s started (%s mode)", proc.pid, mode)
        return _Host(proc, ctl, rpc)

    def prestart(self) -> None:
        """Start the host process now and have it load the model at once: the launcher calls it before it
        imports Qt and builds the window, so that start-up work overlaps. ``load`` then takes over this host and
        its load (the progress reports wait in the pipe)."""
        from app.engine import host_modes

        with self._life:
            if self._host is None and self._prestarted is None:
                mode = host_modes.recall(self.model_path) or self.mode
                host = self._spawn(mode)
                try:
                    host.send(("load", self._load_options(mode)))
                except _HostGone:
                    host.kill()
                    return
                host.load_sent = True
                self._prestarted = (mode, host)

    def _take_prestarted(self, mode: str) -> _Host | None:
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
        is killed at once), or ``_HostGone``."""
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
                while msg[0] == "progress" and host.ctl.poll(0):    # reports that waited (a prestarted load):
                    last = float(msg[1])                            # only the newest is passed on
                    msg = host.recv(0, "loading")
                if msg[0] == "progress":
                    last = float(msg[1])
                    if progress is not None and last < 1.0:
                        progress(last)
                elif msg[0] == "loaded":
                    facts = msg[1]
                    self.metadata = dict(facts.get("metadata") or {})
                    self._template_source = facts.get("template_source")
                    self._runtime = dict(facts.get("runtime") or {})
                    host.loaded = True
                    self.mode = mode
                    return
                elif msg[0] == "error":
                    raise _rebuild(msg[1], msg[2])
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
        except _HostGone as gone:
            self.crashes += 1
            if mode == "safe" or gone.hung:
                raise gone.crashed(self.name) from None
            words, _sig = describe_exit(gone.exitcode)
            log.warning("the engine host crashed while loading %s (%s); trying again in safe mode",
                        self.model_path.name, words)
            self.restarts += 1
            try:
                self._start_and_load("safe", progress)
            except _HostGone as again:
                self.crashes += 1
                raise again.crashed(self.name) from None
            host_modes.remember(self.model_path, "safe")
        self._first_decode = True

    def _running(self) -> _Host:
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

    def _lost(self, host: _Host) -> None:
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

    def stream(self, messages: Sequence[Mapping[str, str]], params: GenerationParams,
               stop: threading.Event) -> Iterator[Chunk]:
        """Chunks of the reply from the host (see ``LlamaEngine.stream``). Raises what the host raised
        (``ContextOverflowError``, ``ChatTemplateError``, …) and ``EngineCrashed`` when the host died or hung;
        a host that crashed in the first reply after a load, before any chunk, is retried once in safe mode."""
        tried_safe = False
        while True:
            if stop.is_set():
                return
            host = self._running()
            first_decode = self._first_decode
            got = 0
            inner = self._stream_on(host, messages, params, stop)
            try:
                for chunk in inner:
                    got += 1
                    yield chunk
                self._first_decode = False
                return
            except _HostGone as gone:
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
                        except _HostGone as again:
                            self.crashes += 1
                            raise again.crashed() from None
                    host_modes.remember(self.model_path, "safe")
                    continue
                raise crash from None
            finally:
                inner.close()

    def _stream_on(self, host: _Host, messages: Sequence[Mapping[str, str]], params: GenerationParams,
                   stop: threading.Event) -> Generator[Chunk, None, None]:
        from app.engine.llama import FittedMessages

        sid = next(self._ids)
        fitted = None
        if isinstance(messages, FittedMessages) and messages.n_ctx == self.n_ctx:
            fitted = {"left_out": messages.left_out, "prompt_tokens": messages.prompt_tokens, "n_ctx": messages.n_ctx}
        fault, self.fault = self.fault, None
        host.send(("stream", sid, [dict(m) for m in messages], fitted, params, CREDIT_WINDOW, fault))
        stopped = threading.Event()

        def send_stop() -> None:
            if not stopped.is_set():
                stopped.set()
                with contextlib.suppress(_HostGone):
                    host.send(("stop", sid))

        add = getattr(stop, "add_callback", None)
        remove: Callable[[], None] = add(send_stop) if add is not None else (lambda: None)
        poll = None if add is not None else 0.01       # a plain Event: look at it between waits
        ended = False
        granted, taken = CREDIT_WINDOW, 0
        phase = f"the chat template was not rendered within {self.render_deadline_s:g} s"
        deadline = self.render_deadline_s
        try:
            while True:
                msg = self._next(host, deadline, phase, stop, poll, send_stop)
                kind = msg[0]
                if kind == "chunk":
                    if msg[1] != sid:
                        continue
                    phase, deadline = f"no token within {self.token_deadline_s:g} s", self.token_deadline_s
                    if stop.is_set():
                        continue                  # produced as Stop came: dropped; the host ends within a token
                    yield Chunk(msg[2], msg[3], msg[4])
                    taken += 1
                    if granted - taken <= CREDIT_WINDOW // 2:
                        host.send(("credit", sid, CREDIT_WINDOW - (granted - taken)))
                        granted = taken + CREDIT_WINDOW
                elif kind == "prompt":
                    phase = f"no first token within {self.prefill_deadline_s:g} s"
                    deadline = self.prefill_deadline_s
                elif kind == "end":
                    ended = True
                    return
                elif kind == "error":
                    ended = True
                    raise _rebuild(msg[1], msg[2])
        finally:
            remove()
            if not ended and host.alive():
                send_stop()                       # the consumer left (Stop, queue closed): end the host's decode
                with contextlib.suppress(_HostGone):
                    while self._next(host, self.stop_deadline_s, "Stop was not answered", None, None,
                                     send_stop)[0] not in ("end", "error"):
                        pass

    @staticmethod
    def _next(host: _Host, deadline: float, what: str, stop: threading.Event | None, poll: float | None,
              send_stop: Callable[[], None]) -> Any:
        """The next message within ``deadline`` seconds; with ``poll``, ``stop`` is looked at every ``poll`` s
        (a plain ``threading.Event`` has no callback) and forwarded to the host."""
        if poll is None or stop is None:
            return host.recv(deadline, what)
        t_end = time.monotonic() + deadline
        while True:
            if stop.is_set():
                send_stop()
                return host.recv(max(0.0, t_end - time.monotonic()), what)
            left = t_end - time.monotonic()
            if left <= 0 or host.ctl.poll(min(poll, left)):
                return host.recv(max(0.0, left), what)

    # the context meter's calls ----------------------------------------------------------------------
    def _call(self, method: str, *args: Any) -> Any:
        host = self._running()
        with host.rpc_lock:
            try:
                host.rpc.send(("call", method, args))
                if not host.rpc.poll(self.render_deadline_s):
                    host.kill(f"the chat template was not rendered within {self.render_deadline_s:g} s")
                    raise host.gone()
                reply = host.rpc.recv()
            except (EOFError, OSError, ValueError):
                gone = host.gone()
                self._lost(host)
                raise gone.crashed() from None
            except _HostGone as gone:
                self._lost(host)
                raise gone.crashed() from None
        if reply[0] == "error":
            raise _rebuild(reply[1], reply[2])
        return reply[1]

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


def _log_file() -> str | None:
    """The app's log file, when logging writes one (the host appends to it, faulthandler included)."""
    for h in logging.getLogger().handlers:
        name = getattr(h, "baseFilename", None)
        if name:
            return str(name)
    return None


def _memory_limit(asked: int | None) -> int | None:
    """The host's memory limit in MB: ``asked``; 0 → none; None → ``BROOK_HOST_MEMORY_MB`` or the memory
    available now (``/proc/meminfo``'s MemAvailable; None where unknown)."""
    if asked is not None:
        return asked or None
    env = os.environ.get("BROOK_HOST_MEMORY_MB", "").strip()
    if env.isdigit():
        return int(env) or None
    try:
        for line in Path("/proc/meminfo").read_text(encoding="ascii").splitlines():
            if line.startswith("MemAvailable:"):
                return max(1024, int(line.split()[1]) // 1024)
    except (OSError, ValueError, IndexError):
        pass
    return None
