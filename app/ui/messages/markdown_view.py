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
import re

from PySide6.QtCore import QCoreApplication, QEvent, QMimeData, QSize, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import (
    QColor,
    QDesktopServices,
    QFont,
    QGuiApplication,
    QHelpEvent,
    QPalette,
    QTextBlockFormat,
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
from app.ui.messages.formulas import formula_image, math_cache, text_with_tex

#: Proportional font families, with CJK fallbacks (Qt uses the first installed family that has a glyph).
UI_FONT_FAMILIES = [
    "Noto Sans",
    "Segoe UI",
    "Helvetica Neue",
    "DejaVu Sans",
    "Noto Sans CJK SC",
    "Microsoft YaHei",
    "PingFang SC",
    "Hiragino Sans GB",
    "WenQuanYi Micro Hei",
]
_DIRECT = re.compile(r"<(?:ul|ol|table)\b")

#: Qt lays a run of text with no break opportunity out in time that grows much faster than its length (a word
#: of 100,000 characters took 0.4 s, 200,000 3.3 s; with a zero-width space every 200 characters 76 and 129 ms).
#: The view gives such runs (outside tags) a break opportunity every ``RUN_BREAK_CHARS`` characters; the
#: renderer's HTML, the message's text and copied selections keep none.
RUN_BREAK_CHARS = 200
_ZWSP = "\u200b"
_LONG_RUN = re.compile(r"(<[^>]*>)|([^\s<>&]{" + str(2 * RUN_BREAK_CHARS) + r",})")


def _break_run(m: re.Match[str]) -> str:
    run = m.group(2)
    if run is None:
        return m.group(1)
    return _ZWSP.join(run[i:i + RUN_BREAK_CHARS] for i in range(0, len(run), RUN_BREAK_CHARS))


def break_long_runs(html: str) -> str:
    """``html`` with a zero-width space every ``RUN_BREAK_CHARS`` characters of any run of text without a break
    opportunity longer than twice that (tags and entities untouched)."""
    if len(html) < 2 * RUN_BREAK_CHARS:
        return html
    return _LONG_RUN.sub(_break_run, html)
_LEAD_TAGS = re.compile(r"(?:\s*<[^>]+>)+")


def height_for_width(view: QTextBrowser, width: int, probes: dict[int, int], lay_out_unset: bool = True) -> int:
    """Height (px) of a document view without a scroll bar at ``width``.

    At the width the shown document is laid out at, this is its height (Qt keeps it laid out at that width). Other
    widths, which layouts probe, are measured on a copy and cached in ``probes`` (the caller clears it when the
    document changes): laying the shown document out at a probe width would re-lay out the whole message twice
    per tick and leave layouts with stale heights (a clipped last line, a frozen window under a pasted log).
    ``lay_out_unset``: a document never laid out yet is laid out at ``width`` itself (its size signal then fires).
    """
    doc = view.document()
    margins = view.contentsMargins()
    extra = margins.top() + margins.bottom()
    text_width = max(1, width - margins.left() - margins.right())
    if doc.textWidth() == text_width or (width == view.width() and doc.textWidth() > 0 and view.isVisible()):
        return math.ceil(doc.size().height()) + extra   # Qt lays the shown document out at the view's width
    hit = probes.get(width)
    if hit is not None:
        return hit
    if doc.textWidth() <= 0 and lay_out_unset:   # never laid out yet: lay the document itself out
        doc.setTextWidth(text_width)
        return math.ceil(doc.size().height()) + extra
    probe = doc.clone()
    probe.setTextWidth(text_width)
    height = math.ceil(probe.size().height()) + extra
    if len(probes) > 8:
        probes.clear()
    probes[width] = height
    return height


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


def palette_theme(palette: QPalette | None = None) -> str:
    """``"dark"`` when the window colour's lightness is below 128 (of 255), else ``"light"``."""
    pal = palette if palette is not None else QApplication.palette()
    return "dark" if pal.color(QPalette.ColorRole.Window).lightness() < 128 else "light"


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
        font = QFont(self.font())
        font.setFamilies(UI_FONT_FAMILIES)
        self.document().setDefaultFont(font)
        self.document().setDocumentMargin(4)
        self.anchorClicked.connect(self._on_anchor)
        self.document().documentLayout().documentSizeChanged.connect(self._on_size_changed)
        self._height = -1
        self._probe_heights: dict[int, int] = {}
        self._fmt_cache: dict[str, tuple[QTextBlockFormat, QTextCharFormat]] = {}
        self._expanded = True  # thinking section shown while the model reasons
        self._later_expanded = False  # reasoning sections inside the answer: folded
        self.pieces_inserted = 0  # top-level pieces inserted into the document so far (public counter)
        self.html_chars_inserted = 0  # and their HTML length (what a refresh cost in insertHtml)
        self._user_toggled = False
        self.placeholder = False  # plain text shown until the full render (show_placeholder)
        self._catching_up = False  # a re-made streaming view renders the text so far behind its preview
        self._reset_state()
        self._version = self.renderer.version

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
        self._patch(active.stable_blocks, active.tail_blocks, dim=thinking_active)
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
        data = super().createMimeDataFromSelection()
        cursor = self.textCursor()
        text = text_with_tex(self.document(), cursor.selectionStart(), cursor.selectionEnd())
        if text is None:
            if _ZWSP not in data.text():
                return data
            text = data.text()
        text = text.replace(_ZWSP, "")          # the break opportunities the view added (break_long_runs)
        out = QMimeData()              # Qt's own computes its text from the document on demand: a fresh one
        out.setText(text)
        if data.hasHtml():
            out.setHtml(data.html())
        return out

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
        return height_for_width(self, width, self._probe_heights)

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
        self._painted: list[str] = []  # pieces now in the document …
        self._starts: list[int] = []  # … and the position where each one starts
        self._n_frozen = 0  # leading painted pieces that are stable (not compared again)
        self._version = -1

    def _block_formats(self, html: str) -> tuple[QTextBlockFormat, QTextCharFormat]:
        """Format of the first block ``html`` makes, cached by its leading tags — and by whether it makes more
        than one block: a one-line ``<pre>`` piece's first block is also its last and carries the bottom margin,
        which a multi-line piece's first line must not (a white band between code lines)."""
        m = _LEAD_TAGS.match(html)
        multi = False
        if html.startswith("<pre"):
            body = html[html.index(">") + 1 : html.rindex("</pre>")]
            body = body[1:] if body.startswith("\n") else body      # the newline a reader drops after <pre>
            multi = "\n" in (body[:-1] if body.endswith("\n") else body)
        key = (m.group(0) if m else "") + ("|multi" if multi else "")
        hit = self._fmt_cache.get(key)
        if hit is None:
            tmp = QTextDocument()
            tmp.setDefaultFont(self.document().defaultFont())
            tmp.setHtml(html)
            block = tmp.begin()
            hit = (QTextBlockFormat(block.blockFormat()), QTextCharFormat(block.charFormat()))
            self._fmt_cache[key] = hit
        return hit

    def _insert_piece(self, cursor: QTextCursor, html: str, prev: str) -> None:
        """Insert one top-level block's HTML at ``cursor`` (the end of the content so far); a later reasoning
        section's content only while unfolded."""
        html = break_long_runs(fold_later_thinking(html, self._later_expanded).strip())
        if not html:
            return
        self.pieces_inserted += 1
        self.html_chars_inserted += len(html)
        if cursor.position() == 0 and self.document().characterCount() <= 1:
            cursor.insertHtml(html)
            return
        after_table = prev.rstrip().endswith("</table>") and cursor.block().length() == 1
        if _DIRECT.match(html):
            if after_table:
                cursor.setBlockFormat(QTextBlockFormat())
            elif cursor.currentList() is not None:
                # right after a list, a list's first item would join the last item ("☐ todoplain")
                cursor.insertBlock(QTextBlockFormat(), QTextCharFormat())
            cursor.insertHtml(html)  # lists and tables start a new block by themselves
            return
        block_fmt, char_fmt = self._block_formats(html)
        if after_table:
            cursor.setBlockFormat(block_fmt)  # reuse the empty block Qt keeps after a table
        else:
            cursor.insertBlock(block_fmt, char_fmt)
        if not html.startswith("<hr"):
            cursor.insertHtml(html)

    def _patch(self, stable: list[str], tail: list[str], dim: bool) -> None:
        doc = self.document()
        sel = self.textCursor()
        saved = (sel.anchor(), sel.position(), sel.selectedText()) if sel.hasSelection() else None
        self._patch_document(stable, tail, dim)
        if saved is not None and not self.textCursor().hasSelection():
            # The selection touched the replaced tail; restore it when the same text is still there.
            anchor, pos, text = saved
            if max(anchor, pos) < doc.characterCount():
                cur = QTextCursor(doc)
                cur.setPosition(anchor)
                cur.setPosition(pos, QTextCursor.MoveMode.KeepAnchor)
                if cur.selectedText() == text:
                    self.setTextCursor(cur)

    def _patch_document(self, stable: list[str], tail: list[str], dim: bool) -> None:
        """Make the document show ``stable + tail``: keep the painted pieces that did not change, re-insert the rest.

        Stable pieces never change, so only the pieces after the last stable one painted are compared (O(tail)).
        """
        for html in stable[self._n_stable :]:
            self._stable_pieces.extend(html.split(PIECE))
        self._n_stable = len(stable)
        spieces = self._stable_pieces
        tpieces = [p for html in tail for p in html.split(PIECE)]
        n_new = len(spieces) + len(tpieces)
        painted = self._painted
        n_s = len(spieces)

        def new(j: int) -> str:
            return spieces[j] if j < n_s else tpieces[j - n_s]

        i = self._n_frozen
        limit = min(len(painted), n_new)
        while i < limit and painted[i] == new(i):
            i += 1
        self._n_frozen = n_s
        if i == len(painted) == n_new:
            return
        doc = self.document()
        start = self._starts[i] if i < len(painted) else doc.characterCount() - 1
        cursor = QTextCursor(doc)
        cursor.beginEditBlock()
        try:
            if start <= 0:
                doc.clear()  # start from a pristine first block
                cursor = QTextCursor(doc)
                start = 0
            else:
                cursor.setPosition(start)
                kept = cursor.blockFormat()   # removing the separator after this block would give it the
                cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
                cursor.removeSelectedText()
                if cursor.blockFormat() != kept:   # format of the removed block after it (a rule's margins);
                    cursor.setBlockFormat(kept)    # setting it unconditionally costs a re-layout every tick
            del painted[i:]
            del self._starts[i:]
            prev = painted[-1] if painted else self._base_prev
            for j in range(i, n_new):
                html = new(j)
                self._starts.append(cursor.position())
                self._insert_piece(cursor, html, prev)
                painted.append(html)
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
        block = self.document().firstBlock()
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

    def viewportEvent(self, e: QEvent) -> bool:
        """A link's tooltip is the address it really opens (its text may say another)."""
        if e.type() == QEvent.Type.ToolTip and isinstance(e, QHelpEvent):
            href = self.anchorAt(e.pos())
            if href and is_safe_url(href):
                QToolTip.showText(e.globalPos(), href, self.viewport())
                return True
        return super().viewportEvent(e)

    def _on_anchor(self, url: QUrl) -> None:
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
        """Never navigate inside the view (links go through :meth:`_on_anchor`)."""


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
