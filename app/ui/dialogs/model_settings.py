"""Settings of this model (File → Models): the loaded GGUF's own context window, GPU layers, sampling defaults and
chat-template override (``app.core.model_settings``), with the prompt its template builds for a sample chat.

The preview renders the override (or, with none, the GGUF's own template) over
``app.engine.template_preview.SAMPLE_CHAT``. A template that fails says why and offers ChatML as the override.
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.core.model_settings import ModelSettings
from app.core.settings import AppSettings
from app.core.types import GenerationParams
from app.engine.chat_prompt import CHATML_TEMPLATE, ChatTemplateError
from app.engine.template_preview import GgufTemplate, render_preview
from app.ui.dialogs.sampling_form import SamplingForm


class ModelSettingsDialog(QDialog):
    """Edits ``own`` (the model's settings) for the GGUF at ``model_path``; ``app``: the app's settings (what an
    unset field falls back to); ``gguf``: the file's template and BOS/EOS (None: unreadable). ``result_settings()``
    after OK."""

    PREVIEW_DEBOUNCE_MS = 250

    def __init__(self, model_path: Path, own: ModelSettings, app: AppSettings, gguf: GgufTemplate | None,
                 gpu: bool = False, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Settings of %1").replace("%1", model_path.name))
        self.app = app
        self.gguf = gguf or GgufTemplate(None)
        outer = QVBoxLayout(self)
        note = QLabel(self.tr("These apply to this model file only. A chat's own settings still win."))
        note.setWordWrap(True)
        outer.addWidget(note)
        cols = QHBoxLayout()
        outer.addLayout(cols, 1)

        left = QVBoxLayout()
        load = QGroupBox(self.tr("Loading"))
        form = QFormLayout(load)
        self.n_ctx = QSpinBox()
        self.n_ctx.setRange(0, 1 << 20)
        self.n_ctx.setSingleStep(1024)
        self.n_ctx.setSpecialValueText(self.tr("the app's (%1)").replace("%1", f"{app.n_ctx:,}"))
        self.n_ctx.setSuffix(self.tr(" tokens"))
        self.n_ctx.setValue(own.n_ctx or 0)
        form.addRow(self.tr("Context window"), self.n_ctx)
        self.n_gpu_layers = QSpinBox()
        self.n_gpu_layers.setRange(-2, 100000)
        self.n_gpu_layers.setSpecialValueText(self.tr("the app's (%1)").replace("%1", str(app.n_gpu_layers)))
        self.n_gpu_layers.setValue(-2 if own.n_gpu_layers is None else own.n_gpu_layers)
        self.n_gpu_layers.setToolTip(self.tr("Layers offloaded to the GPU (-1: as many as fit); only with a GPU "
                                             "build of llama.cpp"))
        self.n_gpu_layers.setEnabled(gpu)
        form.addRow(self.tr("GPU layers"), self.n_gpu_layers)
        left.addWidget(load)
        sampling = QGroupBox(self.tr("Sampling defaults"))
        sl = QVBoxLayout(sampling)
        self.use_sampling = QCheckBox(self.tr("This model has its own sampling defaults"))
        self.use_sampling.setChecked(bool(own.sampling))
        sl.addWidget(self.use_sampling)
        self.sampling = SamplingForm(own.params(app.generation))
        self.sampling.setEnabled(bool(own.sampling))
        self.use_sampling.toggled.connect(self.sampling.setEnabled)
        sl.addWidget(self.sampling)
        left.addWidget(sampling)
        left.addStretch(1)
        cols.addLayout(left)

        right = QGroupBox(self.tr("Chat template"))
        rl = QVBoxLayout(right)
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.template = QPlainTextEdit(own.chat_template or "")
        self.template.setFont(mono)
        self.template.setPlaceholderText(self.tr("Empty: the model file's own template (tokenizer.chat_template)"))
        self.template.setAccessibleName(self.tr("Chat template override"))
        rl.addWidget(QLabel(self.tr("Override (Jinja)")))
        rl.addWidget(self.template, 1)
        row = QHBoxLayout()
        self.copy_own = QPushButton(self.tr("Start from the file's template"))
        self.copy_own.setEnabled(self.gguf.template is not None)
        self.copy_own.clicked.connect(lambda: self.template.setPlainText(self.gguf.template or ""))
        self.use_chatml = QPushButton(self.tr("Use ChatML"))
        self.use_chatml.setToolTip(self.tr("The most common chat format (<|im_start|>role … <|im_end|>)"))
        self.use_chatml.clicked.connect(lambda: self.template.setPlainText(CHATML_TEMPLATE))
        row.addWidget(self.copy_own)
        row.addWidget(self.use_chatml)
        row.addStretch(1)
        rl.addLayout(row)
        rl.addWidget(QLabel(self.tr("Prompt for a sample chat")))
        self.preview = QPlainTextEdit()
        self.preview.setReadOnly(True)
        self.preview.setFont(mono)
        self.preview.setAccessibleName(self.tr("Prompt preview"))
        rl.addWidget(self.preview, 1)
        self.problem = QLabel("")
        self.problem.setObjectName("messageError")
        self.problem.setWordWrap(True)
        self.problem.hide()
        rl.addWidget(self.problem)
        cols.addWidget(right, 1)

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        outer.addWidget(buttons)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(self.PREVIEW_DEBOUNCE_MS)
        self._timer.timeout.connect(self.refresh_preview)
        self.template.textChanged.connect(self._timer.start)
        self.resize(1000, 620)
        self.refresh_preview()

    def refresh_preview(self) -> bool:
        """Render the template in use over the sample chat; True when it rendered (else the reason is shown and
        ChatML is offered)."""
        override = self.template.toPlainText().strip()
        template = override or self.gguf.template
        if not template:
            self.preview.setPlainText("")
            self.problem.setText(self.tr("This model file has no chat template: Brook uses ChatML. Write an "
                                         "override if the model expects another format."))
            self.problem.show()
            return False
        try:
            prompt = render_preview(template, self.gguf.bos, self.gguf.eos)
        except ChatTemplateError as exc:
            self.preview.setPlainText("")
            which = self.tr("The override") if override else self.tr("The model file's template")
            self.problem.setText(which + ": " + str(exc) + "\n" +
                                 self.tr("Write an override above, or press Use ChatML."))
            self.problem.show()
            return False
        self.preview.setPlainText(prompt)
        self.problem.hide()
        return True

    def result_settings(self) -> ModelSettings:
        """The settings as edited (sampling: only the fields that differ from the app's)."""
        sampling: dict[str, object] = {}
        if self.use_sampling.isChecked():
            edited: GenerationParams = self.sampling.params()
            for f in fields(GenerationParams):
                v = getattr(edited, f.name)
                if v != getattr(self.app.generation, f.name):
                    sampling[f.name] = list(v) if isinstance(v, tuple) else v
        gpu = self.n_gpu_layers.value()
        return ModelSettings(n_ctx=self.n_ctx.value() or None, n_gpu_layers=None if gpu == -2 else gpu,
                             sampling=sampling, chat_template=self.template.toPlainText().strip() or None)
