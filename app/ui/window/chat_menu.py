"""The shown chat's own commands: its settings (system prompt, preset), rename, and export / import of chats
(``app.core.history.export``: a JSON and a Markdown file per export)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QFileDialog, QInputDialog, QMessageBox, QStatusBar, QWidget

from app.core.chat.session import ChatSession
from app.core.errors import BrookError

if TYPE_CHECKING:      # the dialog (and its sampling form) is imported when it is opened, not at start-up
    from app.ui.dialogs.chat_settings import ChatSettingsDialog


class ChatCommands(QObject):
    """Chat settings, rename, export and import.

    Args:
        session: the shown chat, its history file and the default generation settings.
        parent: the dialogs' parent.
        status: where "Saved …" and "Imported …" are said.
        history_changed: called after an import (the chat list shows the new chats).
    """

    def __init__(self, session: ChatSession, parent: QWidget, status: QStatusBar,
                 history_changed: Callable[[], None]) -> None:
        super().__init__(parent)
        self.session = session
        self.parent_widget = parent
        self.status = status
        self.history_changed = history_changed

    # -- export / import ---------------------------------------------------------------------------------
    def export(self, current_only: bool) -> list[Path]:
        """Export the shown chat (``current_only``) or every chat into a folder the user picks.

        Returns:
            The files written (JSON, then Markdown); empty when nothing was saved yet, the user cancelled, or
            writing failed (a warning says why).
        """
        from app.core.history.export import write_exports

        store = self.session.store
        conv = self.session.conversation
        if store is None or (current_only and conv.id is None):
            QMessageBox.information(self.parent_widget, self.tr("Export"),
                                    self.tr("There is no saved chat to export yet."))
            return []
        folder = QFileDialog.getExistingDirectory(self.parent_widget, self.tr("Export to folder"), str(Path.home()))
        if not folder:
            return []
        try:
            paths = write_exports(store, Path(folder), [conv.id] if current_only and conv.id is not None else None)
        except OSError as exc:
            QMessageBox.warning(self.parent_widget, self.tr("Export"), str(exc))
            return []
        self.status.showMessage(self.tr("Saved %1").replace("%1", ", ".join(p.name for p in paths)), 8000)
        return paths

    def import_chats(self) -> list[int]:
        """Import chats from a Brook JSON export the user picks.

        Returns:
            The new conversations' ids (chats already in the history are skipped, and counted in the status
            bar); empty when cancelled or the file was refused (a warning says why).
        """
        from app.core.history.export import import_file

        store = self.session.store
        if store is None:
            return []
        path, _ = QFileDialog.getOpenFileName(self.parent_widget, self.tr("Import chats"), str(Path.home()),
                                              self.tr("Brook chat export (*.json)"))
        if not path:
            return []
        try:
            result = import_file(store, Path(path))
        except BrookError as exc:
            QMessageBox.warning(self.parent_widget, self.tr("Import"), str(exc))
            return []
        self.history_changed()
        text = self.tr("Imported %n chat(s)", "", len(result.ids))
        if result.skipped:
            text += "; " + self.tr("%n already in the history skipped", "", len(result.skipped))
        self.status.showMessage(text, 8000)
        return result.ids

    # -- the chat ----------------------------------------------------------------------------------------
    def chat_settings(self) -> ChatSettingsDialog:
        """The shown chat's settings dialog (modal); on OK they are applied and saved with the chat."""
        conv = self.session.conversation
        from app.ui.dialogs.chat_settings import ChatSettingsDialog

        dlg = ChatSettingsDialog(conv, self.session.settings.generation, self.parent_widget)
        if dlg.exec():
            dlg.apply()
            if self.session.store is not None and conv.id is not None:
                self.session.store.save_chat_settings(conv)
        return dlg

    def rename_chat(self) -> None:
        """Ask for a new title of the shown (saved) chat."""
        conv = self.session.conversation
        if conv.id is None or self.session.store is None:
            return
        title, ok = QInputDialog.getText(self.parent_widget, self.tr("Rename chat"), self.tr("Title"),
                                         text=conv.title)
        if ok and title.strip():
            self.rename(title.strip())

    def rename(self, title: str) -> None:
        """Give the shown chat the title ``title`` (saved; the chat list follows)."""
        conv = self.session.conversation
        if conv.id is not None:
            self.session.rename_conversation(conv.id, title)
