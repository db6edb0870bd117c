"""The sidebar: New chat, the search box and the chat list, grouped as the history keeps it
(``app.core.history.folders``): pinned chats on top under "Pinned", then the folders (each one collapsible; open or
closed is kept in the history file), then every other chat; each group most recently changed first.

- Pin or unpin: the chat's context menu, Chat → Pin chat or **Ctrl+Shift+P** (the chat selected in the list while
  the list has the focus, else the shown chat). A pinned chat keeps its folder for when it is unpinned.
- Folders: New folder… (context menu, Chat menu), Rename folder…, Delete folder (its chats stay, ungrouped);
  Move to folder ▸ in a chat's context menu and in the Chat menu.
- Drag and drop a chat: onto a folder (or a chat in it) moves it in, onto "Pinned" pins it, onto the ungrouped
  chats or the empty space below them takes it out of its folder and unpins it. The list never moves rows itself:
  the drop changes the history and the list is filled again from it.
- A click on a folder opens or closes it (Enter, ← and → too); the shown chat inside a closed folder marks the
  folder as current. A search hit in a closed folder opens the folder (``reveal``).
"""

from __future__ import annotations

import enum
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from PySide6.QtCore import QByteArray, QCoreApplication, QMimeData, QObject, QPoint, QPointF, QSize, Qt
from PySide6.QtGui import (
    QAction,
    QColor,
    QDragEnterEvent,
    QDragMoveEvent,
    QDropEvent,
    QFont,
    QIcon,
    QKeyEvent,
    QKeySequence,
    QPainter,
    QPixmap,
    QPolygonF,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QInputDialog,
    QMainWindow,
    QMenu,
    QMessageBox,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.core.chat.session import ChatSession, NoticeKind
from app.core.errors import BrookError
from app.core.history.folders import MAX_NAME, FolderNameError
from app.ui.window.search_panel import SearchPanel

#: Item data role of a chat row that holds True while the chat has a reply generating.
BUSY_ROLE = Qt.ItemDataRole.UserRole + 1
#: Item data role holding a row's ``RowKind``.
KIND_ROLE = Qt.ItemDataRole.UserRole + 2
#: Item data role of a folder row holding the folder's id (a chat row holds its chat's id in ``UserRole``).
FOLDER_ROLE = Qt.ItemDataRole.UserRole + 3
#: The key that pins or unpins a chat.
PIN_KEY = "Ctrl+Shift+P"
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


# Qt's lookup (lupdate reads its literal calls; the sidebar's texts are in the window's "MainWindow" context)
translate = QCoreApplication.translate


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


class ChatSidebar(QObject):
    """The sidebar's panel (``panel``: New chat, ``search``, the chat list ``chats``) and everything the chat list
    does: open a chat, pin, folders, drag and drop, the context menu. The window puts ``pin_action``,
    ``new_folder_action`` and ``move_menu_entries`` in its Chat menu and gives ``attach`` its Delete/Undo.

    Args:
        session: the chats, their history file (``session.store``; no store: no list), and the shown chat.
        new_chat: the New chat button's slot.
        parent: the window (the owner of the actions and of the dialogs).
    """

    def __init__(self, session: ChatSession, new_chat: Callable[[], None], parent: QWidget) -> None:
        super().__init__(parent)
        self.session = session
        self.window = parent
        self.panel = QWidget()
        self.panel.setObjectName("sidebar")
        lay = QVBoxLayout(self.panel)
        lay.setContentsMargins(8, 8, 8, 8)
        self.new_button = QPushButton(translate("MainWindow", "+  New chat"))
        self.new_button.setToolTip(translate("MainWindow", "New chat (Ctrl+N)"))
        self.new_button.clicked.connect(new_chat)
        self.search = SearchPanel(session.store)
        self.chats = ChatList()
        self.chats.setAccessibleName(translate("MainWindow", "Chats"))
        lay.addWidget(self.new_button)
        lay.addWidget(self.search)
        lay.addWidget(self.chats, 1)
        self.panel.setMinimumWidth(140)
        self.panel.setMaximumWidth(420)
        self.panel.setVisible(session.store is not None)

        self.pin_action = QAction(translate("MainWindow", "&Pin chat"), parent)
        self.pin_action.setShortcut(QKeySequence(PIN_KEY))
        self.pin_action.triggered.connect(lambda: self.toggle_pin())
        parent.addAction(self.pin_action)
        self.new_folder_action = QAction(translate("MainWindow", "New &folder…"), parent)
        self.new_folder_action.triggered.connect(lambda: self.new_folder())
        self._delete_chat: Callable[[int], object] = lambda _cid: None
        self._list_actions: list[QAction] = []

        self.chats.on_drop = self.drop
        self.chats.itemClicked.connect(self._clicked)
        self.chats.itemActivated.connect(self._activated)
        self.chats.itemExpanded.connect(lambda item: self._expanded(item, True))
        self.chats.itemCollapsed.connect(lambda item: self._expanded(item, False))
        self.chats.currentItemChanged.connect(lambda *_: self._update_pin_text())
        self.chats.customContextMenuRequested.connect(self.menu_at)

    def attach(self, delete_chat: Callable[[int], object], delete_action: QAction, undo_action: QAction) -> None:
        """The window's Delete chat (``delete_chat(id)``; its action with the Delete key) and Undo delete, offered
        in a chat's context menu."""
        self._delete_chat = delete_chat
        self._list_actions = [delete_action, undo_action]

    # -- filling the list ------------------------------------------------------------------------------------
    def refresh(self) -> None:
        """Fill the list again from the history (after any change); keeps the scroll position."""
        store = self.session.store
        if store is None:
            return
        try:
            infos = store.list_conversations()
            folders = store.list_folders()
        except BrookError as exc:              # HistoryError: said once in the chat, the list stays as it was
            self.session.listener.notice(f"⚠ {exc}", NoticeKind.ERROR)
            return
        busy = self.session.busy_conversations()
        shown = self.session.conversation.id
        lst = self.chats
        dot = _dot_icon(lst.palette().highlight().color())
        scroll = lst.verticalScrollBar().value()
        lst.blockSignals(True)
        lst.clear()
        rows: dict[int, QTreeWidgetItem] = {}
        pinned = [i for i in infos if i.pinned]
        if pinned:
            head = QTreeWidgetItem([translate("MainWindow", "Pinned")])
            head.setData(0, KIND_ROLE, int(RowKind.PINNED))
            head.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsDropEnabled)
            head.setForeground(0, lst.palette().placeholderText())
            head.setFont(0, _small_bold(lst.font()))
            head.setToolTip(0, translate("MainWindow", "Pinned chats (Ctrl+Shift+P pins or unpins a chat)"))
            lst.addTopLevelItem(head)
            for info in pinned:
                rows[info.id] = self._chat_row(info.title, info.id, info.id in busy, dot)
                head.addChild(rows[info.id])
            head.setExpanded(True)
        folder_rows: dict[int, QTreeWidgetItem] = {}
        for f in folders:
            row = QTreeWidgetItem([f.name])
            row.setData(0, KIND_ROLE, int(RowKind.FOLDER))
            row.setData(0, FOLDER_ROLE, f.id)
            row.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsDropEnabled)
            row.setFont(0, _bold(lst.font()))
            row.setChildIndicatorPolicy(QTreeWidgetItem.ChildIndicatorPolicy.ShowIndicator)
            lst.addTopLevelItem(row)
            folder_rows[f.id] = row
        for info in infos:
            if info.pinned:
                continue
            rows[info.id] = self._chat_row(info.title, info.id, info.id in busy, dot)
            parent = folder_rows.get(info.folder_id) if info.folder_id is not None else None
            if parent is not None:
                parent.addChild(rows[info.id])
            else:
                lst.addTopLevelItem(rows[info.id])
        for f in folders:
            row = folder_rows[f.id]
            row.setExpanded(not f.collapsed)
            n = row.childCount()
            row.setToolTip(0, f.name + " — " + self.tr("%n chat(s)", "", n))
            self._set_chevron(row)
        current = rows.get(shown) if shown is not None else None
        folder = current.parent() if current is not None else None
        if folder is not None and not folder.isExpanded():
            current = folder                    # the shown chat is in a closed folder: the folder is marked
        if current is not None:
            lst.setCurrentItem(current)
        else:
            lst.clearSelection()
        lst.verticalScrollBar().setValue(scroll)
        lst.blockSignals(False)
        self._update_pin_text()

    def _chat_row(self, title: str, conv_id: int, generating: bool, dot: QIcon) -> QTreeWidgetItem:
        row = QTreeWidgetItem([title])
        row.setData(0, Qt.ItemDataRole.UserRole, conv_id)
        row.setData(0, KIND_ROLE, int(RowKind.CHAT))
        row.setData(0, BUSY_ROLE, generating)
        row.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsDragEnabled)
        row.setToolTip(0, title + (" — " + translate("MainWindow", "generating…") if generating else ""))
        if generating:
            row.setIcon(0, dot)
        return row

    def _set_chevron(self, row: QTreeWidgetItem) -> None:
        row.setIcon(0, _chevron(self.chats.palette().text().color(), row.isExpanded()))

    def reveal(self, conv_id: int) -> None:
        """Show chat ``conv_id``'s row: its folder opens (and stays open), the list scrolls to it."""
        row = self.chats.row_of_chat(conv_id)
        if row is None:
            return
        folder = row.parent()
        if folder is not None and not folder.isExpanded():
            folder.setExpanded(True)            # remembered by _expanded
        self.chats.setCurrentItem(row)
        self.chats.scrollToItem(row)

    # -- clicks and keys ------------------------------------------------------------------------------------
    def _clicked(self, item: QTreeWidgetItem, _column: int) -> None:
        if kind_of(item) is RowKind.FOLDER:
            item.setExpanded(not item.isExpanded())
        else:
            self._activated(item, _column)

    def _activated(self, item: QTreeWidgetItem, _column: int) -> None:
        conv_id = chat_of(item)
        if conv_id is not None and conv_id != self.session.conversation.id:
            self.session.open_conversation(conv_id)

    def _expanded(self, item: QTreeWidgetItem, expanded: bool) -> None:
        folder_id = folder_of(item)
        if folder_id is None or self.session.store is None:
            return
        self._set_chevron(item)
        self._guard(lambda s: s.set_folder_collapsed(folder_id, not expanded))

    # -- pins and folders ------------------------------------------------------------------------------------
    def target_chat(self) -> int | None:
        """The chat the Chat menu's pin and move act on: the one selected in the list while the list has the
        focus, else the shown chat (None when it is not saved yet)."""
        if self.chats.hasFocus():
            return chat_of(self.chats.currentItem())
        return self.session.conversation.id

    def _info(self, conv_id: int | None) -> tuple[bool, int | None] | None:
        """(pinned, folder id) of chat ``conv_id`` as the list shows it."""
        row = self.chats.row_of_chat(conv_id) if conv_id is not None else None
        if row is None:
            return None
        parent = row.parent()
        pinned = kind_of(parent) is RowKind.PINNED
        store = self.session.store
        if pinned and store is not None:        # a pinned chat's folder is not where the list shows it
            try:
                info = next((i for i in store.list_conversations() if i.id == conv_id), None)
            except BrookError:
                info = None
            return True, info.folder_id if info is not None else None
        return pinned, folder_of(parent)

    def toggle_pin(self, conv_id: int | None = None) -> bool | None:
        """Pin chat ``conv_id`` (default: ``target_chat()``) or unpin it. Returns whether it is pinned now (None:
        no such chat)."""
        conv_id = self.target_chat() if conv_id is None else conv_id
        info = self._info(conv_id)
        if conv_id is None or info is None:
            return None
        pinned = not info[0]
        if not self._guard(lambda s: s.set_pinned(conv_id, pinned)):
            return None
        self.refresh()
        return pinned

    def move(self, conv_id: int, folder_id: int | None) -> bool:
        """Put chat ``conv_id`` into folder ``folder_id`` (None: out of its folder). Returns success."""
        ok = self._guard(lambda s: s.move_to_folder(conv_id, folder_id))
        self.refresh()
        return ok

    def drop(self, conv_id: int, target: DropTarget) -> None:
        """A chat row dropped on ``target`` (see ``ChatList.drop_target``)."""
        def apply(store: object) -> None:
            if target.pinned:
                store.set_pinned(conv_id, True)              # type: ignore[attr-defined]
                return
            store.move_to_folder(conv_id, target.folder_id)  # type: ignore[attr-defined]
            store.set_pinned(conv_id, False)                 # type: ignore[attr-defined]
        self._guard(apply)
        self.refresh()
        row = self.chats.row_of_chat(conv_id)
        if row is not None:
            self.reveal(conv_id)

    def new_folder(self, conv_id: int | None = None, name: str | None = None) -> int | None:
        """Ask for a name (unless ``name`` is given) and make a folder; ``conv_id`` goes into it. Returns the new
        folder's id (None: cancelled, or the name could not be used: a message says why)."""
        store = self.session.store
        if store is None:
            return None
        if name is None:
            name, ok = QInputDialog.getText(self.window, translate("MainWindow", "New folder"),
                                            translate("MainWindow", "Folder name"))
            if not ok:
                return None
        try:
            folder_id = store.create_folder(name)
        except BrookError as exc:
            self._refuse(exc)
            return None
        if conv_id is not None:
            self._guard(lambda s: s.move_to_folder(conv_id, folder_id))
        self.refresh()
        return folder_id

    def rename_folder(self, folder_id: int, name: str | None = None) -> bool:
        """Ask for (or take) a new name for folder ``folder_id``. Returns True when renamed."""
        store = self.session.store
        row = self.chats.row_of_folder(folder_id)
        if store is None or row is None:
            return False
        if name is None:
            name, ok = QInputDialog.getText(self.window, translate("MainWindow", "Rename folder"),
                                            translate("MainWindow", "Folder name"), text=row.text(0))
            if not ok:
                return False
        try:
            store.rename_folder(folder_id, name)
        except (BrookError, KeyError) as exc:
            self._refuse(exc)
            return False
        self.refresh()
        return True

    def delete_folder(self, folder_id: int) -> bool:
        """Delete folder ``folder_id``; its chats stay, ungrouped (the status bar says how many)."""
        row = self.chats.row_of_folder(folder_id)
        name = row.text(0) if row is not None else ""
        moved: list[int] = []
        if not self._guard(lambda s: moved.extend(s.delete_folder(folder_id))):
            return False
        self.refresh()
        said = self.tr("Deleted the folder “%1”; its %n chat(s) are kept", "", len(moved))
        if isinstance(self.window, QMainWindow):
            self.window.statusBar().showMessage(said.replace("%1", name), 8000)
        return True

    def rename_chat(self, conv_id: int) -> None:
        """Ask for a new title of chat ``conv_id`` (shown or not)."""
        row = self.chats.row_of_chat(conv_id)
        if row is None:
            return
        title, ok = QInputDialog.getText(self.window, translate("MainWindow", "Rename chat"),
                                         translate("MainWindow", "Title"), text=row.text(0))
        if ok and title.strip():
            self.session.rename_conversation(conv_id, title.strip())

    def delete_selected(self) -> None:
        """The Delete key: the chat selected in the list (else the shown one); a selected folder is deleted, its
        chats kept."""
        item = self.chats.currentItem()
        folder_id = folder_of(item)
        if folder_id is not None and self.chats.hasFocus():
            self.delete_folder(folder_id)
            return
        conv_id = chat_of(item) if item is not None else self.session.conversation.id
        if conv_id is not None:
            self._delete_chat(conv_id)

    # -- menus -----------------------------------------------------------------------------------------------
    def fill_move_menu(self, menu: QMenu, conv_id: int | None = None) -> None:
        """``menu`` as "Move to folder": each folder (the chat's own ticked), New folder…, Remove from folder.
        ``conv_id`` defaults to ``target_chat()``."""
        menu.clear()
        conv_id = self.target_chat() if conv_id is None else conv_id
        info = self._info(conv_id)
        store = self.session.store
        if conv_id is None or info is None or store is None:
            menu.addAction(translate("MainWindow", "(save the chat first)")).setEnabled(False)
            return
        try:
            folders = store.list_folders()
        except BrookError:
            folders = []
        for f in folders:
            act = menu.addAction(f.name)
            act.setCheckable(True)
            act.setChecked(f.id == info[1])
            act.triggered.connect(lambda _c=False, fid=f.id: self.move(conv_id, fid))
        if folders:
            menu.addSeparator()
        menu.addAction(translate("MainWindow", "New folder…")).triggered.connect(lambda: self.new_folder(conv_id))
        if info[1] is not None:
            out = menu.addAction(translate("MainWindow", "Remove from folder"))
            out.triggered.connect(lambda: self.move(conv_id, None))

    def menu_at(self, pos: QPoint) -> QMenu:
        """The chat list's context menu at ``pos`` (viewport coordinates), shown; returns it."""
        item = self.chats.itemAt(pos)
        menu = QMenu(self.chats)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        kind = kind_of(item)
        if kind is RowKind.CHAT and item is not None:
            conv_id = chat_of(item)
            assert conv_id is not None
            self.chats.setCurrentItem(item)
            pinned = kind_of(item.parent()) is RowKind.PINNED
            text = translate("MainWindow", "Unpin chat") if pinned else translate("MainWindow", "Pin chat")
            pin = menu.addAction(text + "\t" + PIN_KEY)
            pin.triggered.connect(lambda: self.toggle_pin(conv_id))
            self.fill_move_menu(menu.addMenu(translate("MainWindow", "Move to folder")), conv_id)
            menu.addAction(translate("MainWindow", "Rename…")).triggered.connect(lambda: self.rename_chat(conv_id))
            menu.addSeparator()
            for action in self._list_actions:
                if action.isEnabled():
                    menu.addAction(action)
        elif kind is RowKind.FOLDER and item is not None:
            folder_id = folder_of(item)
            assert folder_id is not None
            self.chats.setCurrentItem(item)
            rename = menu.addAction(translate("MainWindow", "Rename folder…"))
            rename.triggered.connect(lambda: self.rename_folder(folder_id))
            menu.addAction(translate("MainWindow", "Delete folder (keeps its chats)")).triggered.connect(
                lambda: self.delete_folder(folder_id))
            menu.addSeparator()
            menu.addAction(self.new_folder_action)
        else:
            menu.addAction(self.new_folder_action)
        menu.popup(self.chats.viewport().mapToGlobal(pos))
        return menu

    def _update_pin_text(self) -> None:
        info = self._info(self.target_chat())
        pinned = info is not None and info[0]
        text = translate("MainWindow", "Un&pin chat") if pinned else translate("MainWindow", "&Pin chat")
        self.pin_action.setText(text)
        self.pin_action.setEnabled(info is not None)

    # -- errors ----------------------------------------------------------------------------------------------
    def _guard(self, change: Callable[..., object]) -> bool:
        """Run ``change(store)``; a history error is said in the chat. Returns success."""
        store = self.session.store
        if store is None:
            return False
        try:
            change(store)
        except BrookError as exc:
            self.session.listener.notice(f"⚠ {exc}", NoticeKind.ERROR)
            return False
        except KeyError:                        # the chat or folder went away meanwhile: the list is refilled
            return False
        return True

    def _refuse(self, exc: BaseException) -> None:
        """Say in a message box why a folder name was refused (in the window's language)."""
        if isinstance(exc, FolderNameError) and exc.kind == "empty":
            text = translate("MainWindow", "A folder needs a name.")
        elif isinstance(exc, FolderNameError) and exc.kind == "long":
            text = translate("MainWindow", "A folder name can have at most %1 characters.").replace("%1", str(MAX_NAME))
        elif isinstance(exc, FolderNameError) and exc.kind == "taken":
            text = translate("MainWindow", "A folder called “%1” already exists.").replace("%1", exc.name)
        else:
            text = str(exc)
        QMessageBox.warning(self.window, translate("MainWindow", "Folder"), text)


def _dot_icon(color: QColor) -> QIcon:
    """A small filled circle: the mark of a chat whose reply is generating."""
    pix = QPixmap(12, 12)
    pix.fill(Qt.GlobalColor.transparent)
    p = QPainter(pix)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.setBrush(color)
    p.setPen(Qt.PenStyle.NoPen)
    p.drawEllipse(2, 2, 8, 8)
    p.end()
    return QIcon(pix)


def _chevron(color: QColor, open_: bool) -> QIcon:
    """A folder's ▸ (closed) or ▾ (open), drawn in ``color`` (no font needs the glyph)."""
    pix = QPixmap(12, 12)
    pix.fill(Qt.GlobalColor.transparent)
    p = QPainter(pix)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.setBrush(color)
    p.setPen(Qt.PenStyle.NoPen)
    points = [(2, 3.5), (10, 3.5), (6, 9)] if open_ else [(3.5, 2), (9, 6), (3.5, 10)]
    p.drawPolygon(QPolygonF([QPointF(x, y) for x, y in points]))
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
