"""The load progress of a model: a small window with the model's name, llama.cpp's own progress (a busy bar
until the engine reports a fraction), the time so far, and **Cancel**.

``LoadProgressDialog(session, parent)`` is told the session's model state (``set_state``) and the load progress
(``set_fraction``) by the window. It is not modal (the window stays usable while the model loads in its worker
thread) and shows only when a load takes longer than ``SHOW_AFTER_MS`` (a small model loads in well under a
second: no flash). Cancel calls ``ChatSession.cancel_load()``: llama.cpp aborts its loader at its next progress
report and frees what it had loaded; when another model was in use, the session loads it again
(``ChatSession.switch_engine``).
"""

from __future__ import annotations

import time

from PySide6.QtCore import QEvent, Qt, QTimer
from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QProgressBar, QPushButton, QVBoxLayout, QWidget

from app.core.chat.session import ChatSession, ModelState

#: A load shorter than this (ms) shows no window.
SHOW_AFTER_MS = 400


class LoadProgressDialog(QDialog):
    """Public parts (tests read them): ``title``, ``bar``, ``elapsed``, ``cancel_button``; ``fraction``
    (the last reported progress, None until the engine reports one)."""

    def __init__(self, session: ChatSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.setObjectName("loadProgress")
        self.setModal(False)
        self.setWindowFlag(Qt.WindowType.WindowContextHelpButtonHint, False)
        self.setMinimumWidth(380)
        self.title = QLabel()
        self.title.setWordWrap(True)
        self.bar = QProgressBar()
        self.bar.setRange(0, 0)
        self.elapsed = QLabel()
        self.cancel_button = QPushButton()
        self.cancel_button.clicked.connect(self.cancel)
        lay = QVBoxLayout(self)
        lay.addWidget(self.title)
        lay.addWidget(self.bar)
        row = QHBoxLayout()
        row.addWidget(self.elapsed, 1)
        row.addWidget(self.cancel_button)
        lay.addLayout(row)
        self.fraction: float | None = None
        self._started = 0.0
        self._loading = False
        self._show_timer = QTimer(self)
        self._show_timer.setSingleShot(True)
        self._show_timer.setInterval(SHOW_AFTER_MS)
        self._show_timer.timeout.connect(self._show_if_loading)
        self._tick = QTimer(self)
        self._tick.setInterval(200)
        self._tick.timeout.connect(self._update_elapsed)
        self.retranslate()

    def retranslate(self) -> None:
        self.setWindowTitle(self.tr("Loading the model"))
        self.cancel_button.setText(self.tr("Cancel") if self.cancel_button.isEnabled() else self.tr("Cancelling…"))
        self.cancel_button.setToolTip(self.tr("Stop loading; the model in use before stays in use"))
        self.cancel_button.setAccessibleName(self.tr("Cancel loading the model"))
        self.bar.setAccessibleName(self.tr("Load progress"))
        self._set_title()
        self._update_elapsed()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()

    def _set_title(self) -> None:
        self.title.setText(self.tr("Loading %1…").replace("%1", self.session.engine.name))

    def set_state(self, state: ModelState) -> None:
        """The session's model state: ``LOADING`` starts (a new load: busy bar, Cancel enabled), else done."""
        if state is ModelState.LOADING:
            self._loading = True
            self._started = time.monotonic()
            self.fraction = None
            self.bar.setRange(0, 0)
            self.cancel_button.setEnabled(True)
            self.retranslate()
            self._tick.start()
            self._show_timer.start()
        else:
            self._loading = False
            self._tick.stop()
            self._show_timer.stop()
            self.hide()

    def set_fraction(self, fraction: float) -> None:
        """llama.cpp's progress (0..1): the bar becomes determinate."""
        if not self._loading:
            return
        self.fraction = fraction
        if fraction > 0.0:
            self.bar.setRange(0, 100)
            self.bar.setValue(round(fraction * 100))

    def _show_if_loading(self) -> None:
        if self._loading:
            self.show()
            self.raise_()

    def _update_elapsed(self) -> None:
        if self._loading:
            self.elapsed.setText(self.tr("%1 s so far").replace("%1", f"{time.monotonic() - self._started:.1f}"))

    def cancel(self) -> bool:
        """Cancel the load (the button). True when a load was cancelled."""
        if not self.session.cancel_load():
            return False
        self.cancel_button.setEnabled(False)
        self.cancel_button.setText(self.tr("Cancelling…"))
        return True

    def reject(self) -> None:
        """Esc or the window's close button: cancel too (a load cannot be hidden and forgotten)."""
        self.cancel()
