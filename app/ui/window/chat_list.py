"""The sidebar's chat list widget (``ChatList``, a one-column ``QTreeWidget``): what a row is (``RowKind`` and the
item data roles), how each kind of row looks (``chat_row``, ``pinned_heading``, ``folder_row``: the generating dot,
a folder's chevron, the headings' fonts), finding rows, the keys, and dragging a chat row: its MIME data (this
process's id and the chat's, so a drag from another Brook window is refused) and where a drop goes
(``DropTarget``). What a drop changes in the history is the sidebar's (``app.ui.window.sidebar``): the rows never
move themselves.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from PySide6.QtCore import QByteArray, QCoreApplication, QMimeData, QPoint, QPointF, QSize, Qt
from PySide6.QtGui import (
    QColor,
    QDragEnterEvent,
    QDragMoveEvent,
    QDropEvent,
    QFont,
    QIcon,
    QKeyEvent,
    QPainter,
    QPixmap,
    QPolygonF,
)
from PySide6.QtWidgets import QAbstractItemView, QTreeWidget, QTreeWidgetItem

#: Item data role of a chat row that holds True while the chat has a reply generating.
BUSY_ROLE = Qt.ItemDataRole.UserRole + 1
#: Item data role holding a row's ``RowKind``.
KIND_ROLE = Qt.ItemDataRole.UserRole + 2
#: Item data role of a folder row holding the folder's id (a chat row holds its chat's id in ``UserRole``).
FOLDER_ROLE = Qt.ItemDataRole.UserRole + 3
#: The drag-and-drop type of a chat row.
CHAT_MIME = "application/x-brook-chat"


class RowKind(enum.IntEnum):
    """What a row of the chat list is."""

    CHAT = 0
    FOLDER = 1
    PINNED = 2       # the "Pinned" heading


@dataclass(frozen=True, slots=True)
class DropTarget:
    """Where a dropped chat goes: pinned (its folder kept), or into ``folder_id`` (None: no folder), unpinned."""

    folder_id: int | None = None
    pinned: bool = False



def kind_of(item: QTreeWidgetItem | None) -> RowKind | None:
    """The kind of ``item`` (None for no item)."""
    return None if item is None else RowKind(int(item.data(0, KIND_ROLE) or 0))


def chat_of(item: QTreeWidgetItem | None) -> int | None:
    """The chat id of a chat row (None for a folder, a heading or no item)."""
    if kind_of(item) is not RowKind.CHAT or item is None:
        return None
    value = item.data(0, Qt.ItemDataRole.UserRole)
    return None if value is None else int(value)


def folder_of(item: QTreeWidgetItem | None) -> int | None:
    """The folder id of a folder row (None otherwise)."""
    if kind_of(item) is not RowKind.FOLDER or item is None:
        return None
    return int(item.data(0, FOLDER_ROLE))


# Qt's lookup (lupdate reads its literal calls; the list's texts are in the window's "MainWindow" context)
translate = QCoreApplication.translate


class ChatList(QTreeWidget):
    """The grouped chat list (one column, no header). ``on_drop(conversation id, DropTarget)`` is called when a
    chat row is dropped; the rows themselves never move (the sidebar fills the list again from the history)."""

    def __init__(self) -> None:
        super().__init__()
        self.on_drop: Callable[[int, DropTarget], None] | None = None
        self.setObjectName("history")
        self.setHeaderHidden(True)
        self.setColumnCount(1)
        self.setRootIsDecorated(False)          # folders draw their own chevron; top-level chats sit flush
        self.setIndentation(14)
        self.setUniformRowHeights(True)
        self.setExpandsOnDoubleClick(False)     # a single click opens or closes a folder
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.setIconSize(QSize(12, 12))
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setDragDropMode(QAbstractItemView.DragDropMode.DragDrop)
        self.setDefaultDropAction(Qt.DropAction.MoveAction)
        self.setDropIndicatorShown(True)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)

    def rows(self) -> Iterator[QTreeWidgetItem]:
        """Every row, top to bottom (closed folders' chats too). (Not ``QTreeWidgetItemIterator``: one left alive
        by a generator that was not run to its end crashes the next ``clear()`` in PySide6.)"""
        for i in range(self.topLevelItemCount()):
            top = self.topLevelItem(i)
            if top is None:          # an index in range always has an item; the stubs say it may be None
                continue
            yield top
            for j in range(top.childCount()):
                child = top.child(j)
                if child is not None:
                    yield child

    def chat_rows(self) -> list[QTreeWidgetItem]:
        """The chat rows, top to bottom (pinned first)."""
        return [r for r in self.rows() if kind_of(r) is RowKind.CHAT]

    def titles(self) -> list[str]:
        """The chats' titles, top to bottom."""
        return [r.text(0) for r in self.chat_rows()]

    def row_of_chat(self, conv_id: int) -> QTreeWidgetItem | None:
        return next((r for r in self.chat_rows() if chat_of(r) == conv_id), None)

    def row_of_folder(self, folder_id: int) -> QTreeWidgetItem | None:
        return next((r for r in self.rows() if folder_of(r) == folder_id), None)

    def drop_target(self, pos: QPoint) -> DropTarget:
        """Where a chat dropped at ``pos`` (viewport coordinates) goes."""
        item = self.itemAt(pos)
        kind = kind_of(item)
        parent = item.parent() if item is not None else None
        if kind is RowKind.CHAT and parent is not None:
            item, kind = parent, kind_of(parent)
        if kind is RowKind.FOLDER:
            return DropTarget(folder_of(item))
        if kind is RowKind.PINNED:
            return DropTarget(pinned=True)
        return DropTarget()

    # -- drag and drop --------------------------------------------------------------------------------------
    def mimeTypes(self) -> list[str]:
        return [CHAT_MIME]

    def mimeData(self, items: Sequence[QTreeWidgetItem]) -> QMimeData:
        """A dragged chat row: ``CHAT_MIME`` holding ``<process id>:<chat id>`` (so a drag from another Brook
        window, of another history, is refused)."""
        data = QMimeData()
        ids = [c for c in (chat_of(i) for i in items) if c is not None]
        if ids:
            data.setData(CHAT_MIME, QByteArray(f"{os.getpid()}:{ids[0]}".encode("ascii")))
        return data

    @staticmethod
    def dragged_chat(data: QMimeData | None) -> int | None:
        """The chat id a drag of this list carries (None: not one of ours)."""
        if data is None or not data.hasFormat(CHAT_MIME):
            return None
        pid, _, conv = bytes(data.data(CHAT_MIME).data()).decode("ascii", "replace").partition(":")
        return int(conv) if pid == str(os.getpid()) and conv.isdigit() else None

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if self.dragged_chat(event.mimeData()) is None:
            event.ignore()
            return
        super().dragEnterEvent(event)
        event.setDropAction(Qt.DropAction.MoveAction)
        event.accept()

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:
        if self.dragged_chat(event.mimeData()) is None:
            event.ignore()
            return
        super().dragMoveEvent(event)            # auto-scroll and the drop indicator
        event.setDropAction(Qt.DropAction.MoveAction)
        event.accept()

    def dropEvent(self, event: QDropEvent) -> None:
        conv_id = self.dragged_chat(event.mimeData())
        if conv_id is None:
            event.ignore()
            return
        target = self.drop_target(event.position().toPoint())
        event.setDropAction(Qt.DropAction.IgnoreAction)      # the rows stay where they are: the list is refilled
        event.accept()
        self.setState(QAbstractItemView.State.NoState)
        self.viewport().update()
        if self.on_drop is not None:
            self.on_drop(conv_id, target)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        item = self.currentItem()
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and kind_of(item) is RowKind.FOLDER and item:
            item.setExpanded(not item.isExpanded())
            return
        super().keyPressEvent(event)


def chat_row(title: str, conv_id: int, generating: bool, dot: QIcon) -> QTreeWidgetItem:
    """A chat's row: selectable, draggable; ``dot`` (``dot_icon``) and "generating…" in its tooltip while a reply
    of it generates."""
    row = QTreeWidgetItem([title])
    row.setData(0, Qt.ItemDataRole.UserRole, conv_id)
    row.setData(0, KIND_ROLE, int(RowKind.CHAT))
    row.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsDragEnabled)
    set_busy(row, title, generating, dot)
    return row


def set_busy(row: QTreeWidgetItem, title: str, generating: bool, dot: QIcon) -> None:
    """Mark chat ``row`` (titled ``title``) as generating or not: ``dot`` and "generating…" in its tooltip."""
    row.setData(0, BUSY_ROLE, generating)
    row.setToolTip(0, title + (" — " + translate("MainWindow", "generating…") if generating else ""))
    row.setIcon(0, dot if generating else QIcon())


def pinned_heading(lst: QTreeWidget) -> QTreeWidgetItem:
    """The "Pinned" heading (small capitals in the placeholder colour; a chat dropped on it is pinned)."""
    head = QTreeWidgetItem([translate("MainWindow", "Pinned")])
    head.setData(0, KIND_ROLE, int(RowKind.PINNED))
    head.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsDropEnabled)
    head.setForeground(0, lst.palette().placeholderText())
    head.setFont(0, _small_bold(lst.font()))
    head.setToolTip(0, translate("MainWindow", "Pinned chats (Ctrl+Shift+P pins or unpins a chat)"))
    return head


def folder_row(lst: QTreeWidget, name: str, folder_id: int) -> QTreeWidgetItem:
    """A folder's row (bold; selectable; a chat dropped on it goes in); ``set_chevron`` once it is in the list."""
    row = QTreeWidgetItem([name])
    row.setData(0, KIND_ROLE, int(RowKind.FOLDER))
    row.setData(0, FOLDER_ROLE, folder_id)
    row.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsDropEnabled)
    row.setFont(0, _bold(lst.font()))
    row.setChildIndicatorPolicy(QTreeWidgetItem.ChildIndicatorPolicy.ShowIndicator)
    return row


def set_chevron(lst: QTreeWidget, row: QTreeWidgetItem) -> None:
    """Folder ``row``'s chevron as it is now (open or closed), in the list's text colour."""
    row.setIcon(0, chevron(lst.palette().text().color(), row.isExpanded()))


def dot_icon(color: QColor) -> QIcon:
    """A small filled circle: the mark of a chat whose reply is generating."""
    return _painted(color, lambda p: p.drawEllipse(2, 2, 8, 8))


def chevron(color: QColor, open_: bool) -> QIcon:
    """A folder's ▸ (closed) or ▾ (open), drawn in ``color`` (no font needs the glyph)."""
    points = [(2, 3.5), (10, 3.5), (6, 9)] if open_ else [(3.5, 2), (9, 6), (3.5, 10)]
    return _painted(color, lambda p: p.drawPolygon(QPolygonF([QPointF(x, y) for x, y in points])))


def _painted(color: QColor, draw: Callable[[QPainter], object]) -> QIcon:
    """A 12 × 12 px icon: ``draw(painter)`` fills a shape in ``color`` (antialiased, no outline) on transparency."""
    pix = QPixmap(12, 12)
    pix.fill(Qt.GlobalColor.transparent)
    p = QPainter(pix)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.setBrush(color)
    p.setPen(Qt.PenStyle.NoPen)
    draw(p)
    p.end()
    return QIcon(pix)


def _bold(font: QFont) -> QFont:
    out = QFont(font)
    out.setBold(True)
    return out


def _small_bold(font: QFont) -> QFont:
    out = _bold(font)
    out.setPointSizeF(max(6.0, font.pointSizeF() * 0.85))
    out.setCapitalization(QFont.Capitalization.AllUppercase)
    return out
