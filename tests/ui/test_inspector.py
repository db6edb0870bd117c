"""The stream inspector: it plots every chunk's four times, shows a hovered chunk, exports the timings as
JSON, and follows a live reply streaming through the real pipeline (scripted engine, the app's coalescer)."""

from __future__ import annotations

import asyncio
import json

import pytest
from PySide6.QtCore import QPointF
from PySide6.QtGui import QGuiApplication

from app.core.conversation import Conversation, Message, MessageStatus, Role
from app.core.generation import generate
from app.core.metrics import StreamMetrics
from app.core.scheduler import FairScheduler
from app.core.types import GenerationParams
from app.engine.scripted import ScriptedEngine
from app.ui.coalescer import Coalescer
from app.ui.inspector import StreamInspector, StreamInspectorDock

pytestmark = pytest.mark.timeout(60)
WORDS = [f"w{i} " for i in range(40)]


def recorded() -> tuple[StreamMetrics, str]:
    """40 chunks, 20 ms apart after a 300 ms prefill; chunk 25 waited 120 ms on a full queue."""
    m = StreamMetrics(t_request=9.0)
    m.t_slot = 10.0
    for i, w in enumerate(WORDS):
        t = 10.3 + 0.02 * i
        m.on_produced(t, 1)
        m.on_enqueued(t + 0.001, depth=1 + i % 3, waited_s=0.12 if i == 25 else 0.0, n_chars=len(w))
        m.on_dequeued(t + 0.002)
        if i % 2:
            m.on_painted(t + 0.010, 2, 0.004)
    m.t_end = 11.2
    return m, "".join(WORDS)


@pytest.fixture
def inspector(qtbot) -> StreamInspector:
    w = StreamInspector(refresh_ms=20)
    qtbot.addWidget(w)
    w.resize(900, 520)
    w.show()
    return w


def test_it_plots_every_chunks_four_times_the_prefill_waits_queue_and_ticks(inspector) -> None:
    m, text = recorded()
    inspector.set_metrics(m, text)
    for name in ("produced", "enqueued", "dequeued", "painted"):
        xs, ys = inspector.curves[name].getOriginalDataset()
        assert len(xs) == 40 and list(ys) == list(range(40))
    xs, _ = inspector.curves["painted"].getOriginalDataset()
    assert xs[0] == pytest.approx(330.0) and xs[39] == pytest.approx(300 + 20 * 39 + 10)
    assert inspector.prefill_region.getRegion() == pytest.approx((0.0, 300.0))
    wx, wy = inspector.wait_curve.getOriginalDataset()
    assert list(wy) == [25, 25] and list(wx) == pytest.approx([801 - 120, 801])
    _qx, qy = inspector.queue_curve.getOriginalDataset()
    assert list(qy) == [1 + i % 3 for i in range(40)]
    tx, ty = inspector.tick_bars.getOriginalDataset()
    assert len(tx) == 2 * 20 and max(ty) == pytest.approx(4.0)
    assert inspector.figure_labels["TTFT"].text() == "330.0 ms"
    assert inspector.figure_labels["prefill"].text() == "300.0 ms"
    assert inspector.figure_labels["backpressure waits"].text() == "1 (120 ms)"
    assert inspector.figure_labels["chunks / tick"].text() == "2.0 (max 2)"


def test_hovering_a_chunk_shows_its_text_and_four_times(inspector, qtbot) -> None:
    m, text = recorded()
    inspector.set_metrics(m, text)
    vb = inspector.chunk_plot.vb
    qtbot.waitUntil(lambda: vb.width() > 100 and vb.viewRange()[1][1] > 39)   # laid out and auto-ranged
    # move the mouse over chunk 25 in the plot (as the scene reports it)
    scene_pos = vb.mapViewToScene(QPointF(801.0, 25.0))
    inspector.graphics.scene().sigMouseMoved.emit(scene_pos)
    line = inspector.hover.text()
    assert line.startswith('chunk 25: "w25 "'), line
    for part in ("produced 800.0 ms", "enqueued 801.0 ms", "dequeued 802.0 ms", "painted 810.0 ms",
                 "waited 120.0 ms"):
        assert part in line
    _mx, my = inspector.marker.getData()
    assert list(my) == [25, 25, 25, 25]


def test_copy_and_save_give_the_raw_timings_as_json(inspector, tmp_path) -> None:
    m, text = recorded()
    inspector.set_metrics(m, text)
    assert inspector.copy_json()
    d = json.loads(QGuiApplication.clipboard().text())
    assert d["chunks"]["text"] == WORDS and len(d["chunks"]["painted_ms"]) == 40
    path = inspector.save_json(tmp_path / "t.json")
    assert path is not None and json.loads(path.read_text("utf-8")) == d
    # a folder that does not exist: no exception, nothing written, the reason shown
    assert inspector.save_json(tmp_path / "missing" / "t.json") is None
    assert "Could not save" in inspector.hover.text()


def test_a_reply_without_a_timeline_shows_its_stored_figures(inspector) -> None:
    reply = Message(Role.ASSISTANT, "old reply")
    reply.metrics = {"ttft_ms": 123.4, "decode_tokens_per_s": 55.0}
    inspector.set_reply(reply)
    assert "no timeline" in inspector.title.text()
    assert inspector.figure_labels["TTFT"].text() == "123.4 ms"
    assert inspector.to_json() == "" and not inspector.copy_json()


def test_it_follows_a_live_reply_and_counts_loop_stalls(qtbot, qloop) -> None:
    dock = StreamInspectorDock()
    qtbot.addWidget(dock)
    insp = dock.inspector
    insp._timer.setInterval(20)
    dock.show()

    class FakeWatchdog:
        stalls, longest_stall_ms, history = 2, 340.0, []

    insp.set_watchdog(FakeWatchdog())
    engine = ScriptedEngine("Streaming *live* into the inspector. " * 3, tokens_per_s=100, repeat=3)
    engine.load()
    c = Conversation()
    c.add(Message(Role.USER, "hi"))
    reply = c.add(Message(Role.ASSISTANT, status=MessageStatus.WAITING))
    coalescer = Coalescer()
    shown: list[str] = []
    coalescer.attach(reply, shown.append, lambda: True)

    async def main() -> None:
        task = asyncio.ensure_future(generate(engine, FairScheduler(), c, reply, GenerationParams(max_tokens=1000)))
        await asyncio.sleep(0)
        insp.set_reply(reply)
        seen_live = 0
        while not task.done():
            await asyncio.sleep(0.01)
            xs = insp.curves["painted"].getOriginalDataset()[0]
            if insp.live and xs is not None:
                seen_live = max(seen_live, len(xs))
        while insp._timer.isActive():       # stops by itself once the reply is final and painted
            await asyncio.sleep(0.01)
        assert 0 < seen_live < reply.chunks      # it drew the reply while it was still streaming
        await reply.stream.wait_closed()

    qloop.run_until_complete(asyncio.wait_for(main(), 30))
    coalescer.detach(reply)
    assert reply.status is MessageStatus.DONE
    xs, _ = insp.curves["painted"].getOriginalDataset()
    assert len(xs) == reply.chunks == len(reply.stream_metrics.painted)
    assert insp.refreshes >= 2
    assert insp.figure_labels["loop stalls"].text() == "2 (longest 340 ms)"
    assert "".join(json.loads(insp.to_json())["chunks"]["text"]) == reply.text
