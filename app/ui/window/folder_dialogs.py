"""The chat list's folder dialogs: New folder… (a chat can go into the new folder at once) and Rename folder…, each
asking for the name in a dialog unless it is given, explaining in a message box a name the history refuses
(``FolderNameError``: empty, too long, taken), and filling the list again after the change. (Delete folder asks
nothing: it is the sidebar's.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QInputDialog, QMessageBox, QWidget

from app.core.errors import BrookError
from app.core.history.folders import MAX_NAME, FolderNameError
from app.ui.window.chat_list import ChatList

if TYPE_CHECKING:
    from app.core.chat.session import ChatSession
    from app.core.history.store import Store

# Qt's lookup (lupdate reads its literal calls; the texts are in the window's "MainWindow" context)
translate = QCoreApplication.translate


class FolderDialogs:
    """Make or rename a folder of ``session.store`` (no store: nothing changes; each returns None or False).

    Args:
        session: the chats and their history file (``session.store``).
        chats: the chat list (where a folder's shown name is read).
        window: the dialogs' parent.
        refresh: fills the list again from the history.
        guard: ``guard(change)`` runs ``change(store)``, a history error said in the chat; returns success.
    """

    def __init__(self, session: ChatSession, chats: ChatList, window: QWidget, refresh: Callable[[], None],
                 guard: Callable[[Callable[[Store], object]], bool]) -> None:
        self.session = session
        self.chats = chats
        self.window = window
        self.refresh = refresh
        self.guard = guard

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
            self.guard(lambda s: s.move_to_folder(conv_id, folder_id))
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
