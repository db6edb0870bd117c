"""Incremental rendering of a streamed reply: the line buffer, the stable prefix, late link references, throttling.

The text is kept as a *stable prefix* of finished top-level blocks, whose HTML is made once, and an *open tail*
of complete lines plus one partial line; :meth:`MarkdownStream.render` parses only the tail and moves the blocks
before a safe boundary (:mod:`.boundaries`) into the prefix. Link reference definitions are collected into an
``env`` shared from block to block; one that arrives *after* a stable block using it is applied by
:meth:`MarkdownStream.finish`, which re-renders the stable runs that might be affected (:mod:`.stable_runs`) and
returns the first block whose HTML changed, so the final HTML always equals the one-shot render.

Costs per render: an open top-level fence or table takes a fast path (:mod:`.fences`, :mod:`.tables`); any
other tail is re-parsed, but once it is longer than :data:`BIG_TAIL_CHARS` it is re-parsed only after it grew
by a fraction :data:`BIG_TAIL_GROWTH` of its size, or after :data:`BIG_TAIL_MIN_S` (and at least 4 × the last
render's cost) passed — amortised O(1) per character. Throttling only delays what is shown: the final HTML is
unaffected. A tail dense with emphasis and link openers (markdown-it's slow shapes) is inline-parsed only up to
a bound, the rest shown as text until the end (:mod:`.bounded`). The clock is injected (``clock``), so tests
can drive the throttle.

With a ``pool`` (:mod:`app.core.render.lexer_pool`) no lexer runs in the caller: code still being lexed shows as plain
text, a block holding such code stays in the tail until its colours are known (so stable blocks never change
while streaming), and after :meth:`MarkdownStream.finish` a later :meth:`MarkdownStream.render` re-renders the
blocks whose colours arrived (``restyled_from`` says from which block). Formulas drawn by a
:class:`~app.core.render.math_render.MathCache` with a pool (``math``) show as TeX until their image is known; a block
holding one does *not* wait in the tail (the math worker may still be starting: the tail would grow, and every
tick cost more): it becomes stable with its TeX, and a later :meth:`MarkdownStream.render` re-renders it once
the image is there, while streaming too (``restyled_from`` again) — the only change a stable block ever sees
before :meth:`MarkdownStream.finish`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from markdown_it.token import Token

from app.core.render.highlight import SegmentCache
from app.core.render.markdown.boundaries import find_boundary, holds_back, open_display_math
from app.core.render.markdown.bounded import parse_tail
from app.core.render.markdown.code_html import copy_href
from app.core.render.markdown.fences import OpenFence
from app.core.render.markdown.html import HtmlRenderer
from app.core.render.markdown.lists import OpenList
from app.core.render.markdown.parser import group_blocks, normalize, parse
from app.core.render.markdown.quotes import OpenQuote
from app.core.render.markdown.stable_runs import StableRun, render_again
from app.core.render.markdown.tables import OpenTable
from app.core.render.markdown.throttle import TailThrottle
from app.core.render.markdown.words import OpenWord

if TYPE_CHECKING:
    from app.core.render.lexer_pool import LexerPool
    from app.core.render.math_render import MathCache

#: Rows of a closed open table's tokens freed by each render (~20 tokens a row; 200 rows ≈ 0.7 ms here).
FREE_ROWS_PER_RENDER = 200

Clock = Callable[[], float]


class MarkdownStream:
    """Incremental renderer of one markdown text (an answer or a reasoning section), no routing.

    :meth:`feed` only stores text and cuts complete lines; :meth:`render` does the work (several feeds in one UI
    tick cost one render); the properties only read what the last :meth:`render` or :meth:`finish` made.
    ``hold_pending``: a block with pending code colours stays in the tail (False: ``IncrementalMarkdown.final_text``).
    """

    def __init__(self, theme: str = "light", copy_prefix: str = "", clock: Clock = time.perf_counter,
                 pool: LexerPool | None = None, math: MathCache | None = None, hold_pending: bool = True) -> None:
        self._copy_prefix = copy_prefix
        self._hold_pending = hold_pending
        self._clock = clock
        self._pool = pool
        self._math_pool = math.pool if math is not None else None
        self._pool_seen = (-1, -1)
        self._tail_pending = False
        self.restyled_from: int | None = None
        self._cache = SegmentCache(pool=pool)
        self._renderer = HtmlRenderer(theme, copy_prefix, self._cache, math)
        self._pending_cr = False
        self._stable: list[str] = []
        self._runs: list[StableRun] = []
        self._stable_codes: list[str] = []
        self._references: dict[str, Any] = {}
        self._lines: list[str] = []  # complete lines of the tail
        self._partial: list[str] = []  # pieces of the incomplete last line
        self._tail_chars = 0
        self._dirty = False
        self._tail_parts: list[str] = []
        self._tail_codes: list[str] = []
        self._fence: OpenFence | None = None
        self._table: OpenTable | None = None
        self._block: OpenList | OpenQuote | OpenWord | None = None   # an open list, quote or word at the end
        self._finished = False
        self._spent: tuple[Any, ...] | None = None   # the open tail's state at finish, until release_spent
        self._closed_rows: list[list[list[Token]]] = []   # row tokens of closed open tables, freed a part a render
        self._throttle = TailThrottle(clock)
        self._version = 0

    # -- input ---------------------------------------------------------------------------------------------

    def feed(self, text: str) -> None:
        """Append text (any size). O(len(text)); nothing is rendered until :meth:`render`."""
        if self._finished:
            raise RuntimeError("feed() after finish()")
        if not text:
            return
        if self._pending_cr:
            text = "\r" + text
            self._pending_cr = False
        if text.endswith("\r"):
            self._pending_cr = True
            text = text[:-1]
        text = normalize(text)
        if not text:
            return
        self._dirty = True
        self._tail_chars += len(text)
        if "\n" not in text:
            self._partial.append(text)
            return
        parts = text.split("\n")
        self._partial.append(parts[0])
        self._lines.append("".join(self._partial))
        self._lines.extend(parts[1:-1])
        self._partial = [parts[-1]] if parts[-1] else []

    # -- output (no property renders) ----------------------------------------------------------------------

    @property
    def stable_blocks(self) -> list[str]:
        """HTML of the finished top-level blocks (append-only while streaming, except a block whose formula
        images arrived: see :attr:`restyled_from`)."""
        return self._stable

    @property
    def tail_blocks(self) -> list[str]:
        """The open tail's HTML as top-level blocks, an open table's finished row groups each a part ending in PIECE."""
        return self._tail_parts

    @property
    def tail_html(self) -> str:
        """HTML of the open tail ("" after :meth:`finish`)."""
        return "".join(self._tail_parts)

    @property
    def tail_final_pieces(self) -> int:
        """How many leading pieces of the tail (its blocks split at ``PIECE``) are final: they are the pieces the
        finished render will have there. An open top-level table's row groups but its last two (their rows are
        complete and more rows follow; the column widths are known); the blocks before an open top-level list
        at the end of the tail and the list's groups of items but the last (:mod:`.lists`); 0 for any other
        tail. (A list that turns loose changes its final pieces once: see :mod:`.lists`.)"""
        if self._block is not None:
            return self._block.final_pieces
        if self._table is None or self._table.widths is None:
            return 0
        return max(0, len(self._table.pieces) - 2)

    @property
    def html(self) -> str:
        """``"".join(stable_blocks) + tail_html``."""
        return "".join(self._stable) + self.tail_html

    @property
    def rows_rendered(self) -> int:
        """Table rows rendered so far, all renders together (a public counter: an open table must cost its new
        rows per render, not all of them)."""
        return self._renderer.rows_rendered

    @property
    def items_rendered(self) -> int:
        """Top-level list items rendered so far, all renders together (a public counter: an open list must cost
        its new items per render, not all of them)."""
        return self._renderer.items_rendered

    @property
    def version(self) -> int:
        """Grows whenever a render may have changed ``stable_blocks`` or ``tail_blocks``."""
        return self._version

    @property
    def code_blocks(self) -> list[str]:
        """Raw code of every code block so far, in order (what a "Copy" link copies)."""
        if self._fence is not None:
            return [*self._stable_codes, self._fence.code]
        return self._stable_codes + self._tail_codes

    @property
    def finished(self) -> bool:
        """Whether :meth:`finish` was called."""
        return self._finished

    @property
    def end_cost_s(self) -> float:
        """What :meth:`finish` is reckoned to cost (seconds) when it parses the open tail whole — no fast path
        holds it: the tail's last parse (and its showing) in proportion to the characters the tail has now
        (:meth:`.throttle.TailThrottle.estimate`). A big tail's renders are throttled, so most of them cost
        nothing and only this tells what its end will cost: a 10 KB line of nested quotes streamed at 0.03 ms a
        render and finished in 5-6 ms. 0.0 when finished (no tail is left), when a fast path holds the tail (its
        end is closed from its pieces, or costs what its renders do) and before any parse."""
        if self._fence is not None or self._table is not None or self._block is not None:
            return 0.0
        return self._throttle.estimate(self._tail_chars)

    @property
    def highlights_pending(self) -> bool:
        """Whether some code shows as plain text (or a formula as TeX) while a worker pool works on it (then keep
        calling :meth:`render`, e.g. on a timer: it picks up the colours and images)."""
        if self._fence is not None and self._fence.hl.pending:
            return True
        return self._tail_pending or any(run.pending for run in self._runs)

    # -- work ----------------------------------------------------------------------------------------------

    def _pool_moved(self) -> bool:
        """Whether the lexer or math pool stored results since the last look."""
        seen = (self._pool.completed if self._pool is not None else -1,
                self._math_pool.completed if self._math_pool is not None else -1)
        if seen == self._pool_seen:
            return False
        self._pool_seen = seen
        return True

    def render(self) -> None:
        """Render what arrived since the last call (may be deferred by the big-tail throttle), and code colours
        and formulas the worker pools delivered since. Sets :attr:`restyled_from` (see :meth:`_restyle`)."""
        self.restyled_from = None
        self._throttle.chargeable = False
        if self.highlights_pending and self._pool_moved():
            self._restyle()
            if self._finished:
                return
            self._dirty = True
        if not self._dirty or self._finished:
            return
        self._dirty = False
        if self._closed_rows:
            self._free_closed_rows()
        if self._fence is not None:
            self._version += 1
            parts = self._fence.advance(self._lines, "".join(self._partial))
            if parts is not None:
                self._set_tail(parts, [])
                return
            self._fence = None
        elif self._table is not None:
            self._version += 1
            table, self._table = self._table, None
            out = table.advance(self._lines, "".join(self._partial), self._references, self._renderer,
                                len(self._stable_codes))
            if out is not None:
                self._set_tail(*out)
                self._table = table
                return
            self._closed_rows.append(table.rows)   # freed a part a render, not all in this one
            closed = table.close(self._lines, self._references, self._renderer, len(self._stable_codes))
            if closed is not None:          # it ended: a stable block made from its rendered groups
                html, codes, n_lines, pending = closed
                self._take_closed([html], codes, n_lines, pending)
        elif self._block is not None:
            self._version += 1
            block, self._block = self._block, None
            partial = "".join(self._partial)
            out = block.advance(self._lines, partial, self._references, self._renderer, len(self._stable_codes))
            if out is not None:
                self._set_tail(*out)
                self._tail_pending = block.pending
                self._block = block
                return
            closed_block = block.close(self._lines, self._references, self._renderer, len(self._stable_codes))
            if closed_block is not None:    # it ended: stable blocks made from its final pieces
                self._take_closed(*closed_block)
            elif self._throttled():   # the fast path gave up (a long last item, …): the tail's parse waits
                return
        elif self._throttled():
            return
        t0 = self._clock()
        self._version += 1
        self._render_tail()
        self._throttle.parsed(t0)

    def _throttled(self) -> bool:
        """Whether a big tail's parse waits (the big-tail throttle, see the module docstring); it is then
        rendered later: once enough arrived, a little later, or at finish."""
        if self._throttle.waits(self._tail_chars):
            self._dirty = True
            return True
        return False

    def charge(self, seconds: float) -> bool:
        """Add ``seconds`` (what showing the last :meth:`render` cost its caller, e.g. a view inserting the new
        tail into its document) to that render's cost, which the big-tail throttle waits 4 × of
        (:meth:`.throttle.TailThrottle.charge`); returns whether this render could be charged. ``ValueError``
        for a negative or non-finite ``seconds``."""
        return self._throttle.charge(seconds)

    def finish(self) -> int:
        """End of stream: render everything as final; returns the index of the first changed stable block.

        Blocks emitted while streaming are normally final; only a link reference definition that arrived after a
        block using it changes one: then the return value is that block's index (< the number of stable blocks
        before the call), else it is the number of stable blocks before the call. Idempotent.
        """
        if self._finished:
            return len(self._stable)
        if not (self._dirty and self._fence is None and self._table is None and self._block is None):
            self.render()     # else the tail has no open block to carry on: one parse of it below, not two
        before = len(self._stable)
        if self._pending_cr:
            self._pending_cr = False
            self.feed("\n")
        self._finished = True
        src = self._tail_source()
        closed = self._close_at_end() if src else None
        # the open tail's state is not freed here: a streamed 2,000-row table's took 6-10 ms to free, in the
        # reply's last frame; the caller frees it later (release_spent)
        self._spent = (self._lines, self._partial, self._fence, self._table, self._block, self._tail_parts,
                       self._tail_codes)
        self._lines, self._partial, self._tail_chars, self._fence, self._table = [], [], 0, None, None
        self._block = None
        if closed is not None:
            self._add_run(src, *closed)
        elif src:
            self._stabilize(src)
        self._tail_parts, self._tail_codes, self._tail_pending = [], [], False
        self._version += 1
        first_changed = self._fix_late_references()
        return min(first_changed, before)

    def _free_closed_rows(self) -> None:
        """Free up to ``FREE_ROWS_PER_RENDER`` rows of the tokens of open tables that closed: freeing a streamed
        2,000-row table's (~40,000 tokens) at once took 6-10 ms of the frame that closed it."""
        left = FREE_ROWS_PER_RENDER
        while self._closed_rows and left > 0:
            rows = self._closed_rows[-1]
            n = min(left, len(rows))
            del rows[len(rows) - n:]
            left -= n
            if not rows:
                self._closed_rows.pop()

    def release_spent(self) -> None:
        """Free the open tail's state that :meth:`finish` kept (its lines, open block and pieces): call it once
        the reply's last frame is shown. Freeing a streamed 2,000-row table's took 6-10 ms. Idempotent."""
        self._spent = None
        self._closed_rows = []

    # -- internals -----------------------------------------------------------------------------------------

    def _close_at_end(self) -> tuple[list[str], list[str], bool] | None:
        """At :meth:`finish`: the tail's blocks ``(htmls, codes, pending)`` when the tail ends in a table, list or
        quote the fast paths hold, closed by the end of the reply from the pieces already rendered (what
        ``_stabilize`` of the tail gives, without a parse of the whole block: 23-67 ms for 500 rows or items,
        in the reply's last tick); None otherwise (the caller parses the tail)."""
        partial = "".join(self._partial)
        n_lines = len(self._lines) + (1 if partial else 0)
        code_base = len(self._stable_codes)
        if self._table is not None:
            table = self._table.close(self._lines, self._references, self._renderer, code_base, at_end=partial)
            if table is not None and table[2] == n_lines:
                return [table[0]], table[1], table[3]
        elif isinstance(self._block, (OpenList, OpenQuote)):
            block = self._block.close(self._lines, self._references, self._renderer, code_base, at_end=partial)
            if block is not None and block[2] == n_lines:
                return block[0], block[1], block[3]
        return None

    def _set_tail(self, parts: list[str], codes: list[str]) -> None:
        self._tail_parts = parts
        self._tail_codes = codes
        self._throttle.rendered_chars = self._tail_chars

    def _tail_source(self) -> str:
        partial = "".join(self._partial)
        if self._lines:
            return "\n".join(self._lines) + "\n" + partial
        return partial

    def _stabilize(self, src: str, tokens: list[Token] | None = None) -> int:
        """Parse ``src`` (stable source) with the shared references and append its blocks; returns how many
        lines became stable: all, except while streaming from the first block whose code is pending in the
        lexer pool (it stays in the tail until its colours are known).

        ``tokens``: the tokens of ``src`` already parsed (with no new link reference definitions), or None.
        """
        lines = src.split("\n")[:-1]
        if tokens is None:
            env = {"references": self._references}
            tokens = parse(src, env)
            self._references = env["references"]
        groups = group_blocks(tokens)
        blocks, codes = self._renderer.render_groups(groups, len(self._stable_codes))
        ctx = self._renderer.context
        taken = len(lines)
        if ctx.pending and not self._finished and self._hold_pending:
            first = ctx.pending[0]
            first_map = groups[first][0].map
            taken = first_map[0] if first_map is not None else 0
            if first == 0 or taken <= 0:
                return 0
            blocks, codes = blocks[:first], codes[: ctx.code_ends[first - 1]]
            src = "\n".join(lines[:taken]) + "\n"
        self._add_run(src, blocks, codes,
                      (bool(ctx.pending) and (self._finished or not self._hold_pending)) or ctx.math_pending)
        return taken

    def _add_run(self, src: str, blocks: list[str], codes: list[str], pending: bool) -> None:
        """Append ``blocks`` (and their ``codes``), rendered from the stable source ``src``, to the stable prefix."""
        self._runs.append(StableRun(src, len(self._stable), len(self._stable_codes), len(self._references), pending))
        self._stable.extend(blocks)
        self._stable_codes.extend(codes)

    def _take_closed(self, blocks: list[str], codes: list[str], n_lines: int, pending: bool) -> None:
        """A fast path's open block ended: its ``blocks``, made from its pieces, are the tail's first ``n_lines``
        lines, which become stable."""
        src = "\n".join(self._lines[:n_lines]) + "\n"
        self._add_run(src, blocks, codes, pending)
        self._tail_chars -= len(src)
        del self._lines[:n_lines]

    def _restyle(self) -> None:
        """Re-render the stable runs whose code colours (after :meth:`finish`) or formulas were pending;
        ``restyled_from`` is the first block that changed (None if none did)."""
        first = len(self._stable)
        for run in self._runs:
            if run.pending:
                first = min(first, render_again(run, self._stable, self._references, self._renderer))
                ctx = self._renderer.context       # (the context of that render)
                run.pending = bool(ctx.pending) or ctx.math_pending
        if first < len(self._stable):
            self.restyled_from = first
            self._version += 1

    def _fix_late_references(self) -> int:
        """Re-render the stable runs that may use a link reference defined after them; returns the first block
        that changed (the number of stable blocks when none did)."""
        refs = len(self._references)
        first = len(self._stable)
        for run in self._runs:
            if run.refs_seen < refs and "[" in run.src:
                first = min(first, render_again(run, self._stable, self._references, self._renderer))
                run.refs_seen = refs
        return first

    def _render_tail(self) -> None:
        partial = "".join(self._partial)
        show_partial = bool(partial) and not holds_back(partial)
        src = "\n".join(self._lines) + "\n" if self._lines else ""
        if show_partial:
            src += partial
        env = {"references": dict(self._references)}
        tokens, bounded = parse_tail(src, env) if src else ([], False)   # costly inline shapes: bounded
        k, cut_index = find_boundary(tokens, self._lines)
        if k > 0:
            # The blocks before line k parse the same alone (that is what makes k safe), so the tail's tokens
            # are reused unless the tail defined link references (the stable env must only get lines < k's)
            # or the parse was bounded (stable blocks are parsed in full).
            same_refs = len(env["references"]) == len(self._references) and not bounded
            taken = self._stabilize("\n".join(self._lines[:k]) + "\n", tokens[:cut_index] if same_refs else None)
            if taken != k:  # a block with pending code colours stays in the tail
                k = taken
                cut_index = next((i for i, t in enumerate(tokens) if t.level == 0 and t.nesting >= 0
                                  and t.map is not None and t.map[0] >= k), len(tokens))
        if k > 0:
            self._tail_chars -= sum(len(line) + 1 for line in self._lines[:k])
            del self._lines[:k]
            tokens = tokens[cut_index:]
            for tok in tokens:
                if tok.map is not None and tok.level == 0:
                    tok.map = [tok.map[0] - k, tok.map[1] - k]
        groups = group_blocks(tokens)
        htmls, codes = self._renderer.render_groups(groups, len(self._stable_codes))
        self._tail_pending = bool(self._renderer.context.pending) or self._renderer.context.math_pending
        if groups:
            shown = [*self._lines, partial] if show_partial else self._lines
            tex = open_display_math(groups[-1][0], shown)
            if tex is not None:
                htmls[-1] = self._renderer.tex_block(tex)
        self._set_tail(htmls, codes)
        href = copy_href(self._copy_prefix, len(self._stable_codes))
        self._table = self._block = None
        self._fence = OpenFence.open(tokens, self._lines, href, self._renderer.colors, self._cache)
        if self._fence is not None:
            parts = self._fence.advance(self._lines, partial)
            if parts is not None:
                self._tail_pending = False  # the fence's highlighter tracks its own pending parts
                self._set_tail(parts, [])
            else:
                self._fence = None
        elif not bounded:
            self._table = OpenTable.open(tokens, self._lines, show_partial, htmls[0] if len(htmls) == 1 else None)
            if self._table is None:
                shown_partial = partial if show_partial else None
                refs_added = len(env["references"]) != len(self._references)
                opened = (tokens, self._lines, shown_partial, htmls, codes, self._renderer, refs_added)
                self._block = (OpenList.open(*opened) or OpenQuote.open(*opened)
                               or OpenWord.open(tokens, self._lines, shown_partial, htmls, self._tail_pending))
