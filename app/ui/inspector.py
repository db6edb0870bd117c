"""Stream inspector: where each chunk of a reply waited (View → Stream inspector, Ctrl+Shift+I).

A pyqtgraph timeline of one reply (live while it streams), three plots sharing the time axis (ms since the
engine slot was acquired, i.e. since prefill started):

- **chunks**: one line per stamp kind — produced (the model), enqueued, dequeued (the loop took it), painted
  (a render tick showed it); y = chunk number, so the horizontal distance between two lines is the time that
  chunk spent in that stage. The prefill span is shaded; backpressure waits are red segments (the model
  blocked on a full queue); loop stalls seen by the watchdog are shaded red across all plots;
- **queue**: depth after each put (chunks);
- **ticks**: each render tick's cost (ms) at the time it painted.

Mouse wheel zooms, drag pans, right-click → "View All". Hovering shows the chunk's text and its four times.
Beside the plots: the summary figures (``app.core.timeline.figures``). "Copy as JSON" / "Save…" give the raw
timings (``app.core.timeline.timeline_json``).

Cost: nothing per chunk. A 250 ms timer, only while the inspector is visible and the reply changes, copies the
stamp arrays once (O(chunks)) and hands them to pyqtgraph, which clips to the view and downsamples to the
pixels (``setClipToView``, ``autoDownsample``). ``python -m app.bench render --inspector`` measures it.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from app.core.conversation import Message
from app.core.metrics import StreamMetrics
from app.core.timeline import Timeline, chunk_texts, figures, snapshot, timeline_dict

log = logging.getLogger("brook.ui.inspector")

#: How often the inspector re-reads a live reply (ms).
REFRESH_MS = 250

#: The four stamps of a chunk: (key, label, colour).
STAMPS = (("produced", "produced", "#1f77b4"), ("enqueued", "enqueued", "#17becf"),
          ("dequeued", "dequeued", "#ff7f0e"), ("painted", "painted", "#2ca02c"))

_FIGURES = (  # (label, key(s), unit/format)
    ("TTFT", ("ttft_ms",), "{:.1f} ms"),
    ("  prefill", ("prefill_ms",), "{:.1f} ms"),
    ("  first paint", ("first_paint_ms",), "{:.1f} ms"),
    ("decode", ("decode_tokens_per_s",), "{:.1f} tok/s"),
    ("tokens / chunks", ("decode_tokens", "chunks"), "{} / {}"),
    ("gap p50 / p95", ("gap_ms_p50", "gap_ms_p95"), "{:.1f} / {:.1f} ms"),
    ("gap max", ("gap_ms_max",), "{:.1f} ms"),
    ("produced→painted p95", ("latency_ms_p95",), "{:.1f} ms"),
    ("queue high-water", ("queue_high_water",), "{} chunks"),
    ("backpressure waits", ("backpressure_waits", "backpressure_wait_ms"), "{} ({:.0f} ms)"),
    ("render ticks", ("ticks",), "{}"),
    ("longest tick", ("longest_tick_ms",), "{:.1f} ms"),
    ("chunks / tick", ("chunks_per_tick_mean", "chunks_per_tick_max"), "{:.1f} (max {})"),
    ("stop latency", ("stop_latency_ms",), "{:.1f} ms"),
    ("loop stalls", ("loop_stalls", "loop_stall_longest_ms"), "{} (longest {:.0f} ms)"),
)


def _fmt(fmt: str, values: list[Any]) -> str:
    if any(v is None for v in values):
        return "–"
    try:
        return fmt.format(*values)
    except (ValueError, TypeError):
        return " / ".join(str(v) for v in values)


def _ms(v: float | None) -> str:
    return "–" if v is None or v != v else f"{v:.1f} ms"


class StreamInspector(QWidget):
    """The inspector's content: plots, hover line, figures, Copy as JSON / Save….

    ``set_reply(reply)`` shows a ``Message`` (its live ``stream_metrics`` and text), ``set_metrics(m, text)`` a
    bare ``StreamMetrics``; ``set_watchdog(wd)`` adds its stall count and stall spans. ``refresh()`` redraws now
    (the timer calls it while visible and live); ``hover_chunk(i)`` describes chunk ``i``.
    """

    def __init__(self, parent: QWidget | None = None, *, refresh_ms: int = REFRESH_MS) -> None:
        super().__init__(parent)
        pg.setConfigOptions(antialias=False, foreground=self.palette().text().color(),
                            background=self.palette().base().color())
        self._reply: Message | None = None
        self._metrics: StreamMetrics | None = None
        self._text: str = ""
        self._watchdog: Any = None
        self._seen: tuple[int, ...] = ()
        self._tl: Timeline | None = None
        self._texts: list[str] | None = None
        self.refreshes = 0

        self.title = QLabel("No reply selected")
        self.title.setObjectName("inspectorTitle")
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setMinimumSize(420, 300)
        self.chunk_plot = self.graphics.addPlot(row=0, col=0)
        self.queue_plot = self.graphics.addPlot(row=1, col=0)
        self.tick_plot = self.graphics.addPlot(row=2, col=0)
        self.graphics.ci.layout.setRowStretchFactor(0, 5)
        self.graphics.ci.layout.setRowStretchFactor(1, 1)
        self.graphics.ci.layout.setRowStretchFactor(2, 1)
        self.chunk_plot.setLabel("left", "chunk")
        self.queue_plot.setLabel("left", "queue")
        self.tick_plot.setLabel("left", "tick ms")
        self.tick_plot.setLabel("bottom", "time since prefill start (ms)")
        self.queue_plot.setXLink(self.chunk_plot)
        self.tick_plot.setXLink(self.chunk_plot)
        for p in (self.chunk_plot, self.queue_plot, self.tick_plot):
            p.showGrid(x=True, y=True, alpha=0.15)
            p.setClipToView(True)
            p.setDownsampling(auto=True, mode="peak")
            p.getAxis("left").setWidth(48)
            p.setMenuEnabled(True)
        self.chunk_plot.addLegend(offset=(8, 8), labelTextSize="8pt")
        self.curves = {key: self.chunk_plot.plot([], [], pen=pg.mkPen(color, width=1.5), name=label)
                       for key, label, color in STAMPS}
        self.prefill_region = pg.LinearRegionItem((0, 0), movable=False, brush=pg.mkBrush(128, 128, 128, 50),
                                                  pen=pg.mkPen(None))
        self.prefill_region.setZValue(-10)
        self.chunk_plot.addItem(self.prefill_region)
        self.prefill_label = pg.TextItem("prefill", color=(120, 120, 120), anchor=(0, 0))
        self.chunk_plot.addItem(self.prefill_label)
        self.wait_curve = self.chunk_plot.plot([], [], pen=pg.mkPen("#d62728", width=3), connect="pairs",
                                               name="backpressure wait")
        self.marker = pg.ScatterPlotItem(size=9, pen=pg.mkPen("k"), brush=pg.mkBrush(255, 255, 255, 200))
        self.chunk_plot.addItem(self.marker)
        self.queue_curve = self.queue_plot.plot([], [], pen=pg.mkPen("#9467bd"), stepMode="right")
        self.tick_bars = self.tick_plot.plot([], [], pen=pg.mkPen("#8c564b", width=2), connect="pairs")
        self._stall_regions: list[pg.LinearRegionItem] = []

        self.hover = QLabel("Hover over the plot to see a chunk")
        self.hover.setObjectName("inspectorHover")
        self.hover.setWordWrap(True)
        self.hover.setTextFormat(Qt.TextFormat.PlainText)
        self.hover.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Minimum)
        self.hover.setMinimumHeight(self.fontMetrics().lineSpacing() * 3 + 6)
        self.hover.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)

        side = QWidget()
        form = QFormLayout(side)
        form.setContentsMargins(4, 0, 4, 0)
        self.figure_labels: dict[str, QLabel] = {}
        for label, *_rest in _FIGURES:
            value = QLabel("–")
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            self.figure_labels[label.strip()] = value
            form.addRow(label, value)
        self.copy_button = QPushButton("Copy as JSON")
        self.copy_button.clicked.connect(self.copy_json)
        self.save_button = QPushButton("Save…")
        self.save_button.clicked.connect(lambda: self.save_json())
        buttons = QHBoxLayout()
        buttons.addWidget(self.copy_button)
        buttons.addWidget(self.save_button)
        form.addRow(buttons)

        plots = QVBoxLayout()
        plots.setContentsMargins(0, 0, 0, 0)
        plots.addWidget(self.title)
        plots.addWidget(self.graphics, 1)
        plots.addWidget(self.hover)
        row = QHBoxLayout(self)
        row.setContentsMargins(4, 4, 4, 4)
        row.addLayout(plots, 1)
        row.addWidget(side, 0)

        self.graphics.scene().sigMouseMoved.connect(self._on_mouse_moved)
        self._timer = QTimer(self)
        self._timer.setInterval(refresh_ms)
        self._timer.timeout.connect(self._on_timer)

    # what to show ----------------------------------------------------------------------------------------
    def set_reply(self, reply: Message | None) -> None:
        """Show ``reply`` (None: nothing). A reply without stamps (loaded from history) shows its stored
        summary only."""
        self._reply = reply
        self._metrics = reply.stream_metrics if reply is not None else None
        self._reset()
        if reply is None:
            self.title.setText("No reply selected")
        else:
            model = f" · {reply.model}" if reply.model else ""
            self.title.setText(f"Reply {reply.id}{model} · {reply.status.value}")
            if self._metrics is None:
                self.title.setText(self.title.text() + " · no timeline (recorded only while it streams here)")
        self.refresh()

    def set_metrics(self, metrics: StreamMetrics | None, text: str = "", title: str = "") -> None:
        """Show a bare ``StreamMetrics`` (recorded elsewhere, e.g. a benchmark); ``text`` is the reply."""
        self._reply = None
        self._metrics = metrics
        self._text = text
        self._reset()
        self.title.setText(title or "Stream timeline")
        self.refresh()

    def set_watchdog(self, watchdog: Any) -> None:
        """Show the stalls of an ``app.core.watchdog.LoopWatchdog`` (count, longest, spans in the plots)."""
        self._watchdog = watchdog
        self._seen = ()

    def _reset(self) -> None:
        self._seen = ()
        self._tl = None
        self._texts = None
        self.marker.setData([], [])
        self.hover.setText("Hover over the plot to see a chunk")
        for p in (self.chunk_plot, self.queue_plot, self.tick_plot):
            p.enableAutoRange()
        self._update_timer()

    @property
    def live(self) -> bool:
        m = self._metrics
        return m is not None and not (m.t_end is not None and m.caught_up and
                                      (m.t_stop is None or m.t_worker_done is not None))

    def _update_timer(self) -> None:
        if self.isVisible() and self._metrics is not None:
            if not self._timer.isActive():
                self._timer.start()
        else:
            self._timer.stop()

    def showEvent(self, event: Any) -> None:
        super().showEvent(event)
        self._update_timer()
        self.refresh()

    def hideEvent(self, event: Any) -> None:
        super().hideEvent(event)
        self._timer.stop()

    def _on_timer(self) -> None:
        self.refresh()
        if not self.live:
            self.refresh(force=True)       # the final figures (summary settles after the last paint)
            self._timer.stop()

    # drawing -----------------------------------------------------------------------------------------------
    def _text_now(self) -> str:
        return self._reply.text if self._reply is not None else self._text

    def refresh(self, force: bool = False) -> bool:
        """Redraw from the current stamps if they changed (or ``force``); True when it redrew."""
        m = self._metrics
        wd = self._watchdog
        stalls = wd.stalls if wd is not None else 0
        if m is None:
            self._draw_empty()
            return False
        key = (len(m.produced), len(m.enqueued), len(m.dequeued), len(m.painted), len(m.tick_at),
               m.t_end is not None, m.t_worker_done is not None, stalls)
        if key == self._seen and not force:
            return False
        self._seen = key
        tl = self._tl = snapshot(m)
        self._texts = None
        self.refreshes += 1
        idx = np.arange(len(tl.produced), dtype=np.float64)
        for name, _label, _c in STAMPS:
            xs = getattr(tl, name)
            self.curves[name].setData(xs, idx[: len(xs)], skipFiniteCheck=True)
        if tl.prefill is not None:
            self.prefill_region.setRegion(tl.prefill)
            self.prefill_label.setPos(tl.prefill[0], 0)
        waited = np.nonzero(tl.wait > 0.05)[0]
        if len(waited):
            ends = tl.enqueued[waited]
            xs = np.column_stack((ends - tl.wait[waited], ends)).ravel()
            ys = np.repeat(waited.astype(np.float64), 2)
            self.wait_curve.setData(xs, ys)
        else:
            self.wait_curve.setData([], [])
        n = min(len(tl.depth), len(tl.enqueued))
        self.queue_curve.setData(tl.enqueued[:n], tl.depth[:n].astype(np.float64))
        if len(tl.tick_at):
            xs = np.repeat(tl.tick_at, 2)
            ys = np.column_stack((np.zeros_like(tl.tick_cost), tl.tick_cost)).ravel()
            self.tick_bars.setData(xs, ys)
        else:
            self.tick_bars.setData([], [])
        self._draw_stalls(tl)
        self._draw_figures(m, tl)
        return True

    def _draw_empty(self) -> None:
        for c in self.curves.values():
            c.setData([], [])
        for item in (self.wait_curve, self.queue_curve, self.tick_bars):
            item.setData([], [])
        self.prefill_region.setRegion((0, 0))
        stored = self._reply.metrics if self._reply is not None else None
        self._show_figures(dict(stored) if stored else {})

    def _draw_stalls(self, tl: Timeline) -> None:
        for r in self._stall_regions:
            vb = r.getViewBox()
            if vb is not None:
                vb.removeItem(r)
        self._stall_regions.clear()
        wd = self._watchdog
        if wd is None:
            return
        end = tl.end if tl.end is not None else (float(tl.painted[-1]) if len(tl.painted) else 0.0)
        for s in list(wd.history)[-50:]:
            a = (s.started - tl.origin) * 1000.0
            b = a + s.duration_ms
            if b < tl.request or a > end + 1000.0:
                continue
            for p in (self.chunk_plot, self.queue_plot, self.tick_plot):
                region = pg.LinearRegionItem((a, b), movable=False, brush=pg.mkBrush(214, 39, 40, 60),
                                             pen=pg.mkPen(None))
                region.setZValue(-5)
                p.addItem(region)
                self._stall_regions.append(region)

    def _draw_figures(self, m: StreamMetrics, tl: Timeline) -> None:
        f = figures(m, tl)
        wd = self._watchdog
        if wd is not None:
            f["loop_stalls"], f["loop_stall_longest_ms"] = wd.stalls, wd.longest_stall_ms
        self._show_figures(f)

    def _show_figures(self, f: dict[str, Any]) -> None:
        for label, keys, fmt in _FIGURES:
            self.figure_labels[label.strip()].setText(_fmt(fmt, [f.get(k) for k in keys]))

    # hover -------------------------------------------------------------------------------------------------
    def _on_mouse_moved(self, pos: QPointF) -> None:
        if self._tl is None or not self.chunk_plot.sceneBoundingRect().contains(pos):
            return
        p = self.chunk_plot.vb.mapSceneToView(pos)
        self.hover_chunk(round(p.y()))

    def hover_chunk(self, i: int) -> str:
        """Show chunk ``i`` (clamped to the chunks there are): marker on its four times, text in the hover
        line. Returns that text ('' when there are no chunks)."""
        tl = self._tl
        if tl is None or not len(tl.produced):
            return ""
        i = max(0, min(i, len(tl.produced) - 1))
        if self._texts is None:
            self._texts = chunk_texts(tl, self._text_now())
        text = self._texts[i] if i < len(self._texts) else ""
        times = [(label, arr[i] if i < len(arr) else None)
                 for label, arr in (("produced", tl.produced), ("enqueued", tl.enqueued),
                                    ("dequeued", tl.dequeued), ("painted", tl.painted))]
        xs = [t for _l, t in times if t is not None]
        self.marker.setData(xs, [i] * len(xs))
        extra = ""
        if i < len(tl.depth):
            extra = f" · queue depth {tl.depth[i]}"
            if tl.wait[i] > 0.05:
                extra += f" · waited {tl.wait[i]:.1f} ms on a full queue"
        line = (f"chunk {i}: {json.dumps(text, ensure_ascii=False)}\n"
                + " · ".join(f"{label} {_ms(t)}" for label, t in times) + extra)
        self.hover.setText(line)
        return line

    # export ------------------------------------------------------------------------------------------------
    def timeline(self) -> dict[str, Any] | None:
        """The raw timings of the shown reply (``app.core.timeline.timeline_dict``), or None."""
        if self._metrics is None:
            return None
        extra: dict[str, Any] = {}
        if self._reply is not None:
            extra = {"reply_id": self._reply.id, "model": self._reply.model, "status": self._reply.status.value,
                     "stop_reason": self._reply.stop_reason, "params": self._reply.params}
        wd = self._watchdog
        if wd is not None:
            extra["loop_stalls"] = wd.stalls
        return timeline_dict(self._metrics, self._text_now(), **extra)

    def to_json(self) -> str:
        d = self.timeline()
        return "" if d is None else json.dumps(d, ensure_ascii=False, indent=1)

    def copy_json(self) -> bool:
        """Put the timeline JSON on the clipboard; False when there is nothing to copy."""
        text = self.to_json()
        if text:
            QGuiApplication.clipboard().setText(text)
        return bool(text)

    def save_json(self, path: str | Path | None = None) -> Path | None:
        """Write the timeline JSON to ``path`` (asks for one when None). Returns the path written, or None
        (nothing to save, cancelled, or an error — which is shown in the hover line and logged)."""
        text = self.to_json()
        if not text:
            return None
        if path is None:
            name = f"brook-timeline-{self._reply.id if self._reply else 'reply'}.json"
            chosen, _ = QFileDialog.getSaveFileName(self, "Save the stream timeline", name, "JSON (*.json)")
            if not chosen:
                return None
            path = chosen
        p = Path(path)
        try:
            p.write_text(text, encoding="utf-8")
        except OSError as exc:
            log.warning("could not save the timeline to %s: %s", p, exc)
            self.hover.setText(f"Could not save to {p}: {exc.strerror or exc}")
            return None
        return p


class StreamInspectorDock(QDockWidget):
    """The inspector in a dock (``inspector`` is the ``StreamInspector``)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Stream inspector", parent)
        self.setObjectName("streamInspector")
        self.inspector = StreamInspector(self)
        self.setWidget(self.inspector)
        self.setAllowedAreas(Qt.DockWidgetArea.BottomDockWidgetArea | Qt.DockWidgetArea.RightDockWidgetArea)
