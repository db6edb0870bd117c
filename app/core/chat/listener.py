"""What a chat session tells its view (no Qt): the ``SessionListener`` (every method a no-op by default, so a
session can run with no view at all), the model's state (``ModelState``) and a notice's kind (``NoticeKind``; the
view gives each kind its look). ``app.core.chat.session`` names them too, for the callers that import them there.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.core.conversation import Conversation, Message
    from app.core.streaming.generation import Generation


class ModelState(enum.Enum):
    """Where the session's engine is: loading it, ready (``IDLE``, replies run), failed to load (``ERROR``;
    ``ChatSession.load_error`` says why), or unloaded to free its memory (the next send loads it again)."""

    LOADING = "loading"
    IDLE = "idle"
    ERROR = "error"
    UNLOADED = "unloaded"


class NoticeKind(enum.Enum):
    """What a notice is: information, or an error (the view gives each its look)."""

    INFO = "info"
    ERROR = "error"


class SessionListener:
    """What the view is told. Override what you draw; each default does nothing."""

    def conversation_shown(self, conv: Conversation) -> None:
        """``conv`` is now the current conversation (new, opened, or after a delete)."""

    def message_added(self, conv: Conversation, msg: Message) -> None:
        """``msg`` was appended to ``conv`` (a user message, or a reply about to generate)."""

    def message_removed(self, conv: Conversation, msg: Message) -> None:
        """``msg`` left ``conv`` (deleted; or about to be drawn again: ``app.core.chat.session_ops``)."""

    def reply_started(self, gen: Generation) -> None:
        """A generation began (``gen.reply`` was added just before)."""

    def reply_changed(self, gen: Generation) -> None:
        """``gen.reply``'s status, error or figures changed (also once more after it ended, with final figures)."""

    def reply_stopping(self, gen: Generation) -> None:
        """Stop was pressed: paint what has arrived now and freeze the reply's view; nothing later is shown."""

    def reply_ended(self, gen: Generation) -> None:
        """``gen.reply`` reached a final status (once per generation); it has been saved."""

    def busy_changed(self) -> None:
        """The set of conversations with a running reply changed (``ChatSession.busy_conversations``)."""

    def history_changed(self) -> None:
        """The saved conversations' list changed (new chat saved, deleted, restored)."""

    def model_state_changed(self, state: ModelState) -> None:
        """``ChatSession.model_state`` changed (``load_error`` says why an ``ERROR``)."""

    def load_progress(self, fraction: float) -> None:
        """The engine reported load progress (0..1), from its thread, re-posted on the loop."""

    def notice(self, text: str, kind: NoticeKind) -> None:
        """A sentence for the user, in English (the view translates it: ``QT_TRANSLATE_NOOP`` templates)."""
