"""A Stop that llama.cpp sees between two nodes of its compute graph, without Python: ``NativeAbort``.

llama.cpp calls a context's abort callback (``llama_set_abort_callback``) between the nodes of every graph it
computes, prefill and each token's decode alike; when it returns true, ``llama_decode`` stops and returns 2,
and llama.cpp removes that batch's positions from the KV cache (what came before stays; llama-cpp-python counts
only batches that finished, so its ``n_tokens`` still matches the cache). A Python callback costs a GIL round
trip per node (hundreds per token), too much to leave installed while decoding. This one is native: libc's
``strlen`` over a two-byte flag, ``b"\\0\\0"`` (0: go on) or ``b"\\1\\0"`` (1: abort) — a function already in
every process whose result is the flag, returned in the same register as the callback's ``bool`` (x86-64 and
arm64 callers test its low byte; ``strlen`` returns exactly 0 or 1 here). Setting the flag is one byte written
by the thread that pressed Stop; the decode thread's next graph node sees it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import sys
from typing import Any

log = logging.getLogger("brook.engine.llama")


def _strlen() -> Any:
    if sys.platform == "win32":
        return ctypes.cdll.msvcrt.strlen
    name = ctypes.util.find_library("c")
    return (ctypes.CDLL(name) if name else ctypes.CDLL(None)).strlen


class NativeAbort:
    """One llama.cpp context's abort flag: ``install(ctx)`` once after the context is made, then ``set()`` (from
    any thread: Stop) ends the graph being computed at its next node; ``clear()`` before the next decode.
    ``available`` is False when this llama-cpp-python has no ``llama_set_abort_callback`` or libc has no
    ``strlen`` reachable (then ``install`` does nothing)."""

    def __init__(self) -> None:
        self.flag = ctypes.create_string_buffer(2)       # b"\0\0": go on
        self.callback: Any = None
        try:
            import llama_cpp

            self._set_callback = llama_cpp.llama_set_abort_callback
            address = ctypes.cast(_strlen(), ctypes.c_void_p).value
            if address:
                self.callback = llama_cpp.ggml_abort_callback(address)
        except (ImportError, AttributeError, OSError, TypeError):
            log.debug("no native abort callback; Stop waits for the current token", exc_info=True)

    @property
    def available(self) -> bool:
        return self.callback is not None

    @property
    def data(self) -> int | None:
        """The flag's address, the callback's argument."""
        return ctypes.cast(self.flag, ctypes.c_void_p).value

    def install(self, ctx: Any) -> bool:
        """Make llama.cpp check the flag while computing on context ``ctx`` (a ``llama_context_p``)."""
        if self.callback is None:
            return False
        self._set_callback(ctx, self.callback, self.data)
        return True

    def set(self) -> None:
        self.flag[0] = b"\x01"

    def clear(self) -> None:
        self.flag[0] = b"\x00"

    def is_set(self) -> bool:
        return self.flag.raw[:1] == b"\x01"

    def check(self) -> bool:
        """What llama.cpp's next call of the callback would return (the native function, called from here)."""
        return bool(self.callback is not None and self.callback(self.data))
