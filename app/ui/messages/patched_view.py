"""A message's view patched piece by piece, in sealed segments: the document machinery under ``MarkdownView``.

Every block's HTML is a concatenation of *pieces* separated by :data:`~app.core.render.markdown.PIECE` (a code
block's header and each group of its lines, each row group of a long table, …). :meth:`PatchedView._patch`
keeps the pieces it painted and where each starts; it skips the painted pieces that are unchanged (stable pieces
are never compared again), removes the document from the first differing piece to the end and inserts the rest
(:class:`~.rich_text.PieceInserter`). Qt re-lays out a whole ``QTextTable`` on any change, so keeping the changed
pieces small (a row group, a few code lines) keeps every tick cheap; and once the document holds a segment's
worth of finished pieces it is sealed (:mod:`.sealed_view`, :mod:`.segments`), so what a tick costs does not
grow with the reply. The user's selection survives a patch (it only collapses if it lies inside a replaced
piece, and is restored when the same text is still there).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QColor, QTextCharFormat, QTextCursor, QTextDocument
from PySide6.QtWidgets import QWidget

from app.core.render.markdown import PIECE
from app.core.render.markdown.thinking import THINK_DIM, fold_later_thinking
from app.ui.messages.patch_budget import chars_left
from app.ui.messages.restyle import restyle_in_place, spans_only
from app.ui.messages.rich_text import PieceInserter, break_long_runs, view_pieces
from app.ui.messages.sealed_view import SealedView, segment_full
from app.ui.messages.tail_pieces import TailPieces


class PatchedView(SealedView):
    """A read-only ``QTextBrowser`` showing pieces of HTML, patched in place, cut into sealed segments when long
    (see the module docstring and :class:`~.sealed_view.SealedView`). ``MarkdownView`` decides what to show."""

    _n_stable: int          # stable blocks of the active renderer already split into pieces
    _n_frozen: int          # leading painted pieces that are stable (not compared again)
    _stable_pieces: list[str]
    behind: bool            # the last patch left pieces for the next one (its budget)
    behind_chars: int       # … and their HTML characters, counted up to a patch budget's bound

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._inserter = PieceInserter()
        self._tail = TailPieces()


    @property
    def pieces_inserted(self) -> int:
        """Top-level pieces inserted into the view's documents so far (a public counter)."""
        return self._inserter.pieces_inserted

    @property
    def html_chars_inserted(self) -> int:
        """The HTML length of those pieces (what refreshes cost in ``insertHtml``)."""
        return self._inserter.html_chars_inserted


    # -- document patching ---------------------------------------------------------------------------------

    def _reset_state(self) -> None:
        self._phase = "answer"
        self._has_header = False
        self._n_stable = 0  # stable blocks of the active renderer already split into pieces
        self._stable_pieces = []  # their pieces (append-only, never change)
        self._base = 0  # document position where the active renderer's pieces start
        self._base_prev = ""  # HTML inserted just before them (decides how the first piece is inserted)
        self._painted, self._starts, self._cum = [], [], []   # the live document's pieces (SealedView)
        self._n_frozen = 0  # leading painted pieces that are stable (not compared again)
        self._tail.clear()  # the view's pieces of the last tail (split again only where it changed)
        self._tail_ns = -1  # stable pieces at the last patch (the tail's pieces start there)
        self._thinking_end = 0  # where the reasoning section ends in the first document (MarkdownView)
        self._version = -1
        self.behind = False  # the last patch left pieces to insert (its budget)
        self.behind_chars = 0  # their HTML characters
        self.inserted = 0    # HTML characters the last patch inserted
        self._drop_segments(0)

    def _insert_piece(self, cursor: QTextCursor, html: str, prev: str) -> None:
        """Insert one top-level block's HTML at ``cursor`` (the end of the content so far); a later reasoning
        section's content only while unfolded."""
        self._inserter.insert(cursor, break_long_runs(fold_later_thinking(html, self._later_expanded).strip()), prev)

    def _patch(self, stable: list[str], tail: list[str], dim: bool, tail_final: int = 0,
               budget: int | None = None) -> None:
        doc = self.document()
        sel = self.textCursor()
        saved = (sel.anchor(), sel.position(), sel.selectedText()) if sel.hasSelection() else None
        # Each edit block of a patch (a seal makes two or three) changed the height, and each new height laid the
        # message list out again at once (0.9 ms a time: 4 per tick of a streaming 2,000-row table): told once.
        self._patching, self._size_changed = True, False
        try:
            self._patch_document(stable, tail, dim, tail_final, budget)
        finally:
            self._patching = False
        if self._size_changed:
            self._on_size_changed()
        if saved is not None and self.document() is not doc:
            view = next((seg.view for seg in self.segments.items if seg.view.document() is doc), None)
            if view is not None:          # the document was sealed: its selection goes with it
                cur = QTextCursor(doc)
                cur.setPosition(saved[0])
                cur.setPosition(saved[1], QTextCursor.MoveMode.KeepAnchor)
                view.setTextCursor(cur)
        elif saved is not None and not self.textCursor().hasSelection():
            # The selection touched the replaced tail; restore it when the same text is still there.
            anchor, pos, text = saved
            if max(anchor, pos) < doc.characterCount():
                cur = QTextCursor(doc)
                cur.setPosition(anchor)
                cur.setPosition(pos, QTextCursor.MoveMode.KeepAnchor)
                if cur.selectedText() == text:
                    self.setTextCursor(cur)

    def _patch_document(self, stable: list[str], tail: list[str], dim: bool, tail_final: int = 0,
                        budget: int | None = None) -> None:
        """Make the view show ``stable + tail``: keep the painted pieces that did not change, re-insert the rest.

        Stable pieces never change, so only the pieces after the last stable one painted are compared (O(tail)).
        Pieces are numbered over the whole message: those before ``_live_first`` are in sealed segments (a
        change there, formula images or code colours arriving, re-inserts from that segment's first piece).
        While inserting, a live document that is full and holds only finished pieces is sealed: stable ones and
        the first ``tail_final`` of the tail (the renderer's ``tail_final_pieces``: an open table's row groups).
        ``budget`` (HTML characters, streaming): the pieces after the first ones inserted that hold this much
        wait for the next patch (``behind`` is True meanwhile), so a render that brought a lot at once (a long
        open paragraph re-parsed after it grew by a fifth) is shown over several ticks.

        *A seal waits for its gap* (streaming, with a ``budget``): the gap at a cut (:mod:`.cut_gap`, 2-5 ms to
        measure) is measured in a patch that does not seal — at the end of one that leaves the live document full
        while the pieces after the cut are open, or, where the cut's pieces are not measured yet when the seal is
        due, in that patch, the seal then left to the next. Measured in the seal's patch, those frames cost 12-18
        ms of work, the late frames of the render bench at 1,000 tok/s (now at most 12).
        """
        self.behind = False
        self.behind_chars = 0
        self.inserted = 0
        for html in stable[self._n_stable :]:
            self._stable_pieces.extend(view_pieces(html, PIECE))
        self._n_stable = len(stable)
        spieces = self._stable_pieces
        n_s = len(spieces)
        same_tail = self._tail_ns == n_s and self._n_frozen >= n_s   # no stable piece to compare again
        tpieces, n_final = self._tail.split(tail, tail_final)
        self._tail_ns = n_s
        n_new = n_s + len(tpieces)
        n_fixed = n_s + n_final

        def new(j: int) -> str:
            return spieces[j] if j < n_s else tpieces[j - n_s]

        def painted_at(j: int) -> str:
            return self._sealed[j] if j < self._live_first else self._painted[j - self._live_first]

        n_painted = self._live_first + len(self._painted)
        # a patch cut by its budget left stable pieces unpainted; the tail's leading pieces that are the last
        # patch's (an open table's finished row groups) are painted as they are, where they are painted at all
        i = min(n_s + self._tail.same if same_tail else self._n_frozen, n_painted)
        limit = min(n_painted, n_new)
        while i < limit and painted_at(i) == new(i):
            i += 1
        self._n_frozen = n_s
        b = self._full_at()
        hold = False        # no seal in this patch: the gap at its cut was measured in it
        if 0 < b < len(self._painted) and self._live_first + b <= n_fixed and (
                budget is None or sum(map(len, self._painted[b:i - self._live_first])) <= budget):
            # a segment ends there: cut the live document at its end — unless the pieces after the cut that did
            # not change hold more than the budget (a 200 KB code block closed at once): re-inserted over several
            # patches, they vanished from the screen meanwhile; the cut is then left to the next insert (below),
            # and the segment holds more than SEGMENT_CHARS
            cut = self._live_first + b
            if budget is not None and cut < n_new and self._measure_gap_ahead(self._painted[b - 1], new(cut)):
                hold = True                  # a seal waits for its gap: cut at the next patch
            else:
                i = min(i, cut)
        if i == n_painted == n_new:
            return
        if n_new == n_painted and not dim:   # code colours came: applied where the pieces are, nothing moves
            #                                    (the reasoning, dimmed while it streams, is inserted again)
            i = self._restyle(i, n_new, new, painted_at, budget)
            if i >= n_new:
                return
        if i < self._live_first:
            k = self.segments.index_of(i)
            if k == 0 and self._has_header:
                self._rebuild()          # the reasoning header is in the first segment: build it all again
                return
            self._drop_segments(k)
            i = self._live_first
        doc = self.document()
        local = i - self._live_first
        start = self._starts[local] if local < len(self._painted) else doc.characterCount() - 1
        cursor = QTextCursor(doc)
        cursor.beginEditBlock()
        try:
            if start <= 0:
                doc.clear()  # start from a pristine first block
                if len(self.segments):
                    self._place_segments()
                cursor = QTextCursor(doc)
                start = 0
            else:
                self.repaint_from.changing_at(doc, start)
                cursor.setPosition(start)
                kept = cursor.blockFormat()   # removing the separator after this block would give it the
                cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
                cursor.removeSelectedText()
                if cursor.blockFormat() != kept:   # format of the removed block after it (a rule's margins);
                    cursor.setBlockFormat(kept)    # setting it unconditionally costs a re-layout every tick
            del self._painted[local:]
            del self._starts[local:]
            del self._cum[local:]
            prev = self._painted[-1] if self._painted else (self._sealed[-1] if self._sealed and i > 0
                                                            else self._base_prev)
            inserted = 0
            for j in range(i, n_new):
                html = new(j)
                if budget is not None and inserted >= budget:
                    self.behind = True       # the rest on the next patch
                    self.behind_chars = chars_left(new, j, n_new)
                    break
                due = not hold and j <= n_fixed and bool(self._cum) and segment_full(*self._cum[-1])
                if due and budget is not None and self._measure_gap_ahead(self._painted[-1], html):
                    due, hold = False, True      # a seal waits for its gap (docstring)
                    if j >= n_painted:           # new pieces: they wait for the seal, in the next patch
                        self.behind = True
                        self.behind_chars = chars_left(new, j, n_new)
                        break
                    # (pieces that were on screen: inserted again here, the seal comes at the next patch)
                inserted += len(html)
                self.inserted = inserted
                if due:
                    if dim:
                        self._dim(start, cursor.position())    # reasoning: dimmed in each document
                    cursor.endEditBlock()
                    self._seal()         # pieces before j are finished: they move into a segment
                    doc = self.document()
                    cursor = QTextCursor(doc)
                    cursor.beginEditBlock()
                    start = 0
                self._starts.append(cursor.position())
                self._insert_piece(cursor, html, prev)
                chars, tables = self._cum[-1] if self._cum else (0, 0)
                n_tables = html.count("<table")
                self._cum.append((chars + (0 if n_tables else len(html)), tables + n_tables))
                self._painted.append(html)
                prev = html
                if len(self._painted) == 1 and len(self.segments):
                    self._place_segments()     # its gap to the segment above (_boundary_gap)
            if dim:
                self._dim(start, cursor.position())
        finally:
            cursor.endEditBlock()
            self.repaint_from.done()
        if budget is not None and not self.behind and not hold:
            b = self._full_at()
            if 0 < b < len(self._painted):
                self._measure_gap_ahead(self._painted[b - 1], self._painted[b])   # a seal to come (docstring)

    def _restyle(self, i: int, n: int, new: Callable[[int], str], painted_at: Callable[[int], str],
                 budget: int | None) -> int:
        """Give the changed pieces from ``i`` on whose HTML differs only in its spans (code colours) their new
        formats in place (:mod:`.restyle`), until ``budget`` HTML characters (then ``behind``); returns the
        first piece to insert again (one that changed otherwise, or whose text did not match), else ``n``."""
        done = 0
        cursors: dict[int, QTextCursor] = {}       # per document: one edit block for all its pieces
        try:
            for j in range(i, n):
                html = new(j)
                old = painted_at(j)
                if html == old:
                    continue
                if not spans_only(old, html):
                    return j
                if budget is not None and done >= budget:
                    self.behind = True
                    self.behind_chars = chars_left(new, j, n)
                    self._n_frozen = min(self._n_frozen, j)     # compared again at the next patch
                    return n
                if j < self._live_first:
                    seg = self.segments.items[self.segments.index_of(j)]
                    doc, starts, local, pieces = seg.view.document(), seg.starts, j - seg.first, self._sealed
                else:
                    doc, starts, local, pieces = self.document(), self._starts, j - self._live_first, self._painted
                if local >= len(starts):
                    return j
                end = starts[local + 1] if local + 1 < len(starts) else doc.characterCount() - 1
                cursor = cursors.get(id(doc))
                if cursor is None:
                    cursor = cursors[id(doc)] = QTextCursor(doc)
                    cursor.beginEditBlock()
                shown = break_long_runs(fold_later_thinking(html, self._later_expanded).strip())
                if not restyle_in_place(cursor, starts[local], end, shown):
                    return j
                pieces[j - (self._live_first if pieces is self._painted else 0)] = html
                done += len(html)
            return n
        finally:
            for cursor in cursors.values():
                cursor.endEditBlock()

    def _dim(self, start: int, end: int, doc: QTextDocument | None = None) -> None:
        cursor = QTextCursor(doc if doc is not None else self.document())
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        fmt = QTextCharFormat()
        fmt.setForeground(QColor(THINK_DIM))
        cursor.mergeCharFormat(fmt)

    def _rebuild(self) -> None:
        """Build the whole document again (``MarkdownView``: thinking fold, phase change, a new renderer)."""
        raise NotImplementedError
