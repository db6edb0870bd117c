"""The context meter in the real window on the real bundled model: it counts what llama.cpp will prefill."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.chat.context_meter import measure
from app.engine.llama import LlamaEngine
from app.ui.window.main_window import MainWindow

pytestmark = [pytest.mark.model, pytest.mark.timeout(180)]


def test_meter_follows_the_draft_and_equals_the_engines_count(qtbot, qloop, bundled_model: Path) -> None:
    engine = LlamaEngine(bundled_model, n_ctx=512)
    w = MainWindow(engine)
    qtbot.addWidget(w)
    w.show()
    try:
        assert qloop.run_until_complete(w.load_model())
        meter = w.context_meter
        w.input.setPlainText("How long is the Great Wall of China?")
        expected = measure(engine, w.session.conversation, w.input.toPlainText(), w.session.settings.generation).used
        assert expected > 0
        # the count made at load time (an empty draft) may arrive first: wait for the draft's own count
        qtbot.waitUntil(lambda: meter.usage is not None and meter.usage.used == expected and meter.isVisible(),
                        timeout=60_000)
        first = meter.usage
        assert first.window == 512 and "512" in meter.text()
        w.input.setPlainText("word " * 600)                # far more than the window: warning
        qtbot.waitUntil(lambda: meter.usage is not first and meter.usage.warning, timeout=60_000)
        assert meter.property("warning") is True
    finally:
        qloop.run_until_complete(w.shutdown())
