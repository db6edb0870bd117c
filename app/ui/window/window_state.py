"""What the window remembers and the chat list's own actions: restore the last chat, the window size and the
sidebar width on restart; delete a chat from its context menu, the Chat menu or the Delete key, with Undo (which
brings it back pinned and in its folder, as it was); show or hide the sidebar (Ctrl+B)."""

from __future__ import annotations

import logging

from PySide6.QtCore import QByteArray, QCoreApplication, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow, QSplitter, QWidget

from app.core.chat.session import ChatSession
from app.core.conversation import Conversation
from app.core.errors import BrookError

#: How long Undo stays offered after a chat was deleted (ms).
UNDO_MS = 15000


log = logging.getLogger("brook.window")


class WindowState:
    """The chat list's delete and Undo, the sidebar toggle, and ``restore()`` / ``remember()`` of the window's
    state in the settings. The window puts ``delete_action``, ``undo_action`` and ``sidebar_action`` in its menus.

    Args:
        window: the window whose geometry is kept (and the actions' owner).
        session: deletes and restores chats, holds the settings.
        sidebar: the chat list's side panel, in ``splitter``'s first pane.
        splitter: splits the sidebar from the chat.
        delete_action: Delete chat (the window's, with its shortcut on the list).
    """

    def __init__(self, window: QMainWindow, session: ChatSession, sidebar: QWidget, splitter: QSplitter,
                 delete_action: QAction) -> None:
        self.window = window
        self.session = session
        self.sidebar = sidebar
        self.splitter = splitter
        self.deleted: Conversation | None = None          # the last deleted conversation, for Undo
        self._deleted_place: tuple[bool, int | None] = (False, None)     # its pin and folder
        self.pending_chat: int | None = None              # the chat ``restore_chat`` opens
        self.delete_action = delete_action
        self.undo_action = QAction(QCoreApplication.translate("MainWindow", "&Undo delete chat"), window)
        self.undo_action.setShortcut(QKeySequence("Ctrl+Shift+Z"))
        self.undo_action.setEnabled(False)
        self.undo_action.triggered.connect(self.undo_delete)
        window.addAction(self.undo_action)
        self.sidebar_action = QAction(QCoreApplication.translate("MainWindow", "Show &sidebar"), window)
        self.sidebar_action.setCheckable(True)
        self.sidebar_action.setChecked(not sidebar.isHidden())
        self.sidebar_action.setShortcut(QKeySequence("Ctrl+B"))
        self.sidebar_action.toggled.connect(self.set_sidebar)
        window.addAction(self.sidebar_action)
        self._undo_timer = QTimer(window)
        self._undo_timer.setSingleShot(True)
        self._undo_timer.timeout.connect(lambda: self.undo_action.setEnabled(False))

    # -- delete and undo --------------------------------------------------------------------------------
    def delete(self, conv_id: int) -> bool:
        """Delete chat ``conv_id`` (its reply is stopped first); Undo brings it back. Returns True when deleted."""
        place = self._place(conv_id)
        conv = self.session.delete_conversation(conv_id)
        if conv is None:
            return False
        self.deleted, self._deleted_place = conv, place
        self.undo_action.setEnabled(True)
        self._undo_timer.start(UNDO_MS)
        said = QCoreApplication.translate("MainWindow", "Deleted “%1” — Undo with Ctrl+Shift+Z")
        self.window.statusBar().showMessage(said.replace("%1", conv.title), UNDO_MS)
        return True

    def undo_delete(self) -> bool:
        """Bring back the chat deleted last (with every message). Returns True when restored."""
        if self.deleted is None:
            return False
        conv, self.deleted = self.deleted, None
        self.undo_action.setEnabled(False)
        self.session.restore_conversation(conv)
        self._put_back(conv.id, *self._deleted_place)
        said = QCoreApplication.translate("MainWindow", "Restored “%1”")
        self.window.statusBar().showMessage(said.replace("%1", conv.title), 4000)
        return True

    def _place(self, conv_id: int) -> tuple[bool, int | None]:
        """(pinned, folder id) of chat ``conv_id`` in the history."""
        try:
            info = next((i for i in self.session.store.list_conversations() if i.id == conv_id), None) \
                if self.session.store is not None else None
        except BrookError:
            info = None
        return (info.pinned, info.folder_id) if info is not None else (False, None)

    def _put_back(self, conv_id: int | None, pinned: bool, folder_id: int | None) -> None:
        store = self.session.store
        if store is None or conv_id is None or not (pinned or folder_id is not None):
            return
        try:
            if pinned:
                store.set_pinned(conv_id, True)
            if folder_id is not None:
                store.move_to_folder(conv_id, folder_id)
        except (BrookError, KeyError) as exc:       # the folder was deleted meanwhile: the chat stays ungrouped
            log.info("undo: chat %s not put back in its place: %s", conv_id, exc)
        self.session.listener.history_changed()

    # -- sidebar --------------------------------------------------------------------------------------------
    def set_sidebar(self, shown: bool) -> None:
        self.sidebar.setVisible(shown)
        if shown and self.splitter.sizes()[0] == 0:
            self.splitter.setSizes([220, max(200, self.window.width() - 220)])

    # -- remembered state -----------------------------------------------------------------------------------
    def restore(self) -> None:
        """The last window geometry and sidebar width; the last chat is opened by ``restore_chat`` (the window
        calls it right after its first paint, so a long chat never delays the window)."""
        s = self.session.settings
        if s.window_geometry:
            self.window.restoreGeometry(QByteArray.fromBase64(s.window_geometry.encode("ascii")))
        if s.sidebar_width == 0:
            self.sidebar_action.setChecked(False)
        else:
            self.splitter.setSizes([s.sidebar_width, max(200, self.window.width() - s.sidebar_width)])
        self.pending_chat = s.last_conversation_id

    def restore_chat(self) -> None:
        """Open the chat shown when the window was last closed (when it still exists)."""
        conv_id, self.pending_chat = self.pending_chat, None
        if conv_id is None or self.session.conversation.id is not None or self.session.conversation.messages:
            return                  # (a chat was opened or started meanwhile: it stays)
        try:
            self.session.open_conversation(int(conv_id))
        except Exception:       # restoring the last chat must never stop the window from opening
            log.exception("could not open the last chat %s at start", conv_id)
            self.session.settings.last_conversation_id = None

    def remember(self) -> None:
        """Keep the window's state in the settings (written with them)."""
        s = self.session.settings
        s.window_geometry = bytes(self.window.saveGeometry().toBase64().data()).decode("ascii")
        s.sidebar_width = self.splitter.sizes()[0] if self.sidebar.isVisible() else 0
        # (closed before the last chat was restored: it is still the one to restore)
        s.last_conversation_id = self.session.conversation.id if self.pending_chat is None else self.pending_chat
        self.session.save_settings()
