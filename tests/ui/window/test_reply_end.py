"""A reply's end in the real window (scripted engine, offscreen): what arrived after the last tick is fed and
painted together with the final render — one patch, the view's ``finish`` — not patched as the tail first and
then again as the final render (app/ui/messages/coalescer.py ``finish(…, paint_end)``, app/ui/window/replies.py)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from app.core.conversation import MessageStatus
from app.core.history.store import Store
from app.core.render.markdown import render_markdown
from app.engine.scripted import ScriptedEngine
from app.ui.messages.coalescer import Coalescer
from app.ui.messages.markdown_view import MarkdownView
from app.ui.window.main_window import MainWindow

pytestmark = pytest.mark.timeout(120)

SCRIPT = "Here is a table:\n\n| n | square |\n|---|---:|\n" + "".join(f"| {k} | {k * k} |\n" for k in range(12))


def test_the_rest_and_the_end_are_one_patch(qtbot, qloop, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(Coalescer, "tick", lambda self: None)   # no tick: what follows the first chunk waits
    calls: list[tuple[str, bool, int]] = []                       # (view call, the reply had ended, view)
    real_refresh, real_finish = MarkdownView.refresh, MarkdownView.finish
    state = {"reply": None}

    def refresh(self: MarkdownView) -> None:
        r = state["reply"]
        calls.append(("refresh", r is not None and r.status.final, id(self)))
        real_refresh(self)

    def finish(self: MarkdownView) -> None:
        calls.append(("finish", True, id(self)))
        real_finish(self)

    monkeypatch.setattr(MarkdownView, "refresh", refresh)
    monkeypatch.setattr(MarkdownView, "finish", finish)
    w = MainWindow(ScriptedEngine(SCRIPT, tokens_per_s=200), store=Store(tmp_path / "h.db"))
    qtbot.addWidget(w)
    w.resize(1000, 700)
    w.show()
    qtbot.waitExposed(w)
    try:
        assert qloop.run_until_complete(w.load_model())
        reply = w.send("A table, please.")
        assert reply is not None
        state["reply"] = reply

        async def ended() -> bool:
            end = time.monotonic() + 60
            while not (reply.status is MessageStatus.DONE and not w.session.generating):
                if time.monotonic() > end:
                    return False
                await asyncio.sleep(0.005)
            return True

        assert qloop.run_until_complete(ended())
        view = w.chat.widget_for(reply).view
        qtbot.waitUntil(lambda: ("finish", True, id(view)) in calls, timeout=30_000)
        mine = [c[:2] for c in calls if c[2] == id(view)]
        end = mine.index(("finish", True))
        assert mine.count(("finish", True)) == 1                   # the final render once …
        assert ("refresh", True) not in mine[:end]                 # … and the rest not patched before it
        assert mine[0] == ("refresh", False)                       # the first chunk was painted at once
        assert view.renderer.finished and view.renderer.html == render_markdown(SCRIPT)
        assert view.toPlainText().count("square") == 1 and "11" in view.toPlainText()
    finally:
        qloop.run_until_complete(w.shutdown())
