"""The space between a sealed segment and the live document after it (:mod:`.segments`), as one document has it.

Qt lays the first block of a frame out at the frame's top margin (the block's own top margin is not added) and
leaves out the last block's bottom margin, and a document that opens with a table holds an empty block before
it. Stacked end to end, a cut between two paragraphs lost the space between them (12 px: the lines touched)
and a cut before a table gained an empty line (14 px); the history bench's realistic replies were 4-28 px
shorter cut than whole. So the live document starts :func:`cut_gap` below the segment's last line: the gap one
document of both has there, measured on the two pieces at the cut laid out alone and together (2-5 ms).

What lies between the cut's two blocks cancels out of the measurement: the formats of the last block of the one
piece and the first of the other make the gap, and the tags each piece ends and opens with set them. The
measurements are cached by those tags, the width and the font, for every view (a history of replies is cut
alike: tables after tables, paragraphs after paragraphs; an open paragraph that grows at the top of the live
document is measured once).
"""

from __future__ import annotations

from PySide6.QtGui import QTextCursor, QTextDocument

from app.core.render.markdown.thinking import fold_later_thinking
from app.ui.messages.rich_text import PieceInserter, break_long_runs, lead_tags, set_up_document, trail_tags

#: Measurements kept (cleared when full).
GAP_CACHE_SIZE = 512
_GAPS: dict[tuple[str, str, str, int, bool, str], float] = {}


def cut_gap(live: QTextDocument, last: str, first: str, width: int, later_expanded: bool,
            inserter: PieceInserter) -> float:
    """px from the end of the last line of the piece ``last`` (a sealed segment's last) to the top margin that
    the document ``live`` needs for its first piece ``first`` to sit where one document of both has it, laid out
    ``width`` px wide in ``live``'s font; ``later_expanded``: reasoning inside the answer shown (the view's
    ``fold_later_thinking``). ``inserter`` inserts the pieces into the scratch documents (not the view's own:
    its counters count what the view inserted)."""
    key = _key(live, last, first, width, later_expanded)
    gap = _GAPS.get(key)
    if gap is None:
        if len(_GAPS) >= GAP_CACHE_SIZE:
            _GAPS.clear()
        gap = _GAPS[key] = _measure(live, last, first, width, later_expanded, inserter)
    return gap


def cut_gap_known(live: QTextDocument, last: str, first: str, width: int, later_expanded: bool) -> bool:
    """Whether :func:`cut_gap` of these arguments is measured already (it then costs a dictionary look-up)."""
    return _key(live, last, first, width, later_expanded) in _GAPS


def _key(live: QTextDocument, last: str, first: str, width: int,
         later_expanded: bool) -> tuple[str, str, str, int, bool, str]:
    return trail_tags(last), lead_tags(last), lead_tags(first), width, later_expanded, live.defaultFont().key()


def _measure(live: QTextDocument, last: str, first: str, width: int, later_expanded: bool,
             inserter: PieceInserter) -> float:
    font, option, margin = live.defaultFont(), live.defaultTextOption(), live.documentMargin()

    def height(*pieces: str) -> float:
        doc = QTextDocument()
        set_up_document(doc, font)
        doc.setDefaultTextOption(option)
        doc.setTextWidth(width)
        cursor, prev = QTextCursor(doc), ""
        for html in pieces:
            inserter.insert(cursor, break_long_runs(fold_later_thinking(html, later_expanded).strip()), prev)
            prev = html
        return doc.size().height()

    # one document: the first piece ends height(both) - height(last) below the last one's end; stacked, it ends
    # at the live document's top margin plus its own height less both document margins
    return height(last, first) - height(last) - (height(first) - 2 * margin)
