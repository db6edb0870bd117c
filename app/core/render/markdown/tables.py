"""Fast path for an open top-level table that is the whole tail: each body line is parsed once.

Every body line of a table is parsed on its own (its cells depend only on the header's column count and the
delimiter row's alignments; whether it ends the table depends only on the line itself), so rows parsed this way
equal a parse of the whole table. Row groups before the last complete one can no longer change (their rows are
complete, the column widths final), so only the last groups are rendered again: O(new rows) per tick.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from markdown_it.token import Token

from app.core.render.markdown.boundaries import holds_back
from app.core.render.markdown.html import (
    PIECE,
    TABLE_GROUP_ROWS,
    TABLE_WIDTH_ROWS,
    HtmlRenderer,
    TableSlice,
    table_layout,
)
from app.core.render.markdown.parser import ParseMemo, group_blocks

#: Cells (rows × columns) past which the fast path gives up (far from markdown-it's autocomplete cap).
_MAX_CELLS = 0x8000


def split_table(tokens: list[Token]) -> tuple[list[Token], list[list[Token]], Token | None, list[Token]] | None:
    """(head tokens, body rows, tbody_open, closing tokens) of a token list that is exactly one table, else None."""
    if not tokens or tokens[0].type != "table_open" or tokens[-1].type != "table_close":
        return None
    head: list[Token] = []
    rows: list[list[Token]] = []
    i = 0
    while i < len(tokens) and tokens[i].type != "tbody_open":
        head.append(tokens[i])
        i += 1
    if i == len(tokens):
        return head[:-1], rows, None, head[-1:]
    tbody = tokens[i]
    i += 1
    while tokens[i].type == "tr_open":
        j = i
        while tokens[j].type != "tr_close":
            j += 1
        rows.append(tokens[i : j + 1])
        i = j + 1
    return head, rows, tbody, tokens[i:]


#: Lines in a table's rows (as the streaming fast path took them) or after it on which a parse of the table
#: alone may end it elsewhere than the reply's render: a ``$$`` or ``\\[`` formula, or a reasoning tag
#: (``<think>``, ``[THINK]``, harmony's ``<|``), which the reply's render splits off or reads first. The fast
#: close leaves those tables to a re-parse of the tail — when such a line comes before the first blank line after
#: the rows (a blank line ends a table, and no formula crosses one: a formula after it cannot change the table;
#: the corpus answers put one there, which sent 54 of the 116 tables of a 1 MB burst to a parse of the whole tail).
_UNSURE = re.compile(r"\$\$|\\\[|<\s*/?\s*think|\[/?THINK\]|<\|", re.IGNORECASE)


class OpenTable:
    """An open top-level table: :meth:`advance` gives its HTML for the tail's new lines, or None when the fast
    path does not apply any more (the table ended, or anything unusual: the caller re-parses the tail)."""

    def __init__(self, head: list[Token], tbody_open: Token, tail_close: list[Token], cols: int) -> None:
        self.head = head  # table_open … thead_close
        self.tbody_open = tbody_open
        self.tail_close = tail_close  # tbody_close, table_close
        self.rows: list[list[Token]] = []  # tokens (tr_open … tr_close) of each complete body line
        self.cols = cols
        self.widths: list[int] | None = None  # column widths, final once TABLE_WIDTH_ROWS rows are complete
        self.pieces: list[str] = []  # the table's HTML pieces at the last render
        # ``pieces[i] + PIECE`` for all but the last piece: the tail's parts (``tail_blocks``) while the table is
        # open, one per row group, so they join to the table's HTML and stay the same objects from tick to tick
        # (the view splits only the new ones: ``ui.messages.tail_pieces``), not one string joined at every tick
        self.parts: list[str] = []
        self._memo = ParseMemo()  # advance's parse, for close when the table ended among the new lines

    @classmethod
    def open(cls, tokens: list[Token], lines: Sequence[str], partial_shown: bool,
             html: str | None = None) -> OpenTable | None:
        """The fast path for a tail whose tokens are exactly one top-level table over all its lines, else None.

        ``html``: the table's HTML as the tail's render made it from these ``tokens``: with the column widths
        (once :data:`TABLE_WIDTH_ROWS` rows are complete) it makes the table's pieces, so a table that ends in
        the next slice is closed from them (:meth:`close`) and not parsed again: a catch-up slice of 30-70 rows
        that opened a table and the next that ended it parsed its rows three times, 15-20 ms a tick."""
        n = len(lines)
        if n < 2 or not tokens or tokens[0].type != "table_open":
            return None
        tok = tokens[0]
        if tok.map is None or tok.map[0] != 0 or tok.map[1] != n + (1 if partial_shown else 0):
            return None
        if group_blocks(tokens) != [tokens] or any("$$" in line for line in lines):
            return None
        parts = split_table(tokens)
        if parts is None:
            return None
        head, rows, tbody, close = parts
        if tbody is None:
            return None
        table = cls(head, tbody, close, sum(1 for t in head if t.type == "th_open"))
        table.rows = rows[: n - 2]  # complete body lines only (a partial last line may still change)
        if html is not None and len(table.rows) >= TABLE_WIDTH_ROWS:
            table.widths = table_layout(tokens, 0)[0]     # as advance sets them, from the same tokens
            table.pieces = html.split(PIECE)
            table.parts = [p + PIECE for p in table.pieces[:-1]]
        return table

    def advance(self, lines: Sequence[str], partial: str, references: dict[str, Any], renderer: HtmlRenderer,
                code_base: int) -> tuple[list[str], list[str]] | None:
        """``(parts, codes)`` of the table given the tail's complete ``lines`` and ``partial`` last line (parsed
        with the link ``references`` known; the parts join to its HTML), or None when the caller must re-parse
        the tail."""
        done = len(self.rows)
        new = lines[2 + done :]
        show_partial = bool(partial) and not holds_back(partial)
        if (
            any("$$" in line for line in new)
            or "$$" in partial
            or (done + len(new) + 1) * max(1, self.cols) > _MAX_CELLS
        ):
            return None
        src = lines[0] + "\n" + lines[1] + "\n" + "".join(line + "\n" for line in new)
        if show_partial:
            src += partial
        n_src = 2 + len(new) + (1 if show_partial else 0)
        tokens, _refs = self._memo.parse(src, references)
        if not tokens or tokens[0].map != [0, n_src] or group_blocks(tokens) != [tokens]:
            self._memo.keep()         # close parses the same lines (no partial line shown): these tokens
            return None
        parts = split_table(tokens)
        if parts is None:
            return None
        _head, rows, _tbody, _close = parts
        self.rows.extend(rows[: len(new)])
        shown = self.rows + rows[len(new) :]
        g = TABLE_GROUP_ROWS
        k = min(len(self.rows) // g - 1, len(self.pieces) - 1)   # the last piece of the last render may change
        if self.widths is not None and k >= 1:
            r0 = k * g
            subset = [self.head[0], self.tbody_open, *(t for r in shown[r0:] for t in r), *self.tail_close]
            sl = TableSlice(self.widths, r0, len(shown))
            htmls, codes = renderer.render_groups([subset], code_base, table_slice=sl)
            fresh = htmls[0].split(PIECE)
            self.pieces = self.pieces[:k] + fresh
            # the finished row groups as parts of their own, the same objects at every tick (see ``parts``)
            shown_parts = self.parts[:k] + [p + PIECE for p in fresh[:-1]] + fresh[-1:]
            self.parts = shown_parts[:-1]
            return shown_parts, codes
        if shown:
            all_tokens = [*self.head, self.tbody_open, *(t for r in shown for t in r), *self.tail_close]
        else:
            all_tokens = [*self.head, *self.tail_close[-1:]]
        htmls, codes = renderer.render_groups([all_tokens], code_base)
        if self.widths is None and len(self.rows) >= TABLE_WIDTH_ROWS:
            self.widths = table_layout(all_tokens, 0)[0]
        self.pieces = htmls[0].split(PIECE) if self.widths is not None else []
        self.parts = [p + PIECE for p in self.pieces[:-1]]
        return htmls, codes

    def close(self, lines: Sequence[str], references: dict[str, Any], renderer: HtmlRenderer,
              code_base: int, at_end: str | None = None) -> tuple[str, list[str], int, bool] | None:
        """The table ended among the tail's complete ``lines`` (a line that is not a row): ``(html, codes,
        n_lines, math_pending)`` of the finished table, its first ``n_lines`` lines, made from the row groups
        already rendered and the last groups (what a parse of the whole table gives, without one); None when
        it did not end there or the fast path does not know (the caller re-parses the tail).

        ``at_end``: the reply ended, and this is its last, partial line ("" if none): the table ends with the
        reply, and all the lines and that one are its rows. A parse of the whole table at the end cost 67 ms for
        500 rows, in one tick."""
        done = len(self.rows)
        new = list(lines[2 + done :])
        if at_end:
            new.append(at_end)
        # the lines that may be the table's: its rows, up to the first blank line (which ends a table, and which
        # a formula cannot cross: what comes after it cannot change the table)
        blank = None if at_end is not None else next((i for i, line in enumerate(new) if not line.strip()), None)
        mine = [*lines[2:], at_end or ""] if blank is None else lines[2 : 2 + done + blank]
        if self.widths is None or not (new or at_end is not None) or any(_UNSURE.search(line) for line in mine):
            return None
        src = lines[0] + "\n" + lines[1] + "\n" + "".join(line + "\n" for line in new)
        tokens, _refs = self._memo.parse(src, references)
        if not tokens or tokens[0].type != "table_open" or tokens[0].map is None or tokens[0].map[0] != 0:
            return None
        end = tokens[0].map[1]
        if at_end is not None:
            if end != 2 + len(new) or tokens[-1].type != "table_close":
                return None                   # something other than rows is in these lines
        elif end >= 2 + len(new) or end < 2:
            return None                       # it did not end among these lines
        groups = group_blocks(tokens)
        parts = split_table(groups[0]) if groups else None
        if parts is None:
            return None
        _head, rows, _tbody, _close = parts
        if len(rows) != end - 2:
            return None
        shown = self.rows + rows
        g = TABLE_GROUP_ROWS
        k = min(len(shown) // g - 1, len(self.pieces) - 1)
        if k < 1:
            return None
        r0 = k * g
        subset = [self.head[0], self.tbody_open, *(t for r in shown[r0:] for t in r), *self.tail_close]
        # the row count a full render gives (``table_layout`` counts the header row too: its last group has no
        # bottom margin), so the pieces are exactly the one-shot render's
        # (table_layout's count, without a walk over every row's tokens: one per row, the header's included)
        n_rows = sum(1 for t in self.head if t.type == "tr_open") + len(shown)
        htmls, codes = renderer.render_groups([subset], code_base, table_slice=TableSlice(self.widths, r0, n_rows))
        html = PIECE.join(self.pieces[:k] + htmls[0].split(PIECE))
        return html, codes, 2 + done + (end - 2), renderer.context.math_pending

