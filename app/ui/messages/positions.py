"""Heights and positions of the message list's rows (:mod:`.chat_view`), without widgets of its own.

- A :class:`ListItem` is one row: a message or a notice line, its heights per width (measured once with its
  widget; estimated from the text length until then: :meth:`ListItem.estimate`) and the widget showing it, if
  any.
- :class:`Positions` keeps the y of each row (content coordinates) as prefix sums of the heights it placed them
  with. A row whose height changed moves the rows after it by the difference (one list pass in C); only a change
  of the list or of the width sums every height again (:meth:`Positions.invalidate`).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from app.core.conversation import Role

if TYPE_CHECKING:
    from PySide6.QtWidgets import QWidget

    from app.core.conversation import Message

#: Space above the first row and below the last (px), and between rows; left and right of the column (px).
MARGIN_Y, SPACING, MARGIN_X = 12, 10, 16
#: Widest the message column gets (px): lines of ~90-100 characters, comfortable to read.
MAX_READING_WIDTH = 900
#: Indents that tell the two sides apart (px, at most a fifth / a tenth of the column).
USER_INDENT, REPLY_INDENT = 80, 24


@dataclass(eq=False)
class ListItem:
    """One row of the list: ``message`` or ``notice`` (its text and object name), ``heights`` (width → measured
    height, px), ``widget`` (None while the row is away from the viewport)."""

    message: Message | None = None
    notice: tuple[str, str] | None = None
    heights: dict[int, int] = field(default_factory=dict)
    widget: QWidget | None = None
    _guess: tuple[int, int] = (-1, 0)                # (width, estimated height)
    _counted: tuple[str, int] = ("", 0)              # (text, its line ends): a new width does not count again

    def estimate(self, width: int) -> int:
        """A height guess before the widget exists (px): ~8 px per character, 19 px a line, plus the header. A
        saved message not read yet is estimated from its stored size (``Message.stored_shape``: nothing is read)."""
        if self._guess[0] == width:
            return self._guess[1]
        per_line = max(20, width // 8)
        shape = self.message.stored_shape() if self.message is not None else None
        if shape is not None:
            chars, ends = shape
        else:
            text = self.message.text if self.message is not None else (self.notice or ("", ""))[0]
            if self._counted[0] is not text:
                self._counted = (text, text.count("\n"))
            chars, ends = len(text), self._counted[1]
        # the text's lines plus its wrapped lines, counted in C (a per-line loop cost 0.3 s for 1,000 replies)
        lines = ends + 1 + chars // per_line if chars else 1
        guess = 40 + 19 * lines
        self._guess = (width, guess)
        return guess

    def height(self, width: int) -> int:
        """The row's height at ``width`` (px): measured on its widget (and kept), else :meth:`estimate`."""
        h = self.heights.get(width)
        if h is not None:
            return h
        w = self.widget
        if w is None:
            return self.estimate(width)
        h = max(1, w.heightForWidth(width)) if w.hasHeightForWidth() else w.sizeHint().height()
        if len(self.heights) > 6:
            self.heights.clear()
        self.heights[width] = h
        return h


def column(viewport_width: int) -> tuple[int, int]:
    """x and width (px) of the message column in a viewport ``viewport_width`` wide: centred, at most
    ``MAX_READING_WIDTH``, at least 60."""
    width = max(60, min(MAX_READING_WIDTH, viewport_width - 2 * MARGIN_X))
    return max(0, (viewport_width - width) // 2), width


def row_box(it: ListItem, col: tuple[int, int]) -> tuple[int, int]:
    """x and width (px) of row ``it`` in the column ``col`` (x, width): the user's messages indented on the left,
    replies on the right, notices the whole column."""
    x, width = col
    if it.message is None:
        return x, width
    if it.message.role is Role.USER:
        indent = min(USER_INDENT, width // 5)
        return x + indent, width - indent
    return x, width - min(REPLY_INDENT, width // 10)


def heights_in(col: tuple[int, int]) -> Callable[[ListItem], int]:
    """``row → its height`` (px, :meth:`ListItem.height`) at its width in the column ``col`` (x, width): each
    kind of row's width (:func:`row_box`) worked out once, and a known height or estimate read without a call
    (placing the 2,000 rows of a 1,000-pair chat cost ~10 ms in calls alone)."""
    width = col[1]
    user_w = width - min(USER_INDENT, width // 5)
    reply_w = width - min(REPLY_INDENT, width // 10)
    user = Role.USER

    def height(it: ListItem) -> int:
        m = it.message
        w = width if m is None else (user_w if m.role is user else reply_w)
        h = it.heights.get(w)
        if h is not None:
            return h
        if it.widget is None:
            if it._guess[0] == w:
                return it._guess[1]
            shape = m.stored_shape() if m is not None else None
            if shape is not None:    # a saved message not read yet (:meth:`ListItem.estimate`, without the calls)
                guess = 40 + 19 * (shape[1] + 1 + shape[0] // max(20, w // 8) if shape[0] else 1)
                it._guess = (w, guess)
                return guess
        return it.height(w)

    return height


class Positions:
    """The y of each row (``tops``, px, content coordinates) and the height each was placed with (``placed``).

    ``tops[:valid]`` are up to date but for the rows in ``dirty`` (their height may have changed since)."""

    def __init__(self) -> None:
        self.tops: list[int] = []
        self.placed: list[int] = []
        self.valid = 0
        self.dirty: set[int] = set()

    def invalidate(self, first: int = 0) -> None:
        """Rows from ``first`` on (a row added or removed there; 0: a new width) are placed again."""
        self.valid = min(self.valid, first)

    def update(self, items: Sequence[ListItem], height: Callable[[ListItem], int]) -> int:
        """Place the rows whose position is stale; ``height(item)`` gives a row's height at the column's width.
        Returns the content height (px; 0 for no rows)."""
        tops, placed = self.tops, self.placed
        valid = min(self.valid, len(items))
        del tops[valid:]
        del placed[valid:]
        for i in sorted(self.dirty):
            if i >= valid:
                break
            d = height(items[i]) - placed[i]
            if d:
                placed[i] += d
                tops[i + 1:] = [t + d for t in tops[i + 1:]]
        self.dirty.clear()
        y = tops[-1] + placed[-1] + SPACING if tops else MARGIN_Y
        for it in items[valid:]:
            h = height(it)
            tops.append(y)
            placed.append(h)
            y += h + SPACING
        self.valid = len(tops)
        if not items:
            return 0
        return tops[-1] + placed[-1] + MARGIN_Y

    def index_at(self, y: int) -> int:
        """The row at content height ``y`` (the last one starting at or above it; 0 when there is none)."""
        return max(0, bisect.bisect_right(self.tops, y) - 1)

    def span(self, lo: int, hi: int, count: int) -> tuple[int, int]:
        """Indexes ``[first, last)`` of the rows that reach into ``[lo, hi]`` (px), at most ``count``."""
        return self.index_at(lo), min(count, bisect.bisect_right(self.tops, hi))


class ShownRows:
    """The rows of a list that have a widget now, found in O(widgets), not O(rows): a scroll step's layout asks
    several times, and a 1,000-pair chat has 2,000 rows (a relayout at rest took 0.197 ms at 1,000 pairs and
    1.395 ms at 5,000 walking every row; 0.03 ms at both this way). The index of every row is made again only
    after rows were added or removed (:meth:`changed`)."""

    def __init__(self) -> None:
        self._shown: dict[int, ListItem] = {}        # id → the rows given a widget (some may have lost it since)
        self._row_of: dict[int, int] | None = None   # id(row) → its index in the list (None: made when asked)

    def add(self, row: ListItem) -> None:
        """``row`` was given a widget."""
        self._shown[id(row)] = row

    def changed(self) -> None:
        """The list gained or lost rows."""
        self._row_of = None

    def rows(self, items: Sequence[ListItem]) -> list[tuple[int, ListItem]]:
        """``(index, row)`` of the rows of ``items`` that have a widget now, in list order."""
        if self._row_of is None:
            self._row_of = {id(it): i for i, it in enumerate(items)}
        rows = []
        for key, it in list(self._shown.items()):
            i = self._row_of.get(key)
            if it.widget is None or i is None or items[i] is not it:
                del self._shown[key]             # dropped (or parked) since, or no longer in the list
                continue
            rows.append((i, it))
        rows.sort(key=lambda row: row[0])
        return rows
