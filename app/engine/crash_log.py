"""A fatal signal's native side in the log: which signal, where, and the last native frames.

``faulthandler`` (enabled in both processes, writing to the log file) prints the Python stacks of every thread
on a fatal signal, but nothing native: a crash inside llama.cpp shows only the Python line that called into
it. ``install(fd)`` puts a handler in front of faulthandler's for SIGSEGV, SIGILL, SIGABRT, SIGBUS and SIGFPE
that first writes, to ``fd``::

    Fatal signal SIGSEGV (segmentation fault, SEGV_MAPERR) in thread 1234 (brook-host-decode): address 0x0;
    pc 0x7f3a2c41e0a3 in /usr/lib/x86_64-linux-gnu/libc.so.6 (+0x16e0a3)
    Native frames (most recent call first):
    /lib/x86_64-linux-gnu/libc.so.6(+0x16e0a3)[0x7f3a2c41e0a3]
    …

— the signal and its code (``siginfo_t``), the faulting address (or the process that sent the signal), the
program counter of the interrupted code (``ucontext_t``, x86-64 only) with the loaded module it falls in and
its nearest exported symbol (``dladdr``), then glibc's ``backtrace``/``backtrace_symbols_fd`` of the crashing
thread (through the signal frame into the code that faulted) — and then calls faulthandler's handler, which
prints the Python stacks and lets the signal end the process as before (its exit status names the signal).

How, and its limits (measured on glibc 2.36, CPython 3.11): the handler is a ``ctypes`` callback installed with
``sigaction(SA_SIGINFO)``. Python cannot install a truly async-signal-safe handler, so it runs Python code in
the crashing thread: it needs the GIL (llama.cpp runs without it, so it gets it within the switch interval),
and a crash inside ``malloc`` with the heap lock held could deadlock it — so it first arms ``alarm(3)``: a
report that does not finish ends the process with SIGALRM. ``backtrace`` is loaded at install time (its first
call may allocate), ``backtrace_symbols_fd`` does not allocate. Frames name exported symbols only (llama.cpp's
``ggml_*`` are; static functions show as ``module(+offset)``: ``addr2line -e MODULE OFFSET`` with debug symbols
names them). A stack overflow in a thread other than the main one cannot run the handler (no alternate
stack): the process still ends by SIGSEGV and faulthandler's stacks are lost. Linux with glibc only
(``install`` returns False elsewhere: then faulthandler alone reports).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import platform
import signal
import sys
import threading
from typing import Any

#: Signals reported (the ones faulthandler handles).
SIGNALS = ("SIGSEGV", "SIGILL", "SIGABRT", "SIGBUS", "SIGFPE")
#: Native frames written at most.
MAX_FRAMES = 64
#: Seconds the report may take before ``alarm`` ends the process (a handler that deadlocked).
REPORT_DEADLINE_S = 3

_SA_SIGINFO = 4
_SIG_DFL, _SIG_IGN = 0, 1
_SI_USER, _SI_TKILL = 0, -6
#: offset of ``uc_mcontext.gregs[REG_RIP]`` in glibc's x86-64 ``ucontext_t``: uc_flags, uc_link, uc_stack
#: (8 + 8 + 24 bytes), then ``gregs[23]`` with REG_RIP = 16
_X86_64_RIP_OFFSET = 40 + 16 * 8

_CODES = {
    "SIGSEGV": {1: "SEGV_MAPERR", 2: "SEGV_ACCERR", 3: "SEGV_BNDERR", 4: "SEGV_PKUERR"},
    "SIGILL": {1: "ILL_ILLOPC", 2: "ILL_ILLOPN", 3: "ILL_ILLADR", 4: "ILL_ILLTRP", 5: "ILL_PRVOPC",
               6: "ILL_PRVREG", 7: "ILL_COPROC", 8: "ILL_BADSTK"},
    "SIGBUS": {1: "BUS_ADRALN", 2: "BUS_ADRERR", 3: "BUS_OBJERR"},
    "SIGFPE": {1: "FPE_INTDIV", 2: "FPE_INTOVF", 3: "FPE_FLTDIV", 4: "FPE_FLTOVF", 5: "FPE_FLTUND",
               6: "FPE_FLTRES", 7: "FPE_FLTINV", 8: "FPE_FLTSUB"},
}
_WORDS = {"SIGSEGV": "segmentation fault", "SIGILL": "illegal instruction", "SIGABRT": "aborted",
          "SIGBUS": "bus error", "SIGFPE": "floating-point exception"}


class _SigInfo(ctypes.Structure):
    # the head of Linux's siginfo_t: the union starts at offset 16 on 64-bit (si_addr, or si_pid + si_uid)
    _fields_ = [("si_signo", ctypes.c_int), ("si_errno", ctypes.c_int), ("si_code", ctypes.c_int),
                ("_pad", ctypes.c_int), ("si_addr", ctypes.c_void_p)]


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p), ("dli_sname", ctypes.c_char_p),
                ("dli_saddr", ctypes.c_void_p)]


_HANDLER = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.POINTER(_SigInfo), ctypes.c_void_p)
_PLAIN = ctypes.CFUNCTYPE(None, ctypes.c_int)


class _SigAction(ctypes.Structure):
    # glibc's struct sigaction on Linux (x86-64, aarch64): handler, sigset_t (1024 bits), flags, restorer
    _fields_ = [("sa_handler", ctypes.c_void_p), ("sa_mask", ctypes.c_ulong * 16), ("sa_flags", ctypes.c_int),
                ("sa_restorer", ctypes.c_void_p)]


class _State:
    def __init__(self, libc: Any, fd: int) -> None:
        self.libc = libc
        self.fd = fd
        self.frames = (ctypes.c_void_p * MAX_FRAMES)()
        self.callback = _HANDLER(_on_fatal)          # kept alive for the process's life
        self.previous: dict[int, _SigAction] = {}


_state: _State | None = None
_lock = threading.Lock()


def install(fd: int) -> bool:
    """Report fatal signals' native side to file descriptor ``fd`` (the log file) before faulthandler's Python
    stacks; call it after ``faulthandler.enable``. Idempotent (a second call only changes ``fd``). False where
    it cannot work (not Linux with glibc, no ``backtrace``): faulthandler alone reports there."""
    global _state
    if not sys.platform.startswith("linux"):
        return False
    with _lock:
        if _state is not None:
            _state.fd = fd
            return True
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.backtrace.restype = ctypes.c_int
            libc.backtrace.argtypes = [ctypes.c_void_p, ctypes.c_int]
            libc.backtrace_symbols_fd.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
            libc.dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
            libc.sigaction.argtypes = [ctypes.c_int, ctypes.POINTER(_SigAction), ctypes.POINTER(_SigAction)]
            libc.alarm.argtypes = [ctypes.c_uint]
        except (OSError, AttributeError):           # musl and others without backtrace
            return False
        state = _State(libc, fd)
        libc.backtrace(state.frames, MAX_FRAMES)     # loads the unwinder now: its first call may allocate
        for name in SIGNALS:
            sig = int(getattr(signal, name))
            old = _SigAction()
            new = _SigAction()
            new.sa_handler = ctypes.cast(state.callback, ctypes.c_void_p)
            new.sa_flags = _SA_SIGINFO
            if libc.sigaction(sig, ctypes.byref(new), ctypes.byref(old)) == 0:
                state.previous[sig] = old
        _state = state
        return bool(state.previous)


def describe(sig: int, code: int, addr: int, pc: int | None) -> str:
    """The report's first lines for signal ``sig`` with ``siginfo``'s ``code`` and address field ``addr`` (the
    sender's pid for a signal sent by a process) and the interrupted program counter ``pc`` (None: unknown)."""
    try:
        name = signal.Signals(sig).name
    except ValueError:
        name = f"signal {sig}"
    thread = threading.current_thread()
    if code in (_SI_USER, _SI_TKILL):
        pid = addr & 0xFFFFFFFF
        origin = "itself" if pid == os.getpid() else f"process {pid}"
        what, where = "sent by a process", f"sent by {origin}"
    else:
        what, where = _CODES.get(name, {}).get(code, f"code {code}"), f"address {addr:#x}"
    text = (f"Fatal signal {name} ({_WORDS.get(name, name)}, {what}) in thread {threading.get_native_id()} "
            f"({thread.name}): {where}")
    if pc:
        text += f";\npc {pc:#x} in {module_at(pc)}"
    return text + "\n"


def module_at(address: int) -> str:
    """The loaded module ``address`` falls in and its nearest exported symbol (``dladdr``):
    ``/path/libggml-cpu.so (ggml_graph_compute+0x1c)`` or ``/path/libc.so.6 (+0x16e0a3)``; "no loaded module
    (anonymous memory)" outside every module."""
    libc = _state.libc if _state is not None else ctypes.CDLL(None)
    info = _DlInfo()
    if not address or not libc.dladdr(ctypes.c_void_p(address), ctypes.byref(info)) or not info.dli_fname:
        return "no loaded module (anonymous memory)"
    path = info.dli_fname.decode("utf-8", "replace") or sys.executable
    if info.dli_sname:
        return f"{path} ({info.dli_sname.decode('utf-8', 'replace')}+{address - (info.dli_saddr or 0):#x})"
    return f"{path} (+{address - (info.dli_fbase or 0):#x})"


def _pc(context: int | None) -> int | None:
    if not context or platform.machine() not in ("x86_64", "AMD64"):
        return None
    return int(ctypes.c_uint64.from_address(context + _X86_64_RIP_OFFSET).value)


def _on_fatal(sig: int, info: Any, context: int | None) -> None:
    state = _state
    if state is None:      # pragma: no cover - installed before _state is set only for an instant
        return
    libc = state.libc
    with contextlib.suppress(BaseException):
        libc.alarm(REPORT_DEADLINE_S)
        si = info.contents
        pc = _pc(context)
        os.write(state.fd, describe(sig, si.si_code, int(si.si_addr or 0), pc).encode("utf-8", "replace"))
        os.write(state.fd, b"Native frames (most recent call first):\n")
        n = libc.backtrace(state.frames, MAX_FRAMES)
        # the frames of this handler come first (ctypes, Python, the kernel's signal frame): start at the
        # interrupted code when it is found among them
        first = next((i for i in range(n) if state.frames[i] == pc), 0) if pc else 0
        libc.backtrace_symbols_fd(ctypes.byref(state.frames, first * ctypes.sizeof(ctypes.c_void_p)), n - first,
                                  state.fd)
        os.write(state.fd, b"\n")
    _chain(sig, info, context)


def _chain(sig: int, info: Any, context: int | None) -> None:
    """Hand the signal to the handler that was there before (faulthandler's: the Python stacks), then make
    sure it ends the process with its default action."""
    state = _state
    assert state is not None
    old = state.previous.get(sig)
    handler = int(old.sa_handler or 0) if old is not None else 0
    with contextlib.suppress(BaseException):
        if handler not in (_SIG_DFL, _SIG_IGN):
            if old is not None and old.sa_flags & _SA_SIGINFO:
                _HANDLER(handler)(sig, info, context)
            else:
                _PLAIN(handler)(sig)
    dfl = _SigAction()
    state.libc.sigaction(sig, ctypes.byref(dfl), None)
    getattr(state.libc, "raise")(sig)       # pending until this handler returns (it is blocked meanwhile)
