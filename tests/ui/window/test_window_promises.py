"""What the README promises, checked through the real window (scripted engine, offscreen): Continue on a
stopped reply, the ‹ k/n › version switcher after Ctrl+R, and the others of issue 24's list."""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from app.core.chat import versions
from app.core.conversation import MessageStatus
from app.core.history.store import Store
from app.engine.scripted import ScriptedEngine
from app.ui.window.main_window import MainWindow

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def window(qtbot, qloop, tmp_path: Path):
    made: list[MainWindow] = []

    def make(script: str = "One two three four five six seven eight nine ten.", tokens_per_s: float = 0,
             **kw) -> MainWindow:
        w = MainWindow(ScriptedEngine(script, tokens_per_s=tokens_per_s, **kw), store=Store(tmp_path / "h.db"))
        qtbot.addWidget(w)
        w.resize(1000, 700)
        w.show()
        qtbot.waitExposed(w)
        assert qloop.run_until_complete(w.load_model())
        made.append(w)
        return w

    yield make
    for w in made:
        qloop.run_until_complete(w.shutdown())


def _settle(qloop, cond, limit_s: float = 60.0) -> None:
    """Run the loop until ``cond()``; a hang fails here (an exception inside the qasync loop, as
    pytest-timeout's would be, is only logged)."""
    async def wait() -> bool:
        end = time.monotonic() + limit_s
        while not cond():
            if time.monotonic() > end:
                return False
            await asyncio.sleep(0.005)
        return True

    assert qloop.run_until_complete(wait()), "the window never got there"
    for _ in range(3):
        QApplication.processEvents()


def test_continue_on_a_stopped_reply_updates_its_bubble(window, qloop, caplog):
    script = "Alpha beta gamma delta. " * 8 + "THE END."
    w = window(script, tokens_per_s=200)
    reply = w.send("go")
    _settle(qloop, lambda: len(reply.text) > 20)
    w.stop()
    _settle(qloop, lambda: reply.status is MessageStatus.STOPPED and not w.session.generating)
    cut = reply.text
    assert "THE END." not in cut
    w.session.engine.tokens_per_s = 0
    caplog.set_level(logging.ERROR)
    assert w.messages.continue_reply(reply) is reply
    _settle(qloop, lambda: reply.status.final and not w.session.generating)
    view = w.chat.widget_for(reply).view
    _settle(qloop, lambda: "THE END." in view.toPlainText())
    assert view.toPlainText().startswith("Alpha beta gamma")
    assert "feed() after finish()" not in caplog.text


def test_regenerate_shows_its_version_switcher_at_once_and_the_arrows_switch(window, qloop):
    w = window("First answer.")
    reply = w.send("hello")
    _settle(qloop, lambda: reply.status.final and not w.session.generating)
    w.session.engine.script = ["Second ", "answer."]
    w.regenerate()                                        # Ctrl+R
    _settle(qloop, lambda: reply.status.final and not w.session.generating)
    widget = w.chat.widget_for(reply)
    assert versions.label(reply) == "2/2"
    assert "‹" in widget.status.text() and "2/2" in widget.status.text()
    assert widget.status.textFormat() == Qt.TextFormat.RichText and "href" in widget.status.text()
    widget.status.linkActivated.emit("version:prev")      # the ‹ arrow
    _settle(qloop, lambda: versions.label(reply) == "1/2")
    widget = w.chat.widget_for(reply)
    assert reply.text == "First answer." and "1/2" in widget.status.text()
    widget.status.linkActivated.emit("version:next")
    _settle(qloop, lambda: versions.label(reply) == "2/2")
    assert reply.text == "Second answer."
