"""File → Open model shows the load's progress in a window with Cancel; Cancel stops llama.cpp's loader and the
model in use stays (real bundled model, real window). The load is held inside llama.cpp's progress callback
until Cancel is clicked, so the test does not depend on how fast the model loads."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from app.core.chat.session import ModelState
from app.engine.llama import LlamaEngine
from app.ui.window.main_window import MainWindow
from tests.helpers import until

pytestmark = [pytest.mark.model, pytest.mark.timeout(120)]


class HeldLoad(LlamaEngine):
    """A load that waits, inside llama.cpp's third progress report, until the session's Cancel is set."""

    def __init__(self, path: Path, session) -> None:  # type: ignore[no-untyped-def]
        super().__init__(path, n_ctx=1024)
        self.session = session
        self.reports: list[float] = []

    def load(self, progress=None):  # type: ignore[no-untyped-def]
        cancel = self.session.load_cancel          # this load's Cancel

        def report(fraction: float) -> None:
            self.reports.append(fraction)
            if len(self.reports) == 4:             # ours (0.0), llama.cpp's 0.0, its first step: the bar moved
                cancel.wait()
            progress(fraction)
        super().load(report)


def test_open_model_shows_progress_and_cancel_keeps_the_old_model(qtbot, qloop, bundled_model: Path) -> None:
    w = MainWindow(LlamaEngine(bundled_model, n_ctx=512))
    qtbot.addWidget(w)
    w.show()
    assert qloop.run_until_complete(w.load_model())
    old = w.session.engine
    held: list[HeldLoad] = []
    w.session.opener = lambda path: held.append(HeldLoad(Path(path), w.session)) or held[-1]
    dialog = w.load_dialog
    try:
        _cancel_while_loading(w, qtbot, qloop, dialog, old, held, bundled_model)
    finally:
        w.session.load_cancel.set()         # a failed test must not leave the load's thread waiting
        qloop.run_until_complete(w.shutdown())


def _cancel_while_loading(w, qtbot, qloop, dialog, old, held, bundled_model) -> None:  # type: ignore[no-untyped-def]
    assert not dialog.isVisible()
    w.models.load_model(str(bundled_model))
    qloop.run_until_complete(until(lambda: dialog.isVisible() and dialog.fraction))   # the loop keeps running
    assert w.session.model_state is ModelState.LOADING and 0.0 < dialog.fraction < 1.0
    assert dialog.bar.maximum() == 100 and dialog.bar.value() == round(dialog.fraction * 100)
    assert "SmolLM2" in dialog.title.text() and dialog.elapsed.text()
    qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)
    assert not dialog.cancel_button.isEnabled()
    qloop.run_until_complete(until(lambda: w.session.model_state is ModelState.IDLE and w.session.engine is old
                                   and not dialog.isVisible()))
    assert old.loaded and not held[0].loaded
    assert len(held[0].reports) == 4                 # llama.cpp made no report after the Cancel: it stopped
    assert w.status.state_label.text() == "ready"
    notices = [it.notice[0] for it in w.chat.items if it.notice is not None]
    assert notices == [f"Kept {old.name}: loading {old.name} was cancelled."]


def test_a_cancelled_first_load_says_cancelled_not_failed(qtbot, qloop, bundled_model: Path) -> None:
    """With no model to keep, a Cancel leaves no model: the status bar says the load was cancelled."""
    import asyncio

    engine = HeldLoad(bundled_model, None)
    w = MainWindow(engine)
    engine.session = w.session
    qtbot.addWidget(w)
    w.show()
    try:
        task = asyncio.ensure_future(w.load_model(), loop=qloop)
        qloop.run_until_complete(until(lambda: len(engine.reports) == 4))    # held inside llama.cpp's report
        assert w.session.cancel_load()
        assert qloop.run_until_complete(task) is False
        assert w.session.model_state is ModelState.ERROR and not engine.loaded
        assert w.status.state_label.text() == "model load cancelled"
    finally:
        w.session.load_cancel.set()
        qloop.run_until_complete(w.shutdown())
