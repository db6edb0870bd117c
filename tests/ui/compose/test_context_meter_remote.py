"""The context meter with a remote engine in the real window: a server without a tokenizer endpoint (Brook's own,
on loopback) gives a count marked "≈" and said to be an estimate; the meter asks only between replies."""

from __future__ import annotations

import pytest

from app.core.chat.context_meter import measure
from app.engine.remote.engine import RemoteConnection, RemoteEngine
from app.server.api import ServerOptions
from app.ui.window.main_window import MainWindow
from tests.helpers import until
from tests.server.test_server_api import ServerThread, scripted

pytestmark = pytest.mark.timeout(120)


def test_a_remote_estimate_is_labelled(qtbot, qloop) -> None:
    with ServerThread(scripted(script="A short answer."), ServerOptions()) as s:
        engine = RemoteEngine(RemoteConnection(s.url))
        w = MainWindow(engine)
        qtbot.addWidget(w)
        w.show()
        try:
            assert qloop.run_until_complete(w.load_model())
            meter = w.context_meter
            w.input.setPlainText("How long is the Great Wall of China? 长城有多长？")
            # settled: no count pending or running (a count the load started, of the empty draft, may land first)
            qloop.run_until_complete(until(lambda: meter.usage is not None and meter.isVisible() and settled(meter)))
            usage = meter.usage
            assert usage.estimate and usage.source == "estimate" and usage.window == 0
            assert usage.used == measure(engine, w.session.conversation, w.input.toPlainText()).used
            assert meter.text() == f"context ≈{usage.used:,} tokens"
            assert "estimate" in meter.toolTip()
            slot_taken = qloop.run_until_complete(w.session.scheduler.acquire())   # as a running reply holds it
            before = meter.usage
            w.input.setPlainText("something else entirely, typed while a reply runs")
            meter._timer.stop()
            meter._start()                                                         # the debounce fired
            qloop.run_until_complete(until(lambda: meter._task is not None and meter._task.done()))
            assert meter.usage is before and meter._task.result() is None           # not asked meanwhile
            slot_taken.release()
        finally:
            qloop.run_until_complete(w.shutdown())


def settled(meter) -> bool:  # type: ignore[no-untyped-def]
    """No count is waiting for the debounce, running, or asked again after the one running."""
    return not meter._timer.isActive() and meter._task is not None and meter._task.done() and not meter._again
