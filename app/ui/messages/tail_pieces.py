"""The view's pieces of a renderer's open tail, split again only where the tail changed.

A tail's parts (``tail_blocks``) are split at ``PIECE`` and each piece into the pieces the view inserts
(``rich_text.split_paragraph``). An open table gives each finished row group as a part of its own, the same
string object from tick to tick (``tables.OpenTable``; an open fence's groups of lines likewise, ``fences``), so
the parts up to the first that is not the same as at the last patch need not be split again: the view's pieces
then cost O(new rows) per tick, not O(rows). Before, a
2,000-row table's tail was joined, split and walked whole at every tick (the renderer's part grew from 1.35 to
3.4 ms a tick between row 150 and row 3,500 on this machine).
"""

from __future__ import annotations

from collections.abc import Sequence

from app.core.render.markdown.piece import block_pieces
from app.ui.messages.rich_text import split_paragraph


class TailPieces:
    """:meth:`split` of successive tails, keeping what the parts shared with the last tail gave."""

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        self._parts: list[str] = []
        self._pieces: list[str] = []          # the view's pieces of those parts
        self._cum: list[int] = [0]            # view pieces before each renderer piece (and after the last)
        self._ends: list[tuple[int, int]] = []  # per part: (renderer pieces, view pieces) up to its end
        self.same = 0                         # view pieces of the last split that the one before gave too

    def split(self, tail: Sequence[str], tail_final: int) -> tuple[list[str], int]:
        """``(pieces, n_final)``: the view's pieces of ``tail`` and how many of the first are final — those of
        the first ``tail_final`` renderer pieces, and of a long open paragraph last all but its last two sub-
        pieces when everything before it is final. :attr:`same` is set to the number of leading pieces equal
        to the last call's."""
        m = min(len(tail), len(self._parts)) - 1      # the last part shared is usually the one that grew
        if m <= 0:
            m = 0
        elif list(tail[:m]) != self._parts[:m]:      # the same objects mostly: compared by identity first
            old = self._parts
            k = 0
            while k < m and (tail[k] is old[k] or tail[k] == old[k]):
                k += 1
            m = k                                    # the parts up to the first that changed are kept
        n_r, n_v = self._ends[m - 1] if m else (0, 0)
        pieces = self._pieces[:n_v]
        cum = self._cum[: n_r + 1]
        ends = self._ends[:m]
        for part in tail[m:]:
            for piece in block_pieces(part):
                pieces.extend(split_paragraph(piece))
                cum.append(len(pieces))
            ends.append((len(cum) - 1, len(pieces)))
        self._parts, self._pieces, self._cum, self._ends = list(tail), pieces, cum, ends
        self.same = n_v
        n = len(cum) - 1
        if tail_final >= n:
            return pieces, cum[n]
        last = cum[n] - cum[n - 1]
        if tail_final == n - 1 and last > 2:
            return pieces, cum[n - 1] + last - 2
        return pieces, cum[tail_final]
