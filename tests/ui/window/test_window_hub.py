"""File → Models → Download models, through the window, against the fake Hub: the real bundled GGUF is found,
downloaded (SHA-256 verified), listed by the model library, opened with one click and answers."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

from app.core.chat.session import ModelState
from app.core.conversation import MessageStatus
from app.core.history.store import Store
from app.engine.scripted import ScriptedEngine
from app.ui.window.main_window import MainWindow
from tests.helpers.fake_hub import SMOL, add_smol

pytestmark = [pytest.mark.model, pytest.mark.timeout(240)]


def _settle(qloop, cond, limit_s: float = 120.0) -> None:
    async def wait() -> bool:
        end = time.monotonic() + limit_s
        while not cond():
            if time.monotonic() > end:
                return False
            await asyncio.sleep(0.01)
        return True

    assert qloop.run_until_complete(wait()), "the window never got there"
    QApplication.processEvents()


def _menu_action(w: MainWindow, shortcut: str):
    for a in w.findChildren(type(w.menuBar().actions()[0])):
        if a.shortcut().toString() == shortcut:
            return a
    raise AssertionError(f"no action with {shortcut}")


def test_download_from_the_hub_and_open_it_with_one_click(qtbot, qloop, fake_hub, bundled_model, tmp_path):
    add_smol(fake_hub, bundled_model)
    w = MainWindow(ScriptedEngine("scripted"), store=Store(tmp_path / "h.db"))
    qtbot.addWidget(w)
    w.show()
    assert qloop.run_until_complete(w.load_model())
    try:
        _menu_action(w, "Ctrl+Shift+M").trigger()
        dlg = w.models.hub
        assert dlg is not None and dlg.isVisible()
        dlg.query.setText("SmolLM2")
        dlg.search_button.click()
        _settle(qloop, lambda: dlg.result_list.count() == 1)
        dlg.result_list.setCurrentRow(0)
        _settle(qloop, lambda: dlg.file_table.rowCount() == 1)
        assert dlg.file_table.item(0, 1).text() == "Q4_1" and dlg.file_table.item(0, 4).text() == "fits"
        dlg.file_table.selectRow(0)
        d = dlg.download_selected()
        row = dlg.row_of(d)
        _settle(qloop, lambda: row.open_button.isVisible())
        expected = tmp_path / "data" / "models" / SMOL / "SmolLM2-135M-Instruct-Q4_1.gguf"
        assert d.path == expected and expected.read_bytes() == bundled_model.read_bytes()
        library = w.models.open_library()
        _settle(qloop, lambda: library.rescan_button.isEnabled())
        assert "SmolLM2-135M-Instruct-Q4_1.gguf" in [library.table.item(r, 0).text()
                                                     for r in range(library.table.rowCount())]
        library.close()
        row.open_button.click()                              # one click: the model loads
        _settle(qloop, lambda: w.session.model_state is ModelState.IDLE and "Q4_1" in w.session.engine.name)
        assert w.session.settings.model_path == str(expected)
        reply = w.send("Say hello.")
        _settle(qloop, lambda: reply.status.final and not w.session.generating)
        assert reply.status is MessageStatus.DONE and reply.text.strip()
    finally:
        qloop.run_until_complete(w.shutdown())


def test_unfinished_download_is_listed_again_after_a_restart(qtbot, qloop, fake_hub, tmp_path):
    from app.engine.hub.client import HubClient
    from app.engine.hub.download import Download, State
    from tests.helpers.fake_hub import TINY

    models = Path(tmp_path / "data" / "models")
    f = HubClient().file(TINY, "tiny-Q8_0.gguf")
    fake_hub.cut(1_000_000, times=1)
    first = Download(f, models, HubClient().url(f), retries=0)
    first.start()
    assert first.wait().state == State.FAILED            # "the app was closed" mid-file
    w = MainWindow(ScriptedEngine("scripted"), store=Store(tmp_path / "h.db"))
    qtbot.addWidget(w)
    w.show()
    try:
        dlg = w.models.open_hub()
        rows = list(dlg._rows.values())
        assert len(rows) == 1 and rows[0].pause_button.text() == "Resume"
        assert "1.0 MB of 5.2 MB" in rows[0].detail.text()
        rows[0].pause_button.click()
        _settle(qloop, lambda: rows[0].open_button.isVisible())
        assert fake_hub.ranges("tiny-Q8_0")[-1] == "bytes=1000000-"
    finally:
        qloop.run_until_complete(w.shutdown())
