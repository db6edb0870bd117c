"""Settings: defaults for new chats (preset, sampling, system prompt), the model (context window, threads, GPU
layers, models folder), time budgets, and the look (language, theme). Every field explains itself in a tooltip;
"Restore defaults" puts every field back to Brook's defaults."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from app.core.chat.presets import BUILTIN, preset
from app.core.chat.session import ChatSession
from app.core.settings import AppSettings
from app.core.text import format_bytes
from app.ui.dialogs.sampling_form import SamplingForm, dspin, help_text, spin


def gpu_offload_supported() -> bool:
    """True when this llama.cpp was built with a GPU backend (CUDA, Metal, Vulkan …)."""
    try:
        import llama_cpp

        return bool(llama_cpp.llama_supports_gpu_offload())
    except Exception:
        return False


class SettingsDialog(QDialog):
    sampling: SamplingForm

    """Edits a copy of ``AppSettings``; ``result_settings()`` returns the edited copy after ``accept``."""

    def __init__(self, settings: AppSettings, parent: QWidget | None = None, model: Any = None) -> None:
        """``model``: the loaded model's ``ModelInfo`` (``app.engine.library``), for the memory estimate."""
        super().__init__(parent)
        self.model = model
        self.setWindowTitle(self.tr("Brook settings"))
        self._settings = settings
        outer = QVBoxLayout(self)
        columns = QHBoxLayout()
        outer.addLayout(columns)

        chats = QGroupBox(self.tr("New chats"))
        chat_form = QVBoxLayout(chats)
        top = QFormLayout()
        self.preset = QComboBox()
        for name in BUILTIN:
            self.preset.addItem(QCoreApplication.translate("Presets", name), name)
        self.preset.setCurrentIndex(max(0, self.preset.findData(settings.preset)))
        self.preset.setToolTip(self.tr("Sampling preset of new chats; choosing one fills in the fields below."))
        self.preset.activated.connect(lambda _i: self.sampling.set_params(preset(self.preset.currentData()).params))
        top.addRow(self.tr("Preset"), self.preset)
        chat_form.addLayout(top)
        self.sampling = SamplingForm(settings.generation)
        chat_form.addWidget(self.sampling)
        self.system_prompt = QPlainTextEdit(settings.system_prompt)
        self.system_prompt.setPlaceholderText(self.tr("Optional instructions for the model, used by new chats"))
        self.system_prompt.setMaximumHeight(90)
        self.system_prompt.setAccessibleName(self.tr("Default system prompt"))
        sp = QFormLayout()
        sp.addRow(self.tr("System prompt"), self.system_prompt)
        chat_form.addLayout(sp)
        columns.addWidget(chats)

        right = QVBoxLayout()
        model = QGroupBox(self.tr("Model"))
        mform = QFormLayout(model)
        self.n_ctx = spin(256, 131072, settings.n_ctx, self.tr(" tokens"))
        self.n_ctx.setToolTip(help_text("n_ctx"))
        self.n_threads = spin(0, 256, settings.n_threads or 0)
        self.n_threads.setSpecialValueText(self.tr("automatic"))
        from app.engine.llama import default_threads

        self.n_threads.setToolTip(help_text("n_threads") + " " + self.tr("Automatic on this machine: {0}.")
                                  .format(default_threads()))
        self.n_gpu_layers = spin(-1, 1000, settings.n_gpu_layers)
        self.n_gpu_layers.setSpecialValueText(self.tr("as many as fit"))
        gpu = gpu_offload_supported()
        self.n_gpu_layers.setEnabled(gpu)
        no_gpu = self.tr("This llama.cpp was built without a GPU backend: the model runs on the CPU.")
        self.n_gpu_layers.setToolTip(help_text("n_gpu_layers") if gpu else no_gpu)
        self.models_dir = QLineEdit(settings.models_dir or "")
        self.models_dir.setPlaceholderText(self.tr("default: the models folder in Brook's data folder"))
        self.models_dir.setToolTip(self.tr("The folder the model library lists (GGUF files, searched in sub-folders)."))
        self.memory = QLabel()
        self.memory.setObjectName("hint")
        self.n_ctx.valueChanged.connect(self._show_memory)
        self._show_memory(self.n_ctx.value())
        mform.addRow(self.tr("Context window (next model load)"), self.n_ctx)
        mform.addRow("", self.memory)
        mform.addRow(self.tr("CPU threads"), self.n_threads)
        mform.addRow(self.tr("GPU layers"), self.n_gpu_layers)
        self.idle = spin(0, 1440, int(settings.idle_unload_minutes), self.tr(" min"))
        self.idle.setSpecialValueText(self.tr("never"))
        self.idle.setToolTip(self.tr("Unload the model after this long without a reply, to free its memory; the "
                                     "next message loads it again."))
        mform.addRow(self.tr("Models folder"), self.models_dir)
        mform.addRow(self.tr("Unload when idle"), self.idle)
        right.addWidget(model)

        timing = QGroupBox(self.tr("Time limits"))
        tform = QFormLayout(timing)
        self.first_token = dspin(1.0, 3600.0, 5.0, settings.first_token_timeout_s, " s")
        self.first_token.setToolTip(self.tr("Give up when the model has not started answering after this long."))
        self.total = dspin(5.0, 36000.0, 30.0, settings.total_timeout_s, " s")
        self.total.setToolTip(self.tr("Stop a reply that takes longer than this in all (its text is kept)."))
        tform.addRow(self.tr("First-token timeout"), self.first_token)
        tform.addRow(self.tr("Total timeout"), self.total)
        self.watchdog = spin(0, 60000, round(settings.watchdog_threshold_ms), self.tr(" ms"))
        self.watchdog.setSingleStep(10)
        self.watchdog.setSpecialValueText(self.tr("off"))
        self.watchdog.setAccessibleName(self.tr("Event-loop watchdog threshold"))
        self.watchdog.setToolTip(self.tr(
            "When the window's event loop does not turn for longer than this (a stutter you would notice), Brook "
            "logs one warning with the stack of the code that held it up, and the stream inspector counts the "
            "stall. Default 100 ms; lower finds shorter stutters, 0 turns the watchdog off. Applies at once."))
        tform.addRow(self.tr("Event-loop watchdog"), self.watchdog)
        right.addWidget(timing)

        look = QGroupBox(self.tr("Appearance"))
        lform = QFormLayout(look)
        self.language = QComboBox()
        self.language.addItem(self.tr("System language"), "system")
        self.language.addItem("English", "en")
        self.language.addItem("简体中文", "zh_CN")
        self.language.setCurrentIndex(max(0, self.language.findData(settings.language)))
        self.language.setToolTip(self.tr("Language of Brook's windows (changes at once)."))
        self.theme = QComboBox()
        self.theme.addItem(self.tr("Follow the system"), "system")
        self.theme.addItem(self.tr("Light"), "light")
        self.theme.addItem(self.tr("Dark"), "dark")
        self.theme.setCurrentIndex(max(0, self.theme.findData(settings.theme)))
        lform.addRow(self.tr("Language"), self.language)
        lform.addRow(self.tr("Theme"), self.theme)
        right.addWidget(look)
        right.addStretch(1)
        columns.addLayout(right)

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
                                   | QDialogButtonBox.StandardButton.RestoreDefaults)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        buttons.button(QDialogButtonBox.StandardButton.RestoreDefaults).clicked.connect(self.restore_defaults)
        outer.addWidget(buttons)

    def _show_memory(self, n_ctx: int) -> None:
        need = self.model.kv_cache_bytes(n_ctx) if self.model is not None else None
        if need is None:
            self.memory.setText("")
            return
        self.memory.setText(self.tr("≈ %1 for this context (KV cache) + %2 of weights")
                            .replace("%1", format_bytes(need)).replace("%2", format_bytes(self.model.size_bytes)))

    def restore_defaults(self) -> None:
        """Every field back to ``AppSettings()``'s value (nothing is saved until OK)."""
        d = AppSettings()
        self.preset.setCurrentIndex(max(0, self.preset.findData(d.preset)))
        self.sampling.set_params(d.generation)
        self.system_prompt.setPlainText(d.system_prompt)
        self.n_ctx.setValue(d.n_ctx)
        self.n_threads.setValue(d.n_threads or 0)
        self.n_gpu_layers.setValue(d.n_gpu_layers)
        self.models_dir.setText(d.models_dir or "")
        self.idle.setValue(int(d.idle_unload_minutes))
        self.first_token.setValue(d.first_token_timeout_s)
        self.total.setValue(d.total_timeout_s)
        self.watchdog.setValue(round(d.watchdog_threshold_ms))
        self.language.setCurrentIndex(max(0, self.language.findData(d.language)))
        self.theme.setCurrentIndex(max(0, self.theme.findData(d.theme)))

    def result_settings(self) -> AppSettings:
        return replace(self._settings, generation=self.sampling.params(), preset=self.preset.currentData(),
                       first_token_timeout_s=self.first_token.value(), total_timeout_s=self.total.value(),
                       n_ctx=self.n_ctx.value(), system_prompt=self.system_prompt.toPlainText().strip(),
                       n_threads=self.n_threads.value() or None, n_gpu_layers=self.n_gpu_layers.value(),
                       models_dir=self.models_dir.text().strip() or None, language=self.language.currentData(),
                       theme=self.theme.currentData(), idle_unload_minutes=float(self.idle.value()),
                       watchdog_threshold_ms=float(self.watchdog.value()))


def edit_settings(session: ChatSession, parent: QWidget | None = None, model: Any = None) -> AppSettings | None:
    """Settings… for ``session``: the dialog over ``parent``; on OK the new settings replace the session's and are
    saved. ``model``: the loaded model's ``ModelInfo``, for the context window's memory estimate.

    Returns:
        The settings as they were before, when the user pressed OK (the caller applies what changed at once: the
        watchdog threshold, the language); None when the dialog was cancelled.
    """
    dlg = SettingsDialog(session.settings, parent, model=model)
    if not dlg.exec():
        return None
    before, session.settings = session.settings, dlg.result_settings()
    session.save_settings()
    return before
