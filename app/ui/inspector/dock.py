"""The stream inspector's dock (View → Stream inspector, Ctrl+Shift+I): ``install_inspector`` adds it to the
window, hidden, following the replies the render tick paints.

Its content (``app.ui.inspector.panel.StreamInspector``: the timeline plot and figures, which need numpy) is built
the first time the dock opens (or ``inspector`` is read), so the window's start-up imports none of it
(``tests/test_startup_imports.py``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QCoreApplication, QEvent, Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QDockWidget, QMainWindow, QWidget

from app.core.chat.session import ChatSession
from app.core.conversation import Conversation, Message, Role
from app.core.errors import BrookError
from app.core.history.store import Store
from app.core.streaming.metrics import StreamMetrics
from app.core.streaming.watchdog import LoopWatchdog
from app.ui.messages.coalescer import Coalescer

if TYPE_CHECKING:
    from app.ui.inspector.panel import StreamInspector

log = logging.getLogger("brook.ui.inspector")

translate = QCoreApplication.translate   # lupdate reads translate("Context", "text") calls


class StreamInspectorDock(QDockWidget):
    """The inspector in a dock (``inspector`` is the ``StreamInspector``, made the first time it is read or the
    dock opens). It follows the reply that is streaming (``on_painted``, from the coalescer's ``painted`` signal)
    unless one was chosen with ``inspect``."""

    def __init__(self, parent: QWidget | None = None,
                 metrics_for: Callable[[Message], StreamMetrics | None] | None = None,
                 stored_for: Callable[[Message], dict[str, Any] | None] | None = None,
                 shown_chat: Callable[[], Conversation] | None = None,
                 watchdog: Callable[[], LoopWatchdog | None] | None = None) -> None:
        super().__init__(translate("Inspector", "Stream inspector"), parent)
        self.setObjectName("streamInspector")
        self._inspector: StreamInspector | None = None
        self.setAllowedAreas(Qt.DockWidgetArea.BottomDockWidgetArea | Qt.DockWidgetArea.RightDockWidgetArea)
        self.pinned: Message | None = None
        self.metrics_for = metrics_for or (lambda _reply: None)   # a reply's live metrics (its generation's)
        self.stored_for = stored_for or (lambda _reply: None)     # a finished reply's timeline from the history
        self.shown_chat = shown_chat          # the chat shown: the dock opens on its latest reply
        self.watchdog = watchdog or (lambda: None)                # the loop watchdog, started by the launcher

    @property
    def inspector(self) -> StreamInspector:
        """The dock's content; the first read builds it (and imports numpy, for the timeline's arrays)."""
        if self._inspector is None:
            from app.ui.inspector.panel import StreamInspector

            self._inspector = StreamInspector(self)
            self.setWidget(self._inspector)
            watchdog = self.watchdog()
            if watchdog is not None:
                self._inspector.set_watchdog(watchdog)
        return self._inspector

    @property
    def built(self) -> bool:
        """Whether the content exists yet (it does once the dock was opened)."""
        return self._inspector is not None

    def set_watchdog(self, watchdog: LoopWatchdog | None) -> None:
        """The loop watchdog whose stalls are drawn changed (a new threshold): tell the content, if built (a
        content built later reads ``watchdog()`` itself)."""
        if self._inspector is not None:
            self._inspector.set_watchdog(watchdog)

    def setVisible(self, visible: bool) -> None:
        if visible:
            self.inspector          # noqa: B018 - the content exists before the dock is laid out and shown
        super().setVisible(visible)

    def name_action(self) -> None:
        """The text of View → Stream inspector (Qt renames the dock's toggle action after its title, which
        has no accelerator: set again after a live language switch)."""
        action = self.toggleViewAction()
        action.setText(QCoreApplication.translate("Inspector", "Stream &inspector"))
        action.setToolTip(QCoreApplication.translate(
            "Inspector", "Where each chunk of a reply waited: timeline, queue, ticks, stalls (Ctrl+Shift+I)"))

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.LanguageChange:
            self.setWindowTitle(translate("Inspector", "Stream inspector"))
            self.name_action()

    def _show(self, reply: Message) -> None:
        metrics = self.metrics_for(reply)
        self.inspector.set_reply(reply, metrics, None if metrics is not None else self.stored_for(reply))

    def inspect(self, reply: Message | None) -> None:
        """Show ``reply`` (the selected one) and stay on it; None: follow the streaming reply again."""
        self.pinned = reply
        if reply is not None:
            self._show(reply)
            self.show()
            self.raise_()

    def on_painted(self, reply: Message, _n: int = 0) -> None:
        """A render tick painted ``reply``: follow it (when nothing is pinned) and let the inspector redraw."""
        if not self.isVisible() or self._inspector is None:
            return
        if self.pinned is None and self.inspector.reply is not reply:
            self._show(reply)
        self.inspector.poke()

    def showEvent(self, event: Any) -> None:
        super().showEvent(event)
        watchdog = self.watchdog()
        if self.inspector.watchdog is None and watchdog is not None:
            self.inspector.set_watchdog(watchdog)
        if self.inspector.reply is None and self.shown_chat is not None:     # nothing yet: the chat's latest reply
            replies = [m for m in self.shown_chat().messages if m.role is Role.ASSISTANT]
            if replies:
                self._show(replies[-1])


def install_inspector(window: QMainWindow, coalescer: Coalescer, session: ChatSession | None = None,
                      store: Store | None = None, shown_chat: Callable[[], Conversation] | None = None,
                      watchdog: Callable[[], LoopWatchdog | None] | None = None) -> StreamInspectorDock:
    """Add the stream inspector to ``window``: a dock at the bottom, hidden, toggled by its
    ``toggleViewAction()`` (Ctrl+Shift+I, window-wide; the caller puts it in its View menu), following the replies
    ``coalescer`` paints.

    Args:
        window: the window the dock docks into.
        coalescer: the render tick whose painted replies the dock follows.
        session: where a running reply's live metrics come from (``generation_of``); else from the coalescer.
        store: where a finished reply's stored timeline is read from (None: only live replies).
        shown_chat: the chat shown (the dock opens on its latest reply); default: the session's.
        watchdog: the event-loop watchdog whose stalls are drawn (read when the dock opens).

    Returns:
        The dock (``dock.inspect(reply)`` shows a chosen reply).
    """

    def metrics_for(reply: Message) -> StreamMetrics | None:
        gen = session.generation_of(reply) if session is not None else None
        return gen.metrics if gen is not None else coalescer.metrics_of(reply)

    def stored_for(reply: Message) -> dict[str, Any] | None:
        if store is None or reply.db_id is None or not reply.status.final:
            return None
        try:
            return store.load_timeline(reply.db_id)
        except BrookError as exc:             # HistoryError: the reply's summary is shown instead
            log.warning("loading the timeline of reply %s failed: %s", reply.id, exc)
            return None

    if shown_chat is None and session is not None:
        shown_chat = lambda: session.conversation  # noqa: E731
    dock = StreamInspectorDock(window, metrics_for, stored_for, shown_chat, watchdog)
    window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, dock)
    dock.hide()

    def first_show(visible: bool) -> None:
        # the dock's size hint would take most of the window's height and leave the chat ~100 px: the first time
        # it opens it gets at most 40 % of the height (the person's own resizing is kept after that)
        if visible and not dock.isFloating() and not dock.property("brookSized"):
            dock.setProperty("brookSized", True)
            height = max(dock.minimumSizeHint().height(), int(window.height() * 0.4))
            window.resizeDocks([dock], [height], Qt.Orientation.Vertical)

    dock.visibilityChanged.connect(first_show)
    action = dock.toggleViewAction()
    dock.name_action()
    action.setShortcut(QKeySequence("Ctrl+Shift+I"))
    window.addAction(action)
    coalescer.painted.connect(dock.on_painted)
    return dock
