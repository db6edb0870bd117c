"""Rich text in a Qt document, shared by a message's views (:mod:`.markdown_view`, :mod:`.segments`): fonts, break
opportunities in long runs, heights per width, how one piece of the renderer's HTML is inserted, the copied
selection's text.

A block's HTML is inserted with the same procedure (:class:`PieceInserter`) whether it streams in or a finished
message is loaded, so both give the same document.
"""

from __future__ import annotations

import math
import re

from PySide6.QtCore import QMimeData
from PySide6.QtGui import QFont, QPalette, QTextBlockFormat, QTextCharFormat, QTextCursor, QTextDocument
from PySide6.QtWidgets import QApplication, QTextBrowser

from app.ui.messages.formulas import text_with_tex

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

#: Qt lays a run of text with no break opportunity out in time that grows much faster than its length (a word
#: of 100,000 characters took 0.4 s, 200,000 3.3 s; with a zero-width space every 200 characters 76 and 129 ms).
#: The view gives such runs (outside tags) a break opportunity every ``RUN_BREAK_CHARS`` characters; the
#: renderer's HTML, the message's text and copied selections keep none.
RUN_BREAK_CHARS = 200
ZWSP = "\u200b"
_LONG_RUN = re.compile(r"(<[^>]*>)|([^\s<>&]{" + str(2 * RUN_BREAK_CHARS) + r",})")


def _break_run(m: re.Match[str]) -> str:
    run = m.group(2)
    if run is None:
        return m.group(1)
    return ZWSP.join(run[i:i + RUN_BREAK_CHARS] for i in range(0, len(run), RUN_BREAK_CHARS))


#: Qt lays a block (a paragraph) out whole on any change to it, so an open paragraph that grows to hundreds of
#: kilobytes (one 500,000-character word streamed) cost that much every time it grew. A paragraph's HTML longer
#: than this is shown as several blocks (:func:`view_pieces`): each a sub-piece of about this many characters,
#: cut before a space (or inside a run that :func:`break_long_runs` breaks anyway) where no inline element is
#: open, so a growing paragraph re-inserts its last sub-pieces only. Each continuation block starts with
#: :data:`JOIN` (a word joiner: no width, no break), which the view's text drops with the block end before it
#: (:func:`joined`): the text, a copy and the renderer's HTML are those of one paragraph.
PARAGRAPH_PIECE_CHARS = 4_000
JOIN = "\u2060"
_INLINE = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9]*)\b[^>]*?(/?)>|&[#a-zA-Z0-9]+;|[^<&]+")
_VOID = frozenset({"br", "img", "hr", "input", "wbr"})
_SPACE = re.compile(r"\s")
_P_FIRST = '<p style="margin-bottom:0">'
_P_MIDDLE = '<p style="margin-top:0;margin-bottom:0">' + JOIN
_P_LAST = '<p style="margin-top:0">' + JOIN


#: How far past the place it would cut a paragraph the view looks for a whitespace to cut before (characters):
#: finding none there inside one run of text, it cuts at that place (the run is one :func:`break_long_runs`
#: breaks). A bounded look makes each cut depend on the text before it and at most this far after it, so a
#: paragraph that grows keeps its cuts (looking to the run's end, a 500,000-character word cut every 4,000
#: characters lost all its cuts to one space after it).
CUT_LOOK_CHARS = 2 * RUN_BREAK_CHARS
#: Inside one run of text without a whitespace character (a 500,000-character word, a base64 blob) from the last
#: cut on, a paragraph is cut every this many characters, not every :data:`PARAGRAPH_PIECE_CHARS`: such a run's
#: lines are broken anywhere anyway, and a streamed run grows its last sub-piece, which Qt lays out again whole at
#: every refresh (at 4,000, a re-layout of 2,000 characters on average: the render bench's long word fell 2-3 %
#: behind its producer at 100,000 characters a second on a slow day; at 1,000 its main-thread CPU was 12 % less
#: and it kept up).
RUN_PIECE_CHARS = 1_000
#: The paragraphs cut last (``(body, size, cuts, pieces)``, newest last; ``pieces``: sub-pieces of its start, up to
#: at most its last cut): a body that extends one of them is scanned from that one's last cut on, not from its
#: start, and its sub-pieces up to that cut are those (the same strings), built only from there (a streamed
#: paragraph grows at its end; scanning a 500,000-character word whole at each refresh cost ~5 ms, building all
#: 500 of its sub-pieces ~1 ms).
_RECENT: list[tuple[str, int, list[int], list[str]]] = []
RECENT_PARAGRAPHS = 4


def _paragraph_cuts(body: str, size: int) -> list[int]:
    """Positions in ``body`` (a paragraph's inner HTML) to cut it at: about every ``size`` characters, outside
    tags and entities and where no inline element is open, before the first whitespace character within
    :data:`CUT_LOOK_CHARS`, or where that many characters of one run of text without one follow; while one such
    run goes on since the last cut (or the paragraph's start), every :data:`RUN_PIECE_CHARS` (at most ``size``).
    Each cut depends only on the text before it and just after it, so a paragraph that grows keeps its earlier
    cuts, and a body that extends one cut recently (:data:`_RECENT`) is scanned from that one's last cut (the
    same cuts: tested against a whole scan)."""
    cuts, pieces = _cut(body, size)
    _remember(body, size, cuts, pieces)
    return cuts


def _cut(body: str, size: int) -> tuple[list[int], list[str]]:
    """:func:`_paragraph_cuts` of ``body``, and the sub-pieces before the last cut of the recent paragraph that it
    extends (taken out of :data:`_RECENT`; none where it extends none)."""
    for k, (old, old_size, old_cuts, old_pieces) in enumerate(_RECENT):
        if old_size == size and len(body) >= len(old) and body.startswith(old):
            del _RECENT[k]
            # its cuts are kept as it grows: so are the sub-pieces before its last cut
            return _scan_cuts(body, size, list(old_cuts)), old_pieces[:len(old_cuts)]
    return _scan_cuts(body, size, []), []


def _remember(body: str, size: int, cuts: list[int], pieces: list[str]) -> None:
    _RECENT.append((body, size, cuts, pieces))
    del _RECENT[:-RECENT_PARAGRAPHS]


def _scan_cuts(body: str, size: int, cuts: list[int]) -> list[int]:
    """:func:`_paragraph_cuts` of ``body``, scanned from the last of ``cuts`` (its earlier cuts) on."""
    last = cuts[-1] if cuts else 0
    run = min(size, RUN_PIECE_CHARS)
    depth = 0
    for m in _INLINE.finditer(body, last):       # a cut is inside a run of text: the scan resumes in that run
        tag = m.group(2)
        if tag is not None:
            if tag.lower() not in _VOID and not m.group(3):
                depth = max(0, depth - 1) if m.group(1) else depth + 1
            continue
        if depth or body[m.start()] == "&":
            continue
        start, end = m.start(), m.end()
        while True:
            ahead = last + run + CUT_LOOK_CHARS
            if last >= start and ahead <= end and _SPACE.search(body, last, ahead) is None:
                cut = last + run                            # one run of text since the last cut: a short piece
            else:
                pos = max(start, last + size)
                if pos >= end:
                    break
                ws = _SPACE.search(body, pos, min(end, pos + CUT_LOOK_CHARS))
                if ws is not None:
                    cut = ws.start()
                elif pos + CUT_LOOK_CHARS <= end:
                    cut = pos                               # inside a long run of text
                else:
                    break                                   # the run ends soon: look in the next one
            cuts.append(cut)
            last = cut
    return cuts


def split_paragraph(html: str, size: int = PARAGRAPH_PIECE_CHARS) -> list[str]:
    """``html`` (one piece) as the pieces the view inserts: itself, or for a paragraph (``<p>…</p>``) longer than
    ``size`` characters its sub-pieces (see :data:`PARAGRAPH_PIECE_CHARS`)."""
    if len(html) <= size or not html.startswith("<p>"):
        return [html]
    stripped = html.rstrip()
    if not stripped.endswith("</p>"):
        return [html]
    body = stripped[3:-4]
    if "<p" in body:
        return [html]
    cuts, out = _cut(body, size)
    if not cuts:
        _remember(body, size, cuts, out)
        return [html]
    bounds = [0, *cuts, len(body)]
    for k in range(len(out), len(bounds) - 1):
        head = _P_FIRST if k == 0 else _P_LAST if k == len(bounds) - 2 else _P_MIDDLE
        out.append(head + body[bounds[k]:bounds[k + 1]] + "</p>\n")
    _remember(body, size, cuts, out)
    return list(out)


def view_pieces(block: str, piece: str) -> list[str]:
    """A block's HTML (pieces separated by ``piece``) as the pieces the view inserts (:func:`split_paragraph`)."""
    pieces = block.split(piece)
    if len(pieces) > 1 and not pieces[-1]:
        pieces.pop()           # a tail part that ends with the separator: an open table's row group
    return [sub for p in pieces for sub in split_paragraph(p)]


def joined(text: str) -> str:
    """A view's plain text without the block ends that :func:`split_paragraph` added (``\\n`` or U+2029, then
    :data:`JOIN`)."""
    if JOIN not in text:
        return text
    return text.replace("\n" + JOIN, "").replace("\u2029" + JOIN, "").replace(JOIN, "")


def break_long_runs(html: str) -> str:
    """``html`` with a zero-width space every ``RUN_BREAK_CHARS`` characters of any run of text without a break
    opportunity longer than twice that (tags and entities untouched)."""
    if len(html) < 2 * RUN_BREAK_CHARS or max(map(len, html.split()), default=0) < 2 * RUN_BREAK_CHARS:
        return html          # no word that long, so no such run: the substitution (a call per tag) is skipped
    return _LONG_RUN.sub(_break_run, html)


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


def palette_theme(palette: QPalette | None = None) -> str:
    """``"dark"`` when the window colour's lightness is below 128 (of 255), else ``"light"``."""
    pal = palette if palette is not None else QApplication.palette()
    return "dark" if pal.color(QPalette.ColorRole.Window).lightness() < 128 else "light"


def set_up_document(doc: QTextDocument, font: QFont) -> None:
    """A message document's settings: ``font`` with the UI families, a 4 px margin, no undo history (a view is
    read-only: the undo stack would keep every patch, and the text of every removed piece, for nothing)."""
    font = QFont(font)
    font.setFamilies(UI_FONT_FAMILIES)
    doc.setDefaultFont(font)
    doc.setDocumentMargin(4)
    doc.setUndoRedoEnabled(False)


def selection_mime(view: QTextBrowser, data: QMimeData) -> QMimeData:
    """``data`` (Qt's own copy of ``view``'s selection) with each formula's TeX where the document holds its
    image (Qt's text has an object character there) and without the break opportunities the view added
    (:func:`break_long_runs`)."""
    cursor = view.textCursor()
    text = text_with_tex(view.document(), cursor.selectionStart(), cursor.selectionEnd())
    if text is None:
        if ZWSP not in data.text() and JOIN not in data.text():
            return data
        text = data.text()
    text = joined(text).replace(ZWSP, "")
    out = QMimeData()              # Qt's own computes its text from the document on demand: a fresh one
    out.setText(text)
    if data.hasHtml():
        out.setHtml(data.html())
    return out


_DIRECT = re.compile(r"<(?:ul|ol|table)\b")
_LIST_GOES_ON = re.compile(r"<(?:ul|ol)\b[^>]*margin-top:0")
_LEAD_TAGS = re.compile(r"(?:\s*<[^>]+>)+")


_TRAIL_TAGS = re.compile(r"(?:<[^>]+>\s*)+$")


def lead_tags(html: str) -> str:
    """The tags ``html`` opens with (what sets the format of the first block it makes)."""
    m = _LEAD_TAGS.match(html)
    return m.group(0) if m else ""


def trail_tags(html: str) -> str:
    """The tags ``html`` ends with (what closes the last block it makes)."""
    m = _TRAIL_TAGS.search(html[-400:])
    return m.group(0) if m else ""


class PieceInserter:
    """Inserts one piece of a block's HTML at the end of a message's document (see :meth:`insert`), with the
    block formats of the pieces it met cached by their leading tags. ``pieces_inserted`` and
    ``html_chars_inserted`` count what it inserted (what a refresh cost in ``insertHtml``)."""

    def __init__(self) -> None:
        self._fmt_cache: dict[str, tuple[QTextBlockFormat, QTextCharFormat]] = {}
        self.pieces_inserted = 0
        self.html_chars_inserted = 0

    def block_formats(self, doc: QTextDocument, html: str) -> tuple[QTextBlockFormat, QTextCharFormat]:
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
            tmp.setDefaultFont(doc.defaultFont())
            tmp.setHtml(html)
            block = tmp.begin()
            hit = (QTextBlockFormat(block.blockFormat()), QTextCharFormat(block.charFormat()))
            self._fmt_cache[key] = hit
        return hit

    def insert(self, cursor: QTextCursor, html: str, prev: str) -> None:
        """Insert ``html`` (one piece, already folded and with break opportunities) at ``cursor``, the end of the
        content so far; ``prev`` is the piece before it ("" at the start of the document)."""
        if not html:
            return
        self.pieces_inserted += 1
        self.html_chars_inserted += len(html)
        doc = cursor.document()
        if cursor.position() == 0 and doc.characterCount() <= 1:
            cursor.insertHtml(html)
            return
        after_table = prev.rstrip().endswith("</table>") and cursor.block().length() == 1
        if _DIRECT.match(html):
            if after_table:
                cursor.setBlockFormat(QTextBlockFormat())
            elif cursor.currentList() is not None:
                # right after a list, a list's first item would join the last item ("☐ todoplain")
                cursor.insertBlock(QTextBlockFormat(), QTextCharFormat())
                if _LIST_GOES_ON.match(html):
                    # the next group of a long list (its pieces, see ``list_html``): no empty block between
                    empty = cursor.position()
                    cursor.insertHtml(html)
                    join = QTextCursor(doc)
                    join.setPosition(empty)
                    join.deleteChar()
                    return
            cursor.insertHtml(html)  # lists and tables start a new block by themselves
            return
        block_fmt, char_fmt = self.block_formats(doc, html)
        if after_table:
            cursor.setBlockFormat(block_fmt)  # reuse the empty block Qt keeps after a table
        else:
            cursor.insertBlock(block_fmt, char_fmt)
        if not html.startswith("<hr"):
            cursor.insertHtml(html)
