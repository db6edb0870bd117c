"""What the window process says when its engine host dies: the errors and the words for an exit.

``HostGone`` is how the window's end of a host (``app.engine.host_link``) reports that the process ended (its
exit status) or was killed for a deadline; ``HostGone.crashed`` turns it into the ``EngineCrashed`` a reply or
a load ends with, whose ``stop_reason`` names the signal ("the model process crashed: illegal instruction
(SIGILL)"). ``rebuild_error`` turns an error the host sent back as (class name, message) into the same class
here (``ContextOverflowError``, ``ChatTemplateError``, ``HostMemoryError``, …).
"""

from __future__ import annotations

import signal

from app.engine.base import (
    ContextOverflowError,
    EngineError,
    EngineNotLoadedError,
    InvalidModelError,
    ModelNotFoundError,
)


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


def rebuild_error(kind: str, message: str) -> Exception:
    cls = _error_classes().get(kind)
    if cls is None:
        return EngineError(f"The model failed: {kind}: {message}")
    return cls(message)


class HostGone(Exception):
    """The host ended (``exitcode``) or was killed for a deadline (``hung`` names what)."""

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
