"""Fast path for an open paragraph that grows by letters: appended to, not parsed again.

A paragraph that is the whole tail and lies in its partial last line (no line end yet), whose text ends in at
least :data:`TRAILING_LETTERS` ASCII letters, keeps its parse when more ASCII letters arrive: letters next to
letters change no delimiter's flanking (emphasis, ``_`` inside a word), close no code span, link, formula or
entity, complete no amount of money (``parser._not_a_price``: a scale word has at most 8 letters), and a line
without its end cannot be re-typed (a setext heading, a table) until one comes. So its HTML is the last render's
with the new letters before ``</p>``: a render costs a comparison and a copy of the line, not a parse of it (a
500,000-character word re-parsed every 0.25 s took 10-15 ms each time). Anything else arriving — a line end,
any other character — gives the fast path up for the caller's parse of the tail (throttled and bounded).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from markdown_it.token import Token

from app.core.render.markdown.html import HtmlRenderer

#: ASCII letters the paragraph's text must end in (more than the longest scale word of an amount of money).
TRAILING_LETTERS = 16
_LETTERS = re.compile(r"[A-Za-z]*")
_TRAILING = re.compile(rf"[A-Za-z]{{{TRAILING_LETTERS}}}\Z")
_END = "</p>\n"


class OpenWord:
    """An open paragraph, the whole tail, growing by letters (see the module docstring). :meth:`advance` gives the
    tail's HTML, or None once something else arrived (the caller re-parses the tail, then may :meth:`open` it
    again)."""

    pending = False         # no code and no formula
    final_pieces = 0        # the view cuts the paragraph itself (``rich_text.split_paragraph``)

    def __init__(self, partial: str, html: str) -> None:
        self.partial = partial      # the paragraph's source rendered last
        self.html = html            # its HTML

    @classmethod
    def open(cls, tokens: list[Token], lines: Sequence[str], partial: str | None, htmls: list[str],
             pending: bool = False) -> OpenWord | None:
        """The fast path for a tail that is one paragraph in its ``partial`` line (None: not shown) ending in
        :data:`TRAILING_LETTERS` letters, given its ``tokens`` and the render just made of it (``htmls``;
        ``pending``: it shows a formula or code a worker pool has not delivered yet, which a parse must redo)."""
        if pending or lines or partial is None or len(htmls) != 1 or len(tokens) != 3:
            return None
        if not _TRAILING.search(partial):
            return None
        if [t.type for t in tokens] != ["paragraph_open", "inline", "paragraph_close"] or tokens[0].level:
            return None
        children = tokens[1].children or []
        html = htmls[0]
        if not children or children[-1].type != "text" or not html.endswith(partial[-TRAILING_LETTERS:] + _END):
            return None
        return cls(partial, html)

    def advance(self, lines: Sequence[str], partial: str, references: dict[str, Any], renderer: HtmlRenderer,
                code_base: int) -> tuple[list[str], list[str]] | None:
        """``(tail htmls, tail codes)`` for the tail's complete ``lines`` and ``partial`` line, or None when it
        is not the paragraph grown by letters (the other arguments: as the other open blocks take them)."""
        if len(lines) > 1 or (lines and partial) or not self._grow(lines[0] if lines else partial):
            return None                 # (its line ended: shown as it was until the next line tells more)
        return [self.html], []

    def _grow(self, source: str) -> bool:
        """Take ``source`` if it is the paragraph's source grown by letters (its HTML then has them)."""
        old = self.partial
        if not source.startswith(old) or _LETTERS.fullmatch(source, len(old)) is None:
            return False
        if len(source) > len(old):
            self.html = self.html[: -len(_END)] + source[len(old):] + _END
            self.partial = source
        return True

    def close(self, lines: Sequence[str], references: dict[str, Any], renderer: HtmlRenderer,
              code_base: int) -> tuple[list[str], list[str], int, bool] | None:
        """The paragraph's line ended and a blank line followed (nothing after a blank line changes a paragraph
        of these; a link reference defined later is fixed by the caller's late-reference pass): ``([html], [],
        2, False)``, its two lines stable, without a parse of it; None otherwise (the caller re-parses)."""
        if len(lines) < 2 or lines[1].strip(" \t") or not self._grow(lines[0]):
            return None
        return [self.html], [], 2, False
