"""The window process's end of one engine host: the process, its two pipes, and the stream protocol.

``start_host`` starts the child (``app.engine.host``) and returns a ``HostLink``; ``HostedEngine``
(``app.engine.hosted``) decides when hosts start, load and end. Here:

- **Framing**: every message is one pickled tuple over a ``multiprocessing`` pipe (``Connection`` frames it).
  ``send`` may be called from any thread (the Stop callback sends from the thread that pressed it).
- **Deadlines**: ``recv`` and ``call`` wait at most their deadline; past it the host is killed and
  ``HostGone`` says what it did not do ("no token within 30 s").
- **Credits**: ``stream`` lets the host send ``CREDIT_WINDOW`` chunks ahead of what its consumer took, and
  grants more as chunks are taken (half a window at a time), so a consumer that stops taking chunks pauses
  decode in the host after at most ``CREDIT_WINDOW`` chunks and the pipe never holds more.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import pickle
import signal
import sys
import threading
import time
import weakref
from collections.abc import Callable, Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core.types import Chunk, GenerationParams
from app.engine.host_crash import HostGone, rebuild_error
from app.engine.host_pipe import FramedPipe

log = logging.getLogger("brook.engine.hosted")

#: Chunks the host may send ahead of what the window's worker thread took (credit flow control).
CREDIT_WINDOW = 64
#: Seconds a hung host is given to write its stacks to the log before it is killed.
STACKS_WAIT_S = 0.2


@dataclass(frozen=True, slots=True)
class Deadlines:
    """How long (s) a stream waits for each step before the host is deemed hung: the chat template and
    tokenizing (``render_s``), prompt → first token (``prefill_s``), between tokens (``token_s``), Stop → the
    host's answer (``stop_s``)."""

    render_s: float
    prefill_s: float
    token_s: float
    stop_s: float


def start_host(options: dict[str, Any], mode: str) -> HostLink:
    """Start an engine host process and send it ``options`` (the host's: ``log_path``, ``memory_limit_mb``,
    ``env``, ``debug``, ``load_nice``; ``mode`` is only logged).

    On POSIX it is a plain child process (``subprocess``: a new interpreter, never a fork of a process that runs
    Qt) that runs ``app.engine.host.child_main`` on two socket pairs (``FramedPipe``), started with ``-S`` and
    this process's ``sys.path`` (no ``site``: its ``.pth`` files and import hooks ran here already), so it
    imports only what the engine needs — no ``multiprocessing`` bootstrap, no resource tracker process, no
    import of the launcher as ``__mp_main__``. A frozen app runs its own executable with ``--engine-host``
    (``packaging/entry.py``). Elsewhere (Windows) it is a ``multiprocessing`` *spawn* child."""
    if os.name != "posix":
        return _start_spawned(options, mode)
    import socket
    import subprocess

    ctl_sock, ctl_child = socket.socketpair()
    rpc_sock, rpc_child = socket.socketpair()
    fds = (ctl_child.fileno(), rpc_child.fileno())
    try:
        popen = subprocess.Popen(host_command(fds), stdin=subprocess.DEVNULL, pass_fds=fds)
    finally:
        ctl_child.close()
        rpc_child.close()
    ctl, rpc = FramedPipe(ctl_sock.detach()), FramedPipe(rpc_sock.detach())
    proc = HostProcess(popen)
    link = HostLink(proc, ctl, rpc)
    with contextlib.suppress(OSError):
        ctl.send(options)       # a host that died at once: the next recv says how
    log.info("engine host %s started (%s mode)", proc.pid, mode)
    return link


#: What a host's interpreter runs (``host_command``): ``sys.path`` from its arguments after the two descriptors.
_BOOT = "import sys; sys.path[:] = sys.argv[3:]; from app.engine.host import child_main; child_main(sys.argv[1:3])"


def host_command(fds: tuple[int, int]) -> list[str]:
    """The command line of an engine host on the control and call pipes' descriptors ``fds``: from source,
    ``python -S -c _BOOT CTL RPC PATH…`` (``sys.path``: the folder that holds ``app``, then this process's)."""
    if getattr(sys, "frozen", False):
        return [sys.executable, "--engine-host", *map(str, fds)]
    root = str(Path(__file__).resolve().parents[2])
    return [sys.executable, "-S", "-c", _BOOT, *map(str, fds), root, *sys.path]


class HostProcess:
    """A host started by ``start_host`` (a ``subprocess.Popen``), with the parts of ``multiprocessing.Process``
    that ``HostLink`` uses: ``pid``, ``is_alive``, ``join``, ``kill``, ``exitcode`` (negative: the signal that
    ended it, as ``Process.exitcode``). Hosts still running when this process exits are killed (as
    ``multiprocessing`` ends its daemon children)."""

    def __init__(self, popen: Any) -> None:
        self._popen = popen
        _running.add(self)

    @property
    def pid(self) -> int:
        return int(self._popen.pid)

    @property
    def exitcode(self) -> int | None:
        code = self._popen.poll()
        if code is not None:
            _running.discard(self)
        return None if code is None else int(code)

    def is_alive(self) -> bool:
        return self.exitcode is None

    def join(self, timeout: float | None = None) -> None:
        import subprocess

        with contextlib.suppress(subprocess.TimeoutExpired):
            self._popen.wait(timeout)
        _ = self.exitcode

    def kill(self) -> None:
        if self._popen.poll() is None:
            with contextlib.suppress(OSError):
                self._popen.kill()


_running: weakref.WeakSet[HostProcess] = weakref.WeakSet()


@atexit.register
def _kill_running() -> None:
    for proc in list(_running):
        proc.kill()
        proc.join(1.0)


def _start_spawned(options: dict[str, Any], mode: str) -> HostLink:
    """A host as a ``multiprocessing`` *spawn* child (``app.engine.host.host_main``), where no descriptors can be
    passed to a plain process (Windows)."""
    import multiprocessing

    from app.engine.host import host_main

    ctx = multiprocessing.get_context("spawn")
    ctl, ctl_child = ctx.Pipe()
    rpc, rpc_child = ctx.Pipe()
    proc = ctx.Process(target=host_main, args=(ctl_child, rpc_child, options), name="brook-engine-host",
                       daemon=True)
    proc.start()
    ctl_child.close()
    rpc_child.close()
    log.info("engine host %s started (%s mode)", proc.pid, mode)
    return HostLink(proc, ctl, rpc)


def host_options(memory_limit_mb: int | None, safe: bool, load_nice: int = 0) -> dict[str, Any]:
    """The options a new host starts with: the app's log file, the memory limit (``_memory_limit``), safe mode's
    environment (no extra CPU buffer types), whether Brook logs at debug level, and ``load_nice``: how much lower
    than the window's the priority of its llama.cpp import and first load is (``app.engine.host.run_niced``;
    0: the same)."""
    return {"log_path": _log_file(), "memory_limit_mb": _memory_limit(memory_limit_mb),
            "env": {"BROOK_EXTRA_BUFTS": "0"} if safe else {},
            "debug": logging.getLogger("brook").isEnabledFor(logging.DEBUG), "load_nice": load_nice}


class HostLink:
    """One engine host process and the window's ends of its two pipes (``start_host`` starts one)."""

    def __init__(self, proc: Any, ctl: Any, rpc: Any) -> None:
        self.proc, self.ctl, self.rpc = proc, ctl, rpc
        self.send_lock = threading.Lock()
        self.rpc_lock = threading.Lock()
        self.killed_for: str | None = None
        #: the last finished stream's decode-thread figures (``app.engine.host.DecodeClock.stop``)
        self.last_decode: dict[str, Any] | None = None
        self.load_sent = False
        self.loaded = False

    @property
    def pid(self) -> int | None:
        return int(self.proc.pid) if self.proc.pid is not None else None

    def alive(self) -> bool:
        return bool(self.proc.is_alive()) and self.killed_for is None

    def send(self, msg: tuple[Any, ...]) -> None:
        """Send one control message (from any thread; never waits for the process)."""
        data = pickle.dumps(msg, pickle.HIGHEST_PROTOCOL)     # as the host sends (``Host.send``)
        try:
            with self.send_lock:
                self.ctl.send_bytes(data)
        except (OSError, ValueError) as exc:    # a closed pipe: the host is gone (recv says how)
            raise HostGone(self.proc.exitcode, self.killed_for) from exc

    def recv(self, timeout: float | None, what: str) -> Any:
        """The next control message; ``HostGone`` when the host ends, or when nothing comes within ``timeout``
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

    def gone(self) -> HostGone:
        if self.killed_for is not None:
            return HostGone(None, self.killed_for)
        self.proc.join(2.0)
        return HostGone(self.proc.exitcode)

    def kill(self, why: str | None = None) -> None:
        """End the process now; ``why`` (a missed deadline) is logged and kept for ``gone``, and the host is first
        asked for its Python stacks (SIGUSR1: faulthandler writes them to the log)."""
        if why is not None and self.killed_for is None:
            self.killed_for = why
            log.error("engine host %s killed: %s (its threads' stacks follow in the log)", self.pid, why)
            sig = getattr(signal, "SIGUSR1", None)
            if sig is not None and self.pid is not None and self.proc.is_alive():
                with contextlib.suppress(OSError):
                    os.kill(self.pid, sig)
                    self.proc.join(STACKS_WAIT_S)        # faulthandler writes at once; the process goes on
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

    def call(self, method: str, args: tuple[Any, ...], deadline_s: float) -> Any:
        """One call on the call pipe (``count_tokens``, ``prompt_tokens``, ``fit_context``): its result, or the
        error the host raised (rebuilt); ``HostGone`` when the host died or did not answer within
        ``deadline_s`` seconds (then it is killed: a chat template that never ends)."""
        with self.rpc_lock:
            try:
                self.rpc.send(("call", method, args))
                if not self.rpc.poll(deadline_s):
                    self.kill(f"the chat template was not rendered within {deadline_s:g} s")
                    raise self.gone()
                reply = self.rpc.recv()
            except (EOFError, OSError, ValueError):
                raise self.gone() from None
        if reply[0] == "error":
            raise rebuild_error(reply[1], reply[2])
        return reply[1]

    def stream(self, sid: int, messages: list[dict[str, str]], fitted: dict[str, int] | None,
               params: GenerationParams, stop: threading.Event, deadlines: Deadlines,
               fault: tuple[str, float, str] | None = None,
               on_fit: Callable[[int, int], None] | None = None) -> Generator[Chunk, None, None]:
        """Stream ``sid`` of this host: its chunks as the host sends them, against credits (see the module
        docstring); ``fitted``: the facts of messages ``fit_context`` returned (the host does not fit again);
        without them the host fits ``messages`` to the context window and ``on_fit(left_out, prompt_tokens)``
        is called with what it found, before the first chunk.
        Raises what the host raised (rebuilt: ``ContextOverflowError``, ``ChatTemplateError``, …) and
        ``HostGone`` when it died or missed one of ``deadlines`` (then it is killed). Closing the generator
        early (Stop, the consumer left) sends ``stop`` and waits for the host's answer."""
        self.send(("stream", sid, messages, fitted, params, CREDIT_WINDOW, fault))
        stopped = threading.Event()

        def send_stop() -> None:
            if not stopped.is_set():
                stopped.set()
                with contextlib.suppress(HostGone):
                    self.send(("stop", sid))

        add = getattr(stop, "add_callback", None)
        remove: Callable[[], None] = add(send_stop) if add is not None else (lambda: None)
        poll = None if add is not None else 0.01       # a plain Event: look at it between waits
        ended = False
        granted, taken = CREDIT_WINDOW, 0
        phase = f"the chat template was not rendered within {deadlines.render_s:g} s"
        deadline = deadlines.render_s
        between_tokens = f"no token within {deadlines.token_s:g} s"
        try:
            while True:
                msg = self._next(deadline, phase, stop, poll, send_stop)
                kind = msg[0]
                if kind == "chunk":
                    if msg[1] != sid:
                        continue
                    phase, deadline = between_tokens, deadlines.token_s
                    if stop.is_set():
                        continue                  # produced as Stop came: dropped; the host ends within a token
                    yield Chunk(msg[2], msg[3], msg[4])
                    taken += 1
                    if granted - taken <= CREDIT_WINDOW // 2:
                        self.send(("credit", sid, CREDIT_WINDOW - (granted - taken)))
                        granted = taken + CREDIT_WINDOW
                elif kind == "fitted":
                    if msg[1] == sid and on_fit is not None:
                        on_fit(msg[2], msg[3])
                elif kind == "prompt":
                    phase = f"no first token within {deadlines.prefill_s:g} s"
                    deadline = deadlines.prefill_s
                elif kind == "end":
                    ended = True
                    self.last_decode = msg[2] if len(msg) > 2 else None
                    return
                elif kind == "error":
                    ended = True
                    raise rebuild_error(msg[1], msg[2])
        finally:
            remove()
            if not ended and self.alive():
                send_stop()                       # the consumer left (Stop, queue closed): end the host's decode
                with contextlib.suppress(HostGone):
                    while self._next(deadlines.stop_s, "Stop was not answered", None, None,
                                       send_stop)[0] not in ("end", "error"):
                        pass

    def _next(self, deadline: float, what: str, stop: threading.Event | None, poll: float | None,
              send_stop: Callable[[], None]) -> Any:
        """The next message within ``deadline`` seconds; with ``poll``, ``stop`` is looked at every ``poll`` s
        (a plain ``threading.Event`` has no callback) and forwarded to the self."""
        if poll is None or stop is None:
            return self.recv(deadline, what)
        t_end = time.monotonic() + deadline
        while True:
            if stop.is_set():
                send_stop()
                return self.recv(max(0.0, t_end - time.monotonic()), what)
            left = t_end - time.monotonic()
            if left <= 0 or self.ctl.poll(min(poll, left)):
                return self.recv(max(0.0, left), what)


def _log_file() -> str | None:
    """The app's log file, when logging writes one (the host appends to it, faulthandler included); a handler
    that writes to ``os.devnull`` is none."""
    for h in logging.getLogger().handlers:
        name = getattr(h, "baseFilename", None)
        if name and os.path.abspath(name) != os.path.abspath(os.devnull):
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
