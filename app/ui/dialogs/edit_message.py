"""Edit and resend: the message's text in a box as wide as a reply column, wrapped at its width (Qt's
``QInputDialog.getMultiLineText`` is a ~260 px field without word wrap)."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPlainTextEdit, QVBoxLayout, QWidget


class EditMessageDialog(QDialog):
    """``text()`` after ``exec()`` is the edited message. About 640 × 360 px (less on a small window)."""

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Edit and resend"))
        lay = QVBoxLayout(self)
        lay.addWidget(QLabel(self.tr("What followed this message is replaced by the new reply.")))
        self.editor = QPlainTextEdit(text)
        self.editor.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.editor.setAccessibleName(self.tr("Message"))
        lay.addWidget(self.editor, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText(self.tr("Resend"))
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)
        width, height = 640, 360
        if parent is not None:
            width = max(360, min(width, parent.width() - 80))
            height = max(220, min(height, parent.height() - 120))
        self.resize(width, height)
        self.editor.setFocus()

    def text(self) -> str:
        return self.editor.toPlainText()
