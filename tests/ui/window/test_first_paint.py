"""The window's first frame: what comes after the start runs once, right after it (or, with no frame, after
``FALLBACK_MS``: a window shown minimized or never shown still finishes its start)."""

from __future__ import annotations

import time

from PySide6.QtWidgets import QWidget

from app.ui.window.first_paint import FirstPaint


def test_then_runs_once_right_after_the_first_frame(qtbot) -> None:
    w = QWidget()
    qtbot.addWidget(w)
    calls: list[float] = []
    watch = FirstPaint(w, lambda: calls.append(time.time()), fallback_ms=600_000)
    before = time.time()
    w.show()
    qtbot.waitUntil(lambda: bool(calls), timeout=60_000)
    assert watch.painted_at is not None and before <= watch.painted_at <= calls[0]
    w.update()
    qtbot.wait(100)
    assert len(calls) == 1


def test_without_a_frame_then_still_runs_after_the_fallback(qtbot) -> None:
    w = QWidget()                       # never shown: no frame comes
    qtbot.addWidget(w)
    calls: list[int] = []
    watch = FirstPaint(w, lambda: calls.append(1), fallback_ms=300)
    assert calls == []
    qtbot.waitUntil(lambda: bool(calls), timeout=60_000)
    assert watch.painted_at is None and calls == [1]
