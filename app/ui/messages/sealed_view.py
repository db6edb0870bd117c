"""A message's documents: the *live* one a view patches and, for a long message, the sealed segments above it.

The view under ``PatchedView`` (which decides what goes into the live document, piece by piece): it shows the
live document — its editor's own, or one built off the editor (:meth:`SealedView.detach`) — and once that
holds a segment's worth of finished pieces (``SEGMENT_CHARS`` HTML characters of pieces without a table, or
``SEGMENT_TABLES`` tables) it is *sealed* (:mod:`.segments`): it moves, laid out as it is, into a segment shown
above a fresh live document, whose top margin is the segments' height plus the gap one document would have at
the cut (:mod:`.cut_gap`). The view is one widget of one height (:meth:`~SealedView.heightForWidth`) whose text,
selection and copy cover every segment.

The pieces painted are kept here too (they move with a seal): ``_painted`` (in the live document), ``_starts``
(where each starts), ``_cum`` (HTML characters and tables up to each one's end), ``_sealed`` (those in segments,
global indices below ``_live_first``).
"""

from __future__ import annotations

import math
from contextlib import nullcontext

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import (
    QGuiApplication,
    QKeyEvent,
    QKeySequence,
    QMouseEvent,
    QResizeEvent,
    QTextDocument,
)
from PySide6.QtWidgets import QAbstractScrollArea, QWidget

from app.ui.messages.cut_gap import cut_gap, cut_gap_known
from app.ui.messages.repaint import RepaintFrom, unpainted
from app.ui.messages.rich_text import PieceInserter, height_for_width, joined, set_up_document
from app.ui.messages.segments import SEGMENT_CHARS, SEGMENT_TABLES, Segments
from app.ui.messages.view_links import LinkedView


class SealedView(LinkedView):
    """A read-only ``QTextBrowser`` showing a live document under sealed segments (see the module docstring). Its
    height follows its text (no scroll bar): :meth:`heightForWidth` is the height, :attr:`heightChanged`
    (pixels) is emitted when it changes."""

    heightChanged = Signal(int)
    _later_expanded: bool   # reasoning sections inside the answer shown (MarkdownView)
    _painted: list[str]     # pieces now in the live document …
    _starts: list[int]      # … the position where each one starts …
    _cum: list[tuple[int, int]]   # … and the HTML characters (of pieces without a table) and tables to its end
    _base: int              # document position where the active renderer's pieces start
    _base_prev: str         # HTML inserted just before them
    _thinking_end: int      # where the reasoning section ends in the first document (MarkdownView)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._detached: QTextDocument | None = None   # the live document while built off the editor (detach)
        self._own_shown = False      # the editor's document is one this view made (not the editor's first)
        self._patching = False       # inside a patch: a new height is told once, at its end
        self._scratch = PieceInserter()   # for the scratch documents of _boundary_gap (not counted as inserted)
        self._gap_px = 0.0           # the live document's gap to the last segment (_boundary_gap)
        self._size_changed = False
        set_up_document(self.document(), self.font())
        self.document().documentLayout().documentSizeChanged.connect(self._on_size_changed)
        self.repaint_from = RepaintFrom(self)   # a patch repaints from its first changed block down
        self.repaint_from.watch(self.document())
        # the view is as tall as its text (the message list scrolls): it never scrolls, so the sealed segments
        # in its viewport stay where the live document's top margin leaves room for them
        self.verticalScrollBar().valueChanged.connect(self._never_scroll)
        self._height = -1
        self._probe_heights: dict[int, int] = {}
        self.segments = Segments(self, lambda: self)   # sealed segments of a long message (see .segments)
        self._live_first = 0     # global index of the first piece in the live document (the view's own)
        self._sealed: list[str] = []   # the pieces painted in sealed segments (global indices < _live_first)
        self._later_expanded = False
        self._painted, self._starts, self._cum = [], [], []
        self._base, self._base_prev, self._thinking_end = 0, "", 0

    # -- the live document, shown or detached ---------------------------------------------------------------

    def document(self) -> QTextDocument:
        """The live document: the editor's own, or while the view builds off the editor (:meth:`detach`), the
        detached one the patches go to."""
        detached = self._detached
        return detached if detached is not None else super().document()

    def detach(self) -> None:
        """Patch from now on into a fresh document that no editor shows (its layout made once, when
        :meth:`attach` gives it to the editor; sealed segments are laid out as they are sealed), for a reply built
        off-screen in slices. What the patches insert is the same: the documents equal an attached build's.

        Why (measured, ``docs/architecture.md``): building a realistic 8 KB reply into the editor's document cost
        56 ms here, 38-42 into a document without an editor — ``QTextEdit`` lays the document out again at every
        edit block and handles each change and size signal, and a segment's pieces were laid out as they came."""
        shown = super().document()
        doc = QTextDocument(self)
        set_up_document(doc, shown.defaultFont())
        doc.setDefaultTextOption(shown.defaultTextOption())    # the editor's wrap mode (a sealed one keeps it)
        doc.setTextWidth(self.viewport().width())             # as the editor would (no layout made yet)
        self._drop_detached()
        self._detached = doc

    def attach(self) -> None:
        """Show the detached live document (:meth:`detach`) in the editor: laid out once, at its width."""
        doc, self._detached = self._detached, None
        if doc is None:
            return
        old = super().document()
        old.documentLayout().documentSizeChanged.disconnect(self._on_size_changed)
        self.setDocument(doc)        # (the editor deletes its first document itself; asking ``old.parent()``
        #                              instead of keeping ``_own_shown`` cost ~5 ms: a wrapper for Qt's text control)
        self.repaint_from.watch(doc)
        doc.documentLayout().documentSizeChanged.connect(self._on_size_changed)
        if self._own_shown:
            old.deleteLater()
        self._own_shown = True
        self._on_size_changed()

    def _drop_detached(self) -> None:
        doc, self._detached = self._detached, None
        if doc is not None:
            doc.deleteLater()

    # -- text across segments -----------------------------------------------------------------------------

    def toPlainText(self) -> str:
        """The whole message's text, sealed segments included (as one document's plain text; a long paragraph
        shown as several blocks is one paragraph here: ``rich_text.joined``)."""
        if not len(self.segments):
            return joined(self.document().toPlainText())
        return self.segments.plain_text()

    def documents(self) -> list[QTextDocument]:
        """The message's documents, top to bottom: the sealed segments', then the live one (``document()``)."""
        return [v.document() for v in self.segments.views()]

    def has_selection(self) -> bool:
        """Whether any part of the message (a sealed segment or the live document) has selected text."""
        return self.segments.has_selection()

    def selectAll(self) -> None:
        """Select the whole message, sealed segments included."""
        if not len(self.segments):
            super().selectAll()
            return
        self.segments.select_all()

    def copy(self) -> None:
        """Copy the selection (across sealed segments too) to the clipboard."""
        if not len(self.segments):
            super().copy()
            return
        text = self.segments.selected_text()
        if text:
            QGuiApplication.clipboard().setText(text)

    def keyPressEvent(self, e: QKeyEvent) -> None:
        if len(self.segments) and e.matches(QKeySequence.StandardKey.Copy):
            self.copy()
        elif len(self.segments) and e.matches(QKeySequence.StandardKey.SelectAll):
            self.selectAll()
        else:
            super().keyPressEvent(e)

    def mousePressEvent(self, e: QMouseEvent) -> None:
        if len(self.segments):
            self.segments.clear_selections(keep=self)
        super().mousePressEvent(e)

    def mouseMoveEvent(self, e: QMouseEvent) -> None:
        super().mouseMoveEvent(e)
        if len(self.segments) and e.buttons() & Qt.MouseButton.LeftButton:
            self.segments.drag_to(self, e.position().toPoint())

    # -- size ----------------------------------------------------------------------------------------------

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        if not len(self.segments):
            return height_for_width(self, width, self._probe_heights)
        hit = self._probe_heights.get(width)
        if hit is not None:
            return hit
        doc = self.document()
        margins = self.contentsMargins()
        text_width = max(1, width - margins.left() - margins.right())
        if doc.textWidth() == text_width:
            height = math.ceil(doc.size().height())      # the segments are its top margin
        else:
            probe = doc.clone()
            fmt = probe.rootFrame().frameFormat()
            fmt.setTopMargin(0)
            probe.rootFrame().setFrameFormat(fmt)
            probe.setTextWidth(text_width)
            height = math.ceil(probe.size().height() + self._gap_px) + self.segments.height_at(text_width)
        height += margins.top() + margins.bottom()
        if len(self._probe_heights) > 8:
            self._probe_heights.clear()
        self._probe_heights[width] = height
        return height

    def resizeEvent(self, e: QResizeEvent) -> None:
        if self.document().pageSize().width() == self.viewport().width():
            # laid out at this width already: a widget shown again (the message list's pool) gets a resize
            # event with no old size, and QTextEdit would lay the whole document out again for it
            QAbstractScrollArea.resizeEvent(self, e)
        else:
            super().resizeEvent(e)
        if len(self.segments) and e.size().width() != e.oldSize().width():
            self._place_segments()     # a new width: the segments are laid out again (a taller view: nothing)

    def _never_scroll(self, value: int) -> None:
        if value:
            self.verticalScrollBar().setValue(0)

    def _place_segments(self) -> None:
        """Lay the sealed segments out at the viewport's width and make the live document start below them, as far
        below as one document of both would have its first piece (``_boundary_gap``)."""
        height: float = self.segments.place(self.viewport().width())
        if height:
            height = self.segments.end() + self._boundary_gap()
        root = self.document().rootFrame()
        fmt = root.frameFormat()
        if fmt.topMargin() != height:
            fmt.setTopMargin(height)
            root.setFrameFormat(fmt)

    def _boundary_gap(self) -> float:
        """px from the last sealed segment's end to the live document's top margin (:mod:`.cut_gap`)."""
        if not len(self.segments) or not self._painted or not self._sealed:
            return 0
        self._gap_px = cut_gap(self.document(), self._sealed[-1], self._painted[0], self.viewport().width(),
                               self._later_expanded, self._scratch)
        return self._gap_px

    def _measure_gap_ahead(self, last: str, first: str) -> bool:
        """Measure the gap of a cut between the pieces ``last`` and ``first`` for a seal to come, unless it is
        measured already; True when it was not (see ``_patch_document``: a seal waits for its gap)."""
        width = self.viewport().width()
        if cut_gap_known(self.document(), last, first, width, self._later_expanded):
            return False
        cut_gap(self.document(), last, first, width, self._later_expanded, self._scratch)
        return True

    def sizeHint(self) -> QSize:
        width = self.width() if self.width() > 0 else 400
        if not self.isVisible():
            # not shown yet (a new widget's view): layouts ask its hint before its width is known, and the height
            # at that width laid the document out at the widget's default 100 px, or a copy of it (5-10 ms for a
            # 6.5 KB preview, twice when the list opened a chat); the list asks heightForWidth at its real width
            doc = self.document()
            if doc.textWidth() <= 0:
                return QSize(width, self.minimumSizeHint().height())
            margins = self.contentsMargins()
            return QSize(math.ceil(doc.textWidth()) + margins.left() + margins.right(),
                         math.ceil(doc.size().height()) + margins.top() + margins.bottom())
        return QSize(width, self.heightForWidth(width))

    def minimumSizeHint(self) -> QSize:
        return QSize(50, 20)

    def _on_size_changed(self, *_: object) -> None:
        self._probe_heights.clear()
        if self._patching:
            self._size_changed = True
            return
        margins = self.contentsMargins()
        height = math.ceil(self.document().size().height()) + margins.top() + margins.bottom()
        if height != self._height:
            self._height = height
            self.updateGeometry()
            self.heightChanged.emit(height)

    def _shift_first_document(self, delta: int) -> None:
        """The top of the first document (the reasoning section) changed length by ``delta`` characters: the
        positions after it move (the live document's pieces), or the sealed segments are placed again."""
        self._thinking_end += delta
        if not len(self.segments):
            self._base += delta
            self._starts = [p + delta for p in self._starts]
        else:
            first = self.segments.items[0]
            first.starts = [p + delta for p in first.starts]
            self.segments.moved(0)
            self._place_segments()

    def _drop_segments(self, k: int) -> None:
        """Remove sealed segments ``k``… (and the live document's pieces): the pieces from segment ``k``'s first
        on are to be inserted again, into the live document."""
        if k >= len(self.segments) and (k > 0 or not self._live_first):
            return
        first = self.segments.items[k].first if k < len(self.segments) else self._live_first
        self.segments.drop(k)
        del self._sealed[first:]
        self._live_first = first
        self._painted = []
        self._starts = []
        self._cum = []
        self.document().clear()
        if len(self.segments):
            self._place_segments()

    def _full_at(self) -> int:
        """The first local index ``b`` ≥ 1 such that the live pieces before it are enough for a segment (see
        :mod:`.segments`: HTML characters or tables), else -1. Depends only on the pieces, so a streamed message
        and a loaded one are cut into the same segments."""
        for b, (chars, tables) in enumerate(self._cum, 1):
            if segment_full(chars, tables):
                return b
        return -1

    def _seal(self) -> None:
        """The live document (all its pieces finished) becomes a sealed segment; a fresh one goes on.

        On screen nothing moves: the segment paints the same document, laid out as it was, where the view painted
        it, and the fresh document starts below it. So the segment's widget is shown unpainted and the view's
        own repaints (a new document, its top margin) are dropped; the view repaints from the fresh document's top
        down, and the rest of the patch repaints from there (``RepaintFrom.top``). Repainting both whole made the
        frames after a seal the slowest of a stream: 11-18 ms of paint against ~2.5 at the median (render bench,
        1,000 tokens/s, at most of its p99 frames)."""
        old = self.document()
        detached = self._detached is not None
        if not detached:
            old.documentLayout().documentSizeChanged.disconnect(self._on_size_changed)
            self.repaint_from.unwatch()
        # (the segment's widget is made outside ``unpainted(vp)``: a child made while its parent's updates are off
        # keeps them off, and never paints)
        margin = old.rootFrame().frameFormat().topMargin()   # its content starts there (a segment is never cut)
        y = math.floor(min(self.segments.height, margin)) if len(self.segments) else 0
        self.segments.seal(self._live_first, old, self._starts, painted=not detached, y=y)
        vp, segment = self.viewport(), self.segments.items[-1].view
        with nullcontext() if detached else unpainted(vp, segment):    # (placed again: _place_segments)
            self._sealed.extend(self._painted)
            self._live_first += len(self._painted)
            self._painted = []
            self._starts = []
            self._cum = []
            self._base, self._base_prev = 0, ""
            doc = QTextDocument(self)
            set_up_document(doc, old.defaultFont())
            if detached:
                doc.setDefaultTextOption(old.defaultTextOption())
                doc.setTextWidth(old.textWidth())
                self._detached = doc
            else:
                self.setDocument(doc)
                self._own_shown = True
                self.repaint_from.watch(doc)
                doc.documentLayout().documentSizeChanged.connect(self._on_size_changed)
            self._place_segments()
        if not detached:
            top = self.segments.height
            vp.update(0, top, vp.width(), max(0, vp.height() - top))
            self.repaint_from.top = top


def segment_full(chars: int, tables: int) -> bool:
    """Whether pieces of ``chars`` HTML characters (of the pieces without a table) and ``tables`` tables fill a
    segment."""
    return chars >= SEGMENT_CHARS or tables >= SEGMENT_TABLES
