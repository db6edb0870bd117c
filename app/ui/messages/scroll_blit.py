"""A streaming reply that grows at the bottom of the message list scrolls the screen by a blit, not a repaint.

While the list sticks to its bottom, every new line of the reply at its end makes the layout move every row on
screen up by the line's height; Qt repaints a moved widget whole, so each such frame repainted the whole
viewport — in the render bench's window at 1,000 tokens/s (``python -m app.bench render``, 2-core machine), 93 %
of the frames. :func:`blit_shift`, called by the layout before it places the rows, scrolls the viewport's pixels
and children by the difference when every row on screen moves by the same amount (``QWidget.scroll``: the
backing store copies them; only the strip it uncovers is painted), so placing them moves nothing and only what
changed is painted (the reply's widget and its view keep static contents: ``MessageWidget``; the live document
repaints from its first changed block: :mod:`.repaint`). Measured, same bench at 1,000 tokens/s, main-thread CPU
of the window's paints: median 4.8-4.9 → 2.3-2.6 ms a frame, p90 8.5-8.6 → 3.5-4.2 ms, the whole stream's
6.4 → 3.2-3.5 s.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtWidgets import QWidget


def blit_shift(viewport: QWidget, rows: Iterable[tuple[QWidget, int]], shift: int) -> bool:
    """Before the layout places ``rows`` (each a widget on ``viewport`` and the y it goes to, px), the content
    moved up by ``shift`` px (the scroll bar's change): when every widget goes to its y now less ``shift`` — a
    pure scroll — scroll the viewport by it, so the placing moves nothing. Returns whether it scrolled."""
    if shift == 0 or abs(shift) >= viewport.height():
        return False
    rows = list(rows)
    if not rows or any(w.y() - shift != y for w, y in rows):
        return False
    viewport.scroll(0, -shift)
    return True
