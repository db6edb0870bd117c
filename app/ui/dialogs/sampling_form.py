"""The sampling fields (temperature … stop strings) as one form, shared by the settings and the chat's settings.

Each field's tooltip explains it (``app.core.chat.presets.HELP``). ``params()`` returns the edited
``GenerationParams``; ``set_params`` fills the fields (e.g. when a preset is chosen).
"""

from __future__ import annotations

import dataclasses

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QDoubleSpinBox, QFormLayout, QLineEdit, QSpinBox, QWidget

from app.core.chat.presets import HELP
from app.core.types import GenerationParams


def help_text(key: str) -> str:
    """The translated tooltip of setting ``key``."""
    return QCoreApplication.translate("SettingsHelp", HELP.get(key, ""))


class SamplingForm(QWidget):
    def __init__(self, params: GenerationParams, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._base = params
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        self.temperature = dspin(0.0, 2.0, 0.05, params.temperature)
        self.top_p = dspin(0.0, 1.0, 0.01, params.top_p)
        self.top_k = spin(0, 1000, params.top_k)
        self.min_p = dspin(0.0, 1.0, 0.01, params.min_p)
        self.repeat_penalty = dspin(0.5, 2.0, 0.01, params.repeat_penalty)
        self.max_tokens = spin(1, 131072, params.max_tokens)
        self.seed = spin(-1, 2**31 - 1, -1 if params.seed is None else params.seed)
        self.seed.setSpecialValueText(self.tr("random"))
        self.stop = QLineEdit(", ".join(params.stop))
        self.stop.setPlaceholderText(self.tr("e.g. ###, </answer>   (comma-separated)"))
        rows = [
            ("temperature", self.tr("Temperature"), self.temperature),
            ("top_p", self.tr("Top-p"), self.top_p),
            ("top_k", self.tr("Top-k"), self.top_k),
            ("min_p", self.tr("Min-p"), self.min_p),
            ("repeat_penalty", self.tr("Repeat penalty"), self.repeat_penalty),
            ("max_tokens", self.tr("Max tokens per reply"), self.max_tokens),
            ("seed", self.tr("Seed"), self.seed),
            ("stop", self.tr("Stop strings"), self.stop),
        ]
        for key, label, widget in rows:
            widget.setToolTip(help_text(key))
            widget.setAccessibleName(label)
            form.addRow(label, widget)

    def set_params(self, p: GenerationParams) -> None:
        self.temperature.setValue(p.temperature)
        self.top_p.setValue(p.top_p)
        self.top_k.setValue(p.top_k)
        self.min_p.setValue(p.min_p)
        self.repeat_penalty.setValue(p.repeat_penalty)
        self.max_tokens.setValue(p.max_tokens)
        self.seed.setValue(-1 if p.seed is None else p.seed)
        self.stop.setText(", ".join(p.stop))

    def params(self) -> GenerationParams:
        seed = self.seed.value()
        stops = tuple(s.strip() for s in self.stop.text().split(",") if s.strip())
        return dataclasses.replace(
            self._base, temperature=self.temperature.value(), top_p=self.top_p.value(), top_k=self.top_k.value(),
            min_p=self.min_p.value(), repeat_penalty=self.repeat_penalty.value(), max_tokens=self.max_tokens.value(),
            seed=None if seed < 0 else seed, stop=stops)


def spin(lo: int, hi: int, value: int, suffix: str = "") -> QSpinBox:
    s = QSpinBox()
    s.setRange(lo, hi)
    s.setValue(value)
    s.setSuffix(suffix)
    return s


def dspin(lo: float, hi: float, step: float, value: float, suffix: str = "") -> QDoubleSpinBox:
    s = QDoubleSpinBox()
    s.setRange(lo, hi)
    s.setSingleStep(step)
    s.setDecimals(2)
    s.setValue(value)
    s.setSuffix(suffix)
    return s
