"""MarkdownView: the widget that shows one message's rendered markdown and patches it while it streams.

The view owns an :class:`~app.core.render.markdown.IncrementalMarkdown`. :meth:`MarkdownView.append_text` only feeds
it; :meth:`MarkdownView.refresh` (called once per UI tick) patches the ``QTextDocument`` in place, piece by
piece: every block's HTML is a concatenation of *pieces* separated by :data:`~app.core.render.markdown.PIECE` (a code
block's header and each group of its lines, each row group of a long table, …). The view remembers the pieces it
painted and where each one starts; a refresh skips the painted pieces that are unchanged (stable pieces are
never compared again, and a tail block that became stable unchanged is not re-inserted), removes the document
from the first differing piece to the end and inserts the rest. Qt re-lays out a whole ``QTextTable`` on any
change, so keeping the changed pieces small (a row group, a few code lines) keeps every tick cheap. The whole
message is never re-set with ``setHtml`` while streaming and the user's selection survives (it only collapses
if it lies inside a replaced piece, and is restored when the same text is still there).

Each block's HTML is inserted with the same procedure whether it streams in or a finished message is loaded
with :meth:`MarkdownView.set_text`, so both give the same document.

Formulas are images the math pool (:mod:`app.core.render.math_render`, a worker process) draws at the screen's
device pixel ratio in the theme's text colour; :meth:`MarkdownView.loadResource` hands Qt the image an
``<img src="brook-math:…">`` names (so the HTML stays small: no ``data:`` URI), and a copied selection holds the
formula's TeX (``$…$``), not an object character. Until the image is known the formula shows as TeX.

Links: only ``http``/``https``/``mailto`` are opened (by the desktop, never inside the view), after asking when
the link's text names another address (``links.misleading``); a link's tooltip is its real target; ``brook-copy:N``
copies the raw code of code block N to the clipboard; ``brook-think:toggle`` folds the reasoning section,
``brook-think:later`` the reasoning sections inside the answer (folded at first); anything else is ignored.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QCoreApplication, QEvent, QMimeData, QSize, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import (
    QColor,
    QDesktopServices,
    QFont,
    QGuiApplication,
    QHelpEvent,
    QKeyEvent,
    QKeySequence,
    QMouseEvent,
    QResizeEvent,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import QApplication, QFrame, QSizePolicy, QTextBrowser, QToolTip, QWidget

from app.core.render.lexer_pool import LexerPool, default_pool
from app.core.render.markdown import PIECE, IncrementalMarkdown
from app.core.render.markdown.links import COPY_SCHEME, THINK_SCHEME, is_safe_url, misleading
from app.core.render.markdown.thinking import (
    LATER_TOGGLE,
    THINK_DIM,
    fold_later_thinking,
    thinking_header_html,
)
from app.core.render.math_render import MathPool, default_math_pool
from app.ui.messages.collector import freeze_startup_heap
from app.ui.messages.formulas import formula_image, math_cache
from app.ui.messages.rich_text import (
    RUN_BREAK_CHARS,
    UI_FONT_FAMILIES,
    PieceInserter,
    break_long_runs,
    height_for_width,
    palette_theme,
    selection_mime,
    set_up_document,
)
from app.ui.messages.segments import SEGMENT_CHARS, SEGMENT_TABLES, Segments

__all__ = ["RUN_BREAK_CHARS", "UI_FONT_FAMILIES", "MarkdownView", "break_long_runs", "height_for_width",
           "palette_theme", "reply_renderer", "warm_up"]

_BLANK: dict[str, IncrementalMarkdown] = {}


def _blank_renderer(theme: str) -> IncrementalMarkdown:
    """A finished renderer of no text in ``theme``, shared by every empty view (never fed)."""
    blank = _BLANK.get(theme)
    if blank is None:
        blank = _BLANK[theme] = IncrementalMarkdown(theme=theme)
        blank.finish()
    return blank


def reply_renderer(theme: str, font: QFont | None = None, dpr: float | None = None) -> IncrementalMarkdown:
    """A renderer for a reply shown in ``theme``: code lexed by the lexer pool, formulas drawn by the math pool
    for ``font`` at ``dpr`` (default: a view's font, the primary screen's device pixel ratio)."""
    if font is None:
        font = QFont(QApplication.font())
        font.setFamilies(UI_FONT_FAMILIES)
    if dpr is None:
        screen = QGuiApplication.primaryScreen()
        dpr = screen.devicePixelRatio() if screen is not None else 1.0
    return IncrementalMarkdown(theme=theme, pool=MarkdownView.lexer_pool(), math=math_cache(font, dpr))


class MarkdownView(QTextBrowser):
    """Read-only rich-text view of one message, patched incrementally while the reply streams.

    ``theme`` is ``"light"``, ``"dark"`` or None (follow the palette, also when it changes while the app runs).
    The view has no background of its own: it shows the bubble it sits in.
    The height follows the document (no vertical scroll bar): :meth:`heightForWidth` is the document height
    and :attr:`heightChanged` (pixels) is emitted when it changes, so the view sits in a scroll area of messages.
    """

    heightChanged = Signal(int)
    _n_stable: int          # stable blocks of the active renderer already split into pieces
    _n_frozen: int          # leading painted pieces that are stable (not compared again)
    _stable_pieces: list[str]
    #: Milliseconds between looks at the lexer pool while code colours are pending (after the stream ended).
    HIGHLIGHT_POLL_MS = 40

    @staticmethod
    def lexer_pool() -> LexerPool:
        """The pool that lexes code for every view (pygments never runs on the UI loop)."""
        return default_pool()

    @staticmethod
    def math_pool() -> MathPool:
        """The pool that draws formulas for every view (mathtext never runs on the UI loop)."""
        return default_math_pool()

    def __init__(self, parent: QWidget | None = None, *, theme: str | None = None) -> None:
        super().__init__(parent)
        self._follow_palette = theme is None
        self.theme = theme or palette_theme()   # the app's palette: the view's own is transparent
        self.renderer = self._new_renderer()
        self._hl_timer = QTimer(self)
        self._hl_timer.setSingleShot(True)
        self._hl_timer.setInterval(self.HIGHLIGHT_POLL_MS)
        self._hl_timer.timeout.connect(self._poll_highlights)
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.setReadOnly(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setStyleSheet("QTextBrowser { background: transparent; }")   # no lighter box in a dark bubble
        self.viewport().setAutoFillBackground(False)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setLineWrapMode(QTextBrowser.LineWrapMode.WidgetWidth)
        policy = QSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)
        set_up_document(self.document(), self.font())
        self.anchorClicked.connect(self.open_anchor)
        self.document().documentLayout().documentSizeChanged.connect(self._on_size_changed)
        # the view is as tall as its text (the message list scrolls): it never scrolls, so the sealed segments
        # in its viewport stay where the live document's top margin leaves room for them
        self.verticalScrollBar().valueChanged.connect(self._never_scroll)
        self._height = -1
        self._probe_heights: dict[int, int] = {}
        self._inserter = PieceInserter()
        self.segments = Segments(self, lambda: self)   # sealed segments of a long message (see .segments)
        self._live_first = 0     # global index of the first piece in the live document (the view's own)
        self._sealed: list[str] = []   # the pieces painted in sealed segments (global indices < _live_first)
        self._expanded = True  # thinking section shown while the model reasons
        self._later_expanded = False  # reasoning sections inside the answer: folded
        self._user_toggled = False
        self.placeholder = False  # plain text shown until the full render (show_placeholder)
        self._catching_up = False  # a re-made streaming view renders the text so far behind its preview
        self._reset_state()
        self._version = self.renderer.version

    @property
    def pieces_inserted(self) -> int:
        """Top-level pieces inserted into the view's documents so far (a public counter)."""
        return self._inserter.pieces_inserted

    @property
    def html_chars_inserted(self) -> int:
        """The HTML length of those pieces (what refreshes cost in ``insertHtml``)."""
        return self._inserter.html_chars_inserted

    # -- public API ----------------------------------------------------------------------------------------

    def append_text(self, text: str) -> None:
        """Feed a chunk of the reply to the renderer; nothing is drawn until :meth:`refresh`."""
        if (self.renderer is _BLANK.get(self.theme) or self.placeholder) and not self._catching_up:
            self.reset()
        self.renderer.feed(text)

    def refresh(self) -> bool:
        """Patch the document with what arrived since the last call; True if anything changed.

        Only the pieces that differ from what is painted (from the first differing one on) are re-inserted.
        """
        md = self.renderer
        md.render()
        if self._catching_up:
            return False               # the preview stays until the text so far is rendered (end_catch_up)
        if md.highlights_pending and not self._hl_timer.isActive():
            self._hl_timer.start()
        version = md.version
        if version == self._version:
            return False
        self._version = version
        if md.thinking_restyled or (md.thinking is None and self._has_header):
            self._rebuild()   # reasoning restyled, or it never closed and turned out to be the answer
            return True
        if md.restyled_from is not None and self._phase == "answer":
            self._restyle_from(md.restyled_from)
        thinking_active = md.thinking is not None and not md.thinking_done
        phase = "think" if thinking_active else "answer"
        if md.thinking is not None and (self._phase != phase or not self._has_header):
            if phase == "answer" and not self._user_toggled:
                self._expanded = False  # fold the reasoning once the answer starts
            self._rebuild()
            return True
        if thinking_active and not self._expanded:
            return False  # reasoning folded: nothing to show until the answer starts
        active = md.thinking if thinking_active else md
        assert active is not None
        self._patch(active.stable_blocks, active.tail_blocks, dim=thinking_active,
                    tail_final=0 if thinking_active else md.tail_final_pieces)
        return True

    def finish(self) -> None:
        """End of stream: the renderer's final blocks are shown (a late link reference may re-render all)."""
        first_changed = self.renderer.finish()
        if first_changed < self._n_stable and self._phase == "answer":
            self._rebuild()
        else:
            self._version = -1
            self.refresh()
        if self.renderer.highlights_pending and not self._hl_timer.isActive():
            self._hl_timer.start()

    def set_text(self, text: str) -> None:
        """Show a finished message (e.g. loaded from history) in one go."""
        renderer = self._new_renderer()
        renderer.feed(text)
        renderer.finish()
        self.set_renderer(renderer)

    def set_renderer(self, renderer: IncrementalMarkdown) -> None:
        """Show a finished message whose renderer was fed and finished elsewhere (the message list's cache or
        its idle time; same theme as this view): like :meth:`set_text` without the markdown work."""
        self.placeholder = False
        self._probe_heights.clear()
        self.renderer = renderer
        self._expanded = False
        self._user_toggled = False
        self._rebuild()
        if renderer.highlights_pending:
            self._hl_timer.start()

    def begin_catch_up(self, preview: str) -> None:
        """A re-made view of a reply that streams (its chat was opened again): show ``preview`` (the text so far
        without markup) while a fresh renderer is fed the text so far in slices (:meth:`append_text`, with
        :meth:`refresh` only rendering); :meth:`end_catch_up` then lets the next :meth:`refresh` show it all."""
        self.show_placeholder(preview)
        self.renderer = self._new_renderer()
        self._version = self.renderer.version
        self._catching_up = True

    def end_catch_up(self) -> None:
        """The renderer has the text so far: the next :meth:`refresh` replaces the preview by the render."""
        if not self._catching_up:
            return
        self._catching_up = False
        self.placeholder = False
        self.document().clear()
        self._reset_state()

    def show_placeholder(self, text: str) -> None:
        """Show ``text`` as plain text (no markdown, no links) until :meth:`set_renderer` or :meth:`reset`; the
        message list's quick first look at a message scrolling into view. :attr:`placeholder` is True meanwhile."""
        self.reset(fresh=False)
        self.placeholder = True
        self.document().setPlainText(text)

    def reset(self, fresh: bool = True) -> None:
        """An empty view (a reused view about to show another message, or stream one). ``fresh=False``: its
        renderer is a shared empty one until :meth:`append_text`, :meth:`set_text` or :meth:`set_renderer`
        (making a renderer costs ~0.25 ms)."""
        self._hl_timer.stop()
        self.placeholder = False
        self._catching_up = False
        self._probe_heights.clear()
        self.renderer = self._new_renderer() if fresh else _blank_renderer(self.theme)
        self._expanded = True
        self._user_toggled = False
        self._reset_state()
        self.document().clear()
        self._version = self.renderer.version

    def set_theme(self, theme: str) -> None:
        """Show the message in ``"light"`` or ``"dark"`` colours (re-renders it; a streaming reply goes on)."""
        if theme == self.theme:
            return
        if self.placeholder:       # plain text has no colours; the full render will use the new theme
            self.theme = theme
            return
        self.theme = theme
        self._render_again()

    def _render_again(self) -> None:
        """A new renderer (theme, text size) fed the text so far; the document is built again."""
        old = self.renderer
        self.renderer = self._new_renderer()
        if old.text:
            self.renderer.feed(old.text)
        if old.finished:
            self.renderer.finish()
        else:
            self.renderer.render()
        self._rebuild()
        if self.renderer.highlights_pending and not self._hl_timer.isActive():
            self._hl_timer.start()     # code colours of the new theme come from the lexer pool: poll for them

    def changeEvent(self, event: QEvent) -> None:
        """Follow a live switch of the system theme (light ↔ dark) when no theme was given; keep the UI font
        families on a font change (zoom)."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:     # Qt sets the widget's font on the document: keep our families
            font = QFont(self.document().defaultFont())
            font.setFamilies(UI_FONT_FAMILIES)
            self.document().setDefaultFont(font)
        if self._follow_palette and event.type() in (QEvent.Type.ApplicationPaletteChange,
                                                      QEvent.Type.PaletteChange):
            self.set_theme(palette_theme())   # the app's palette (this view's own is transparent)
        elif (event.type() == QEvent.Type.FontChange and not self.placeholder and "$" in self.renderer.text
              and self.renderer.math is not None
              and math_cache(self.document().defaultFont(), self.devicePixelRatioF()).font != self.renderer.math.font):
            self._render_again()              # formulas follow the text size (zoom)

    def _new_renderer(self) -> IncrementalMarkdown:
        return reply_renderer(self.theme, self.document().defaultFont(), self.devicePixelRatioF())

    def loadResource(self, kind: int, name: QUrl) -> object:
        """Qt asks for an image the HTML names: a formula's (``brook-math:…``) comes from the math pool, drawn at
        its device pixel ratio; nothing else is ever loaded (no files, no network)."""
        return formula_image(self.math_pool(), name)

    def createMimeDataFromSelection(self) -> QMimeData:
        """The selection as text, with each formula's TeX where the document holds its image (Qt's own text has
        an object character there)."""
        return selection_mime(self, super().createMimeDataFromSelection())

    # -- text across segments ------------------------------------------------------------------------------

    def toPlainText(self) -> str:
        """The whole message's text, sealed segments included (as one document's plain text)."""
        if not len(self.segments):
            return super().toPlainText()
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

    def _poll_highlights(self) -> None:
        """Pick up code colours the lexer pool delivered (the stream may have ended: nobody else refreshes)."""
        self.refresh()

    def _restyle_from(self, block: int) -> None:
        """Stable block ``block`` and later ones changed (code colours arrived): compare them again."""
        if block < self._n_stable:
            self._stable_pieces = [p for html in self.renderer.stable_blocks[:block] for p in html.split(PIECE)]
            self._n_stable = block
            self._n_frozen = min(self._n_frozen, len(self._stable_pieces))

    def code_for(self, key: str) -> str | None:
        """Raw code of block ``key`` (``"N"`` in the answer, ``"tN"`` in the reasoning), or None."""
        md = self.renderer
        if key.startswith("t"):
            md = md.thinking  # type: ignore[assignment]
            key = key[1:]
        if md is None or not key.isdigit():
            return None
        codes = md.code_blocks
        n = int(key)
        return codes[n] if n < len(codes) else None

    def toggle_thinking(self) -> None:
        """Fold or unfold the reasoning section (re-renders the document)."""
        self._expanded = not self._expanded
        self._user_toggled = True
        self._rebuild()

    def toggle_later_thinking(self) -> None:
        """Fold or unfold the reasoning sections inside the answer (a model that thought again later; folded
        at first); re-renders the document."""
        self._later_expanded = not self._later_expanded
        self._rebuild()

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
            height = math.ceil(probe.size().height()) + self.segments.height_at(text_width)
        height += margins.top() + margins.bottom()
        if len(self._probe_heights) > 8:
            self._probe_heights.clear()
        self._probe_heights[width] = height
        return height

    def resizeEvent(self, e: QResizeEvent) -> None:
        super().resizeEvent(e)
        if len(self.segments):
            self._place_segments()

    def _never_scroll(self, value: int) -> None:
        if value:
            self.verticalScrollBar().setValue(0)

    def _place_segments(self) -> None:
        """Lay the sealed segments out at the viewport's width and make the live document start below them."""
        height = self.segments.place(self.viewport().width())
        root = self.document().rootFrame()
        fmt = root.frameFormat()
        if fmt.topMargin() != height:
            fmt.setTopMargin(height)
            root.setFrameFormat(fmt)

    def sizeHint(self) -> QSize:
        width = self.width() if self.width() > 0 else 400
        return QSize(width, self.heightForWidth(width))

    def minimumSizeHint(self) -> QSize:
        return QSize(50, 20)

    def _on_size_changed(self, *_: object) -> None:
        self._probe_heights.clear()
        margins = self.contentsMargins()
        height = math.ceil(self.document().size().height()) + margins.top() + margins.bottom()
        if height != self._height:
            self._height = height
            self.updateGeometry()
            self.heightChanged.emit(height)

    # -- document patching ---------------------------------------------------------------------------------

    def _reset_state(self) -> None:
        self._phase = "answer"
        self._has_header = False
        self._n_stable = 0  # stable blocks of the active renderer already split into pieces
        self._stable_pieces = []  # their pieces (append-only, never change)
        self._base = 0  # document position where the active renderer's pieces start
        self._base_prev = ""  # HTML inserted just before them (decides how the first piece is inserted)
        self._painted: list[str] = []  # pieces now in the live document …
        self._starts: list[int] = []  # … the position where each one starts …
        self._cum: list[tuple[int, int]] = []  # … and the HTML characters and tables up to its end
        self._n_frozen = 0  # leading painted pieces that are stable (not compared again)
        self._version = -1
        self._drop_segments(0)

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
            if _segment_full(chars, tables):
                return b
        return -1

    def _seal(self) -> None:
        """The live document (all its pieces finished) becomes a sealed segment; a fresh one goes on."""
        old = self.document()
        old.documentLayout().documentSizeChanged.disconnect(self._on_size_changed)
        self.segments.seal(self._live_first, old)
        self._sealed.extend(self._painted)
        self._live_first += len(self._painted)
        self._painted = []
        self._starts = []
        self._cum = []
        self._base, self._base_prev = 0, ""
        doc = QTextDocument(self)
        set_up_document(doc, old.defaultFont())
        self.setDocument(doc)
        doc.documentLayout().documentSizeChanged.connect(self._on_size_changed)
        self._place_segments()

    def _insert_piece(self, cursor: QTextCursor, html: str, prev: str) -> None:
        """Insert one top-level block's HTML at ``cursor`` (the end of the content so far); a later reasoning
        section's content only while unfolded."""
        self._inserter.insert(cursor, break_long_runs(fold_later_thinking(html, self._later_expanded).strip()), prev)

    def _patch(self, stable: list[str], tail: list[str], dim: bool, tail_final: int = 0) -> None:
        doc = self.document()
        sel = self.textCursor()
        saved = (sel.anchor(), sel.position(), sel.selectedText()) if sel.hasSelection() else None
        self._patch_document(stable, tail, dim, tail_final)
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

    def _patch_document(self, stable: list[str], tail: list[str], dim: bool, tail_final: int = 0) -> None:
        """Make the view show ``stable + tail``: keep the painted pieces that did not change, re-insert the rest.

        Stable pieces never change, so only the pieces after the last stable one painted are compared (O(tail)).
        Pieces are numbered over the whole message: those before ``_live_first`` are in sealed segments (a
        change there, formula images or code colours arriving, re-inserts from that segment's first piece).
        While inserting, a live document that is full and holds only finished pieces is sealed: stable ones and
        the first ``tail_final`` of the tail (the renderer's ``tail_final_pieces``: an open table's row groups).
        """
        for html in stable[self._n_stable :]:
            self._stable_pieces.extend(html.split(PIECE))
        self._n_stable = len(stable)
        spieces = self._stable_pieces
        tpieces = [p for html in tail for p in html.split(PIECE)]
        n_new = len(spieces) + len(tpieces)
        n_s = len(spieces)
        n_fixed = n_s + min(tail_final, len(tpieces))

        def new(j: int) -> str:
            return spieces[j] if j < n_s else tpieces[j - n_s]

        def painted_at(j: int) -> str:
            return self._sealed[j] if j < self._live_first else self._painted[j - self._live_first]

        n_painted = self._live_first + len(self._painted)
        i = self._n_frozen
        limit = min(n_painted, n_new)
        while i < limit and painted_at(i) == new(i):
            i += 1
        self._n_frozen = n_s
        b = self._full_at() if not dim else -1
        if 0 < b < len(self._painted) and self._live_first + b <= n_fixed:
            i = min(i, self._live_first + b)    # a segment ends there: cut the live document at its end
        if i == n_painted == n_new:
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
            for j in range(i, n_new):
                html = new(j)
                if not dim and j <= n_fixed and self._cum and _segment_full(*self._cum[-1]):
                    cursor.endEditBlock()
                    self._seal()         # pieces before j are finished: they move into a segment
                    doc = self.document()
                    cursor = QTextCursor(doc)
                    cursor.beginEditBlock()
                    start = 0
                self._starts.append(cursor.position())
                self._insert_piece(cursor, html, prev)
                chars, tables = self._cum[-1] if self._cum else (0, 0)
                self._cum.append((chars + len(html), tables + html.count("<table")))
                self._painted.append(html)
                prev = html
            if dim:
                self._dim(start, cursor.position())
        finally:
            cursor.endEditBlock()

    def _dim(self, start: int, end: int) -> None:
        cursor = QTextCursor(self.document())
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        fmt = QTextCharFormat()
        fmt.setForeground(QColor(THINK_DIM))
        cursor.mergeCharFormat(fmt)

    def _rebuild(self) -> None:
        """Re-create the whole document (thinking fold toggled, phase change, set_text, late references)."""
        md = self.renderer
        self.document().clear()
        self._reset_state()
        thinking_active = md.thinking is not None and not md.thinking_done
        self._phase = "think" if thinking_active else "answer"
        cursor = QTextCursor(self.document())
        if md.thinking is not None:
            header = thinking_header_html(self._expanded, thinking_active)
            self._insert_piece(cursor, header, "")
            prev = header
            self._has_header = True
            if self._expanded and not thinking_active:
                start = cursor.position()
                thinking = md.thinking
                for block in [*thinking.stable_blocks, *thinking.tail_blocks]:
                    for html in block.split(PIECE):
                        self._insert_piece(cursor, html, prev)
                        prev = html
                self._dim(start, cursor.position())
            self._base = cursor.position()
            self._base_prev = prev
            if not self._expanded and thinking_active:
                # folded while reasoning: only the header shows; stream nothing below it yet
                self._n_stable = 0
                self._version = md.version
                return
        active = md.thinking if thinking_active else md
        assert active is not None
        self._patch(active.stable_blocks, active.tail_blocks, dim=thinking_active)
        self._version = md.version

    # -- links ---------------------------------------------------------------------------------------------

    @staticmethod
    def confirm_link(parent: QWidget, text: str, href: str) -> bool:
        """Ask before opening a link whose text names another address (``links.misleading``); default: no."""
        from PySide6.QtWidgets import QMessageBox

        box = QMessageBox(QMessageBox.Icon.Warning, QCoreApplication.translate("MarkdownView", "Open this link?"),
                          QCoreApplication.translate("MarkdownView", "The link says %1 but opens %2.\n\nOpen %2?")
                          .replace("%1", text).replace("%2", href),
                          QMessageBox.StandardButton.Open | QMessageBox.StandardButton.Cancel, parent)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        return box.exec() == QMessageBox.StandardButton.Open

    def anchor_texts(self, href: str) -> list[str]:
        """The shown texts of every link to ``href`` in the view (a link split by bold or code is one text)."""
        out: list[str] = []
        for view in self.segments.views():
            out.extend(_anchor_texts(view.document(), href))
        return out

    def viewportEvent(self, e: QEvent) -> bool:
        """A link's tooltip is the address it really opens (its text may say another)."""
        if e.type() == QEvent.Type.ToolTip and isinstance(e, QHelpEvent):
            href = self.anchorAt(e.pos())
            if href and is_safe_url(href):
                QToolTip.showText(e.globalPos(), href, self.viewport())
                return True
        return super().viewportEvent(e)

    def open_anchor(self, url: QUrl) -> None:
        """A link in the message was clicked (in the view or a sealed segment): see the module docstring."""
        scheme = url.scheme().lower()
        if is_safe_url(url.toString()):
            href = url.toString()
            lying = next((t for t in self.anchor_texts(href) if misleading(t, href)), None)
            if lying is None and misleading("", href):
                lying = href
            if lying is not None and not self.confirm_link(self, lying, href):
                return
            QDesktopServices.openUrl(url)
        elif scheme == COPY_SCHEME:
            code = self.code_for(url.path())
            if code is not None:
                QGuiApplication.clipboard().setText(code)
        elif url.toString() == LATER_TOGGLE:
            self.toggle_later_thinking()
        elif scheme == THINK_SCHEME:
            self.toggle_thinking()
        # anything else: ignored (inert)

    def setSource(self, url: QUrl, *args: object) -> None:
        """Never navigate inside the view (links go through :meth:`open_anchor`)."""


def _segment_full(chars: int, tables: int) -> bool:
    """Whether pieces of ``chars`` HTML characters and ``tables`` tables fill a segment."""
    return chars >= SEGMENT_CHARS or tables >= SEGMENT_TABLES


def _anchor_texts(doc: QTextDocument, href: str) -> list[str]:
    """The texts of every link to ``href`` in ``doc`` (a link split by bold or code is one text)."""
    out: list[str] = []
    block = doc.firstBlock()
    while block.isValid():
        run: list[str] = []
        it = block.begin()
        while not it.atEnd():
            frag = it.fragment()
            if frag.isValid() and frag.charFormat().anchorHref() == href:
                run.append(frag.text())
            elif run:
                out.append("".join(run))
                run = []
            it += 1
        if run:
            out.append("".join(run))
        block = block.next()
    return out


def warm_up() -> None:
    """Pay the view's one-time costs (monospace font and layout set-up: ~30 ms here; the math worker's matplotlib
    import) now, e.g. while a model loads, not in the first render tick of the first reply. Call on the GUI
    thread; ``app.core.render.highlight.warm_up`` does the lexers' part off it."""
    view = MarkdownView(None)
    view.resize(400, 200)
    view.append_text("Warm **up** `x` $x^2$\n\n```python\ndef f(x):\n    return x\n```\n\n| a |\n|---|\n| 1 |\n")
    view.refresh()
    view.finish()
    view.document().size()
    view.deleteLater()
    freeze_startup_heap()      # later full garbage collections skip start-up's objects (see .collector)
