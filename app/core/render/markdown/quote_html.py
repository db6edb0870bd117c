"""Top-level quotes as pieces: a long paragraph of a top-level quote is cut into groups of lines, each its own quote.

A quote is drawn as a table (:meth:`QuotePieces.blockquote_open`), and Qt lays a table out whole on any change; the
2,000-line quote of the render bench is *one paragraph*, so while it streamed every re-parse of it re-inserted all
of it (parse ~90 ms and insert ~140 ms at its end). So a paragraph directly inside a top-level quote is cut before
line ``L`` when

* at least :data:`QUOTE_PIECE_LINES` of its lines come before ``L`` since the last cut (or its first line);
* the lines from the last cut up to ``L``, inline-parsed *alone*, leave nothing open: no text token holds a
  character that may pair with a later one (``*`` ``~`` ``[`` ``]`` `````` ``$`` ``\\``, a ``_`` not inside a
  word) and no other token but text, breaks, code spans, emphasis, strikethrough and links is met. Inline parsing
  pairs a closer only with an opener *before* it, so with no opener left the part before ``L`` parses the same
  whatever follows, and the part from ``L`` on parses the same as a paragraph of its own;
* line ``L`` is ``>``, at most one space and a letter: as a paragraph's first line it starts a paragraph, as a
  continuation line it continues one (a list, a code block, a link definition or a heading would start otherwise);
* the line after ``L`` is complete (it decides whether ``L`` is the header of a table that ends the paragraph).

…and at most :data:`QUOTE_CUT_SPAN` lines after the last cut (a lone ``*`` must not make every later line an
attempt). The cut depends only on those lines, so a streamed quote and the one-shot render are cut at the same
places; only a setext underline after the paragraph changes its lines (all of them become a heading, and the
stream's fast path gives up for one full parse). Each part is rendered from its own inline parse.

In the HTML each piece of the quote (separated by :data:`~.piece.PIECE`) is a quote table of its own: the first
keeps the quote's top margin, the last its bottom margin, the others none, and a cut paragraph's parts have no
margin between them, so Qt shows one quote, one bar; a cut replaces a line break. The text and its copy are
unchanged (the stream's text is never touched).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from markdown_it.rules_core import StateCore
from markdown_it.token import Token

from app.core.render.markdown.piece import PIECE

#: Lines of a top-level quote's paragraph per piece (at least; a cut waits for a line where it is safe).
QUOTE_PIECE_LINES = 16
#: A cut is looked for at most this many lines after the last one; past it the paragraph's rest is one piece.
QUOTE_CUT_SPAN = 4 * QUOTE_PIECE_LINES
_CUT_LINE = re.compile(r"> ?[^\W\d_]")
_PAIRING = re.compile(r"[*~\[\]`$\\]|(?<![^\W_])_|_(?![^\W_])")
_CLEAN_TYPES = frozenset({"text", "softbreak", "hardbreak", "code_inline", "em_open", "em_close", "strong_open",
                          "strong_close", "s_open", "s_close", "link_open", "link_close"})


@dataclass(frozen=True)
class QuoteSlice:
    """Render the first top-level quote met as the continuation of a longer quote cut before its first line: its
    first piece is not the quote's first, and its first paragraph continues the one cut there."""

    continued: bool = True


def _closed(children: Sequence[Token]) -> bool:
    """Whether inline tokens parsed alone leave nothing that a later character could pair with (see the module)."""
    for tok in children:
        if tok.type not in _CLEAN_TYPES:
            return False
        if tok.type == "text" and _PAIRING.search(tok.content):
            return False
    return True


#: A line without any of these cannot close what an earlier line left open (so a part that was not closed
#: before it is not closed with it either: no parse needed to know).
_MAY_CLOSE = re.compile(r"[*_~`\])\"'>$\\]")
#: Parts already found not closed (their text; a part holding ``[`` is not kept: link references may change).
_OPEN_PARTS: dict[str, None] = {}
_OPEN_PARTS_MAX = 512


def _part(state: StateCore, text: str) -> list[Token] | None:
    """The inline tokens of ``text`` parsed alone if they leave nothing open, else None."""
    if text in _OPEN_PARTS:
        return None
    children: list[Token] = []
    state.md.inline.parse(text, state.md, state.env, children)
    if _closed(children):
        return children
    if "[" not in text:
        if len(_OPEN_PARTS) >= _OPEN_PARTS_MAX:
            _OPEN_PARTS.pop(next(iter(_OPEN_PARTS)))
        _OPEN_PARTS[text] = None
    return None


def _cuts(state: StateCore, lines: list[str], first: int, content: list[str], complete: int
          ) -> tuple[list[int], list[list[Token]]]:
    """Cut lines (relative to the paragraph) and the inline tokens of each part of a paragraph whose source lines
    start at ``lines[first]`` and whose content lines are ``content``; ``complete``: lines of the source that end
    with a newline. A candidate after a part that was not closed is tried again only after a line that may close
    it; parts found open are remembered (a streamed quote's slice is parsed again on every tick)."""
    cuts: list[int] = []
    parts: list[list[Token]] = []
    last = 0
    at = last + QUOTE_PIECE_LINES
    tried_open = False
    while at < len(content) and at - last <= QUOTE_CUT_SPAN:
        src_line = first + at
        if tried_open and not _MAY_CLOSE.search(content[at - 1]):
            at += 1
            continue
        if src_line + 1 < complete and _CUT_LINE.match(lines[src_line]):
            children = _part(state, "\n".join(content[last:at]).strip())
            if children is not None:
                cuts.append(at)
                parts.append(children)
                last, at, tried_open = at, at + QUOTE_PIECE_LINES, False
                continue
            tried_open = True
        at += 1
    if cuts:
        children = []
        state.md.inline.parse("\n".join(content[last:]).strip(), state.md, state.env, children)
        parts.append(children)
    return cuts, parts


def quote_pieces_rule(state: StateCore) -> None:
    """Core rule (after ``inline``): cut the long paragraphs of top-level quotes (see the module docstring). A cut
    is a ``quote_cut`` token (level 1, ``meta["line"]``: its line relative to the quote's first) between the
    parts, each a paragraph of its own (``meta["cut_above"]`` / ``meta["cut_below"]``)."""
    tokens = state.tokens
    if state.env.get("brook_bounded") or not any(t.type == "blockquote_open" and t.level == 0 for t in tokens):
        return
    lines: list[str] | None = None
    complete = 0
    out: list[Token] = []
    quote_start = 0
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.type == "blockquote_open" and tok.level == 0 and tok.map is not None:
            quote_start = tok.map[0]
        para = (tok.type == "paragraph_open" and tok.level == 1 and tok.map is not None and i + 2 < len(tokens)
                and tokens[i + 1].type == "inline" and tokens[i + 2].type == "paragraph_close")
        if not para or tok.map is None or tok.map[1] - tok.map[0] <= QUOTE_PIECE_LINES:
            out.append(tok)
            i += 1
            continue
        inline = tokens[i + 1]
        content = inline.content.split("\n")
        if len(content) != tok.map[1] - tok.map[0]:
            out.append(tok)
            i += 1
            continue
        if lines is None:
            lines = state.src.split("\n")
            complete = state.src.count("\n")
        cuts, parts = _cuts(state, lines, tok.map[0], content, complete)
        if not cuts:
            out.append(tok)
            i += 1
            continue
        bounds = [0, *cuts, len(content)]
        close = tokens[i + 2]
        for k, children in enumerate(parts):
            p_open = Token("paragraph_open", "p", 1)
            p_open.level, p_open.block = 1, True
            p_open.map = [tok.map[0] + bounds[k], tok.map[0] + bounds[k + 1]]
            p_open.meta = {"cut_above": k > 0, "cut_below": k < len(parts) - 1}
            part = Token("inline", "", 0)
            part.level, part.block = 2, True
            part.map = list(p_open.map)
            part.content = "\n".join(content[bounds[k]:bounds[k + 1]]).strip()
            part.children = children
            p_close = Token("paragraph_close", "p", -1)
            p_close.level, p_close.block = close.level, True
            out.extend((p_open, part, p_close))
            if k < len(parts) - 1:
                cut = Token("quote_cut", "", 0)
                cut.level, cut.block = 1, True
                cut.meta = {"line": tok.map[0] + bounds[k + 1] - quote_start}
                out.append(cut)
        i += 3
    state.tokens = out


def quote_tag(bar: str, muted: str, first: bool, last: bool, bars: int = 1) -> str:
    """The opening of one piece of a top-level quote (``first``/``last``: it keeps the quote's top/bottom
    margin); Qt's rich text has no left border, so the bar is a narrow tinted first cell of a one-row table.
    ``bars``: quotes drawn by this one table (:func:`_nested_chain`), their bars side by side."""
    top = "4px" if first else "0"
    bottom = "6px" if last else "0"
    more = f'<td width="10"></td><td width="3" bgcolor="{bar}"></td>' * (bars - 1)
    return (
        f'<table width="100%" cellspacing="0" cellpadding="0" border="0" style="margin-top:{top};'
        f'margin-bottom:{bottom}"><tr><td width="3" bgcolor="{bar}"></td>{more}'
        f'<td style="padding-left:10px;color:{muted}">\n'
    )


#: ``Token.meta`` key of a quote's opening and closing token drawn by the table of the quote around it.
_MERGED = "brook_merged_quote"


def _close_of(tokens: Sequence[Token], idx: int) -> int:
    """Index of the ``blockquote_close`` of the quote opened at ``idx`` (``len(tokens)`` if none)."""
    level = tokens[idx].level
    for j in range(idx + 1, len(tokens)):
        if tokens[j].type == "blockquote_close" and tokens[j].level == level:
            return j
    return len(tokens)


def _nested_chain(tokens: Sequence[Token], idx: int) -> int:
    """How many quotes the quote opened at ``idx`` holds as its only content, one inside the other (``> > > x``:
    2). They are drawn by its table, their bars side by side, instead of a table inside a table each: Qt lays
    nested tables out in time exponential in their depth (a long line inside 4 quotes: 39 ms a refresh, 6 ms
    inside one); the text and the quotes' order are the same. Marks their tokens (:data:`_MERGED`)."""
    n, outer, close = 0, idx, _close_of(tokens, idx)
    while outer + 1 < len(tokens) and tokens[outer + 1].type == "blockquote_open":
        inner_close = _close_of(tokens, outer + 1)
        if inner_close + 1 != close:
            break
        outer, close = outer + 1, inner_close
        tokens[outer].meta[_MERGED] = tokens[close].meta[_MERGED] = True
        n += 1
    return n


_QUOTE_CLOSE = "</td></tr></table>\n"


class QuotePieces:
    """The renderer methods of quotes (a mixin of :class:`~.html.HtmlRenderer`, which holds ``_ctx`` and
    ``colors``)."""

    _ctx: Any
    colors: Any

    if TYPE_CHECKING:
        def renderToken(self, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str: ...  # RendererHTML's

    def blockquote_open(self, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        tok = tokens[idx]
        c = self.colors
        if tok.meta.get(_MERGED):
            return ""                             # drawn by the table of the quote around it
        bars = 1 + _nested_chain(tokens, idx)
        if tok.level != 0:
            return quote_tag(c.quote_bar, c.muted, True, True, bars)
        ctx = self._ctx
        sl: QuoteSlice | None = ctx.quote_slice
        ctx.quote_slice = None
        ctx.quote_continued = sl is not None and sl.continued
        pieces = 1
        for j in range(idx + 1, len(tokens)):
            t = tokens[j]
            if t.level == 0:
                break
            pieces += t.type == "quote_cut"
        ctx.quote_pieces_left = pieces
        ctx.quote_cuts.append([])
        return quote_tag(c.quote_bar, c.muted, not ctx.quote_continued, pieces == 1, bars)

    def blockquote_close(self, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        return "" if tokens[idx].meta.get(_MERGED) else _QUOTE_CLOSE

    def quote_cut(self, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        ctx = self._ctx
        if tokens[idx].level != 1 or not ctx.quote_cuts:
            return ""                             # a quote inside a reasoning section: its parts just follow
        ctx.quote_pieces_left -= 1
        ctx.quote_cuts[-1].append((int(tokens[idx].meta["line"]), len(ctx.codes)))
        c = self.colors
        return _QUOTE_CLOSE + PIECE + quote_tag(c.quote_bar, c.muted, False, ctx.quote_pieces_left == 1)

    def paragraph_open(self, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        tok = tokens[idx]
        out = self.renderToken(tokens, idx, options, env)
        above = bool(tok.meta.get("cut_above")) if tok.meta else False
        below = bool(tok.meta.get("cut_below")) if tok.meta else False
        ctx = self._ctx
        if tok.level == 1 and ctx.quote_continued:
            ctx.quote_continued = False           # the first paragraph of a quote slice goes on from the cut
            above = True
        if tok.hidden or not (above or below):
            return out
        styles = [s for s, on in (("margin-top:0", above), ("margin-bottom:0", below)) if on]
        return out.replace("<p>", f'<p style="{";".join(styles)}">', 1)
