"""Errors that carry a message a person can act on.

The UI shows ``str(error)``; the log keeps the traceback.
"""

from __future__ import annotations


class BrookError(Exception):
    """Base class of every error Brook shows to a person."""


class GenerationTimeout(BrookError):
    """A reply ran past its first-token or total time budget (seconds, from settings)."""

    def __init__(self, kind: str, seconds: float) -> None:
        self.kind = kind  # "first token" | "total"
        self.seconds = seconds
        if kind == "first token":
            msg = (f"The model produced no token within {seconds:g} s (first-token timeout). "
                   "The prompt may be too long for this machine; raise the timeout in Settings.")
        else:
            msg = (f"The reply took longer than {seconds:g} s (total timeout) and was cut off; "
                   "the text so far is kept.")
        super().__init__(msg)


class HistoryError(BrookError):
    """The chat history file could not be read or written (read-only, locked, disk full, damaged)."""


class LoadCancelled(BrookError):
    """Loading a model was cancelled (the load progress's Cancel); nothing of it stays in memory."""

    def __init__(self, name: str = "") -> None:
        self.name = name
        # the texts are also in the ``Notes`` context of the translations (app.core.chat.notes)
        super().__init__(f"Loading {name} was cancelled." if name else "Loading the model was cancelled.")
