"""What a patch of the live document repaints: from the first changed block down, not the whole document.

Qt's document layout answers most edits of a document that holds frames (a table, a code block's header, a
quote: one of each is enough) with a repaint request for the *whole* document — ``QTextDocumentLayout::
documentChanged`` falls back to ``QRectF(0, 0, INT_MAX, INT_MAX)`` when its incremental layout gives no rectangle
— and ``QTextEdit`` repaints all of it that is on screen. A streaming reply's patch changes only its end, so
each frame repainted every visible line of the live document: measured in the render bench's window at 1,000
tokens/s (``python -m app.bench render``), 1,016 of 1,095 frames repainted the whole chat viewport, 4.8-4.9 ms of
CPU a paint at the median and 8.5 ms at p90 on a 2-core machine — the paint was most of a late frame.

:class:`RepaintFrom` takes the live document's repaint requests in place of ``QTextEdit``'s own handler and,
during a patch that changes the document from a position on (:meth:`RepaintFrom.changing_at`), cuts the request
to what lies from that position's top-level block down: the blocks above it were not edited, and a flow layout
moves nothing above an edit. Every other request (a restyle in place, a reset, Qt's lazy layout) is passed on as
``QTextEdit`` would (``QTextEditPrivate::_q_repaintContents``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QTextCursor, QTextDocument
from PySide6.QtWidgets import QAbstractScrollArea, QWidget


@contextmanager
def unpainted(*widgets: QWidget) -> Iterator[None]:
    """Inside, Qt marks nothing of ``widgets`` for repainting (their pixels stay as painted): for changes that
    leave what is on screen as it is — a sealed segment (:mod:`.segments`) shown where the live document painted
    the same document, laid out the same, and the live document swapped for a fresh one; the caller asks for the
    repaint of what did change. ``WA_UpdatesDisabled`` is set and cleared directly: ``setUpdatesEnabled(True)``
    would repaint the whole widget, which is what this avoids (Qt drops a repaint request of a widget with the
    flag set: ``QWidgetPrivate::update``, ``invalidateBackingStore``)."""
    flag = Qt.WidgetAttribute.WA_UpdatesDisabled
    was = [w.testAttribute(flag) for w in widgets]
    for w in widgets:
        w.setAttribute(flag, True)
    try:
        yield
    finally:
        for w, before in zip(widgets, was, strict=True):
            w.setAttribute(flag, before)


class RepaintFrom:
    """The repaint requests of ``view``'s live document (see the module docstring).

    ``top`` is the document y (px) from which the current patch can change anything, None when no patch cuts
    the requests. ``cut`` counts the requests cut (the tests read it)."""

    def __init__(self, view: QAbstractScrollArea) -> None:
        self.view = view
        self.top: float | None = None
        self.cut = 0
        self._doc: QTextDocument | None = None

    def watch(self, doc: QTextDocument) -> None:
        """``doc`` is the view's live document now (call after ``setDocument``, which connects Qt's handler):
        its repaint requests come here, the previous live document's go back to whoever shows it."""
        self.unwatch()
        layout = doc.documentLayout()
        try:
            layout.update.disconnect()           # QTextEdit's handler (through its text control)
        except (RuntimeError, TypeError):         # nothing connected (a document no view showed yet)
            pass
        layout.update.connect(self._update)
        self._doc = doc
        self.top = None

    def unwatch(self) -> None:
        """Stop taking the live document's requests (it is sealed: the segment's own view repaints it)."""
        doc, self._doc = self._doc, None
        if doc is not None:
            try:
                doc.documentLayout().update.disconnect(self._update)
            except (RuntimeError, TypeError):
                pass

    def changing_at(self, doc: QTextDocument, pos: int) -> None:
        """A patch is about to change ``doc`` from ``pos`` (a character position) to its end: until
        :meth:`done`, requests are cut to start at the top of the top-level block or frame before ``pos`` (its
        format may be set again by the edit; margins between it and the next block collapse)."""
        if doc is not self._doc or pos <= 0:
            self.top = None
            return
        cursor = QTextCursor(doc)
        cursor.setPosition(min(pos - 1, doc.characterCount() - 1))
        layout = doc.documentLayout()
        frame = cursor.currentFrame()
        if frame is not None and frame.parentFrame() is not None:      # inside a table: the outermost one
            while frame.parentFrame().parentFrame() is not None:
                frame = frame.parentFrame()
            self.top = layout.frameBoundingRect(frame).top()
        else:
            self.top = layout.blockBoundingRect(cursor.block()).top()

    def done(self) -> None:
        """The patch is over: requests are passed on whole again."""
        self.top = None

    def _update(self, rect: QRectF) -> None:
        top = self.top
        if top is not None and rect.isValid() and rect.top() < top < rect.bottom():
            rect = QRectF(rect.left(), top, rect.width(), rect.bottom() - top)
            self.cut += 1
        view = self.view
        viewport = view.viewport()
        if not rect.isValid():
            viewport.update()
            return
        x, y = view.horizontalScrollBar().value(), view.verticalScrollBar().value()
        shown = rect.intersected(QRectF(x, y, viewport.width(), viewport.height())).toAlignedRect()
        if not shown.isEmpty():
            viewport.update(shown.translated(-x, -y))
