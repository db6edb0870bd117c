"""Sealed segments of a long message: finished pieces moved out of the document that is still patched.

Why (measured, ``docs/architecture.md``): every change to a ``QTextDocument`` that inserts or removes a frame (a
table: every quote, code header and table row group is one) makes Qt scan all of the document's fragments
(``QTextDocumentPrivate::scan_frames``), and painting the bottom of a document costs more the longer it is
(80 KB: 6.4 ms a paint at the bottom against 1.2 at the top). So one document per reply makes every tick and
every frame of a long reply cost in proportion to its length. Instead, once the document being patched (the
*live* one, the :class:`~app.ui.messages.markdown_view.MarkdownView`'s own) holds ``SEGMENT_CHARS`` characters
or ``SEGMENT_TABLES`` tables of finished pieces, it is *sealed*: the document itself, laid out as it is, moves
into a :class:`SegmentView` (a read-only ``QTextBrowser`` that is a child of the view's viewport, placed above
the live document), and the view goes on with a fresh document. The live document's top margin is the sealed
segments' height, so the view is still one widget of one height; what the live document costs no longer grows
with the reply, and a frame paints only the segments on screen.

Text is the same: :meth:`Segments.plain_text` joins the segments' texts and the live one like one document's;
Select All and Copy (the menu's, Ctrl+A, Ctrl+C) cover every segment; a drag that starts in one segment and
leaves it extends the selection over the segments and the live document it passes (:meth:`Segments.drag_to`).
Links, formula images, link tooltips and the context menu behave in a segment as in the view.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from PySide6.QtCore import QEvent, QMimeData, QPoint, QPointF, QRectF, Qt, QUrl, Slot
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QHelpEvent,
    QKeyEvent,
    QKeySequence,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextDocumentFragment,
)
from PySide6.QtWidgets import QTextBrowser, QToolTip, QWidget

from app.core.render.markdown.links import is_safe_url
from app.ui.messages.repaint import unpainted
from app.ui.messages.rich_text import JOIN, joined, selection_mime


class SegmentOwner(Protocol):
    """What a segment needs of the view that owns it (``SealedView``)."""

    segments: Segments

    def viewport(self) -> QWidget: ...
    def palette(self) -> QPalette: ...
    def focusPolicy(self) -> Qt.FocusPolicy: ...
    def copy(self) -> None: ...
    def selectAll(self) -> None: ...
    def open_anchor(self, url: QUrl) -> None: ...
    def loadResource(self, kind: int, name: QUrl) -> object: ...

#: The live document is sealed into a segment once its finished pieces hold this many HTML characters (pieces
#: that hold a table not counted: a table's HTML is ~15× its text, and a streamed 2,000-row table was sealed every
#: 9 row groups) …
SEGMENT_CHARS = 8_000
#: … or this many tables (frames).
SEGMENT_TABLES = 24


class SegmentView(QWidget):
    """One sealed segment: a widget that paints a finished, laid-out document as it is (no editor of its own: a
    ``QTextBrowser`` would lay the document out again when given it, and costs a style polish), with a
    selection (mouse, double click, Ctrl+A / Ctrl+C through the owner), links (click, pointing cursor,
    tooltip) and the owner's context menu (a ``MarkdownView``, whose viewport it sits in)."""

    def __init__(self, owner: SegmentOwner, doc: QTextDocument, y: int, painted: bool = False) -> None:
        super().__init__(owner.viewport())
        self._owner = owner
        self._doc = doc
        doc.setParent(self)
        self._cursor = QTextCursor(doc)
        self._pressed_anchor = ""
        self._dragging = False
        self.setMouseTracking(True)
        self.setCursor(Qt.CursorShape.IBeamCursor)
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.NoContextMenu)   # the owner's menu (its parent's)
        # px of the document above what the segment shows: the height of the segments above it while it was live
        # (its top margin less the gap to the last one's end: SealedView._boundary_gap, shown blank) — none for
        # the first, which shows its own margin as the view did (cut off, all moved up 4 px at the first seal)
        self.dy = float(y)
        self.setGeometry(0, y, max(1, int(doc.textWidth())), visible_height(doc, doc.size().height(), self.dy))
        # ``painted``: the live document painted these pixels already. Showing a widget repaints it twice over:
        # at once (its style's polish) and through an event Qt posts (``QWidgetPrivate::show_sys``), dropped here.
        self._skip_show_repaint = painted
        if painted:
            with unpainted(self):
                self.show()
        else:
            self.show()

    def document(self) -> QTextDocument:
        return self._doc

    @Slot(int, QUrl, result="QVariant")
    def loadResource(self, kind: int, name: QUrl) -> object:
        """The image the sealed document names (a formula's), from the owner: ``QTextDocument.loadResource`` asks
        its parent's ``loadResource(int, QUrl)``, and the document's parent is this widget once sealed. A formula
        never painted before its piece was sealed (a burst streams past the screen) showed as a broken image."""
        return self._owner.loadResource(kind, name)

    def textCursor(self) -> QTextCursor:
        return QTextCursor(self._cursor)

    def setTextCursor(self, cursor: QTextCursor) -> None:
        self._cursor = QTextCursor(cursor)
        self.update()

    def cursorForPosition(self, pos: QPoint) -> QTextCursor:
        cur = QTextCursor(self._doc)
        hit = self._doc.documentLayout().hitTest(QPointF(pos.x(), pos.y() + self.dy), Qt.HitTestAccuracy.FuzzyHit)
        cur.setPosition(max(0, hit))
        return cur

    def anchorAt(self, pos: QPoint) -> str:
        return self._doc.documentLayout().anchorAt(QPointF(pos.x(), pos.y() + self.dy))

    def createMimeDataFromSelection(self) -> QMimeData:
        frag = QTextDocumentFragment(self._cursor)
        data = QMimeData()
        data.setText(frag.toPlainText())
        data.setHtml(frag.toHtml())
        return selection_mime(self, data)   # type: ignore[arg-type]

    def paintEvent(self, e: QPaintEvent) -> None:
        ctx = QAbstractTextDocumentLayout.PaintContext()
        ctx.clip = QRectF(e.rect()).translated(0, self.dy)
        pal = self._owner.palette()
        ctx.palette = pal
        if self._cursor.hasSelection():
            sel = QAbstractTextDocumentLayout.Selection()
            sel.cursor = self._cursor
            fmt = QTextCharFormat()
            fmt.setBackground(pal.brush(QPalette.ColorRole.Highlight))
            fmt.setForeground(pal.brush(QPalette.ColorRole.HighlightedText))
            sel.format = fmt
            ctx.selections = [sel]
        painter = QPainter()
        if not painter.begin(self):
            return
        try:
            painter.translate(0, -self.dy)
            painter.setClipRect(ctx.clip)
            self._doc.documentLayout().draw(painter, ctx)
        finally:
            painter.end()              # never left active for the widgets painted after this one

    def event(self, e: QEvent) -> bool:
        if e.type() == QEvent.Type.UpdateLater and self._skip_show_repaint:
            self._skip_show_repaint = False        # the first one: posted by show(), for the whole widget
            return True
        if e.type() == QEvent.Type.ToolTip and isinstance(e, QHelpEvent):
            href = self.anchorAt(e.pos())
            if href and is_safe_url(href):
                QToolTip.showText(e.globalPos(), href, self)
                return True
        return super().event(e)

    def keyPressEvent(self, e: QKeyEvent) -> None:
        if e.matches(QKeySequence.StandardKey.Copy):
            self._owner.copy()
        elif e.matches(QKeySequence.StandardKey.SelectAll):
            self._owner.selectAll()
        else:
            super().keyPressEvent(e)

    def mousePressEvent(self, e: QMouseEvent) -> None:
        self._owner.segments.clear_selections(keep=self)
        if e.button() != Qt.MouseButton.LeftButton:
            super().mousePressEvent(e)
            return
        pos = e.position().toPoint()
        self._pressed_anchor = self.anchorAt(pos)
        self._cursor = self.cursorForPosition(pos)
        self._dragging = True
        self.update()

    def mouseMoveEvent(self, e: QMouseEvent) -> None:
        pos = e.position().toPoint()
        if not self._dragging:
            link = bool(self.anchorAt(pos))
            self.setCursor(Qt.CursorShape.PointingHandCursor if link else Qt.CursorShape.IBeamCursor)
            return
        self._cursor.setPosition(self.cursorForPosition(pos).position(), QTextCursor.MoveMode.KeepAnchor)
        self.update()
        self._owner.segments.drag_to(self, self.mapTo(self._owner.viewport(), pos))

    def mouseReleaseEvent(self, e: QMouseEvent) -> None:
        if self._dragging and e.button() == Qt.MouseButton.LeftButton:
            self._dragging = False
            href = self.anchorAt(e.position().toPoint())
            if href and href == self._pressed_anchor and not self._cursor.hasSelection():
                self._owner.open_anchor(QUrl(href))
        super().mouseReleaseEvent(e)

    def mouseDoubleClickEvent(self, e: QMouseEvent) -> None:
        cur = self.cursorForPosition(e.position().toPoint())
        cur.select(QTextCursor.SelectionType.WordUnderCursor)
        self.setTextCursor(cur)


def visible_height(doc: QTextDocument, height: float, dy: float) -> int:
    """The height (px) a sealed ``doc`` of laid-out ``height`` shows from ``dy`` (its ``SegmentView.dy``): without
    its root frame's bottom margin (the next segment follows at once)."""
    return max(1, math.ceil(height - dy - doc.rootFrame().frameFormat().bottomMargin()))


def _ends_after_table(doc: QTextDocument) -> bool:
    """Whether ``doc`` ends with the empty block Qt keeps after a table (its text ends with that line break)."""
    last = doc.lastBlock()
    before = last.previous()
    return last.length() == 1 and before.isValid() and QTextCursor(before).currentTable() is not None


@dataclass(eq=False)
class Segment:
    """A sealed segment: its view, the global index of its first piece and where each of its pieces starts
    in its document (positions, in order)."""

    view: SegmentView
    first: int
    starts: list[int] = field(default_factory=list)


class Segments:
    """The sealed segments of one ``SegmentOwner`` (top to bottom) and what spans them: placement, heights,
    text, selection. ``live`` gives the view's own (live) browser."""

    def __init__(self, owner: SegmentOwner, live: Callable[[], QTextBrowser]) -> None:
        self._owner = owner
        self._live = live
        self.items: list[Segment] = []
        self.height = 0                    # px: the segments' total height at the viewport's width
        self._width = -1                   # the width they were placed at …
        self._placed = 0                   # … and how many (a new segment is placed under the others)

    def __len__(self) -> int:
        return len(self.items)

    def seal(self, first: int, doc: QTextDocument, starts: list[int] | None = None, painted: bool = False,
             y: int | None = None) -> None:
        """``doc`` (the live document, holding the pieces from global index ``first`` on, each starting at its
        position in ``starts``) becomes the last segment, shown from ``y`` (px: the segments' height, or less
        where the document's content starts higher: never cut off). The caller gives the view a new live document
        right after. ``painted``: the view painted ``doc`` where the segment goes (the segment is not painted
        again)."""
        top = self.height if y is None else y
        self.items.append(Segment(SegmentView(self._owner, doc, top, painted), first, list(starts or ())))
        self._placed = min(self._placed, len(self.items) - 1)

    def moved(self, k: int) -> None:
        """Segment ``k``'s height changed: it and those below are placed again by the next :meth:`place`."""
        self._placed = min(self._placed, k)

    def index_of(self, piece: int) -> int:
        """The segment holding global piece ``piece`` (-1: the live document)."""
        for k in range(len(self.items) - 1, -1, -1):
            if self.items[k].first <= piece:
                return k
        return -1

    def drop(self, start: int = 0) -> None:
        """Remove the segments from ``start`` on (their documents go with them)."""
        for seg in self.items[start:]:
            seg.view.hide()
            seg.view.deleteLater()     # by Qt, from its parent: never setParent(None) (Python would own it
            #                            and delete it at once with a deletion pending: a crash, measured)
        del self.items[start:]
        self._placed = min(self._placed, len(self.items))
        if not self.items:
            self.height = 0

    def place(self, width: int) -> int:
        """Lay the segments out at the viewport's ``width`` (px), one under the other from the top; returns and
        keeps their total height."""
        if width != self._width:
            self._width, self._placed = width, 0
        y = self.items[self._placed - 1].view.geometry().bottom() + 1 if self._placed else 0
        for seg in self.items[self._placed:]:
            doc = seg.view.document()
            if doc.textWidth() != width:
                doc.setTextWidth(width)
            h = visible_height(doc, doc.size().height(), seg.view.dy)
            seg.view.setGeometry(0, y, width, h)
            y += h
        self._placed = len(self.items)
        self.height = y
        return y

    def end(self) -> float:
        """Where the last segment's last line ends (px, from the top; :meth:`place` rounds each height up)."""
        if not self.items:
            return 0.0
        view = self.items[-1].view
        doc = view.document()
        return view.geometry().top() + doc.size().height() - view.dy - doc.rootFrame().frameFormat().bottomMargin()

    def height_at(self, text_width: int) -> int:
        """The segments' total height (px) at ``text_width``: laid out copies at any other width than theirs."""
        total = 0
        for seg in self.items:
            doc = seg.view.document()
            if doc.textWidth() == text_width:
                total += visible_height(doc, doc.size().height(), seg.view.dy)
            else:
                probe = doc.clone()
                probe.setTextWidth(text_width)
                total += visible_height(doc, probe.size().height(), seg.view.dy)
        return total

    # -- text and selection --------------------------------------------------------------------------------

    def views(self) -> list[Any]:
        """Every browser of the message, top to bottom (the live one last)."""
        return [*(s.view for s in self.items), self._live()]

    def plain_text(self) -> str:
        """The message's text as one document's ``toPlainText`` would give it, wherever it was cut: a document
        that ends with an empty block (the one Qt keeps after a table) ends its line already — one document
        would go on in that block (the next table, or the paragraph after it) — so no line break is added."""
        out, after_table = "", False
        for v in self.views():
            doc = v.document()
            text = doc.toPlainText()
            if text:
                out += text if not out or after_table else "\n" + text
                after_table = _ends_after_table(doc)
        return joined(out)

    def has_selection(self) -> bool:
        return any(v.textCursor().hasSelection() for v in self.views())

    def selected_text(self) -> str:
        """The selected text of every browser, top to bottom, joined as one document's selection would be."""
        out, after_table = "", False
        for v in self.views():
            cursor = v.textCursor()
            if cursor.hasSelection():
                # a paragraph shown as several blocks may go on across the segments: no line break there
                cont = cursor.selectionStart() == 0 and v.document().characterAt(0) == JOIN
                out += ("" if cont or not out or after_table else "\n") + v.createMimeDataFromSelection().text()
                doc = v.document()
                after_table = _ends_after_table(doc) and cursor.selectionEnd() >= doc.characterCount() - 1
        return out

    def select_all(self) -> None:
        for v in self.views():
            cur = QTextCursor(v.document())
            cur.select(QTextCursor.SelectionType.Document)
            v.setTextCursor(cur)

    def clear_selections(self, keep: object = None) -> None:
        for v in self.views():
            if v is not keep and v.textCursor().hasSelection():
                cur = v.textCursor()
                cur.clearSelection()
                v.setTextCursor(cur)

    def drag_to(self, origin: Any, pos: QPoint) -> None:
        """A drag that started in ``origin`` is at ``pos`` (the owner's viewport coordinates): select from its
        anchor through the browsers between to the point under ``pos``."""
        views = self.views()
        if origin not in views:
            return
        a = views.index(origin)
        b = self._index_at(pos.y())
        if b == a:
            return
        anchor = origin.textCursor().anchor()
        down = b > a
        for k, v in enumerate(views):
            cur = QTextCursor(v.document())
            if k == a:
                cur.setPosition(anchor)
                cur.movePosition(QTextCursor.MoveOperation.End if down else QTextCursor.MoveOperation.Start,
                                 QTextCursor.MoveMode.KeepAnchor)
            elif (down and a < k < b) or (not down and b < k < a):
                cur.select(QTextCursor.SelectionType.Document)
            elif k == b:
                local = v.mapFrom(self._owner.viewport(), pos) if v is not self._live() else pos
                hit = v.cursorForPosition(local).position()
                cur.movePosition(QTextCursor.MoveOperation.Start if down else QTextCursor.MoveOperation.End)
                cur.setPosition(hit, QTextCursor.MoveMode.KeepAnchor)
            v.setTextCursor(cur)

    def _index_at(self, y: int) -> int:
        """Index in :meth:`views` of the browser at height ``y`` of the owner's viewport."""
        if y >= self.height:
            return len(self.items)
        for k, seg in enumerate(self.items):
            if y < seg.view.geometry().bottom() + 1:
                return k
        return len(self.items)
