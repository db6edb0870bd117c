"""The stream inspector: it plots every chunk's four times, shows a hovered chunk, exports the timings as
JSON, and follows a live reply streaming through the real pipeline (scripted engine, the app's coalescer)."""

from __future__ import annotations

import asyncio
import json

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QGuiApplication, QWheelEvent
from PySide6.QtWidgets import QApplication, QLineEdit, QMainWindow

from app.core.conversation import Conversation, Message, MessageStatus, Role
from app.core.streaming.generation import Generation, generate
from app.core.streaming.metrics import StreamMetrics, now
from app.core.streaming.scheduler import FairScheduler
from app.core.streaming.watchdog import Stall
from app.core.types import GenerationParams
from app.engine.scripted import ScriptedEngine
from app.ui.inspector.dock import StreamInspectorDock, install_inspector
from app.ui.inspector.panel import StreamInspector
from app.ui.messages.coalescer import Coalescer
from app.ui.messages.menu import message_menu

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


def test_it_plots_every_chunks_four_times_the_prefill_waits_queue_and_ticks(inspector, qtbot) -> None:
    m, text = recorded()
    inspector.set_metrics(m, text)
    view = inspector.view
    qtbot.waitUntil(lambda: view.paints > 0 and view.series("painted")[0].size == 40)
    for name in ("produced", "enqueued", "dequeued", "painted"):
        xs, ys = view.series(name)
        assert len(xs) == 40 and list(ys) == list(range(40))
    xs, _ = view.series("painted")
    assert xs[0] == pytest.approx(330.0) and xs[39] == pytest.approx(300 + 20 * 39 + 10)
    assert view.tl is not None and view.tl.prefill == pytest.approx((0.0, 300.0))
    wx, wy = view.series("waits")
    assert list(wy) == [25] and list(wx) == pytest.approx([801])
    _qx, qy = view.series("queue")
    assert list(qy) == [1 + i % 3 for i in range(40)]
    tx, ty = view.series("ticks")
    assert len(tx) == 20 and max(ty) == pytest.approx(4.0)
    # the finished reply is shown whole
    assert view.x_range[0] <= 0 and view.x_range[1] >= 1090 and view.y_range[1] >= 39
    assert inspector.figure_labels["TTFT"].text() == "330.0 ms"
    assert inspector.figure_labels["prefill"].text() == "300.0 ms"
    assert inspector.figure_labels["backpressure waits"].text() == "1 (120 ms)"
    assert inspector.figure_labels["chunks / tick"].text() == "2.0 (max 2)"


def test_a_long_reply_is_drawn_with_at_most_two_points_per_pixel_and_keeps_its_peaks(inspector, qtbot) -> None:
    m = StreamMetrics(t_request=10.0)
    m.t_slot = 10.0
    for i in range(50_000):
        t = 10.1 + 0.0001 * i
        m.on_produced(t, 1)
        m.on_enqueued(t, depth=9 if i == 31_337 else 1, waited_s=0.0, n_chars=1)
        m.on_dequeued(t)
        m.on_painted(t, 1, 0.001)
    m.t_end = 15.2
    inspector.set_metrics(m, "x" * 50_000)
    view = inspector.view
    qtbot.waitUntil(lambda: view.series("queue")[0].size > 0)
    width = view.panels()[0].width()
    assert 0 < len(view.series("produced")[0]) <= 2 * width + 1
    assert view.series("produced")[1][-1] == 49_999          # the last chunk is always drawn
    assert max(view.series("queue")[1]) == 9                  # a one-chunk peak survives the decimation


def test_hovering_a_chunk_shows_its_text_and_four_times(inspector, qtbot) -> None:
    m, text = recorded()
    inspector.set_metrics(m, text)
    view = inspector.view
    qtbot.waitUntil(lambda: view.paints > 0)
    # a real mouse move over chunk 25 in the chunk panel
    qtbot.mouseMove(view, view.to_pixel(801.0, 25.0).toPoint())
    qtbot.waitUntil(lambda: inspector.hover.text().startswith("chunk 25:"))
    line = inspector.hover.text()
    assert line.startswith('chunk 25: "w25 "'), line
    for part in ("produced 800.0 ms", "enqueued 801.0 ms", "dequeued 802.0 ms", "painted 810.0 ms",
                 "waited 120.0 ms"):
        assert part in line
    assert view.marker == 25


def test_wheel_zooms_the_time_axis_and_fit_shows_all_again(inspector, qtbot) -> None:
    m, text = recorded()
    inspector.set_metrics(m, text)
    view = inspector.view
    qtbot.waitUntil(lambda: view.paints > 0)
    whole = view.x_range
    pos = view.to_pixel(600.0, 20.0)
    event = QWheelEvent(pos, view.mapToGlobal(pos), QPoint(0, 0), QPoint(0, 240), Qt.MouseButton.NoButton,
                        Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(view, event)
    assert view.x_range[1] - view.x_range[0] < 0.7 * (whole[1] - whole[0]) and not view.follow
    assert view.x_range[0] < 600 < view.x_range[1]            # zoomed around the pointer
    view.repaint()
    assert len(view.series("produced")[0]) < 40               # only the visible part is drawn
    inspector.fit_button.click()
    assert view.x_range == whole and view.follow


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

    class FakeWatchdog:       # what the inspector reads of app.core.streaming.watchdog.LoopWatchdog
        def __init__(self) -> None:
            self.stalls, self.longest_stall_ms = 0, 0.0
            self.history: list[Stall] = []

    wd = FakeWatchdog()
    insp.set_watchdog(wd)
    engine = ScriptedEngine("Streaming *live* into the inspector. " * 3, tokens_per_s=100, repeat=3)
    engine.load()
    c = Conversation()
    c.add(Message(Role.USER, "hi"))
    reply = c.add(Message(Role.ASSISTANT, status=MessageStatus.WAITING))
    coalescer = Coalescer()
    shown: list[str] = []

    gen = Generation(reply, c)
    coalescer.attach(reply, shown.append, lambda: True, gen.metrics)

    async def main() -> None:
        task = asyncio.ensure_future(generate(engine, FairScheduler(), c, reply, GenerationParams(max_tokens=1000),
                                              generation=gen))
        await asyncio.sleep(0)
        insp.set_reply(reply, gen.metrics)
        # one stall long before this reply (not its own), one while it streams
        wd.history += [Stall(now() - 1000.0, 500.0, ""), Stall(now(), 340.0, "")]
        wd.stalls, wd.longest_stall_ms = 2, 500.0
        seen_live = 0
        while not task.done():
            await asyncio.sleep(0.01)
            if insp.live and insp.view.tl is not None:
                seen_live = max(seen_live, len(insp.view.tl.painted))
        while insp._timer.isActive():       # stops by itself once the reply is final and painted
            await asyncio.sleep(0.01)
        assert 0 < seen_live < reply.chunks      # it drew the reply while it was still streaming
        assert gen.stream is not None
        await gen.stream.wait_closed()

    qloop.run_until_complete(main())
    coalescer.detach(reply)
    assert reply.status is MessageStatus.DONE
    assert len(insp.view.tl.painted) == reply.chunks == len(gen.metrics.painted)
    assert insp.refreshes >= 2
    assert insp.figure_labels["loop stalls"].text() == "1 (longest 340 ms)"
    assert "".join(json.loads(insp.to_json())["chunks"]["text"]) == reply.text


def test_view_menu_ctrl_shift_i_shows_the_dock_which_follows_the_streaming_reply(qtbot, qloop) -> None:
    win = QMainWindow()
    qtbot.addWidget(win)
    typing = QLineEdit()                    # keys go to the focused widget, as in the app's prompt box
    win.setCentralWidget(typing)
    coalescer = Coalescer(win)
    c = Conversation()
    old = c.add(Message(Role.ASSISTANT, "an old reply"))
    dock = install_inspector(win, coalescer, shown_chat=lambda: c)   # the dock starts on the chat's latest reply
    win.menuBar().addMenu("&View").addAction(dock.toggleViewAction())    # where the app's window puts it
    win.show()
    qtbot.waitExposed(win)
    menu = next(a.menu() for a in win.menuBar().actions() if a.text() == "&View")
    action = next(a for a in menu.actions() if "inspector" in a.text())
    assert action.shortcut().toString() == "Ctrl+Shift+I" and not dock.isVisible()
    win.activateWindow()
    qtbot.waitUntil(win.isActiveWindow)
    typing.setFocus()
    qtbot.keyClick(typing, Qt.Key.Key_I, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(dock.isVisible)
    assert dock.inspector.reply is old

    engine = ScriptedEngine("Follow me as I stream. " * 4, tokens_per_s=0)
    engine.load()

    async def stream_one() -> Message:
        c.add(Message(Role.USER, "hi"))
        reply = c.add(Message(Role.ASSISTANT, status=MessageStatus.WAITING))
        gen = Generation(reply, c)
        coalescer.attach(reply, lambda _t: None, lambda: True, gen.metrics)
        await generate(engine, FairScheduler(), c, reply, GenerationParams(max_tokens=100), generation=gen)
        assert gen.stream is not None
        await gen.stream.wait_closed()
        while reply.pending or len(gen.metrics.painted) < reply.chunks:
            await asyncio.sleep(0.01)
        coalescer.detach(reply)
        return reply

    first = qloop.run_until_complete(stream_one())
    assert dock.inspector.reply is first            # followed the reply that streamed
    dock.inspect(old)                                # a chosen reply stays shown
    qloop.run_until_complete(stream_one())
    assert dock.inspector.reply is old
    qtbot.keyClick(typing, Qt.Key.Key_I, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: not dock.isVisible())


def test_a_replys_menu_opens_it_in_the_inspector(qtbot) -> None:
    class Actions:            # the operations a window offers (app.ui.messages.actions.MessageActions)
        def __init__(self) -> None:
            self.inspected: list[Message] = []

        def can_change(self) -> bool:
            return True

        def inspect(self, msg: Message) -> None:
            self.inspected.append(msg)

    actions = Actions()
    reply = Message(Role.ASSISTANT, "a reply")
    menu = message_menu(reply, actions)
    qtbot.addWidget(menu)
    item = next(a for a in menu.actions() if a.text().startswith("Inspect the stream"))
    item.trigger()
    assert actions.inspected == [reply]
    user_menu = message_menu(Message(Role.USER, "a question"), actions)
    qtbot.addWidget(user_menu)
    assert not any(a.text().startswith("Inspect") for a in user_menu.actions())
