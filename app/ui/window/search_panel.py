"""Search all chats as you type: a query box over a list of hits — chats whose title matches first, then messages
(chat title, highlighted snippet).

Thin: ``Store.search_titles`` and ``Store.search`` (SQLite FTS5, trigram) do the work, on the loop thread (a query
over a personal history takes milliseconds); typing is debounced. Activating a hit (click, Enter) emits
``open_requested(conversation id, message id)`` (message id 0 for a title hit); the window opens that chat, at
that message.
"""

from __future__ import annotations

import html
import time
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent, QTextDocument
from PySide6.QtWidgets import QLabel, QLineEdit, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from app.core.conversation import Conversation
from app.core.history.search import SearchHit, TitleHit
from app.core.history.store import Store

if TYPE_CHECKING:      # the message list comes after the window's first paint (``MainWindow.chat``)
    from app.ui.messages.chat_view import ChatView
    from app.ui.messages.widget import MessageWidget

#: How long a search hit's message stays outlined after it was opened (ms).
OUTLINE_MS = 2500

#: Typing pause before the query runs (ms).
DEBOUNCE_MS = 150


def hit_html(hit: SearchHit) -> str:
    """The snippet as HTML with every matched span in bold (the rest escaped)."""
    return marked_html(hit.snippet, hit.spans)


def marked_html(text: str, spans: tuple[tuple[int, int], ...]) -> str:
    """``text`` as HTML with the ``(start, end)`` character ``spans`` bold and underlined (the rest escaped)."""
    out, pos = [], 0
    for s, e in spans:
        out.append(html.escape(text[pos:s]))
        out.append("<b><u>" + html.escape(text[s:e]) + "</u></b>")
        pos = e
    out.append(html.escape(text[pos:]))
    return "".join(out)


def show_hit(chat: ChatView, conv: Conversation, message_id: int) -> MessageWidget | None:
    """Scroll ``chat`` (showing ``conv``) to the message saved as ``message_id`` and outline it briefly.

    Returns:
        Its widget, or None when ``conv`` has no such message (a title hit: ``message_id`` 0).
    """
    for msg in conv.messages:
        widget = chat.scroll_to(msg) if msg.db_id == message_id else None   # the list makes its widget
        if widget is not None:
            widget.setStyleSheet(f"#{widget.objectName()} {{ border: 2px solid #f59e0b; }}")
            QTimer.singleShot(OUTLINE_MS, widget, lambda wd=widget: wd.setStyleSheet(""))
            return widget
    return None


class SearchPanel(QWidget):
    """Search ``store`` (None: a panel that finds nothing). Signals: ``open_requested(int, int)`` and ``closed()``
    (Esc)."""

    open_requested = Signal(int, int)
    closed = Signal()

    def __init__(self, store: Store | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("searchPanel")
        self.store = store
        self.hits: list[SearchHit] = []
        self.title_hits: list[TitleHit] = []
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.query = QLineEdit()
        self.query.setObjectName("searchQuery")
        self.query.setClearButtonEnabled(True)
        self.query.setPlaceholderText(self.tr("Search all chats…"))
        self.query.setAccessibleName(self.tr("Search all chats"))
        self.query.installEventFilter(self)
        self.results = QListWidget()
        self.results.setObjectName("searchResults")
        self.results.setAccessibleName(self.tr("Search results"))
        self.results.setWordWrap(True)
        self.results.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.results.itemActivated.connect(self._activate)
        self.results.itemClicked.connect(self._activate)
        self.summary = QLabel("")
        self.summary.setObjectName("searchSummary")
        lay.addWidget(self.query)
        lay.addWidget(self.summary)
        lay.addWidget(self.results, 1)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self.run_query)
        self.query.textChanged.connect(lambda _t: self._timer.start())
        self.summary.hide()
        self.results.hide()

    def focus_query(self) -> None:
        self.query.setFocus()
        self.query.selectAll()

    def run_query(self) -> list[SearchHit]:
        """Run the query now (the debounce timer calls it); returns the hits shown."""
        self._timer.stop()
        text = self.query.text()
        self.results.clear()
        store = self.store
        if not text.strip() or store is None:
            self.hits, self.title_hits = [], []
            self.summary.hide()
            self.results.hide()
            return []
        t0 = time.perf_counter()
        self.title_hits = store.search_titles(text, 20)
        self.hits = store.search(text, 50)
        ms = (time.perf_counter() - t0) * 1000
        chat_word = self.tr("Chat")
        for t in self.title_hits:         # chats by title first: opening one shows the chat from its start
            self._add(t.conversation_id, 0, f"<b>{marked_html(t.title, t.spans)}</b><br><i>{chat_word}</i>", t.title)
        for hit in self.hits:
            self._add(hit.conversation_id, hit.message_id,
                      f"<b>{html.escape(hit.conversation_title)}</b><br>{hit_html(hit)}", hit.snippet)
        parts = []
        if self.title_hits:
            parts.append(self.tr("%n chat title(s)", "", len(self.title_hits)))
        if self.hits:
            parts.append(self.tr("%n message(s) found", "", len(self.hits)))
        self.summary.setText(" · ".join(parts) if parts else self.tr("Nothing found"))
        self.summary.setToolTip(self.tr("Search took %1 ms").replace("%1", f"{ms:.1f}"))
        self.summary.show()
        self.results.show()
        if self.results.count():
            self.results.setCurrentRow(0)
        return self.hits

    def _add(self, conv_id: int, message_id: int, rich: str, tip: str) -> None:
        item = QListWidgetItem()
        item.setData(Qt.ItemDataRole.UserRole, (conv_id, message_id))
        label = QLabel(rich)
        label.setWordWrap(True)
        label.setTextFormat(Qt.TextFormat.RichText)
        label.setContentsMargins(4, 3, 4, 3)
        item.setToolTip(tip)
        width = max(120, self.width() - 2 * self.results.frameWidth() - 6)   # the list may not be laid out yet
        doc = QTextDocument()
        doc.setDefaultFont(label.font())
        doc.setHtml(rich)
        doc.setTextWidth(width - 8)
        item.setSizeHint(QSize(width, int(doc.size().height()) + 8))
        self.results.addItem(item)
        self.results.setItemWidget(item, label)

    def _activate(self, item: QListWidgetItem) -> None:
        conv_id, message_id = item.data(Qt.ItemDataRole.UserRole)
        self.open_requested.emit(int(conv_id), int(message_id))

    def changeEvent(self, event: QEvent) -> None:
        """A live language switch: the summary (a plural) and the hits' labels are made again."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.LanguageChange and self.query.text().strip():
            self._timer.start()

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self.query and event.type() == QEvent.Type.ShortcutOverride:
            assert isinstance(event, QKeyEvent)
            if event.key() == Qt.Key.Key_Escape:     # the window's Esc (Stop) shortcut would take it first
                event.accept()
                return True
        if obj is self.query and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            key = event.key()
            if key == Qt.Key.Key_Escape:
                self.query.clear()
                self.closed.emit()
                return True
            if key in (Qt.Key.Key_Down, Qt.Key.Key_Up) and self.results.count():
                row = self.results.currentRow() + (1 if key == Qt.Key.Key_Down else -1)
                self.results.setCurrentRow(max(0, min(self.results.count() - 1, row)))
                return True
            if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                if self._timer.isActive():
                    self.run_query()
                item = self.results.currentItem()
                if item is not None:
                    self._activate(item)
                return True
        return super().eventFilter(obj, event)
