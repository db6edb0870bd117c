"""Code colours that arrive for a piece already on screen, applied to its characters where they are.

A piece whose new HTML differs from the painted one only in its ``<span>`` tags (the lexer pool's colours, after
the piece was shown plain) has the same text and blocks: only character formats changed. Removing the document
from that piece on and inserting it again (the patch's usual way) took what followed it off the screen until it
was inserted again — a patch inserts at most ``PATCH_BUDGET_CHARS`` of HTML, and after a reply's end the next
patch comes ``MORE_DELAY_MS`` later: a 300-line code block coloured 0.1 s after the end showed 2,211 of its
21,947 characters, whole again 0.45 s later. :func:`restyle_in_place` instead reads the new HTML into a scratch
document and copies each of its fragments' character formats onto the same characters of the shown one; the
document's text and blocks never change, so nothing moves or leaves the screen.
"""

from __future__ import annotations

import re

from PySide6.QtGui import QTextCursor, QTextDocument

from app.ui.messages.rich_text import set_up_document

_SPAN = re.compile(r"</?span\b[^>]*>")
_SEPARATOR = "\u2029"          # a block's end in a document's text
_QUOTE_ENTITIES = (("&#x27;", "'"), ("&#39;", "'"), ("&quot;", '"'), ("&#34;", '"'))


def spans_only(old: str, new: str) -> bool:
    """Whether two HTML pieces differ only in their ``<span …>`` / ``</span>`` tags (character formats) and in
    how their quotes are escaped (``'`` as ``&#x27;`` or ``&#39;``, ``"`` as ``&quot;``)."""
    if old == new or "<span" not in new:     # (colours come as spans: a growing tail is rejected at once)
        return False
    a, b = _SPAN.sub("", old), _SPAN.sub("", new)
    return a == b or _quotes(a) == _quotes(b)


def _quotes(text: str) -> str:
    """``text`` with its quote entities as characters (the only escapes the lexer and the plain text write
    differently). Not ``html.unescape``: with a Python call per entity it took 7.4 ms a tick on a 26 KB tail of
    thousands of ``&gt;``."""
    for entity, char in _QUOTE_ENTITIES:
        if entity in text:
            text = text.replace(entity, char)
    return text


def restyle_in_place(cursor: QTextCursor, start: int, end: int, html: str) -> bool:
    """Give the characters of ``cursor``'s document from ``start`` to ``end`` (positions: one piece, as
    inserted) the character formats ``html`` (that piece's new HTML, as it would be inserted) gives them.

    The text ``html`` makes (in a scratch document with the same default font) must be the text in that range,
    up to the block ends before and after it; otherwise nothing is changed and False is returned (the caller
    inserts the piece again). ``cursor`` is the caller's, inside its edit block (one layout for all pieces)."""
    doc = cursor.document()
    cursor.setPosition(start)
    cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
    shown = cursor.selectedText()
    scratch = QTextDocument()
    set_up_document(scratch, doc.defaultFont())
    QTextCursor(scratch).insertHtml(html)
    text = scratch.toRawText()
    body = text.strip(_SEPARATOR)
    if not body or shown.strip(_SEPARATOR) != body:
        return False
    lo = len(text) - len(text.lstrip(_SEPARATOR))      # where the body starts in each
    shift = start + (len(shown) - len(shown.lstrip(_SEPARATOR))) - lo
    hi = lo + len(body)
    block = scratch.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            frag = it.fragment()
            p, n = frag.position(), frag.length()
            if lo <= p and p + n <= hi:
                cursor.setPosition(shift + p)
                cursor.setPosition(shift + p + n, QTextCursor.MoveMode.KeepAnchor)
                cursor.setCharFormat(frag.charFormat())
            it += 1
        block = block.next()
    return True
