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

The list widget, its rows and the drag of a chat row are ``app.ui.window.chat_list``; the folder dialogs
``app.ui.window.folder_dialogs``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, QModelIndex, QObject, QPoint, Qt
from PySide6.QtGui import QAction, QIcon, QKeySequence
from PySide6.QtWidgets import QInputDialog, QMainWindow, QMenu, QPushButton, QTreeWidgetItem, QVBoxLayout, QWidget

from app.core.chat.session import ChatSession, NoticeKind
from app.core.errors import BrookError
from app.ui.window.chat_list import (
    BUSY_ROLE,
    ChatList,
    DropTarget,
    RowKind,
    chat_of,
    chat_row,
    dot_icon,
    folder_of,
    folder_row,
    kind_of,
    pinned_heading,
    set_busy,
    set_chevron,
)
from app.ui.window.folder_dialogs import FolderDialogs
from app.ui.window.search_panel import SearchPanel

if TYPE_CHECKING:
    from app.core.history.store import Store

# Qt's lookup (lupdate reads its literal calls; the sidebar's texts are in the window's "MainWindow" context)
translate = QCoreApplication.translate

#: The key that pins or unpins a chat.
PIN_KEY = "Ctrl+Shift+P"


class ChatSidebar(QObject):
    """The sidebar's panel (``panel``: New chat, ``search``, the chat list ``chats``) and everything the chat list
    does: open a chat, pin, folders (``folders``: its dialogs), drag and drop, the context menu. The window puts
    ``pin_action``, ``new_folder_action`` and ``fill_move_menu`` (Move to folder) in its Chat menu and gives
    ``attach`` its Delete/Undo.

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
        self.folders = FolderDialogs(session, self.chats, parent, self.refresh, self._guard)
        self.new_folder_action = QAction(translate("MainWindow", "New &folder…"), parent)
        self.new_folder_action.triggered.connect(lambda: self.folders.new_folder())
        self._rows: dict[int, QTreeWidgetItem] = {}         # chat id → its row, as ``refresh`` last made them
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
        dot = dot_icon(lst.palette().highlight().color())
        scroll = lst.verticalScrollBar().value()
        lst.blockSignals(True)
        lst.clear()
        rows: dict[int, QTreeWidgetItem] = {}
        pinned = [i for i in infos if i.pinned]
        if pinned:
            head = pinned_heading(lst)
            lst.addTopLevelItem(head)
            for info in pinned:
                rows[info.id] = chat_row(info.title, info.id, info.id in busy, dot)
                head.addChild(rows[info.id])
            head.setExpanded(True)
        folder_rows: dict[int, QTreeWidgetItem] = {}
        for f in folders:
            folder_rows[f.id] = folder_row(lst, f.name, f.id)
            lst.addTopLevelItem(folder_rows[f.id])
        for info in infos:
            if info.pinned:
                continue
            rows[info.id] = chat_row(info.title, info.id, info.id in busy, dot)
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
            set_chevron(lst, row)
        self._rows = rows
        self._mark(rows.get(shown) if shown is not None else None)
        lst.verticalScrollBar().setValue(scroll)
        lst.blockSignals(False)
        self._update_pin_text()

    def mark_busy(self) -> None:
        """A reply started or ended: a chat that became busy fills the list again (its user message moved it to
        the top); one that became idle only loses its dot. The list is not read from the history then: a reply's
        end is still being written behind (``Store.save_message``), and reading would wait for it."""
        busy = self.session.busy_conversations()
        rows = self._rows
        if any(rows.get(c) is None or not rows[c].data(0, BUSY_ROLE) for c in busy):
            self.refresh()
            return
        for conv_id, row in rows.items():
            if bool(row.data(0, BUSY_ROLE)) != (conv_id in busy):     # (only idle ones: a busy one refreshed)
                set_busy(row, row.text(0), False, QIcon())

    def select_shown(self) -> None:
        """Mark the shown chat's row as the list's current one without filling the list again (opening a chat,
        or a new one, changes nothing else in it); keeps the scroll position. A saved chat with no row yet (the
        list is behind the history) fills the list again instead (``refresh``)."""
        if self.session.store is None:
            return
        shown = self.session.conversation.id
        row = self._rows.get(shown) if shown is not None else None
        if shown is not None and row is None:
            self.refresh()
            return
        lst = self.chats
        scroll = lst.verticalScrollBar().value()
        lst.blockSignals(True)
        self._mark(row)
        lst.verticalScrollBar().setValue(scroll)
        lst.blockSignals(False)
        self._update_pin_text()

    def _mark(self, current: QTreeWidgetItem | None) -> None:
        """``current`` (the shown chat's row; None: no current row) as the list's current row, or its folder's
        when the folder is closed."""
        folder = current.parent() if current is not None else None
        if folder is not None and not folder.isExpanded():
            current = folder                    # the shown chat is in a closed folder: the folder is marked
        if current is not None:
            self.chats.setCurrentItem(current)
        else:
            self.chats.setCurrentIndex(QModelIndex())
            self.chats.clearSelection()

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
        set_chevron(self.chats, item)
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
        row = self._rows.get(conv_id) if conv_id is not None else None
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
        def apply(store: Store) -> None:
            if target.pinned:
                store.set_pinned(conv_id, True)
                return
            store.move_to_folder(conv_id, target.folder_id)
            store.set_pinned(conv_id, False)
        self._guard(apply)
        self.refresh()
        row = self.chats.row_of_chat(conv_id)
        if row is not None:
            self.reveal(conv_id)

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
        new = menu.addAction(translate("MainWindow", "New folder…"))
        new.triggered.connect(lambda: self.folders.new_folder(conv_id))
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
            rename.triggered.connect(lambda: self.folders.rename_folder(folder_id))
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
    def _guard(self, change: Callable[[Store], object]) -> bool:
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

