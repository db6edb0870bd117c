"""The chat's own settings: its system prompt, its preset and its sampling parameters (Chat → Chat settings…).

Edits a ``Conversation`` in place on OK (the caller saves it with ``Store.save_chat_settings``): the next reply of
this chat uses them, whatever the settings' defaults say.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from app.core.chat.presets import BUILTIN, chat_params, overrides, preset
from app.core.conversation import Conversation
from app.core.types import GenerationParams
from app.ui.dialogs.sampling_form import SamplingForm


class ChatSettingsDialog(QDialog):
    sampling: SamplingForm

    def __init__(self, conv: Conversation, fallback: GenerationParams, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.conv = conv
        self.setWindowTitle(self.tr("Chat settings: %1").replace("%1", conv.title))
        lay = QVBoxLayout(self)
        form = QFormLayout()
        self.system_prompt = QPlainTextEdit(conv.system_prompt or "")
        self.system_prompt.setPlaceholderText(self.tr("Instructions the model gets before this chat (optional)"))
        self.system_prompt.setAccessibleName(self.tr("System prompt of this chat"))
        self.system_prompt.setMinimumHeight(80)
        form.addRow(self.tr("System prompt"), self.system_prompt)
        self.preset = QComboBox()
        for name, p in BUILTIN.items():
            self.preset.addItem(QCoreApplication.translate("Presets", name), name)
            self.preset.setItemData(self.preset.count() - 1, QCoreApplication.translate("Presets", p.description),
                                    3)  # Qt.ToolTipRole
        self.preset.setCurrentIndex(max(0, self.preset.findData(conv.preset or "")))
        self.preset.activated.connect(lambda _i: self.sampling.set_params(preset(self.preset.currentData()).params))
        form.addRow(self.tr("Preset"), self.preset)
        lay.addLayout(form)
        self.sampling = SamplingForm(chat_params(conv, fallback))
        lay.addWidget(self.sampling)
        note = QLabel(self.tr("These settings belong to this chat only. Defaults for new chats are in Settings."))
        note.setWordWrap(True)
        note.setObjectName("hint")
        lay.addWidget(note)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)

    def apply(self) -> None:
        """Write the fields into the conversation (system prompt, preset name, overrides of the preset)."""
        name = self.preset.currentData()
        self.conv.system_prompt = self.system_prompt.toPlainText().strip() or None
        self.conv.preset = name
        self.conv.params = overrides(self.sampling.params(), preset(name).params) or None
