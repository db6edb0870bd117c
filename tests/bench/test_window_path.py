"""The benches' window path (``app.bench.window_path``): a reply goes through the shown, styled window."""

from __future__ import annotations

import os
from pathlib import Path

from app.bench.window_path import BenchWindow, bench_home
from app.core.conversation import Message, MessageStatus, Role
from app.core.streaming.metrics import StreamMetrics
from app.core.types import GenerationParams
from app.engine.scripted import ScriptedEngine
from tests.helpers import run_on, until

REPLY = "Hello **there**.\n\n```python\nx = 1\n```\n\nDone.\n"


def _shown_text(window: BenchWindow, reply: Message) -> str:
    widget = window.window.chat.widget_for(reply)
    assert widget is not None and widget.view is not None
    return widget.view.document().toPlainText()


def test_a_bench_reply_is_painted_in_the_shown_styled_window(qloop, tmp_path: Path) -> None:
    engine = ScriptedEngine(REPLY, tokens_per_s=2000)
    bench = BenchWindow(engine, tmp_path)

    async def go() -> None:
        await bench.start()
        run = await bench.reply("hi", GenerationParams(max_tokens=100))
        assert run.reply.status is MessageStatus.DONE
        assert run.reply.text == REPLY
        assert bench.window.isVisible() and bench.window.styleSheet()
        # the window's own tick painted it: every chunk stamped, and the view shows the reply's words
        assert len(run.metrics.painted) > 0 and run.metrics.painted[0] >= run.t_call
        shown = _shown_text(bench, run.reply)
        assert "Hello there." in shown and "x = 1" in shown and "Done." in shown
        # saved like any reply: the history file has it
        assert any(m.text == REPLY for c in bench.store.list_conversations()
                   for m in bench.store.load_conversation(c.id).messages)
        await bench.close()

    run_on(qloop, go())


def test_a_foreign_message_is_painted_by_the_window_tick(qloop, tmp_path: Path) -> None:
    bench = BenchWindow(ScriptedEngine(REPLY), tmp_path)

    async def go() -> None:
        await bench.start()
        reply = Message(Role.ASSISTANT, status=MessageStatus.WAITING)
        metrics = StreamMetrics()
        detach = bench.paint_foreign(reply, metrics)
        reply.append("Painted *here*.\n")
        await until(lambda: len(metrics.painted) > 0)
        assert "Painted here." in _shown_text(bench, reply)
        detach()
        assert not bench.window.coalescer.tracked(reply)
        await bench.close()

    run_on(qloop, go())


def test_bench_home_points_the_data_folders_into_a_temporary_folder_and_back() -> None:
    before = os.environ.get("BROOK_DATA_DIR")
    with bench_home() as home:
        assert os.environ["BROOK_DATA_DIR"] == str(home / "data")
        assert os.environ["BROOK_CONFIG_DIR"] == str(home / "config")
    assert os.environ.get("BROOK_DATA_DIR") == before
    assert not home.exists()
