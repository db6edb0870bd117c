"""Search all chats as you type: a query box over a list of hits (chat title, highlighted snippet).

Thin: ``Store.search`` (SQLite FTS5, trigram) does the work, on the loop thread (a query over a personal history
takes milliseconds); typing is debounced. Activating a hit (click, Enter) emits ``open_requested(conversation
id, message id)``; the window opens that chat at that message.
"""

from __future__ import annotations

import html
import time

from PySide6.QtCore import QEvent, QObject, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent, QTextDocument
from PySide6.QtWidgets import QLabel, QLineEdit, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from app.core.search import SearchHit

#: Typing pause before the query runs (ms).
DEBOUNCE_MS = 150


def hit_html(hit: SearchHit) -> str:
    """The snippet as HTML with every matched span in bold (the rest escaped)."""
    out, pos = [], 0
    for s, e in hit.spans:
        out.append(html.escape(hit.snippet[pos:s]))
        out.append("<b><u>" + html.escape(hit.snippet[s:e]) + "</u></b>")
        pos = e
    out.append(html.escape(hit.snippet[pos:]))
    return "".join(out)


class SearchPanel(QWidget):
    """``set_store(store)`` then type. Signals: ``open_requested(int, int)`` and ``closed()`` (Esc)."""

    open_requested = Signal(int, int)
    closed = Signal()

    def __init__(self, store: object | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("searchPanel")
        self.store = store
        self.hits: list[SearchHit] = []
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

    def set_store(self, store: object | None) -> None:
        self.store = store

    def focus_query(self) -> None:
        self.query.setFocus()
        self.query.selectAll()

    def run_query(self) -> list[SearchHit]:
        """Run the query now (the debounce timer calls it); returns the hits shown."""
        self._timer.stop()
        text = self.query.text()
        self.results.clear()
        search = getattr(self.store, "search", None)
        if not text.strip() or search is None:
            self.hits = []
            self.summary.hide()
            self.results.hide()
            return []
        t0 = time.perf_counter()
        self.hits = search(text, 50)
        ms = (time.perf_counter() - t0) * 1000
        for hit in self.hits:
            item = QListWidgetItem()
            item.setData(Qt.ItemDataRole.UserRole, (hit.conversation_id, hit.message_id))
            rich = f"<b>{html.escape(hit.conversation_title)}</b><br>{hit_html(hit)}"
            label = QLabel(rich)
            label.setWordWrap(True)
            label.setTextFormat(Qt.TextFormat.RichText)
            label.setContentsMargins(4, 3, 4, 3)
            item.setToolTip(hit.snippet)
            width = max(120, self.width() - 2 * self.results.frameWidth() - 6)   # the list may not be laid out yet
            doc = QTextDocument()
            doc.setDefaultFont(label.font())
            doc.setHtml(rich)
            doc.setTextWidth(width - 8)
            item.setSizeHint(QSize(width, int(doc.size().height()) + 8))
            self.results.addItem(item)
            self.results.setItemWidget(item, label)
        if self.hits:
            self.summary.setText(self.tr("%n message(s) found", "", len(self.hits)))
        else:
            self.summary.setText(self.tr("Nothing found"))
        self.summary.setToolTip(self.tr("Search took %1 ms").replace("%1", f"{ms:.1f}"))
        self.summary.show()
        self.results.show()
        if self.hits:
            self.results.setCurrentRow(0)
        return self.hits

    def _activate(self, item: QListWidgetItem) -> None:
        conv_id, message_id = item.data(Qt.ItemDataRole.UserRole)
        self.open_requested.emit(int(conv_id), int(message_id))

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
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
