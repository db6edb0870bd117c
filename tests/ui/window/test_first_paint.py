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


def test_the_history_schema_is_imported_off_the_loop_after_the_first_frame(qtbot, qloop, tmp_path,
                                                                             monkeypatch) -> None:
    # Reading a chat checks its rows with pydantic models: a 0.3 s import, which the first chat a person opened
    # paid on the loop (the window froze that long) when no chat was restored at the start.
    import sys
    import threading

    import app.ui.window.main_window as main_window
    from app.core.history.store import Store
    from app.engine.scripted import ScriptedEngine

    imported: list[str] = []
    monkeypatch.delitem(sys.modules, "app.core.history.schema", raising=False)
    monkeypatch.setattr(main_window, "warm_schema", lambda: imported.append(threading.current_thread().name))
    store = Store(tmp_path / "h.sqlite3")
    w = main_window.MainWindow(ScriptedEngine(), store=store)
    qtbot.addWidget(w)
    w.show()
    try:
        qtbot.waitUntil(lambda: bool(imported), timeout=60_000)
        assert imported[0] != threading.main_thread().name
    finally:
        qloop.run_until_complete(w.shutdown())
        store.close()
