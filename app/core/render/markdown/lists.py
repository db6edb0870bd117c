"""Fast path for an open top-level list at the end of the tail: each item is parsed and rendered about once.

A long top-level list is rendered as pieces of :data:`~.list_html.LIST_GROUP_ITEMS` items (:mod:`.list_html`).
A top-level item is finished once the next item has started on a complete line (CommonMark closes a list item at
the first line indented less than its content that is not a lazy paragraph line, and a new item is such a line),
so its tokens no longer change — except through what the whole list shares, which is checked on every parse:

* *tight or loose*: a blank line between two items, or between two blocks of an item, makes every item's
  paragraphs ``<p>`` (a loose list). A tight list that turns loose gives up the fast path: the caller re-parses
  the tail once (every piece changes) and the fast path opens again on the loose list, whose later items are
  then rendered loose whatever their own lines say;
* *task list*: one task item takes every item's bullet away (an item that is the first task of a list also
  gives up the fast path once);
* *the first number* of an ordered list (each later piece starts where the one before ended);
* link reference definitions inside the list and lines that may hold a ``$$`` / ``\\[`` formula or a reasoning
  tag (those rules look past the list's lines) are left to the caller's full parse.

So while a list streams only its last group of items (and the lines that arrived) is parsed and rendered again,
and the groups before it are final pieces: O(new items) per render, not O(list). When the list ends,
:meth:`OpenList.close` makes the finished list a stable block from those pieces, without a parse of the whole list.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from markdown_it.token import Token

from app.core.render.markdown.boundaries import find_boundary, holds_back
from app.core.render.markdown.html import HtmlRenderer
from app.core.render.markdown.list_html import LIST_GROUP_ITEMS, ListSlice, is_task_list
from app.core.render.markdown.parser import ParseMemo, group_blocks
from app.core.render.markdown.piece import PIECE
from app.core.render.markdown.tables import _UNSURE

_LIST_OPENS = ("bullet_list_open", "ordered_list_open")
#: A longer slice (a long last item) is left to the caller, whose parse of a long tail is throttled and bounded.
_MAX_SLICE_CHARS = 4_000


@dataclass
class _Facts:
    """What one parse says about a top-level list (its tokens first in the parse)."""

    tag: str
    markup: str
    task: bool
    tight: bool | None  # None: no item has a paragraph of its own, so the parse does not tell
    starts: list[int]  # the first line of each item (relative to the parse)
    end: int  # the line after the list


def _facts(tokens: Sequence[Token]) -> _Facts | None:
    """Facts of the top-level list opened by ``tokens[0]``, or None if it is not one."""
    first = tokens[0] if tokens else None
    if first is None or first.type not in _LIST_OPENS or first.level != 0 or first.map is None:
        return None
    starts: list[int] = []
    markup = ""
    tight: bool | None = None
    for tok in tokens[1:]:
        if tok.level == 0:
            break
        if tok.type == "list_item_open" and tok.level == 1 and tok.map is not None:
            starts.append(tok.map[0])
            markup = markup or tok.markup
        elif tok.type == "paragraph_open" and tok.level == 2 and tight is None:
            tight = tok.hidden
    return _Facts(first.tag, markup, is_task_list(first), tight, starts, first.map[1])


def _loosen(tokens: Sequence[Token]) -> None:
    """Show the items' own paragraphs as ``<p>`` (the list they belong to is loose)."""
    for tok in tokens:
        if tok.type in ("paragraph_open", "paragraph_close") and tok.level == 2:
            tok.hidden = False


def _unsure(lines: Sequence[str]) -> bool:
    return any(_UNSURE.search(line) for line in lines)


class OpenList:
    """An open top-level list, the last block of the tail (the blocks before it in the tail are finished): see
    the module docstring. :meth:`advance` gives the tail's HTML for the tail's new lines, or None when the fast
    path does not apply any more (the caller re-parses the tail, then may :meth:`open` it again)."""

    def __init__(self, head: list[str], head_codes: list[str], first_line: int, facts: _Facts) -> None:
        self.head = head  # HTML of the tail's blocks before the list (finished)
        self.head_codes = head_codes
        self.first_line = first_line  # the tail line where the list starts
        self.tag, self.markup, self.task = facts.tag, facts.markup, facts.task
        self.tight = bool(facts.tight)
        self.start = 1
        self.pieces: list[str] = []  # final pieces of the list: groups of LIST_GROUP_ITEMS items
        self.codes: list[str] = []  # the raw code of the final pieces
        self.done_lines = first_line  # tail lines up to the end of the final pieces
        self.done_items = 0
        self.pending = False  # the last render showed code or a formula a worker pool has not delivered yet
        self._memo = ParseMemo()  # advance's parse, for close when the block ended among the new lines

    @property
    def final_pieces(self) -> int:
        """Leading pieces of the tail that are final: the blocks before the list and the list's final groups."""
        return sum(h.count(PIECE) + 1 for h in self.head) + len(self.pieces)

    @classmethod
    def open(cls, tokens: list[Token], lines: Sequence[str], partial: str | None, htmls: list[str],
             codes: list[str], renderer: HtmlRenderer, refs_added: bool) -> OpenList | None:
        """The fast path for a tail whose last block is a top-level list reaching its end, given the tail's
        ``tokens`` (maps relative to the tail), complete ``lines``, the ``partial`` line parsed (None if not),
        and the render just made of it (``htmls``/``codes``, the ``renderer``'s context); else None."""
        ctx = renderer.context
        groups = group_blocks(tokens)
        n = len(lines) + (partial is not None)
        if not groups or refs_added or ctx.pending or ctx.math_pending or len(htmls) != len(groups):
            return None
        facts = _facts(groups[-1])
        if facts is None or facts.tight is None or not facts.starts or facts.end != n:
            return None
        if _unsure(lines) or (partial is not None and _UNSURE.search(partial)):
            return None
        first_line = groups[-1][0].map[0] if groups[-1][0].map is not None else 0
        head_codes = codes[: ctx.code_ends[-2]] if len(groups) > 1 else []
        lst = cls(htmls[:-1], head_codes, first_line, facts)
        start = groups[-1][0].attrGet("start") if facts.tag == "ol" else None
        lst.start = int(start) if start is not None else 1
        # (the items' maps may still count from where the tail began before its stable blocks were cut off:
        # the first item starts on the list's first line)
        lst._take(htmls[-1].split(PIECE), codes[len(head_codes):], ctx.list_cuts[-1], len(head_codes),
                  [s - facts.starts[0] for s in facts.starts], len(lines) - first_line)
        return lst

    def _take(self, pieces: list[str], codes: list[str], cuts: list[int], code0: int, starts: list[int],
              n_complete: int) -> int:
        """Keep the pieces of a render of the list from item ``done_items`` on that are final: every group but
        the last whose next group starts on a complete line (``starts``: item lines relative to ``done_lines``;
        ``cuts``: the renderer's code count at each cut, less ``code0``). Returns how many were kept."""
        k = LIST_GROUP_ITEMS
        final = 0
        while (final + 1) * k < len(starts) and starts[(final + 1) * k] < n_complete and final + 1 < len(pieces):
            final += 1
        if final:
            self.pieces.extend(pieces[:final])
            self.codes.extend(codes[: cuts[final - 1] - code0])
            self.done_items += final * k
            self.done_lines += starts[final * k]
        return final

    def _slice(self, lines: Sequence[str], partial: str | None, references: dict[str, Any]
               ) -> tuple[list[Token], _Facts, int] | None:
        """Parse the tail from ``done_lines`` on; the tokens, the list's facts and the lines parsed, or None when
        the list there is not this list's continuation as a whole-list parse would see it."""
        new = lines[self.done_lines :]
        if _unsure(new) or (partial is not None and _UNSURE.search(partial)):
            return None
        src = "".join(line + "\n" for line in new) + (partial or "")
        if len(src) > _MAX_SLICE_CHARS:
            return None
        n_src = len(new) + (partial is not None)
        tokens, env_refs = self._memo.parse(src, references)
        if len(env_refs) != len(references):
            return None                            # a definition in the list: the caller's parse shares it
        facts = _facts(tokens)
        if facts is None or facts.tag != self.tag or facts.markup != self.markup or not facts.starts:
            return None
        if facts.starts[0] != 0:
            return None
        if facts.task and not self.task:
            return None                            # the first task item: every item loses its bullet
        # (a blank line between the last final item and the next one was in the parse that made that item final)
        if self.tight and facts.tight is not True:
            return None                            # turned loose (or cannot tell): every item changes
        if not self.tight:
            _loosen(tokens)
        return tokens, facts, n_src

    def _render(self, groups: list[list[Token]], facts: _Facts, renderer: HtmlRenderer, code_base: int
                ) -> tuple[list[str], list[str], list[str]]:
        """(list pieces, codes, HTML of the other groups) of a slice's groups (the list first)."""
        base = code_base + len(self.head_codes) + len(self.codes)
        sl = ListSlice(self.done_items, self.done_items + len(facts.starts), self.start, self.task)
        htmls, codes = renderer.render_groups(groups, base, list_slice=sl)
        ctx = renderer.context
        self.pending = bool(ctx.pending) or ctx.math_pending
        return htmls[0].split(PIECE), codes, htmls[1:]

    def advance(self, lines: Sequence[str], partial: str, references: dict[str, Any], renderer: HtmlRenderer,
                code_base: int) -> tuple[list[str], list[str]] | None:
        """``(tail htmls, tail codes)`` given the tail's complete ``lines`` and ``partial`` last line (parsed with
        the link ``references`` known; its code numbered from ``code_base``), or None (see the class)."""
        shown = partial if partial and not holds_back(partial) else None
        parsed = self._slice(lines, shown, references)
        if parsed is None:
            return None
        tokens, facts, _n = parsed
        n_complete = len(lines) - self.done_lines
        if facts.end < n_complete:
            self._memo.keep()           # close parses the same lines (no partial line shown): these tokens
            return None                 # it ended among the complete lines: :meth:`close` (or a full parse)
        # the list, and the block the partial line starts after it (if it ended there)
        pieces, codes, rest = self._render(group_blocks(tokens), facts, renderer, code_base)
        cuts = renderer.context.list_cuts[0]
        final = 0 if self.pending else self._take(pieces, codes, cuts, 0, facts.starts, n_complete)
        rest_codes = codes[cuts[final - 1] :] if final else codes
        html = PIECE.join(self.pieces + pieces[final:])
        return [*self.head, html, *rest], self.head_codes + self.codes + rest_codes

    def close(self, lines: Sequence[str], references: dict[str, Any], renderer: HtmlRenderer,
              code_base: int, at_end: str | None = None) -> tuple[list[str], list[str], int, bool] | None:
        """The list ended among the tail's complete ``lines``: ``(blocks, codes, n_lines, pending)`` of the
        tail's first ``n_lines`` lines, now stable (the blocks before the list, the list made from its final
        pieces and its last items, and any finished blocks after it, as a parse of those lines gives them);
        None when it did not end there or the fast path does not know (the caller re-parses the tail).

        ``at_end``: the reply ended, and this is its last, partial line ("" if none): the list ends there, and
        all the lines and that one are stable (code colours or formulas still to come: ``pending``). A parse of
        the whole list at the end cost 67 ms for 500 items, in one tick."""
        partial = at_end or None
        parsed = self._slice(lines, partial, references)
        if parsed is None:
            return None
        tokens, facts, n_src = parsed
        new = lines[self.done_lines :]
        if at_end is not None:
            k, cut = n_src, len(tokens)
        else:
            k, cut = find_boundary(tokens, new)
            if k < facts.end or facts.end >= len(new):
                return None                        # not known to be over yet
        pieces, codes, rest = self._render(group_blocks(tokens[:cut]), facts, renderer, code_base)
        if renderer.context.pending and at_end is None:
            return None                            # code colours to come: such blocks wait in the tail
        blocks = [*self.head, PIECE.join(self.pieces + pieces), *rest]
        return blocks, self.head_codes + self.codes + codes, self.done_lines + k, self.pending
