"""Fast path for an open top-level fence that is the whole tail: new lines are never re-parsed.

While a fence is open, each complete line is only checked for the closing fence and handed to an
:class:`~app.core.render.highlight.IncrementalHighlighter` (O(new lines) per tick). Once the closing line arrives the
caller re-parses the tail as usual.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from markdown_it.token import Token

from app.core.render.highlight import CodeTheme, IncrementalHighlighter, SegmentCache
from app.core.render.markdown.boundaries import fence_closed
from app.core.render.markdown.html import code_block_html
from app.core.render.markdown.parser import fence_lang


def _strip_indent(line: str, indent: int) -> str:
    n = 0
    while n < indent and n < len(line) and line[n] == " ":
        n += 1
    return line[n:]


class OpenFence:
    """An open top-level fence: ``advance(lines, partial)`` gives its HTML, or None once it has closed.

    Made by :meth:`open`; ``href`` is its "Copy" address; ``colors`` the code theme.
    """

    def __init__(self, char: str, length: int, indent: int, lang: str, hl: IncrementalHighlighter,
                 href: str, colors: CodeTheme) -> None:
        self.char = char
        self.indent = indent
        self.lang = lang
        self.hl = hl
        self.href = href
        self.colors = colors
        self.checked = 1  # tail line index up to which lines were examined (line 0 is the opener)
        self.closer = re.compile(r"^ {0,3}" + re.escape(char) + "{" + str(length) + r",}[ \t]*$")
        self._maybe_closer = re.compile(r"^ {0,3}" + re.escape(char) + r"*[ \t]*$")

    @classmethod
    def open(cls, tokens: Sequence[Token], lines: Sequence[str], href: str, colors: CodeTheme,
             cache: SegmentCache) -> OpenFence | None:
        """The fast path for a tail whose tokens are exactly one open fence starting at line 0, else None."""
        if len(tokens) != 1 or tokens[0].type != "fence" or not lines:
            return None
        tok = tokens[0]
        if tok.map is None or tok.map[0] != 0:
            return None
        if len(lines) > 1 and fence_closed(tok, lines, len(lines)):
            return None
        opener = lines[0]
        indent = len(opener) - len(opener.lstrip(" "))
        lang = fence_lang(html.unescape(tok.info))
        hl = IncrementalHighlighter(lang, colors.name, cache)
        return cls(tok.markup[0], len(tok.markup), indent, lang, hl, href, colors)

    @property
    def code(self) -> str:
        """The raw code of the complete lines so far (what "Copy" copies)."""
        return "".join(line + "\n" for line in self.hl.lines)

    def advance(self, lines: Sequence[str], partial: str) -> str | None:
        """HTML of the fence given the tail's complete ``lines`` and ``partial`` last line; None if it closed.

        Only lines not seen before are examined. A partial line that could become the closing fence is held back.
        """
        new: list[str] = []
        for idx in range(self.checked, len(lines)):
            if self.closer.match(lines[idx]):
                self.hl.add_lines(new)
                self.hl.offer_open_segment()
                return None
            new.append(_strip_indent(lines[idx], self.indent))
        self.checked = len(lines)
        self.hl.add_lines(new)
        if partial and self._maybe_closer.match(partial):
            partial = ""
        inner = self.hl.html(_strip_indent(partial, self.indent))
        return code_block_html(inner, self.lang, self.href, self.colors)
