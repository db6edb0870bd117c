"""Settings: sampling parameters, time budgets, system prompt, context window."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QPlainTextEdit,
    QSpinBox,
    QWidget,
)

from app.core.settings import AppSettings


class SettingsDialog(QDialog):
    """Edits a copy of ``AppSettings``; ``result_settings()`` returns the edited copy after ``accept``."""

    def __init__(self, settings: AppSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Brook settings")
        self._settings = settings
        g = settings.generation
        form = QFormLayout(self)
        self.temperature = _dspin(0.0, 2.0, 0.05, g.temperature)
        self.top_p = _dspin(0.0, 1.0, 0.01, g.top_p)
        self.max_tokens = _spin(1, 32768, g.max_tokens)
        self.seed = _spin(-1, 2**31 - 1, -1 if g.seed is None else g.seed)
        self.seed.setSpecialValueText("random")
        self.first_token = _dspin(1.0, 3600.0, 5.0, settings.first_token_timeout_s, " s")
        self.total = _dspin(5.0, 36000.0, 30.0, settings.total_timeout_s, " s")
        self.n_ctx = _spin(256, 131072, settings.n_ctx, " tokens")
        self.system_prompt = QPlainTextEdit(settings.system_prompt)
        self.system_prompt.setPlaceholderText("Optional instructions sent before every chat")
        self.system_prompt.setMaximumHeight(90)
        form.addRow("Temperature", self.temperature)
        form.addRow("Top-p", self.top_p)
        form.addRow("Max tokens per reply", self.max_tokens)
        form.addRow("Seed", self.seed)
        form.addRow("First-token timeout", self.first_token)
        form.addRow("Total timeout", self.total)
        form.addRow("Context window (next model load)", self.n_ctx)
        form.addRow("System prompt", self.system_prompt)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def result_settings(self) -> AppSettings:
        seed = self.seed.value()
        gen = replace(self._settings.generation, temperature=self.temperature.value(), top_p=self.top_p.value(),
                      max_tokens=self.max_tokens.value(), seed=None if seed < 0 else seed)
        return replace(self._settings, generation=gen, first_token_timeout_s=self.first_token.value(),
                       total_timeout_s=self.total.value(), n_ctx=self.n_ctx.value(),
                       system_prompt=self.system_prompt.toPlainText().strip())


def _spin(lo: int, hi: int, value: int, suffix: str = "") -> QSpinBox:
    s = QSpinBox()
    s.setRange(lo, hi)
    s.setValue(value)
    s.setSuffix(suffix)
    return s


def _dspin(lo: float, hi: float, step: float, value: float, suffix: str = "") -> QDoubleSpinBox:
    s = QDoubleSpinBox()
    s.setRange(lo, hi)
    s.setSingleStep(step)
    s.setDecimals(2)
    s.setValue(value)
    s.setSuffix(suffix)
    return s
