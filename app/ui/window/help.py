"""Help → About (name, version, model, folders) and Help → Keyboard shortcuts (every shortcut of the window)."""

from __future__ import annotations

import html

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QMessageBox, QVBoxLayout, QWidget

from app.core.text import QT_TRANSLATE_NOOP


def app_version() -> str:
    """The installed ``brook-chat`` version (``"dev"`` when running from an uninstalled checkout)."""
    import importlib.metadata  # (~10 ms: when About is opened, not at start-up)

    try:
        return importlib.metadata.version("brook-chat")
    except importlib.metadata.PackageNotFoundError:
        return "dev"


#: (keys, what they do): listed in the shortcuts dialog; the window defines the same keys.
SHORTCUTS: list[tuple[str, str]] = [
    ("Enter", QT_TRANSLATE_NOOP("HelpDialogs", "Send the message")),
    ("Shift+Enter", QT_TRANSLATE_NOOP("HelpDialogs", "New line in the message")),
    ("Esc", QT_TRANSLATE_NOOP("HelpDialogs", "Stop the reply")),
    ("Ctrl+N", QT_TRANSLATE_NOOP("HelpDialogs", "New chat")),
    ("Ctrl+F", QT_TRANSLATE_NOOP("HelpDialogs", "Search all chats")),
    ("Ctrl+R", QT_TRANSLATE_NOOP("HelpDialogs", "Regenerate the last reply")),
    ("Ctrl+Shift+C", QT_TRANSLATE_NOOP("HelpDialogs", "Copy the last reply")),
    ("Ctrl+O", QT_TRANSLATE_NOOP("HelpDialogs", "Open a model file")),
    ("Ctrl+M", QT_TRANSLATE_NOOP("HelpDialogs", "Model library")),
    ("Ctrl+,", QT_TRANSLATE_NOOP("HelpDialogs", "Settings")),
    ("Ctrl+L", QT_TRANSLATE_NOOP("HelpDialogs", "Focus the message box")),
    ("Alt+↑ / Alt+↓", QT_TRANSLATE_NOOP("HelpDialogs", "Previous / next message (Ctrl+L goes back to typing)")),
    ("Ctrl++ / Ctrl+−", QT_TRANSLATE_NOOP("HelpDialogs", "Larger / smaller text")),
    ("Ctrl+0", QT_TRANSLATE_NOOP("HelpDialogs", "Reset the text size")),
    ("Ctrl+Shift+M", QT_TRANSLATE_NOOP("HelpDialogs", "Download models from the Hugging Face Hub")),
    ("Ctrl+E", QT_TRANSLATE_NOOP("HelpDialogs", "Export this chat")),
    ("Ctrl+Shift+,", QT_TRANSLATE_NOOP("HelpDialogs", "This chat's settings (system prompt, preset)")),
    ("Ctrl+Shift+I", QT_TRANSLATE_NOOP("HelpDialogs", "Stream inspector")),
    ("Ctrl+B", QT_TRANSLATE_NOOP("HelpDialogs", "Show or hide the chat list")),
    ("F2", QT_TRANSLATE_NOOP("HelpDialogs", "Rename the chat")),
    ("Ctrl+Shift+P", QT_TRANSLATE_NOOP("HelpDialogs", "Pin or unpin the chat (the one selected in the chat list)")),
    ("Delete", QT_TRANSLATE_NOOP("HelpDialogs", "Delete the selected chat (in the chat list)")),
    ("Ctrl+Shift+Z", QT_TRANSLATE_NOOP("HelpDialogs", "Undo deleting a chat")),
    ("Ctrl+Q", QT_TRANSLATE_NOOP("HelpDialogs", "Quit")),
    ("F1", QT_TRANSLATE_NOOP("HelpDialogs", "This list")),
]


def show_about(parent: QWidget | None, model: str, data_folder: str) -> None:
    translate = QCoreApplication.translate
    blurb = translate("HelpDialogs", "A desktop chat app for local language models. The words appear as fast "
                                     "as the model makes them, and Stop stops.")
    model_word = translate("HelpDialogs", "Model")
    folder_word = translate("HelpDialogs", "Chats and models folder")
    QMessageBox.about(
        parent, translate("HelpDialogs", "About Brook"),
        f"<h3>Brook {html.escape(app_version())}</h3><p>{html.escape(blurb)}</p>"
        f"<p>{html.escape(model_word)}: {html.escape(model)}<br>{html.escape(folder_word)}: "
        f"{html.escape(data_folder)}</p><p>llama.cpp (llama-cpp-python), Qt for Python (PySide6). MIT licence.</p>")


class ShortcutsDialog(QDialog):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        translate = QCoreApplication.translate
        self.setWindowTitle(translate("HelpDialogs", "Keyboard shortcuts"))
        lay = QVBoxLayout(self)
        rows = "".join(f"<tr><td style='padding:2px 16px 2px 0'><b>{html.escape(k)}</b></td>"
                       f"<td>{html.escape(translate('HelpDialogs', what))}</td></tr>" for k, what in SHORTCUTS)
        self.label = QLabel(f"<table>{rows}</table>")
        self.label.setAccessibleName(translate("HelpDialogs", "Keyboard shortcuts"))
        lay.addWidget(self.label)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)


def open_shortcuts(parent: QWidget | None) -> ShortcutsDialog:
    """Show the keyboard shortcuts (not modal, deleted when closed). Returns the dialog."""
    dlg = ShortcutsDialog(parent)
    dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dlg.show()
    return dlg
