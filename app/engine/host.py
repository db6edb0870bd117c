"""The engine host: the child process that runs llama.cpp (load, chat template, tokenizing, prefill, decode).

Started by ``app.engine.hosted.HostedEngine`` as a new interpreter (``app.engine.host_link.start_host``: a plain
child process running ``child_main`` on POSIX, a ``multiprocessing`` *spawn* child elsewhere; never a fork of a
process that runs Qt), it talks to the window process over two pipes (each message one pickled tuple,
length-framed: ``app.engine.host_pipe.FramedPipe``, or ``multiprocessing``'s ``Connection`` for a spawn child).
This module imports only what that needs (no event loop, no ``multiprocessing``): its imports are CPU the host
spends before it can load a model. The first control message of a plain child is its options (``host_main``).

- **control pipe** (``ctl``), one request at a time: ``("load", options)`` → ``("progress", f)``… then
  ``("loaded", facts)`` or ``("error", kind, message)``; ``("stream", sid, messages, fitted, params, window,
  fault)`` → ``("fitted", sid, left_out, prompt_tokens)`` when ``fitted`` is None (this process fitted the
  messages to the context window itself: one message instead of a ``fit_context`` round trip before the stream),
  ``("prompt", sid, n_tokens)`` once the chat template is rendered and the prompt tokenized, then
  ``("chunk", sid, text, n_tokens, finish_reason)``…, then ``("end", sid, decode)`` (``decode``: the decode
  thread's ``DecodeClock.stop`` figures) or ``("error", kind, message)``.
  While a stream runs the window sends ``("credit", sid, n)`` (n more chunks may be sent: credit flow control,
  so a full chunk queue in the window pauses decode and the pipe never holds more than the window's grant) and
  ``("stop", sid)`` (read by this process's main thread at once: it sets the decode's stop event, which
  llama.cpp's abort callback checks during prefill and the decode loop checks between tokens).
  ``("exit",)`` ends the process.
- **call pipe** (``rpc``): ``("call", method, args)`` → ``("result", value)`` or ``("error", kind, message)``
  for ``count_tokens``, ``prompt_tokens`` and ``fit_context`` (the context meter; served by a thread of their
  own, so they never wait behind a decode), and ``modules`` (the names in ``sys.modules``: tests).

Faults for tests (``fault = (kind, after_ms, at)`` on a stream, ``at`` = "reply": ``after_ms`` after the first
chunk; "prompt": once the prompt is tokenized, before prefill; or ``fault = (kind,)`` in the load options: before
the model loads) this process does ``kind`` to itself — ``segv`` (reads address 0), ``ill`` (SIGILL),
``abort`` (``abort()``, as a failed ``GGML_ASSERT`` does), ``kill`` (SIGKILL, as the OOM killer does) or
``hang`` (decode stops yielding).

On a fatal signal the log file gets the signal, the faulting address and module and the last native frames
(``app.engine.crash_log``), then ``faulthandler``'s Python stacks of every thread; SIGUSR1 (sent by the window
before it kills a host that missed a deadline) writes the Python stacks of a hung host. The memory
limit (``RLIMIT_DATA`` on Linux) makes a template or model that would take the machine's memory fail with
``MemoryError`` instead, reported as such.
"""

from __future__ import annotations

import contextlib
import faulthandler
import functools
import logging
import os
import pickle
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from app.engine import crash_log

if TYPE_CHECKING:
    from app.engine.llama import LlamaEngine

log = logging.getLogger("brook.engine.host")

#: Fault kinds a stream request may carry (``--engine-fault``).
FAULT_KINDS = ("segv", "ill", "abort", "kill", "hang")


def child_main(argv: list[str]) -> None:
    """The entry point of a host started as a plain process (``app.engine.host_link.start_host``): ``argv`` =
    the file descriptors of its control and call pipes (``app.engine.host_pipe.FramedPipe``); the first control
    message is the options of ``host_main``. Never returns."""
    from app.engine.host_pipe import FramedPipe

    ctl, rpc = FramedPipe(int(argv[0])), FramedPipe(int(argv[1]))
    try:
        options = ctl.recv()
    except (EOFError, OSError):
        os._exit(0)
    host_main(ctl, rpc, options)


def host_main(ctl: Any, rpc: Any, options: dict[str, Any]) -> None:
    """The child process's entry point. ``options``: ``log_path`` (the app's log file, or None: stderr),
    ``memory_limit_mb`` (None: none), ``env`` (variables to set before llama.cpp is imported)."""
    for key, value in (options.get("env") or {}).items():
        os.environ[key] = value
    _setup_logging(options.get("log_path"), bool(options.get("debug")))
    limit = options.get("memory_limit_mb")
    if limit:
        set_memory_limit(int(limit))
    nice = int(options.get("load_nice") or 0)
    host = Host(ctl, rpc, limit, load_nice=nice)
    run_niced(_import_llama, nice)     # while the window builds itself (a prestarted host)
    try:
        host.serve()
    except (EOFError, OSError, KeyboardInterrupt):      # the window process went away: nothing to answer
        pass
    os._exit(0)         # no interpreter teardown under llama.cpp's threads


def _import_llama() -> None:
    """What the host needs before it can load a model (with a prestarted host, while the window builds itself),
    and the GIL's switch interval (``tune_switch_interval``: the control thread gets the GIL within 1 ms when a
    Stop or a credit arrives)."""
    from app.core.streaming.stop import tune_switch_interval

    tune_switch_interval()
    try:
        import llama_cpp  # noqa: F401

        import app.engine.llama  # noqa: F401
    except Exception:       # reported by the load that needs it
        log.debug("importing llama-cpp-python failed", exc_info=True)


def thread_nice() -> int | None:
    """The calling thread's nice value (Linux: per thread), None where the OS has none per thread."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    except (OSError, AttributeError):
        return None


def run_niced(fn: Callable[[], Any], n: int) -> Any:
    """``fn()`` in a thread of its own whose nice value is ``n`` above the caller's, joined; returns what ``fn``
    returned, raises what it raised. Only that thread yields the CPU: on Linux nice is per thread
    (``setpriority`` on its thread id) and a thread inherits its creator's, so the threads the caller makes
    later — the decode thread and llama.cpp's own — keep the caller's priority (an unprivileged process could
    not raise it back: ``RLIMIT_NICE``). ``n`` ≤ 0, or an OS without per-thread nice (macOS, Windows): ``fn()``
    on this thread, at its priority."""
    base = thread_nice()
    if n <= 0 or base is None:
        return fn()
    out: dict[str, Any] = {}

    def body() -> None:
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), min(19, base + n))
        try:
            out["value"] = fn()
        except BaseException as exc:     # re-raised on the caller's thread
            out["error"] = exc

    worker = threading.Thread(target=body, name="brook-host-niced", daemon=True)
    worker.start()
    worker.join()
    if "error" in out:
        raise out["error"]
    return out.get("value")


def _setup_logging(path: str | None, debug: bool) -> None:
    root = logging.getLogger()
    root.setLevel(logging.WARNING)
    logging.getLogger("brook").setLevel(logging.DEBUG if debug else logging.INFO)
    handler: logging.Handler
    stream: Any = sys.stderr
    try:
        if path:
            stream = open(path, "a", encoding="utf-8", buffering=1)   # noqa: SIM115 - kept for the process
        handler = logging.StreamHandler(stream)
    except OSError:
        handler = logging.StreamHandler(sys.stderr)
    if stream is sys.stderr and not debug:
        handler.setLevel(logging.WARNING)     # as the window process's stderr
    handler.setFormatter(logging.Formatter(f"%(asctime)s %(levelname)s %(name)s[host {os.getpid()}]: %(message)s"))
    root.addHandler(handler)
    if stream is not sys.stderr:
        with contextlib.suppress(Exception):    # llama.cpp's own last words (GGML_ASSERT, its backtrace) too
            sys.stderr.flush()
            os.dup2(stream.fileno(), 2)
    if stream is not None:
        with contextlib.suppress(Exception):
            faulthandler.enable(file=stream, all_threads=True)
            crash_log.install(stream.fileno())           # the signal, where, the last native frames, first
            if hasattr(signal, "SIGUSR1"):                # the window asks for the stacks of a hung host
                faulthandler.register(signal.SIGUSR1, file=stream, all_threads=True)
    global _log_stream
    _log_stream = stream


_log_stream: Any = None


def set_memory_limit(megabytes: int) -> bool:
    """Cap this process's data segment (``RLIMIT_DATA``: heap and private writable mappings — not the model
    file, which llama.cpp maps read-only) at ``megabytes``. False where the OS has no such limit."""
    try:
        import resource
    except ImportError:             # Windows
        return False
    limit = megabytes * 1024 * 1024
    try:
        _soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))
    except (ValueError, OSError):
        return False
    return True


class _Credits:
    """Chunks the window has room for (credit flow control)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.cv = threading.Condition()

    def add(self, k: int) -> None:
        with self.cv:
            self.n += k
            self.cv.notify_all()

    def take(self, stop: threading.Event) -> bool:
        """Wait for one credit; False when ``stop`` was set first."""
        with self.cv:
            while self.n <= 0 and not stop.is_set():
                self.cv.wait()
            if stop.is_set():
                return False
            self.n -= 1
            return True

    def wake(self) -> None:
        with self.cv:
            self.cv.notify_all()


def _error(exc: BaseException, memory_limit_mb: int | None) -> tuple[str, str]:
    """(class name, message) of an exception for the window, MemoryError named as what it is."""
    root: BaseException | None = exc
    while root is not None and not isinstance(root, MemoryError):
        root = root.__cause__ or root.__context__
    if isinstance(root, MemoryError):
        limit = f" ({memory_limit_mb:,} MB)" if memory_limit_mb else ""
        what = "The chat template" if type(exc).__name__ == "ChatTemplateError" else "The model"
        return "HostMemoryError", (f"{what} needed more memory than the model process may use{limit}; "
                                   "nothing was generated.")
    return type(exc).__name__, str(exc) or type(exc).__name__


class Host:
    """Serves one model (``app.engine.llama.LlamaEngine``) over the two pipes; see the module docstring."""

    def __init__(self, ctl: Any, rpc: Any, memory_limit_mb: int | None = None, load_nice: int = 0) -> None:
        self.ctl, self.rpc = ctl, rpc
        self.memory_limit_mb = memory_limit_mb
        self.load_nice = load_nice      # the first load's (``run_niced``): a prestarted host yields to the window
        self.engine: LlamaEngine | None = None
        self._send_lock = threading.Lock()
        self._current: tuple[int, threading.Event, _Credits] | None = None
        self._decode: threading.Thread | None = None
        self._hang = threading.Event()

    def send(self, msg: tuple[Any, ...]) -> None:
        """One message on the control pipe: plain ``pickle`` in ``Connection``'s framing (``Connection.send``
        builds a ``ForkingPickler`` per message: 5.5 µs for a chunk here, this 0.9 µs), written whole under a
        lock (the decode and main threads both send)."""
        data = pickle.dumps(msg, pickle.HIGHEST_PROTOCOL)
        with self._send_lock:
            self.ctl.send_bytes(data)

    # main thread: the control pipe ------------------------------------------------------------------
    def serve(self) -> None:
        threading.Thread(target=self._serve_calls, name="brook-host-calls", daemon=True).start()
        while True:
            msg = self.ctl.recv()
            kind = msg[0]
            if kind == "credit":
                cur = self._current
                if cur is not None and cur[0] == msg[1]:
                    cur[2].add(msg[2])
            elif kind == "stop":
                cur = self._current
                if cur is not None and cur[0] == msg[1]:
                    cur[1].set()
                    cur[2].wake()
            elif kind == "stream":
                self._start_decode(*msg[1:])
            elif kind == "load":
                nice, self.load_nice = self.load_nice, 0
                run_niced(functools.partial(self._load, msg[1]), nice)
            elif kind == "exit":
                return

    def _load(self, options: dict[str, Any]) -> None:
        from app.engine.llama import LlamaEngine

        engine = LlamaEngine(options["model_path"], n_ctx=options["n_ctx"], n_threads=options.get("n_threads"),
                             n_gpu_layers=options.get("n_gpu_layers", 0), chat_template=options.get("chat_template"))
        fault = options.get("fault")
        if fault is not None:
            inject_fault(fault[0], self._hang)        # a crash while loading (tests)
        sent = [-1.0]

        def progress(fraction: float) -> None:
            if fraction - sent[0] >= 0.01 or fraction >= 1.0:     # ≤ ~100 reports: the pipe never fills
                sent[0] = fraction
                self.send(("progress", fraction))

        try:
            engine.load(progress)
        except BaseException as exc:
            self.send(("error", *_error(exc, self.memory_limit_mb)))
            return
        self.engine = engine
        chat = engine._prompt
        self.send(("loaded", {"metadata": engine.metadata, "template_source": chat.source if chat else None,
                              "n_threads": engine.n_threads, "runtime": engine.runtime(),
                              "load_nice": thread_nice()}))
        log.info("model loaded (n_threads=%s, n_gpu_layers=%s)", engine.n_threads, engine.n_gpu_layers)

    # decode thread ----------------------------------------------------------------------------------
    def _start_decode(self, sid: int, messages: list[dict[str, str]], fitted: dict[str, int] | None,
                      params: Any, window: int, fault: tuple[str, float, str] | None) -> None:
        if self._decode is not None:
            self._decode.join()      # the window sends a stream only after the previous one's "end"
        from app.core.streaming.stop import StopEvent

        stop, credits = StopEvent(), _Credits(window)       # set: llama.cpp's native abort flag too
        self._current = (sid, stop, credits)
        self._decode = threading.Thread(target=self._run_decode, args=(sid, messages, fitted, params, stop,
                                                                       credits, fault),
                                        name="brook-host-decode", daemon=True)
        self._decode.start()

    def _run_decode(self, sid: int, messages: list[dict[str, str]], fitted: dict[str, int] | None, params: Any,
                    stop: threading.Event, credits: _Credits, fault: tuple[str, float, str] | None) -> None:
        from app.engine.llama import FittedMessages

        try:
            if self.engine is None:
                raise RuntimeError("the model is not loaded in the engine host")
            msgs: Any = messages
            if fitted is not None:
                msgs = FittedMessages(messages)
                msgs.left_out, msgs.prompt_tokens, msgs.n_ctx = fitted["left_out"], fitted["prompt_tokens"], \
                    fitted["n_ctx"]
            else:                      # fitted here: its prompt is the one ``stream`` sends (rendered once)
                msgs = self.engine.fit_context(messages, params)
                self.send(("fitted", sid, msgs.left_out, msgs.prompt_tokens))
            def on_prompt(n_tokens: int) -> None:
                self.send(("prompt", sid, n_tokens))
                if fault is not None and fault[2] == "prompt":
                    inject_fault(fault[0], self._hang)       # before the first token (tests)

            it = self.engine.stream(msgs, params, stop, on_prompt=on_prompt)
            first = True
            clock = DecodeClock()
            try:
                for chunk in it:
                    if first:
                        clock.start()
                        if fault is not None and fault[2] == "reply":
                            self._arm_fault(fault[0], fault[1])
                    first = False
                    if self._hang.is_set():
                        threading.Event().wait()          # the "hang" fault: decode never yields again
                    if not credits.take(stop):
                        break
                    self.send(("chunk", sid, chunk.text, chunk.n_tokens, chunk.finish_reason))
                    clock.tokens += chunk.n_tokens
            finally:
                close = getattr(it, "close", None)     # a generator: end llama.cpp's loop now
                if close is not None:
                    close()
            figures = clock.stop()
            figures["nice"] = thread_nice()           # the decode thread's priority (a prestarted host's too)
            self.send(("end", sid, figures))
        except (OSError, EOFError):
            return                   # the window went away
        except BaseException as exc:
            log.debug("stream %d failed", sid, exc_info=True)
            with contextlib.suppress(OSError):
                self.send(("error", *_error(exc, self.memory_limit_mb)))

    def _arm_fault(self, kind: str, after_ms: float) -> None:
        timer = threading.Timer(max(0.0, after_ms) / 1000.0, inject_fault, args=(kind, self._hang))
        timer.daemon = True
        timer.start()

    # call thread: the call pipe ---------------------------------------------------------------------
    def _serve_calls(self) -> None:
        try:
            while True:
                _kind, method, args = self.rpc.recv()
                try:
                    value = self._call(method, args)
                except BaseException as exc:
                    self.rpc.send(("error", *_error(exc, self.memory_limit_mb)))
                else:
                    self.rpc.send(("result", value))
        except (EOFError, OSError):
            return

    def _call(self, method: str, args: tuple[Any, ...]) -> Any:
        if method == "modules":         # what this process imported (tests: the host starts light)
            return sorted(sys.modules)
        if self.engine is None:
            raise RuntimeError("the model is not loaded in the engine host")
        if method == "count_tokens":
            return self.engine.count_tokens(*args)
        if method == "prompt_tokens":
            return self.engine.prompt_tokens(*args)
        if method == "fit_context":
            kept = self.engine.fit_context(*args)
            return list(kept), {"left_out": kept.left_out, "prompt_tokens": kept.prompt_tokens, "n_ctx": kept.n_ctx}
        raise ValueError(f"no such engine host call: {method}")


def thread_schedule() -> tuple[float, float] | None:
    """(ms on a CPU, ms waiting for one on the run queue) of the calling thread so far: Linux's
    ``/proc/thread-self/schedstat``; None where there is none."""
    try:
        with open("/proc/thread-self/schedstat", encoding="ascii") as f:
            on_cpu, waiting = f.read().split()[:2]
        return int(on_cpu) / 1e6, int(waiting) / 1e6
    except (OSError, ValueError):
        return None


class DecodeClock:
    """Where a decode thread's time went from its first token to its last: ``stop()`` →
    ``{"tokens", "wall_ms", "cpu_ms", "wait_ms"}`` — ``cpu_ms`` on a CPU, ``wait_ms`` runnable but waiting for
    one (a busy machine), the rest of ``wall_ms`` blocked (the GIL, credits, a full queue); ``cpu_ms`` and
    ``wait_ms`` are None where the OS does not say (``thread_schedule``). Two reads of ``/proc`` per reply."""

    def __init__(self) -> None:
        self.tokens = 0
        self._t0: float | None = None
        self._s0: tuple[float, float] | None = None

    def start(self) -> None:
        self._s0 = thread_schedule()
        self._t0 = time.perf_counter()

    def stop(self) -> dict[str, Any]:
        if self._t0 is None:
            return {"tokens": 0, "wall_ms": 0.0, "cpu_ms": None, "wait_ms": None}
        wall = (time.perf_counter() - self._t0) * 1e3
        s1 = thread_schedule()
        cpu = wait = None
        if self._s0 is not None and s1 is not None:
            cpu, wait = s1[0] - self._s0[0], s1[1] - self._s0[1]
        return {"tokens": self.tokens, "wall_ms": wall, "cpu_ms": cpu, "wait_ms": wait}


def inject_fault(kind: str, hang: threading.Event | None = None) -> None:
    """Do ``kind`` (one of ``FAULT_KINDS``) to this process (tests and ``--engine-fault``)."""
    log.warning("injecting the fault %r", kind)
    for h in logging.getLogger().handlers:
        with contextlib.suppress(Exception):
            h.flush()
    actions: dict[str, Callable[[], object]] = {
        "segv": lambda: __import__("ctypes").memset(0, 0, 1),    # in native code, without the GIL, as llama.cpp
        "ill": _illegal_instruction,
        "abort": os.abort,
        "kill": lambda: os.kill(os.getpid(), signal.SIGKILL),
        "hang": lambda: hang.set() if hang is not None else threading.Event().wait(),
    }
    actions[kind]()


def _illegal_instruction() -> None:
    """Execute an undefined instruction (x86-64 ``ud2``) from a page of native code, as a CPU without a build's
    instructions does; where no page may be executable (or on another CPU), send this process SIGILL."""
    import ctypes
    import mmap
    import platform

    if platform.machine() in ("x86_64", "AMD64") and hasattr(mmap, "PROT_EXEC"):
        try:
            page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        except OSError:
            pass
        else:
            page.write(b"\x0f\x0b")                      # ud2
            ctypes.CFUNCTYPE(None)(ctypes.addressof(ctypes.c_char.from_buffer(page)))()
    os.kill(os.getpid(), signal.SIGILL)
