"""The stream inspector's plot: a reply's chunks, queue and ticks over time, painted with QPainter.

Three panels share the time axis (ms since prefill started): **chunks** (y = chunk number; one line per stamp
kind: produced, enqueued, dequeued, painted — the horizontal distance between two lines is the time a chunk
spent in that stage; the prefill span shaded grey, loop stalls red, backpressure waits as red segments),
**queue** (depth after each put) and **ticks** (each render tick's cost, ms).

Why its own painting rather than a plotting library's scene graph: it must not slow the stream it shows. A
paint draws each series' *visible* part with at most two points per pixel column (strided for the monotonic
stamp series, block maxima for queue depth and tick cost, so no peak is lost), as one polyline filled through a
numpy view of its buffer (``polygon``): O(pixels), not O(chunks). Grid, labels and legend are cached.

Mouse: wheel zooms the time axis around the pointer (Ctrl+wheel: the chunk axis), drag pans, double-click
fits everything again and follows the reply. Moving over the chunk panel emits ``hovered(chunk_index)``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from PySide6.QtCore import QCoreApplication, QEvent, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QMouseEvent, QPainter, QPaintEvent, QPen, QPixmap, QPolygonF, QWheelEvent
from PySide6.QtWidgets import QSizePolicy, QWidget
from shiboken6 import VoidPtr

from app.core.streaming.timeline import Timeline
from app.core.text import QT_TRANSLATE_NOOP

#: The four stamps of a chunk: (Timeline attribute, label, colour); labels translated where drawn ("Inspector").
STAMPS = (("produced", QT_TRANSLATE_NOOP("Inspector", "produced"), "#1f77b4"),
          ("enqueued", QT_TRANSLATE_NOOP("Inspector", "enqueued"), "#17becf"),
          ("dequeued", QT_TRANSLATE_NOOP("Inspector", "dequeued"), "#ff7f0e"),
          ("painted", QT_TRANSLATE_NOOP("Inspector", "painted"), "#2ca02c"))


translate = QCoreApplication.translate   # lupdate reads translate("Context", "text") calls

WAIT_COLOR, STALL_COLOR, QUEUE_COLOR, TICK_COLOR = "#d62728", QColor(214, 39, 40, 55), "#9467bd", "#8c564b"
LEFT, RIGHT, TOP, BOTTOM, GAP = 52, 10, 8, 22, 8


def visible(xs: np.ndarray, lo: float, hi: float, max_points: int) -> np.ndarray:
    """Indices of the points of the non-decreasing ``xs`` within [lo, hi] (plus one each side), strided to at
    most ``max_points`` (the last visible one always kept)."""
    n = len(xs)
    if not n or max_points < 1:
        return np.zeros(0, dtype=np.int64)
    i0 = max(0, int(np.searchsorted(xs, lo)) - 1)
    i1 = min(n, int(np.searchsorted(xs, hi, side="right")) + 1)
    if i1 <= i0:
        return np.zeros(0, dtype=np.int64)
    step = max(1, -(-(i1 - i0) // max_points))
    idx = np.arange(i0, i1, step, dtype=np.int64)
    if idx[-1] != i1 - 1:
        idx = np.append(idx, i1 - 1)
    return idx


def peaks(xs: np.ndarray, ys: np.ndarray, lo: float, hi: float, max_points: int) -> tuple[np.ndarray, np.ndarray]:
    """The visible part of (xs, ys) (xs non-decreasing) in at most ``max_points`` blocks: each block's largest
    y at its first x, so no peak is lost however far the view is zoomed out."""
    n = min(len(xs), len(ys))
    if not n:
        return np.zeros(0), np.zeros(0)
    i0 = max(0, int(np.searchsorted(xs[:n], lo)) - 1)
    i1 = min(n, int(np.searchsorted(xs[:n], hi, side="right")) + 1)
    x, y = xs[i0:i1], ys[i0:i1]
    if len(x) <= max_points:
        return x, y
    starts = np.arange(0, len(x), -(-len(x) // max_points))
    return x[starts], np.maximum.reduceat(y, starts)


def polygon(xs: np.ndarray, ys: np.ndarray) -> QPolygonF:
    """A ``QPolygonF`` of the points (xs, ys), filled through a numpy view of its buffer: no QPointF object per
    point (the technique of pyqtgraph's ``ndarray_from_qpolygonf``)."""
    n = len(xs)
    poly = QPolygonF()
    poly.resize(n)
    if n:
        a = np.frombuffer(VoidPtr(poly.data(), n * 16, True), dtype=np.float64).reshape(n, 2)
        a[:, 0] = xs
        a[:, 1] = ys
    return poly


def nice_step(span: float, target: int) -> float:
    """A 1/2/5 × 10^k step that cuts ``span`` into about ``target`` parts."""
    if span <= 0:
        return 1.0
    raw = span / max(target, 1)
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


class TimelineView(QWidget):
    """Paints a ``Timeline`` (set with ``set_timeline``). ``x_range``/``y_range`` are the shown spans (ms,
    chunks); ``follow`` is True until the person zooms or pans (then ``fit()`` restores it). ``series(name)``
    gives what the last paint drew for a series (for tests and the hover marker)."""

    hovered = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMouseTracking(True)
        self.setMinimumSize(360, 240)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.tl: Timeline | None = None
        self.stalls: list[tuple[float, float]] = []         # (start ms, end ms) in the timeline's frame
        self.x_range = (0.0, 1000.0)
        self.y_range = (0.0, 50.0)
        self.queue_max = 2.0
        self.tick_max = 1.0
        self.follow = True
        self.marker: int | None = None
        self.paints = 0
        self._drawn: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._static: QPixmap | None = None
        self._static_key: tuple[Any, ...] = ()
        self._drag: tuple[QPointF, tuple[float, float], tuple[float, float]] | None = None

    # data ------------------------------------------------------------------------------------------------
    def set_timeline(self, tl: Timeline | None, *, final: bool = False) -> None:
        """Show ``tl``; while ``follow``, the ranges grow in steps of ×1.5 (the axes stay still between steps);
        ``final`` fits them exactly (a finished reply)."""
        self.tl = tl
        if tl is not None and self.follow:
            self._fit(tl, tight=final)
        self.update()

    def fit(self) -> None:
        """Show everything and follow the reply again."""
        self.follow = True
        if self.tl is not None:
            self._fit(self.tl, tight=True)
        self.update()

    def _fit(self, tl: Timeline, tight: bool) -> None:
        last = max([float(a[-1]) for a in (tl.produced, tl.painted, tl.tick_at) if len(a)] + [0.0])
        if tl.end is not None:
            last = max(last, tl.end)
        n = float(max(len(tl.produced), 1))
        depth = float(tl.depth.max()) if len(tl.depth) else 1.0
        cost = float(tl.tick_cost.max()) if len(tl.tick_cost) else 1.0
        x0 = min(0.0, tl.request) if tl.request > -60_000 else 0.0
        if tight:
            self.x_range = (x0, max(last * 1.02, 50.0))
            self.y_range = (0.0, max(n * 1.03, 5.0))
            self.queue_max, self.tick_max = max(depth, 2.0) * 1.15, max(cost, 1.0) * 1.15
            return
        if last > self.x_range[1] or x0 < self.x_range[0]:
            self.x_range = (x0, max(last * 1.5, 50.0))
        if n > self.y_range[1]:
            self.y_range = (0.0, n * 1.5)
        if depth > self.queue_max:
            self.queue_max = depth * 1.5
        if cost > self.tick_max:
            self.tick_max = cost * 1.5

    def series(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(x, y) in data units that the last paint drew for ``name`` (a stamp kind, "queue", "ticks", "waits")."""
        return self._drawn.get(name, (np.zeros(0), np.zeros(0)))

    # geometry --------------------------------------------------------------------------------------------
    def panels(self) -> tuple[QRectF, QRectF, QRectF]:
        """The chunk, queue and tick panels' rectangles (pixels)."""
        w = max(1.0, self.width() - LEFT - RIGHT)
        h = max(30.0, self.height() - TOP - BOTTOM - 2 * GAP)
        hc, hs = h * 0.64, h * 0.18
        chunk = QRectF(LEFT, TOP, w, hc)
        queue = QRectF(LEFT, TOP + hc + GAP, w, hs)
        ticks = QRectF(LEFT, TOP + hc + hs + 2 * GAP, w, hs)
        return chunk, queue, ticks

    def to_pixel(self, x: float, y: float) -> QPointF:
        """A point of the chunk panel (ms, chunk number) in widget pixels."""
        r = self.panels()[0]
        x0, x1 = self.x_range
        y0, y1 = self.y_range
        return QPointF(r.left() + (x - x0) / (x1 - x0) * r.width(), r.bottom() - (y - y0) / (y1 - y0) * r.height())

    def from_pixel(self, p: QPointF) -> tuple[float, float]:
        r = self.panels()[0]
        x0, x1 = self.x_range
        y0, y1 = self.y_range
        return (x0 + (p.x() - r.left()) / r.width() * (x1 - x0), y0 + (r.bottom() - p.y()) / r.height() * (y1 - y0))

    # painting --------------------------------------------------------------------------------------------
    def _polyline(self, painter: QPainter, r: QRectF, xs: np.ndarray, ys: np.ndarray,
                  yr: tuple[float, float]) -> None:
        n = len(xs)
        if n == 0:
            return
        x0, x1 = self.x_range
        poly = polygon(r.left() + (xs - x0) * (r.width() / (x1 - x0)),
                       r.bottom() - (ys - yr[0]) * (r.height() / (yr[1] - yr[0])))
        painter.drawPolyline(poly)

    def _segments(self, painter: QPainter, r: QRectF, xa: np.ndarray, xb: np.ndarray, ya: np.ndarray,
                  yb: np.ndarray, yr: tuple[float, float]) -> None:
        """Draw the segments (xa, ya)–(xb, yb) in one call."""
        if not len(xa):
            return
        x0, x1 = self.x_range
        sx, sy = r.width() / (x1 - x0), r.height() / (yr[1] - yr[0])
        xs = np.column_stack((xa, xb)).ravel()
        ys = np.column_stack((ya, yb)).ravel()
        painter.drawLines(polygon(r.left() + (xs - x0) * sx, r.bottom() - (ys - yr[0]) * sy))

    def _static_layer(self) -> QPixmap:
        """Everything but the series (grid, spans, frames, labels, legend), cached: it changes only with the
        size, the ranges (a few times per reply while following), the stalls and the palette."""
        tl = self.tl
        prefill = tl.prefill if tl is not None else None
        dpr = self.devicePixelRatioF()
        key = (self.width(), self.height(), dpr, self.x_range, self.y_range, self.queue_max, self.tick_max,
               tuple(self.stalls), prefill, self.palette().cacheKey())
        if key == self._static_key and self._static is not None:
            return self._static
        pixmap = QPixmap(max(1, round(self.width() * dpr)), max(1, round(self.height() * dpr)))
        pixmap.setDevicePixelRatio(dpr)
        painter = QPainter(pixmap)
        pal = self.palette()
        painter.fillRect(QRectF(0, 0, self.width(), self.height()), pal.base())
        fg = pal.text().color()
        grid = QColor(fg)
        grid.setAlpha(35)
        chunk, queue, ticks = self.panels()
        x0, x1 = self.x_range
        # grid and axes
        fm = painter.fontMetrics()
        painter.setPen(QPen(grid, 0))
        step = nice_step(x1 - x0, max(2, int(chunk.width() // 90)))
        xt = math.ceil(x0 / step) * step
        labels = []
        while xt <= x1:
            px = chunk.left() + (xt - x0) / (x1 - x0) * chunk.width()
            for r in (chunk, queue, ticks):
                painter.drawLine(QPointF(px, r.top()), QPointF(px, r.bottom()))
            labels.append((px, f"{xt:g}"))
            xt += step
        ystep = nice_step(self.y_range[1] - self.y_range[0], max(2, int(chunk.height() // 40)))
        yt = math.ceil(self.y_range[0] / ystep) * ystep
        ylabels = []
        while yt <= self.y_range[1]:
            py = chunk.bottom() - (yt - self.y_range[0]) / (self.y_range[1] - self.y_range[0]) * chunk.height()
            painter.drawLine(QPointF(chunk.left(), py), QPointF(chunk.right(), py))
            ylabels.append((py, f"{yt:g}"))
            yt += ystep
        # shaded spans: prefill, stalls
        if prefill is not None:
            a, b = self._xpix(chunk, prefill[0]), self._xpix(chunk, prefill[1])
            shade = QColor(fg)
            shade.setAlpha(28)
            painter.fillRect(QRectF(a, chunk.top(), max(1.0, b - a), chunk.height()), shade)
            painter.setPen(QPen(QColor(fg.red(), fg.green(), fg.blue(), 140)))
            painter.drawText(QPointF(a + 3, chunk.bottom() - 4), translate("Inspector", "prefill"))
        for s0, s1 in self.stalls:
            if s1 < x0 or s0 > x1:
                continue
            a, b = self._xpix(chunk, s0), self._xpix(chunk, s1)
            for r in (chunk, queue, ticks):
                painter.fillRect(QRectF(a, r.top(), max(2.0, b - a), r.height()), STALL_COLOR)
        # frames, labels, legend
        painter.setPen(QPen(QColor(fg.red(), fg.green(), fg.blue(), 110), 0))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        for r in (chunk, queue, ticks):
            painter.drawRect(r)
        painter.setPen(fg)
        for px, text in labels:
            painter.drawText(QPointF(px - fm.horizontalAdvance(text) / 2, ticks.bottom() + fm.ascent() + 3), text)
        painter.drawText(QPointF(4, ticks.bottom() + fm.ascent() + 3), "ms")   # the time axis' unit
        for py, text in ylabels:
            painter.drawText(QPointF(chunk.left() - 4 - fm.horizontalAdvance(text), py + fm.ascent() / 2 - 1), text)
        for r, top in ((queue, f"{self.queue_max:.0f}"), (ticks, f"{self.tick_max:.0f}")):
            painter.drawText(QPointF(r.left() - 4 - fm.horizontalAdvance(top), r.top() + fm.ascent()), top)
            painter.drawText(QPointF(r.left() - 4 - fm.horizontalAdvance("0"), r.bottom()), "0")
        for r, text in ((chunk, translate("Inspector", "chunk")), (queue, translate("Inspector", "queue")),
                        (ticks, translate("Inspector", "tick ms"))):
            painter.save()
            painter.translate(12, r.center().y())
            painter.rotate(-90)
            painter.drawText(QPointF(-fm.horizontalAdvance(text) / 2, 0), text)
            painter.restore()
        lx, ly = chunk.left() + 8, chunk.top() + 6
        waits = ("waits", QT_TRANSLATE_NOOP("Inspector", "backpressure wait"), WAIT_COLOR)
        for _name, label, color in (*STAMPS, waits):
            ly += fm.height()
            painter.setPen(QPen(QColor(color), 2))
            painter.drawLine(QPointF(lx, ly - fm.ascent() / 2 + 1), QPointF(lx + 16, ly - fm.ascent() / 2 + 1))
            painter.setPen(fg)
            painter.drawText(QPointF(lx + 22, ly), translate("Inspector", label))
        painter.end()
        self._static, self._static_key = pixmap, key
        return pixmap

    def changeEvent(self, event: QEvent) -> None:
        """A live language switch: the labels of the static layer are drawn again."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.LanguageChange:
            self._static_key = ()
            self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        self.paints += 1
        painter = QPainter(self)
        painter.drawPixmap(0, 0, self._static_layer())
        pal = self.palette()
        fg = pal.text().color()
        chunk, queue, ticks = self.panels()
        x0, x1 = self.x_range
        tl = self.tl
        drawn: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        # series
        painter.setClipRect(QRectF(chunk.left(), chunk.top(), chunk.width() + 1, ticks.bottom() - chunk.top() + 1))
        max_points = max(2, int(chunk.width() * 2))
        ymax = self.y_range
        if tl is not None:
            for name, _label, color in STAMPS:
                xs = getattr(tl, name)
                idx = visible(xs, x0, x1, max_points)
                ys = idx.astype(np.float64)
                painter.setPen(QPen(QColor(color), 0))
                self._polyline(painter, chunk, xs[idx], ys, ymax)
                drawn[name] = (xs[idx], ys)
            waited = np.nonzero(tl.wait > 0.05)[0]
            if len(waited) > max_points:
                waited = np.sort(waited[np.argsort(tl.wait[waited])[-max_points:]])
            if len(waited):
                ends = tl.enqueued[waited]
                yw = waited.astype(np.float64)
                painter.setPen(QPen(QColor(WAIT_COLOR), 3))
                self._segments(painter, chunk, ends - tl.wait[waited], ends, yw, yw, ymax)
                drawn["waits"] = (ends, yw)
            n = min(len(tl.depth), len(tl.enqueued))
            qx, qy = peaks(tl.enqueued[:n], tl.depth[:n].astype(np.float64), x0, x1, max_points // 2)
            if len(qx):   # a step line: hold each depth until the next put
                sx = np.repeat(qx, 2)[1:]
                sy = np.repeat(qy, 2)[:-1]
                painter.setPen(QPen(QColor(QUEUE_COLOR), 0))
                self._polyline(painter, queue, sx, sy, (0.0, self.queue_max))
            drawn["queue"] = (qx, qy)
            tx, ty = peaks(tl.tick_at, tl.tick_cost, x0, x1, max_points // 2)
            painter.setPen(QPen(QColor(TICK_COLOR), 0))
            self._segments(painter, ticks, tx, tx, np.zeros_like(ty), ty, (0.0, self.tick_max))
            drawn["ticks"] = (tx, ty)
            if self.marker is not None and 0 <= self.marker < len(tl.produced):
                painter.setPen(QPen(fg, 1))
                painter.setBrush(pal.base())
                for name, _label, _color in STAMPS:
                    arr = getattr(tl, name)
                    if self.marker < len(arr):
                        painter.drawEllipse(self.to_pixel(float(arr[self.marker]), float(self.marker)), 4, 4)
        painter.end()
        self._drawn = drawn

    def _xpix(self, r: QRectF, x: float) -> float:
        x0, x1 = self.x_range
        return r.left() + (x - x0) / (x1 - x0) * r.width()

    # mouse -----------------------------------------------------------------------------------------------
    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        pos = event.position()
        if self._drag is not None:
            start, xr, yr = self._drag
            chunk = self.panels()[0]
            dx = (pos.x() - start.x()) / chunk.width() * (xr[1] - xr[0])
            dy = (pos.y() - start.y()) / chunk.height() * (yr[1] - yr[0])
            self.x_range = (xr[0] - dx, xr[1] - dx)
            self.y_range = (yr[0] + dy, yr[1] + dy)
            self.update()
            return
        if self.panels()[0].contains(pos) and self.tl is not None and len(self.tl.produced):
            i = round(self.from_pixel(pos)[1])
            i = max(0, min(i, len(self.tl.produced) - 1))
            if i != self.marker:
                self.marker = i
                self.update()
                self.hovered.emit(i)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self._drag = (event.position(), self.x_range, self.y_range)
            self.follow = False

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        self._drag = None

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        self.fit()

    def wheelEvent(self, event: QWheelEvent) -> None:
        steps = event.angleDelta().y() / 120.0
        if not steps:
            return
        factor = 0.8 ** steps
        x, y = self.from_pixel(event.position())
        self.follow = False
        if event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            y0, y1 = self.y_range
            self.y_range = (y - (y - y0) * factor, y + (y1 - y) * factor)
        else:
            x0, x1 = self.x_range
            self.x_range = (x - (x - x0) * factor, x + (x1 - x) * factor)
        self.update()
        event.accept()

    def sizeHint(self) -> Any:
        from PySide6.QtCore import QSize
        return QSize(640, 380)
