"""Tokens → Qt-compatible HTML: a :class:`~markdown_it.renderer.RendererHTML` with one method per token type.

Qt's rich text understands a subset of HTML 4 with inline CSS, so everything here uses inline styles. Safety
policy of the HTML made here (the link rules live in :mod:`.links`):

* links are ``<a href>`` only for safe addresses; others are inert text with the address in parentheses;
* no ``<script>``, ``<input>`` or event attribute is ever emitted (raw HTML is escaped text), and ``<img>`` only
  for a formula rendered by :mod:`app.core.render.math_render` (``src="brook-math:…"``, a name the view resolves
  itself; never an address from the text).

Math: without a :class:`~app.core.render.math_render.MathCache` (or while its formula is pending, or when mathtext
refuses it) a formula shows as its TeX source in a monospace box; with one, as an image in the text colour. A
formula still being drawn is reported in :attr:`RenderContext.math_pending`.

A block's HTML is made of *pieces* separated by :data:`PIECE` (an HTML comment): a top-level code block's
header and each group of its lines, each row group of a long top-level table, each group of items of a long
top-level list (:mod:`.list_html`), each group of lines of a long top-level quote (:mod:`.quote_html`). The
view patches its document piece by piece, so an open fence, table, list or quote only changes its last piece
per tick.

The state of one render call (code blocks met, open tables, open links) is a :class:`RenderContext` held by
the renderer for the duration of :meth:`HtmlRenderer.render_groups`.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from markdown_it.renderer import RendererHTML
from markdown_it.token import Token

from app.core.render.highlight import SegmentCache, get_theme, highlight_code_status
from app.core.render.markdown.code_html import MONO, code_block_html, copy_href
from app.core.render.markdown.links import IMAGE_LINK_SCHEMES, is_safe_url
from app.core.render.markdown.list_html import ListPieces, ListSlice, OpenListState
from app.core.render.markdown.parser import fence_lang, parser
from app.core.render.markdown.piece import PIECE
from app.core.render.markdown.quote_html import QuotePieces, QuoteSlice
from app.core.render.markdown.thinking import later_thinking_html
from app.core.render.math_render import MathCache, MathImage

_esc = html.escape
_TASK_RE = re.compile(r'^<input class="task-list-item-checkbox"[^>]*>$')

#: Body rows per ``<table>`` piece of a top-level markdown table (the groups share explicit column widths):
#: Qt re-lays out a whole table on any change, so the open piece is kept small.
TABLE_GROUP_ROWS = 2
#: Body rows whose cell lengths set a split table's column widths (and the least rows a table needs to be split).
TABLE_WIDTH_ROWS = 8


# ---------------------------------------------------------------------------------------------------------
# tables
# ---------------------------------------------------------------------------------------------------------


def table_layout(tokens: Sequence[Token], idx: int) -> tuple[list[int] | None, int]:
    """Column widths (percent) of the table opening at ``idx`` and its number of body rows.

    The widths depend only on the header and the first :data:`TABLE_WIDTH_ROWS` body rows (source length of
    each cell, clamped), so they are final once those rows are complete: a streamed table and the one-shot
    render give the same groups. A table of fewer body rows gets no widths (natural layout, one piece).
    """
    lengths: list[int] = []
    rows = -1  # the header row is row -1 … body rows count from 0
    col = 0
    for j in range(idx + 1, len(tokens)):
        tok = tokens[j]
        if tok.type == "table_close":
            break
        if tok.type == "tr_open":
            rows += 1
            col = 0
        elif tok.type == "inline" and rows < TABLE_WIDTH_ROWS:
            n = min(max(len(tok.content), 3), 48)
            if col < len(lengths):
                lengths[col] = max(lengths[col], n)
            else:
                lengths.append(n)
            col += 1
    if rows < TABLE_WIDTH_ROWS or not lengths:
        return None, rows + 1
    total = sum(lengths)
    widths = [max(4, 100 * n // total) for n in lengths]
    return widths, rows + 1


def _table_start(widths: list[int] | None, first: bool, last: bool) -> str:
    width = ' width="100%"' if widths else ""
    top = "6px" if first else "0"
    bottom = "8px" if last else "0"
    return (
        f'<table{width} border="0" cellspacing="0" cellpadding="5" '
        f'style="margin-top:{top};margin-bottom:{bottom}">\n'
    )


@dataclass(frozen=True)
class TableSlice:
    """Render a table's row groups from body row ``row_offset`` (a multiple of :data:`TABLE_GROUP_ROWS`) on,
    without its header: exactly the pieces a full render of the ``n_rows``-row table gives for those groups."""

    widths: list[int]
    row_offset: int
    n_rows: int


@dataclass
class _Table:
    """A table being rendered."""

    widths: list[int] | None
    split: bool  # cut into row groups (pieces)
    n_rows: int  # body rows in all
    rows: int = 0  # body rows rendered so far (including the skipped ones of a TableSlice)
    col: int = 0  # next cell of the current row
    body: bool = False  # inside <tbody>


@dataclass
class RenderContext:
    """What one :meth:`HtmlRenderer.render_groups` call tracks while it walks the tokens."""

    code_base: int  # number of the first code block met (its "Copy" link is brook-copy:<prefix><code_base>)
    codes: list[str] = field(default_factory=list)  # raw code of the code blocks met, in order
    tables: list[_Table] = field(default_factory=list)  # open tables (a table inside a list item nests)
    links: list[str | None] = field(default_factory=list)  # open links: None (clickable) or the inert address
    table_slice: TableSlice | None = None  # applies to the first table met
    group: int = 0  # index of the group being rendered
    pending: list[int] = field(default_factory=list)  # groups with code pending in the lexer pool
    math_pending: bool = False  # a formula met is still being drawn by the math pool
    code_ends: list[int] = field(default_factory=list)  # len(codes) after each group
    list_slice: ListSlice | None = None  # applies to the first top-level list met
    top_list: OpenListState | None = None  # the top-level list being rendered
    list_cuts: list[list[int]] = field(default_factory=list)  # per top-level list: len(codes) at each cut
    quote_slice: QuoteSlice | None = None  # applies to the first top-level quote met
    quote_continued: bool = False  # the next level-1 paragraph goes on from a cut (a QuoteSlice's first)
    quote_pieces_left: int = 0  # pieces of the top-level quote being rendered, from the current one on
    quote_cuts: list[list[tuple[int, int]]] = field(default_factory=list)  # per top-level quote: (line, codes)


class HtmlRenderer(ListPieces, QuotePieces, RendererHTML):
    """Brook's HTML for markdown-it tokens: one method per token type (markdown-it calls them by name).

    ``theme`` is ``"light"`` or ``"dark"`` (``ValueError`` otherwise); ``copy_prefix`` starts the number in
    every "Copy" link; ``cache`` holds highlighted code segments (shared with the open-fence fast path);
    ``math`` renders formulas as images (None: TeX source). After :meth:`render_groups`, :attr:`context` tells
    which groups hold code still pending in the lexer pool, and whether a formula is still being drawn.
    """

    def __init__(self, theme: str, copy_prefix: str, cache: SegmentCache, math: MathCache | None = None) -> None:
        super().__init__()
        self.colors = get_theme(theme)
        self.copy_prefix = copy_prefix
        self.cache = cache
        self.math = math
        self._ctx = RenderContext(0)
        self.rows_rendered = 0  # table rows rendered so far (a public counter: tests and benchmarks)
        self.items_rendered = 0  # top-level list items rendered so far (likewise)

    def render_groups(self, groups: list[list[Token]], code_base: int, table_slice: TableSlice | None = None,
                      list_slice: ListSlice | None = None, quote_slice: QuoteSlice | None = None
                      ) -> tuple[list[str], list[str]]:
        """HTML of each token group and the raw code of the code blocks among them (numbered from ``code_base``).

        ``table_slice`` renders the first table as the row groups of a longer table (see :class:`TableSlice`);
        ``list_slice`` the first top-level list as the item groups of a longer list (:class:`.ListSlice`);
        ``quote_slice`` the first top-level quote as the last pieces of a longer one (:class:`.QuoteSlice`).
        """
        self._ctx = ctx = RenderContext(code_base, table_slice=table_slice, list_slice=list_slice,
                                        quote_slice=quote_slice)
        options = parser().options
        env: dict[str, Any] = {}
        out = []
        for i, g in enumerate(groups):
            ctx.group = i
            out.append(self.render(g, options, env))
            ctx.code_ends.append(len(ctx.codes))
        return out, ctx.codes

    @property
    def context(self) -> RenderContext:
        """The context of the last :meth:`render_groups` call."""
        return self._ctx

    # -- code --------------------------------------------------------------------------------------------

    def _add_code(self, code: str) -> str:
        ctx = self._ctx
        n = ctx.code_base + len(ctx.codes)
        ctx.codes.append(code)
        return copy_href(self.copy_prefix, n)

    def fence(self, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        tok = tokens[idx]
        lang = fence_lang(html.unescape(tok.info))
        href = self._add_code(tok.content)
        inner, pending = highlight_code_status(tok.content, lang, self.colors.name, self.cache)
        if pending:
            self._mark_pending()
        return code_block_html(inner, lang, href, self.colors, pieces=tok.level == 0)

    def _mark_pending(self) -> None:
        ctx = self._ctx
        if not ctx.pending or ctx.pending[-1] != ctx.group:
            ctx.pending.append(ctx.group)

    def code_block(self, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        tok = tokens[idx]
        href = self._add_code(tok.content)
        return code_block_html(_esc(tok.content, quote=False), "", href, self.colors, pieces=tok.level == 0)

    def code_inline(self, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        return (
            f'<code style="font-family:{MONO};background-color:{self.colors.background}">'
            f"{_esc(tokens[idx].content)}</code>"
        )

    # -- links and images --------------------------------------------------------------------------------

    def link_open(self, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        tok = tokens[idx]
        href = str(tok.attrGet("href") or "")
        if is_safe_url(href):
            self._ctx.links.append(None)
            title = tok.attrGet("title")
            t = f' title="{_esc(str(title))}"' if title else ""
            return f'<a href="{_esc(href)}"{t} style="color:{self.colors.link}">'
        self._ctx.links.append(href)
        return "<span>"

    def link_close(self, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        links = self._ctx.links
        href = links.pop() if links else None
        if href is None:
            return "</a>"
        return f'</span> <span style="color:{self.colors.muted}">({_esc(href)})</span>'

    def image(self, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        tok = tokens[idx]
        alt = self.renderInlineAsText(tok.children or [], options, env)
        src = str(tok.attrGet("src") or "")
        c = self.colors
        label = f'<span style="color:{c.muted}">[image: </span>{_esc(alt)}<span style="color:{c.muted}">]</span>'
        if is_safe_url(src, IMAGE_LINK_SCHEMES):
            addr = f'<a href="{_esc(src)}" style="color:{c.link}">{_esc(src)}</a>'
        else:
            addr = f'<span style="color:{c.muted}">{_esc(src)}</span>'
        return f"{label} ({addr})"

    # -- raw HTML (inert) and task items -----------------------------------------------------------------

    def html_inline(self, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        content = tokens[idx].content
        if _TASK_RE.match(content):
            return "☑" if 'checked="checked"' in content else "☐"
        return _esc(content)

    def html_block(self, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        return f"<p>{_esc(tokens[idx].content)}</p>\n"

    # -- math --------------------------------------------------------------------------------------------

    def _formula(self, tex: str, display: bool) -> MathImage | None:
        """The formula's image, or None to show its TeX (no math cache, pending, or refused by mathtext)."""
        if self.math is None:
            return None
        img, pending = self.math.get(tex, display, self.colors.plain_color)
        if pending:
            self._ctx.math_pending = True
        return img if img is not None and img.ok else None

    def math_inline(self, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        c = self.colors
        tex = tokens[idx].content
        img = self._formula(tex, False)
        if img is not None:
            return (
                f'<img src="{img.name}" width="{img.width}" height="{img.height}" title="{_esc(tex)}" '
                f'style="vertical-align:middle" />'
            )
        return (
            f'<span style="font-family:{MONO};background-color:{c.math_background};color:{c.math_color}">'
            f"{_esc(tex)}</span>"
        )

    #: ``$$…$$`` or ``\\[ … \\]`` inside a paragraph: a formula set in the line.
    math_inline_double = math_inline

    def math_block(self, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        content = tokens[idx].content.strip("\n")
        img = self._formula(content, True)
        if img is not None:
            return (
                f'<table width="100%" cellspacing="0" cellpadding="4" border="0" '
                f'style="margin-top:6px;margin-bottom:8px"><tr><td align="center">'
                f'<img src="{img.name}" width="{img.width}" height="{img.height}" title="{_esc(content)}" />'
                f"</td></tr></table>\n"
            )
        return self.tex_block(content)

    def tex_block(self, tex: str) -> str:
        """A display formula shown as its TeX source (no image, or one still being drawn, or still streaming)."""
        c = self.colors
        return (
            f'<table width="100%" cellspacing="0" cellpadding="8" border="0" bgcolor="{c.math_background}" '
            f'style="margin-top:6px;margin-bottom:8px"><tr><td align="center">'
            f'<pre style="font-family:{MONO};white-space:pre-wrap;margin:0;color:{c.math_color}">'
            f"{_esc(tex)}</pre></td></tr></table>\n"
        )

    math_block_label = math_block

    # -- a later reasoning section ----------------------------------------------------------------------

    def think_block(self, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        """A reasoning section inside the answer (:func:`~.thinking.think_block`): a dimmed, foldable Thinking
        section where it stands (:func:`~.thinking.later_thinking_html`). Its blocks are rendered one level down
        (no pieces of their own)."""
        tok = tokens[idx]
        inner = parser().parse(tok.content, env)
        for t in inner:
            t.level += 1
        return later_thinking_html(self.render(inner, options, env), bool(tok.meta.get("closed")))

    # -- tables ------------------------------------------------------------------------------------------

    def table_open(self, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        ctx = self._ctx
        sl = ctx.table_slice
        if sl is not None:
            ctx.table_slice = None
            ctx.tables.append(_Table(sl.widths, True, sl.n_rows, rows=sl.row_offset))
            return _table_start(sl.widths, sl.row_offset == 0, sl.row_offset + TABLE_GROUP_ROWS >= sl.n_rows)
        widths, n_rows = table_layout(tokens, idx)
        split = widths is not None and tokens[idx].level == 0
        ctx.tables.append(_Table(widths, split, n_rows))
        return _table_start(widths, True, not split or n_rows <= TABLE_GROUP_ROWS)

    def table_close(self, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        self._ctx.tables.pop()
        return "</table>\n"

    def tbody_open(self, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        self._ctx.tables[-1].body = True
        return "<tbody>\n"

    def tr_open(self, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        self._ctx.tables[-1].col = 0
        self.rows_rendered += 1
        return "<tr>\n"

    def tr_close(self, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        t = self._ctx.tables[-1]
        out = "</tr>\n"
        if t.body:
            t.rows += 1
            nxt = tokens[idx + 1] if idx + 1 < len(tokens) else None
            if t.split and t.rows % TABLE_GROUP_ROWS == 0 and nxt is not None and nxt.type == "tr_open":
                # next row group: a new table piece with the same column widths
                last = t.rows + TABLE_GROUP_ROWS >= t.n_rows
                out += "</tbody>\n</table>\n" + PIECE + _table_start(t.widths, False, last) + "<tbody>\n"
        return out

    def th_open(self, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        tok = tokens[idx]
        t = self._ctx.tables[-1]
        c = self.colors
        col = t.col
        t.col = col + 1
        width = f' width="{t.widths[col]}%"' if t.widths and col < len(t.widths) else ""
        align = str(tok.attrGet("style") or "")
        align = align + ";" if align else ""
        if tok.tag == "th":
            style = f"{align}background-color:{c.header_background};border-bottom:2px solid {c.border}"
        else:
            style = f"{align}border-bottom:1px solid {c.border}"
        return f'<{tok.tag}{width} style="{style}">'

    td_open = th_open
