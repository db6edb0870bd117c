"""Fast path for an open top-level quote at the end of the tail: each line is parsed and rendered about once.

A long paragraph of a top-level quote is rendered as pieces of :data:`~.quote_html.QUOTE_PIECE_LINES` lines or more
(:mod:`.quote_html`: where a cut is made depends only on the lines up to the one after it). While the quote is the
last block of the tail, the pieces before its last cut are final: only the lines from that cut on are parsed
again (they start a quote whose first paragraph goes on from the cut, :class:`~.quote_html.QuoteSlice`), so a
render costs O(new lines), not O(quote). What the slice's parse cannot know gives the fast path up for one full
parse of the tail: a link reference definition in the slice, lines that may hold a ``$$`` / ``\\[`` formula or a
reasoning tag, a first block that is not the paragraph the cut was made in (a setext underline made all of it a
heading), a slice longer than :data:`_MAX_SLICE_CHARS` (no safe cut came). When the quote ends,
:meth:`OpenQuote.close` makes it a stable block from its pieces, without a parse of the whole quote.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from markdown_it.token import Token

from app.core.render.markdown.boundaries import find_boundary, holds_back, is_blank
from app.core.render.markdown.html import HtmlRenderer
from app.core.render.markdown.parser import ParseMemo, group_blocks
from app.core.render.markdown.piece import PIECE
from app.core.render.markdown.quote_html import QuoteSlice
from app.core.render.markdown.tables import _UNSURE

#: A longer slice (no safe cut came) is left to the caller, whose parse of a long tail is throttled and bounded.
_MAX_SLICE_CHARS = 4_000


def _unsure(lines: Sequence[str]) -> bool:
    return any(_UNSURE.search(line) for line in lines)


class OpenQuote:
    """An open top-level quote, the last block of the tail (the blocks before it in the tail are finished): see
    the module docstring. :meth:`advance` gives the tail's HTML for the tail's new lines, or None when the fast
    path does not apply any more (the caller re-parses the tail, then may :meth:`open` it again)."""

    def __init__(self, head: list[str], head_codes: list[str], first_line: int) -> None:
        self.head = head  # HTML of the tail's blocks before the quote (finished)
        self.head_codes = head_codes
        self.first_line = first_line  # the tail line where the quote starts
        self.pieces: list[str] = []  # final pieces of the quote
        self.codes: list[str] = []  # the raw code of the final pieces
        self.done_lines = first_line  # tail lines up to the last cut
        self.pending = False  # the last render showed code or a formula a worker pool has not delivered yet
        self._memo = ParseMemo()  # advance's parse, for close when the block ended among the new lines

    @property
    def final_pieces(self) -> int:
        """Leading pieces of the tail that are final: the blocks before the quote and the quote's final pieces."""
        return sum(h.count(PIECE) + 1 for h in self.head) + len(self.pieces)

    @classmethod
    def open(cls, tokens: list[Token], lines: Sequence[str], partial: str | None, htmls: list[str],
             codes: list[str], renderer: HtmlRenderer, refs_added: bool) -> OpenQuote | None:
        """The fast path for a tail whose last block is a top-level quote reaching its end, given the tail's
        ``tokens`` (maps relative to the tail), complete ``lines``, the ``partial`` line parsed (None if not),
        and the render just made of it (``htmls``/``codes``, the ``renderer``'s context); else None."""
        ctx = renderer.context
        groups = group_blocks(tokens)
        n = len(lines) + (partial is not None)
        if not groups or refs_added or ctx.pending or ctx.math_pending or len(htmls) != len(groups):
            return None
        first = groups[-1][0]
        if first.type != "blockquote_open" or first.map is None or first.map[1] != n or not ctx.quote_cuts:
            return None
        if _unsure(lines) or (partial is not None and _UNSURE.search(partial)):
            return None
        head_codes = codes[: ctx.code_ends[-2]] if len(groups) > 1 else []
        quote = cls(htmls[:-1], head_codes, first.map[0])
        quote._take(htmls[-1].split(PIECE), codes[len(head_codes):], ctx.quote_cuts[-1], len(head_codes))
        return quote

    def _take(self, pieces: list[str], codes: list[str], cuts: list[tuple[int, int]], code0: int) -> None:
        """Keep the pieces of a render of the quote from ``done_lines`` on that come before its last cut (``cuts``:
        (line relative to ``done_lines``, the renderer's code count less ``code0``) at each cut)."""
        if not cuts or self.pending:
            return
        line, n_codes = cuts[-1]
        self.pieces.extend(pieces[: len(cuts)])
        self.codes.extend(codes[: n_codes - code0])
        self.done_lines += line

    def _slice(self, lines: Sequence[str], partial: str | None, references: dict[str, Any]
               ) -> tuple[list[Token], int] | None:
        """Parse the tail from ``done_lines`` on; the tokens and the lines parsed, or None when the quote there
        is not this quote's continuation as a whole-quote parse would see it."""
        new = lines[self.done_lines :]
        if _unsure(new) or (partial is not None and _UNSURE.search(partial)):
            return None
        src = "".join(line + "\n" for line in new) + (partial or "")
        if len(src) > _MAX_SLICE_CHARS:
            return None
        tokens, env_refs = self._memo.parse(src, references)
        if len(env_refs) != len(references):
            return None                            # a definition in the quote: the caller's parse shares it
        if not tokens or tokens[0].type != "blockquote_open" or tokens[0].map is None or tokens[0].map[0] != 0:
            return None
        if self.done_lines > self.first_line:      # it goes on from a cut inside a paragraph
            second = tokens[1] if len(tokens) > 1 else None
            if second is None or second.type != "paragraph_open" or second.map is None or second.map[0] != 0:
                return None
        return tokens, len(new) + (partial is not None)

    def _render(self, groups: list[list[Token]], renderer: HtmlRenderer, code_base: int
                ) -> tuple[list[str], list[str], list[str], list[tuple[int, int]]]:
        """(quote pieces, codes, HTML of the other groups, cuts) of a slice's groups (the quote first)."""
        base = code_base + len(self.head_codes) + len(self.codes)
        sl = QuoteSlice() if self.done_lines > self.first_line else None
        htmls, codes = renderer.render_groups(groups, base, quote_slice=sl)
        ctx = renderer.context
        self.pending = bool(ctx.pending) or ctx.math_pending
        cuts = ctx.quote_cuts[0] if ctx.quote_cuts else []
        return htmls[0].split(PIECE), codes, htmls[1:], cuts

    def advance(self, lines: Sequence[str], partial: str, references: dict[str, Any], renderer: HtmlRenderer,
                code_base: int) -> tuple[list[str], list[str]] | None:
        """``(tail htmls, tail codes)`` given the tail's complete ``lines`` and ``partial`` last line (parsed with
        the link ``references`` known; its code numbered from ``code_base``), or None (see the class). The quote
        may have ended at a blank line: until a block after it starts on a complete line, that block (the partial
        line) is rendered here too."""
        shown = partial if partial and not holds_back(partial) else None
        parsed = self._slice(lines, shown, references)
        if parsed is None:
            return None
        tokens, _n = parsed
        new = lines[self.done_lines :]
        end = tokens[0].map[1] if tokens[0].map is not None else 0
        if any(not is_blank(line) for line in new[end:]):
            self._memo.keep()           # close parses the same lines (no partial line shown): these tokens
            return None                 # a block after it started on a complete line: :meth:`close`
        pieces, codes, rest, cuts = self._render(group_blocks(tokens), renderer, code_base)
        n_old, n_old_codes = len(self.pieces), len(self.codes)
        self._take(pieces, codes, cuts, 0)
        kept = len(self.pieces) - n_old
        tail_codes = codes[len(self.codes) - n_old_codes :]
        html = PIECE.join(self.pieces + pieces[kept:])
        return [*self.head, html, *rest], self.head_codes + self.codes + tail_codes

    def close(self, lines: Sequence[str], references: dict[str, Any], renderer: HtmlRenderer,
              code_base: int, at_end: str | None = None) -> tuple[list[str], list[str], int, bool] | None:
        """The quote ended among the tail's complete ``lines``: ``(blocks, codes, n_lines, pending)`` of the
        tail's first ``n_lines`` lines, now stable (the blocks before the quote, the quote made from its final
        pieces and its last lines, and any finished blocks after it, as a parse of those lines gives them);
        None when it did not end there or the fast path does not know (the caller re-parses the tail).

        ``at_end``: the reply ended, and this is its last, partial line ("" if none): the quote ends there, and
        all the lines and that one are stable (code colours or formulas still to come: ``pending``)."""
        parsed = self._slice(lines, at_end or None, references)
        if parsed is None:
            return None
        tokens, n_src = parsed
        new = lines[self.done_lines :]
        if at_end is not None:
            k, cut = n_src, len(tokens)
        else:
            end = tokens[0].map[1] if tokens[0].map is not None else len(new)
            k, cut = find_boundary(tokens, new)
            if k < end or end >= len(new):
                return None                        # not known to be over yet
        pieces, codes, rest, _cuts = self._render(group_blocks(tokens[:cut]), renderer, code_base)
        if renderer.context.pending and at_end is None:
            return None                            # code colours to come: such blocks wait in the tail
        blocks = [*self.head, PIECE.join(self.pieces + pieces), *rest]
        return blocks, self.head_codes + self.codes + codes, self.done_lines + k, self.pending
