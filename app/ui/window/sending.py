"""What happens around a send: a message typed while the shown chat's reply streams waits in a queue (sent as
soon as the reply ends, never dropped), and idle unload frees the model after a quiet while (the next send loads
it again first)."""

from __future__ import annotations

import asyncio
from typing import Any

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QStatusBar

from app.core.chat.idle import IdleUnloader
from app.core.chat.session import ChatSession
from app.core.chat.session_ops import SendQueue


class Sending(QObject):
    """The send queue and the idle unloader of a window.

    Args:
        session: the chat session messages are sent on.
        status: where the number of waiting messages is said.
    """

    def __init__(self, session: ChatSession, status: QStatusBar, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.status = status
        self.queue = SendQueue(session)
        self.idle = IdleUnloader(session.settings.idle_unload_minutes, lambda: bool(session.running),
                                 session.unload)
        self._tasks: set[asyncio.Future[Any]] = set()

    def queue_message(self, text: str) -> None:
        """A message typed while the shown chat's reply streams: sent as soon as the reply ends."""
        self.queue.pending.append((self.session.conversation, text))
        self.status.showMessage(self.tr("%n message(s) waiting: sent when the reply ends", "",
                                        len(self.queue.pending)))

    def before_send(self) -> None:
        """Load the model again first when idle unload freed it."""
        if self.idle.unloaded:
            self.idle.unloaded = False
            task = asyncio.ensure_future(self.session.load())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def reply_finished(self) -> None:
        """A reply ended: the idle countdown starts again, and the next waiting message goes out."""
        self.idle.touch()
        if self.queue.pending:
            QTimer.singleShot(0, self, self._pump)

    def _pump(self) -> None:
        reply = self.queue.pump()
        if reply is not None and not self.queue.pending:
            self.status.clearMessage()
