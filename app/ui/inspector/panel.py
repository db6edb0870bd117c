"""The stream inspector's content (``StreamInspector``): where each chunk of a reply waited.

For one reply (live while it streams), a timeline (``app.ui.inspector.timeline_view.TimelineView``): every chunk's
produced / enqueued / dequeued / painted time, the prefill span, backpressure waits, queue depth, render ticks
and loop stalls seen by the watchdog. Wheel zooms, drag pans, double-click or "Fit" shows all again; hovering a
chunk shows its text and its four times. Beside it the summary figures (``app.core.streaming.timeline.figures``);
"Copy as JSON" / "Save…" give the raw timings (``app.core.streaming.timeline.timeline_dict``).

It must not slow the stream it shows. Nothing happens per chunk. At most every ``REFRESH_MS``, right after a
render tick painted (``poke``, connected to the coalescer's ``painted`` signal: the work lands in the slack
after a tick instead of delaying the next one; a timer covers prefill), and only while visible and the reply
changed, it copies the stamp arrays once (O(chunks)) and repaints; a paint is O(pixels) (see the view). The
figures (percentiles over every chunk) are recomputed once a second while live.
``python -m app.bench render --inspector`` measures it against the same stream with the inspector closed.

This module imports numpy (the timeline's arrays): the dock (``app.ui.inspector.dock``) imports it only when the
inspector is first opened, never at start-up.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, QEvent, Qt, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
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
from app.core.history import timelines as timeline_store
from app.core.streaming.metrics import StreamMetrics
from app.core.streaming.timeline import Timeline, chunk_texts, figures, figures_of, snapshot, timeline_dict
from app.core.text import QT_TRANSLATE_NOOP
from app.ui.inspector.timeline_view import TimelineView

log = logging.getLogger("brook.ui.inspector")

#: How often the inspector re-reads a live reply (ms).
REFRESH_MS = 250
#: How often the summary figures are recomputed while live (s; percentiles over every chunk).
FIGURES_S = 1.0
_FIGURES = (  # (label, key(s), unit/format); labels translated where shown (context "Inspector")
    ("TTFT", ("ttft_ms",), "{:.1f} ms"),
    ("  " + QT_TRANSLATE_NOOP("Inspector", "prefill"), ("prefill_ms",), "{:.1f} ms"),
    ("  " + QT_TRANSLATE_NOOP("Inspector", "first paint"), ("first_paint_ms",), "{:.1f} ms"),
    (QT_TRANSLATE_NOOP("Inspector", "decode"), ("decode_tokens_per_s",), "{:.1f} tok/s"),
    (QT_TRANSLATE_NOOP("Inspector", "tokens / chunks"), ("decode_tokens", "chunks"), "{} / {}"),
    (QT_TRANSLATE_NOOP("Inspector", "gap p50 / p95"), ("gap_ms_p50", "gap_ms_p95"), "{:.1f} / {:.1f} ms"),
    (QT_TRANSLATE_NOOP("Inspector", "gap max"), ("gap_ms_max",), "{:.1f} ms"),
    (QT_TRANSLATE_NOOP("Inspector", "produced→painted p95"), ("latency_ms_p95",), "{:.1f} ms"),
    (QT_TRANSLATE_NOOP("Inspector", "queue high-water"), ("queue_high_water",), "{} chunk(s)"),
    (QT_TRANSLATE_NOOP("Inspector", "backpressure waits"), ("backpressure_waits", "backpressure_wait_ms"),
     "{} ({:.0f} ms)"),
    (QT_TRANSLATE_NOOP("Inspector", "render ticks"), ("ticks",), "{}"),
    (QT_TRANSLATE_NOOP("Inspector", "longest tick"), ("longest_tick_ms",), "{:.1f} ms"),
    (QT_TRANSLATE_NOOP("Inspector", "chunks / tick"), ("chunks_per_tick_mean", "chunks_per_tick_max"),
     "{:.1f} (max {})"),
    (QT_TRANSLATE_NOOP("Inspector", "stop latency"), ("stop_latency_ms",), "{:.1f} ms"),
    (QT_TRANSLATE_NOOP("Inspector", "loop stalls"), ("loop_stalls", "loop_stall_longest_ms"),
     "{} (longest {:.0f} ms)"),  # in this reply
)


translate = QCoreApplication.translate   # lupdate reads translate("Context", "text") calls



def _label(label: str) -> str:
    """A figure's label in the UI language (its indentation kept)."""
    stripped = label.strip()
    return label[:len(label) - len(label.lstrip())] + translate("Inspector", stripped)


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
    """The inspector's content: the timeline, the hover line, figures, Fit, Copy as JSON / Save….

    ``set_reply(reply, metrics)`` shows a ``Message`` (its text and its generation's live metrics);
    ``set_metrics(m, text)`` a bare ``StreamMetrics``; ``set_watchdog(wd)`` adds its stall count and stall spans.
    ``refresh()`` redraws now (the timer calls it while visible and live); ``hover_chunk(i)`` describes chunk ``i``.
    """

    def __init__(self, parent: QWidget | None = None, *, refresh_ms: int = REFRESH_MS) -> None:
        super().__init__(parent)
        self._reply: Message | None = None
        self._metrics: StreamMetrics | None = None
        self._stored: dict[str, Any] | None = None      # a finished reply's timeline from the history
        self._text: str = ""
        self._watchdog: Any = None
        self._seen: tuple[int, ...] = ()
        self._tl: Timeline | None = None
        self._texts: list[str] | None = None
        self.refreshes = 0
        self._figures_at = 0.0
        self._refreshed_at = 0.0

        self.title = QLabel(translate("Inspector", "No reply selected"))
        self.title.setObjectName("inspectorTitle")
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.view = TimelineView()
        self.view.hovered.connect(self.hover_chunk)
        self.hover = QLabel(translate("Inspector", "Hover over the plot to see a chunk"))
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
            form.addRow(_label(label), value)
        self.copy_button = QPushButton(translate("Inspector", "Copy as JSON"))
        self.copy_button.clicked.connect(self.copy_json)
        self.save_button = QPushButton(translate("Inspector", "Save…"))
        self.save_button.clicked.connect(lambda: self.save_json())
        self.fit_button = QPushButton(translate("Inspector", "Fit"))
        self.fit_button.setToolTip(translate("Inspector",
                                             "Show the whole reply and follow it (after zooming or panning)"))
        self.fit_button.clicked.connect(self.view.fit)
        buttons = QHBoxLayout()
        buttons.addWidget(self.fit_button)
        buttons.addWidget(self.copy_button)
        buttons.addWidget(self.save_button)
        form.addRow(buttons)

        plots = QVBoxLayout()
        plots.setContentsMargins(0, 0, 0, 0)
        plots.addWidget(self.title)
        plots.addWidget(self.view, 1)
        plots.addWidget(self.hover)
        row = QHBoxLayout(self)
        row.setContentsMargins(4, 4, 4, 4)
        row.addLayout(plots, 1)
        row.addWidget(side, 0)

        self._timer = QTimer(self)
        self._timer.setInterval(refresh_ms)
        self._timer.timeout.connect(self._on_timer)

    def changeEvent(self, event: QEvent) -> None:
        """A live language switch: the composed title again (the fixed texts follow ``app.ui.look.retranslate``)."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.LanguageChange and self._reply is not None:
            self._set_title()

    # what to show ----------------------------------------------------------------------------------------
    def set_reply(self, reply: Message | None, metrics: StreamMetrics | None = None,
                  stored: dict[str, Any] | None = None) -> None:
        """Show ``reply`` (None: nothing) with its live ``metrics`` (its ``Generation.metrics``; see
        ``ChatSession.generation_of``) or, for a finished reply, its ``stored`` timeline (the plain shape of
        ``app.core.history.timelines``, from the history: shown after a restart too). A reply with neither shows its
        stored summary only."""
        self._reply = reply
        self._metrics = metrics if reply is not None else None
        self._stored = stored if reply is not None and metrics is None and \
            timeline_store.belongs_to(stored, reply.created) else None
        self._reset()
        self._set_title()
        if self._stored is not None:
            self._draw_stored(self._stored)
        self.refresh()

    def _set_title(self) -> None:
        reply = self._reply
        if reply is None:
            if self._metrics is None:
                self.title.setText(translate("Inspector", "No reply selected"))
            return
        model = f" · {reply.model}" if reply.model else ""
        status = QCoreApplication.translate("MessageStatus", reply.status.value)
        text = translate("Inspector", "Reply %1").replace("%1", str(reply.id)) + f"{model} · {status}"
        if self._stored is not None:
            text += " · " + self.tr("stored timeline")
        elif self._metrics is None:
            text += " · " + self.tr("no timeline (none was stored with this reply)")
        if text != self.title.text():
            self.title.setText(text)

    def set_metrics(self, metrics: StreamMetrics | None, text: str = "", title: str = "") -> None:
        """Show a bare ``StreamMetrics`` (recorded elsewhere, e.g. a benchmark); ``text`` is the reply."""
        self._reply = None
        self._metrics = metrics
        self._stored = None
        self._text = text
        self._reset()
        self.title.setText(title or translate("Inspector", "Stream timeline"))
        self.refresh()

    @property
    def reply(self) -> Message | None:
        """The reply shown (None for a bare ``StreamMetrics`` or nothing)."""
        return self._reply

    @property
    def watchdog(self) -> Any:
        return self._watchdog

    def set_watchdog(self, watchdog: Any) -> None:
        """Show the stalls of an ``app.core.streaming.watchdog.LoopWatchdog`` (count, longest, spans in the plots)."""
        self._watchdog = watchdog
        self._seen = ()

    def _reset(self) -> None:
        self._seen = ()
        self._tl = None
        self._texts = None
        self.view.marker = None
        self.view.follow = True
        self.hover.setText(translate("Inspector", "Hover over the plot to see a chunk"))
        self._figures_at = 0.0
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

    def poke(self, *_args: Any) -> None:
        """A render tick just painted: redraw now if the last redraw is ``refresh_ms`` old. Connected to the
        coalescer's ``painted`` signal, the inspector then works in the slack right after a tick instead of
        delaying the next one."""
        if self._metrics is not None and self.isVisible() and \
                time.perf_counter() - self._refreshed_at >= self._timer.interval() / 1000.0:
            self.refresh()

    def _on_timer(self) -> None:
        # fallback for when no tick paints (prefill, a stalled stream) and for the final state
        if time.perf_counter() - self._refreshed_at >= self._timer.interval() / 1000.0 * 1.5:
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
            if self._stored is None:
                self._draw_empty()
            return False
        key = (len(m.produced), len(m.enqueued), len(m.dequeued), len(m.painted), len(m.tick_at),
               m.t_end is not None, m.t_worker_done is not None, stalls)
        if key == self._seen and not force:
            return False
        stalls_changed = force or not self._seen or key[-1] != self._seen[-1]
        self._seen = key
        self._refreshed_at = time.perf_counter()
        tl = self._tl = snapshot(m)
        self._texts = None
        self.refreshes += 1
        self.view.set_timeline(tl, final=not self.live)
        self._set_title()
        if stalls_changed:
            self._set_stalls(tl)
        t = time.perf_counter()
        if force or not self.live or t - self._figures_at >= FIGURES_S:
            self._figures_at = t
            self._draw_figures(m, tl)
        return True

    def _draw_empty(self) -> None:
        self.view.stalls = []
        self.view.set_timeline(None)
        stored = self._reply.metrics if self._reply is not None else None
        self._show_figures(dict(stored) if stored else {})

    def _draw_stored(self, d: dict[str, Any]) -> None:
        """A finished reply's timeline from the history (its times are ms already; the watchdog's stalls of
        another session are not comparable, so none are drawn)."""
        tl = self._tl = timeline_store.to_timeline(d)
        self._texts = None
        self.refreshes += 1
        self.view.stalls = []
        self.view.set_timeline(tl, final=True)
        stored = self._reply.metrics if self._reply is not None else None
        self._show_figures(figures_of(dict(stored or {}), tl))

    def _set_stalls(self, tl: Timeline) -> None:
        wd = self._watchdog
        spans = []
        if wd is not None:
            for st in list(wd.history)[-100:]:
                a = (st.started - tl.origin) * 1000.0
                spans.append((a, a + st.duration_ms))
        self.view.stalls = spans

    def _draw_figures(self, m: StreamMetrics, tl: Timeline) -> None:
        f = figures(m, tl)
        wd = self._watchdog
        if wd is not None:   # stalls while this reply was in line, in prefill or streaming
            hi = tl.end if tl.end is not None else float("inf")
            spans = [b - a for a, b in self.view.stalls if b >= tl.request and a <= hi]
            f["loop_stalls"], f["loop_stall_longest_ms"] = len(spans), max(spans, default=0.0)
        self._show_figures(f)

    def _show_figures(self, f: dict[str, Any]) -> None:
        for label, keys, fmt in _FIGURES:
            self.figure_labels[label.strip()].setText(_fmt(fmt, [f.get(k) for k in keys]))

    # hover -------------------------------------------------------------------------------------------------
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
                 for label, arr in ((translate("Inspector", "produced"), tl.produced),
                                    (translate("Inspector", "enqueued"), tl.enqueued),
                                    (translate("Inspector", "dequeued"), tl.dequeued),
                                    (translate("Inspector", "painted"), tl.painted))]
        if self.view.marker != i:
            self.view.marker = i
            self.view.update()
        extra = ""
        if i < len(tl.depth):
            extra = " · " + translate("Inspector", "queue depth %1").replace("%1", str(tl.depth[i]))
            if tl.wait[i] > 0.05:
                waited = translate("Inspector", "waited %1 ms on a full queue")
                extra += " · " + waited.replace("%1", f"{tl.wait[i]:.1f}")
        head = translate("Inspector", "chunk %1: %2").replace("%1", str(i))
        line = (head.replace("%2", json.dumps(text, ensure_ascii=False)) + "\n"
                + " · ".join(f"{label} {_ms(t)}" for label, t in times) + extra)
        self.hover.setText(line)
        return line

    # export ------------------------------------------------------------------------------------------------
    def timeline(self) -> dict[str, Any] | None:
        """The raw timings of the shown reply (``app.core.streaming.timeline.timeline_dict``), or None."""
        extra: dict[str, Any] = {}
        if self._reply is not None:
            extra = {"reply_id": self._reply.id, "model": self._reply.model, "status": self._reply.status.value,
                     "stop_reason": self._reply.stop_reason, "params": self._reply.params}
        if self._stored is not None and self._reply is not None:
            return timeline_store.export_dict(self._stored, self._reply.metrics, self._reply.text, **extra)
        if self._metrics is None:
            return None
        wd = self._watchdog
        if wd is not None:
            extra["loop_stalls_since_start"] = wd.stalls
            extra["loop_stalls_ms"] = [[round(a, 1), round(b, 1)] for a, b in self.view.stalls]
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
            chosen, _ = QFileDialog.getSaveFileName(self, translate("Inspector", "Save the stream timeline"), name,
                                                    "JSON (*.json)")
            if not chosen:
                return None
            path = chosen
        p = Path(path)
        try:
            p.write_text(text, encoding="utf-8")
        except OSError as exc:
            log.warning("could not save the timeline to %s: %s", p, exc)
            why = str(exc.strerror or exc)
            said = translate("Inspector", "Could not save to %1: %2")
            self.hover.setText(said.replace("%1", str(p)).replace("%2", why))
            return None
        return p
